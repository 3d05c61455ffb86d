/**
 * What taint reads in a text (gateway/taint.ts keeps it): distinctive tokens (URLs and their hosts,
 * e-mail addresses and their domains, paths, IBANs, IPv4 addresses, long unbroken strings), normalised,
 * in the text as written and as a reader would decode it; and every piece of text in a JSON value an agent
 * can read. Pure; every regular expression has bounded repeats, so a hostile page costs linear time.
 */

// Case-insensitive: `HTTPS://EVIL.TEST/x` is the same URL as `https://evil.test/x` (tokens are lower-cased).
// Every repeat is bounded (see INNER): an untrusted page of `a.a.a.…` must not cost the gate quadratic time.
// E-mail addresses are found from their `@` (emailsIn): a local-part pattern tried at every position
// of a long run of word characters and dots costs 64 steps a character.
const TOKEN = /https?:\/\/[^\s"'<>()[\]{}]{1,2048}|(?:~|\.{1,2})?\/[\w.@%+-]{1,255}(?:\/[\w.@%+-]{1,255}){1,32}|[A-Za-z0-9_+/=-]{24,}/gi;

/** Longest token kept (characters). */
export const MAX_TOKEN_CHARS = 256;

/**
 * Addresses and paths wherever they stand, also inside a larger token (an address in a URL's query, a
 * path after `--script=`), so that a copied one is found whatever surrounds it on either side.
 */
// Bounded repeats: on a long run of word characters and dots an unbounded local part would rescan the
// run from every position (quadratic); 64 is the longest local part RFC 5321 allows.
// Also IBANs (ISO 13616; spaced in groups of four or not: spaces are dropped when normalised), IPv4
// addresses, and Windows paths.
const INNER =
  /(?:~|\.{1,2})?\/[\w.@%+-]{1,255}(?:\/[\w.@%+-]{1,255}){1,32}|\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[A-Za-z]:\\[^\s"'<>|*?]{1,255}/gi;
const TRAILING = new Set('.,;:!?)]}\'"');

/** Kinds of token, each with its own budget. */
export type TokenClass = 'url' | 'email' | 'host' | 'path' | 'windows-path' | 'iban' | 'ip' | 'long';

/** The class of a normalised token, by its shape. */
export function classOf(token: string): TokenClass {
  if (token.startsWith('http://') || token.startsWith('https://')) return 'url';
  if (token.includes('@')) return 'email';
  if (/^[a-z]:\\/.test(token)) return 'windows-path';
  if (/^(?:\d{1,3}\.){3}\d{1,3}$/.test(token)) return 'ip';
  if (/^[a-z]{2}\d{2}[a-z0-9]{8,30}$/.test(token)) return 'iban';
  if (/^[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8}$/.test(token)) return 'host';
  if (/^[~./]/.test(token)) return 'path';
  return 'long';
}

/**
 * Calls `visit` with each distinctive token of a text, normalised, in order (repeats included); stops
 * when `visit` returns false.
 */
function scanTokens(text: string, visit: (token: string) => boolean): boolean {
  const add = (raw: string): boolean => {
    // Kept to their first 256 characters on both sides (memory, and what the log quotes), so a long
    // token still matches itself.
    // Trailing punctuation is stripped with a loop: a regex anchored at the end rescans a run of dots
    // from each of its positions. Spaces go (a spaced IBAN is the same IBAN).
    let end = raw.length;
    while (end > 0 && TRAILING.has(raw[end - 1] as string)) end--;
    const t = raw.slice(0, end).replace(/\s+/g, '').slice(0, MAX_TOKEN_CHARS).toLowerCase();
    return t.length < 6 || visit(t);
  };
  for (const m of text.matchAll(TOKEN)) {
    if (!add(m[0])) return false;
    // The host of a link: a planted server is found in a link to another of its pages.
    const host = HOST_OF_URL.exec(m[0])?.[1];
    if (host !== undefined && !add(host)) return false;
    // `GITHUB_TOKEN=ghp_…`: the value alone is the secret that was copied.
    if (m[0].includes('=') && !m[0].includes('://')) for (const part of m[0].split('=')) if (part.length >= 24 && !add(part)) return false;
  }
  for (const m of text.matchAll(INNER)) if (!add(m[0])) return false;
  for (const [address, domain] of emailsIn(text)) {
    if (!add(address)) return false;
    // The domain of an address: another mailbox at a planted domain is found too.
    if (!add(domain)) return false;
  }
  return true;
}

const LOCAL_PART = /[\w.+-]/;
const DOMAIN_AT = /[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/y;

/**
 * Each e-mail address in a text, with its domain: found from each `@` (at most 64 local-part characters
 * before it, RFC 5321), so the cost is linear in the text whatever it holds.
 */
function* emailsIn(text: string): Generator<[string, string]> {
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL_PART.test(text[start - 1] as string)) start--;
    if (start === at) continue;
    DOMAIN_AT.lastIndex = at + 1;
    const domain = DOMAIN_AT.exec(text)?.[0];
    if (domain !== undefined) yield [`${text.slice(start, at)}@${domain}`, domain];
  }
}

const HOST_OF_URL = /^https?:\/\/(?:[^/?#@\s]{0,256}@)?([a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8})/i;

const ENTITIES: Record<string, string> = { commat: '@', period: '.', sol: '/', colon: ':', amp: '&', num: '#', percnt: '%' };

/**
 * The text as a reader would see it once decoded: compatibility characters folded (NFKC: a full-width
 * `＠` is `@`), invisible format characters dropped (a zero-width space inside an address), percent-escapes
 * (`attacker%40evil.test`) and HTML character references (`&#64;`, `&commat;`) replaced, and the usual
 * spelled-out forms (`[at]`, `(dot)`) joined; undefined when there is nothing to decode. Linear.
 */
function decoded(text: string): string | undefined {
  let out = text;
  if (/[^\x00-\x7f]/.test(out)) out = out.normalize('NFKC').replace(/\p{Cf}/gu, '');
  if (/[[(]/.test(out)) out = out.replace(/ {0,3}[[(] {0,3}at {0,3}[\])] {0,3}/gi, '@').replace(/ {0,3}[[(] {0,3}dot {0,3}[\])] {0,3}/gi, '.');
  if (out.includes('%'))
    out = out.replace(/(?:%[0-9a-f]{2}){1,64}/gi, (m) => {
      try {
        return decodeURIComponent(m);
      } catch {
        return m;
      }
    });
  if (out.includes('&'))
    out = out.replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]{2,6}));/gi, (m, dec?: string, hex?: string, name?: string) => {
      const code = dec !== undefined ? Number(dec) : hex !== undefined ? Number.parseInt(hex, 16) : undefined;
      if (code !== undefined) return code <= 0x10ffff ? String.fromCodePoint(code) : m;
      return ENTITIES[(name ?? '').toLowerCase()] ?? m;
    });
  return out === text ? undefined : out;
}

/** Scans a text and, when it differs, its decoded form (see {@link decoded}). */
export function scanAll(text: string, visit: (token: string) => boolean): boolean {
  if (!scanTokens(text, visit)) return false;
  const d = decoded(text);
  return d === undefined || scanTokens(d, visit);
}

// A host name standing alone (`evil.test`), not inside a longer name or after an `@`: bounded repeats.
const BARE_HOST = /(?<![\w@.-])[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8}(?![\w-])/gi;

/**
 * Arguments are also searched for bare host names (an address split into user and domain, a host given
 * without a scheme). Only arguments: a bare `package.json` in a page is not remembered as a host, so
 * this finds only hosts that a link or an address in an untrusted result named.
 */
export function scanArgs(text: string, visit: (token: string) => boolean): boolean {
  if (!scanAll(text, visit)) return false;
  for (const t of [text, decoded(text)])
    if (t !== undefined) for (const m of t.matchAll(BARE_HOST)) if (m[0].length >= 6 && !visit(m[0].toLowerCase())) return false;
  return true;
}

/** Distinctive tokens of a text, normalised, each once. */
export function tokensOf(text: string): string[] {
  const out = new Set<string>();
  scanTokens(text, (t) => {
    out.add(t);
    return true;
  });
  return [...out];
}

const TEXTUAL_MIME = /^text\/|[/+](?:json|xml|yaml|csv|html|javascript)\b|^application\/(?:x-www-form-urlencoded|sql|graphql)/i;

/**
 * Every piece of text in a JSON value an agent can read: strings, object keys, numbers and booleans, at
 * any depth (walked without recursion, so no nesting can overflow the stack). The base64 `data` of image
 * and audio content is skipped; a resource `blob` is decoded when its mimeType is textual (or absent),
 * else skipped.
 * `visit` returns false to stop early.
 * @returns false when the pieces went past `maxChars` (the rest was not visited), else true.
 */
export function walkText(value: unknown, maxChars: number, visit: (text: string) => boolean): boolean {
  let left = maxChars;
  let stopped = false;
  const stack: unknown[] = [value];
  const take = (text: string): boolean => {
    left -= text.length;
    if (left < 0) return false;
    if (!visit(text)) stopped = true;
    return true;
  };
  while (stack.length > 0 && !stopped) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!take(v)) return false;
    } else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') {
      if (!take(String(v))) return false;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const binary = (o.type === 'image' || o.type === 'audio') && typeof o.data === 'string';
      for (const [k, inner] of Object.entries(o).reverse()) {
        if (!take(k)) return false;
        if (binary && k === 'data') continue;
        if (k === 'blob' && typeof inner === 'string') {
          const mime = typeof o.mimeType === 'string' ? o.mimeType : '';
          if (mime !== '' && !TEXTUAL_MIME.test(mime)) continue;
          // Decoded text is at most three quarters of the base64 text: checked before decoding.
          if (inner.length * 0.75 > left) return false;
          stack.push(Buffer.from(inner, 'base64').toString('utf8'));
          continue;
        }
        stack.push(inner);
      }
    }
  }
  return true;
}

/** URIs of the resource links and embedded resources in a tool result's `content` (MCP 2025-11-25 §tools). */
export function resourceUris(result: unknown): string[] {
  const content = typeof result === 'object' && result !== null ? (result as { content?: unknown }).content : undefined;
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const c of content) {
    if (typeof c !== 'object' || c === null) continue;
    const item = c as { type?: unknown; uri?: unknown; resource?: { uri?: unknown } };
    const uri = item.type === 'resource_link' ? item.uri : item.type === 'resource' ? item.resource?.uri : undefined;
    if (typeof uri === 'string') out.push(uri);
  }
  return out;
}
