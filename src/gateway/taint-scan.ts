/**
 * What taint reads in a text (gateway/taint.ts keeps it): distinctive tokens (URLs and their hosts,
 * e-mail addresses and their domains, paths, IBANs, IPv4 addresses, long unbroken strings), normalised,
 * in the text as written and as a reader would decode it, each also in its canonical form
 * (gateway/taint-canon.ts). Pure; every regular expression has bounded repeats, so a hostile page costs linear time.
 */
import { isIP } from 'node:net';
import { canonicalEmail, canonicalHost, canonicalPath, canonicalUrl, canonicalWindowsPath, looksLikeHost, OTHER_DOTS, URL_SHAPE } from './taint-canon.js';

// Case-insensitive: `HTTPS://EVIL.TEST/x` is the same URL as `https://evil.test/x` (tokens are lower-cased).
// Every repeat is bounded (see INNER): an untrusted page of `a.a.a.…` must not cost the gate quadratic time.
// E-mail addresses are found from their `@` (emailsIn): a local-part pattern tried at every position
// of a long run of word characters and dots costs 64 steps a character. A URL is any scheme with `//`
// (ssh:, wss:, s3:), its host possibly an IPv6 address in brackets.
// URLs are found from their `://` (urlsIn): a scheme pattern tried at every letter costs 16 steps each.
const TOKEN = /(?:~|\.{1,2})?\/[\w.@%+-]{1,255}(?:\/{1,2}[\w.@%+-]{1,255}){1,32}|[A-Za-z0-9_+/=-]{24,}/gi;
const SCHEME_CHAR = /[a-z0-9+.-]/i;
const URL_REST = /(?:\[[0-9a-f:.]{2,45}\])?[^\s"'<>()[\]{}]{0,2048}/iy;

/** The spans `[start, end)` of the URLs in a text (any scheme of at most 16 characters, then `://`), in order. */
function urlSpans(text: string): [number, number][] {
  const out: [number, number][] = [];
  let last = 0;
  for (let at = text.indexOf('://'); at >= 0; at = text.indexOf('://', Math.max(at + 3, last))) {
    let start = at;
    while (start > last && at - start < 16 && SCHEME_CHAR.test(text[start - 1] as string)) start--;
    while (start < at && !/[a-z]/i.test(text[start] as string)) start++;
    if (start === at) continue;
    URL_REST.lastIndex = at + 3;
    const end = at + 3 + (URL_REST.exec(text)?.[0].length ?? 0);
    out.push([start, end]);
    last = end;
  }
  return out;
}

/** Longest token kept (characters). */
export const MAX_TOKEN_CHARS = 256;

/**
 * Addresses and paths wherever they stand, also inside a larger token (an address in a URL's query, a
 * path after `--script=`), so that a copied one is found whatever surrounds it on either side.
 */
// Bounded repeats: on a long run of word characters and dots an unbounded local part would rescan the
// run from every position (quadratic); 64 is the longest local part RFC 5321 allows.
// Also IBANs (ISO 13616; grouped by spaces or dashes or not: both are dropped when normalised), IPv4
// addresses, IPv6 addresses (checked by node:net), and Windows paths (either slash).
const INNER =
  /(?:~|\.{1,2})?\/[\w.@%+-]{1,255}(?:\/{1,2}[\w.@%+-]{1,255}){1,32}|\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,4})?\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|(?<![\w:.])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f.]{0,15}(?![\w:])|\b[A-Za-z]:[\\/][^\s"'<>|*?]{1,255}/gi;
const TRAILING = new Set('.,;:!?)]}\'"');

/** Kinds of token, each with its own budget. */
export type TokenClass = 'url' | 'email' | 'host' | 'path' | 'windows-path' | 'iban' | 'ip' | 'long';

/** The class of a normalised token, by its shape. */
export function classOf(token: string): TokenClass {
  if (URL_SHAPE.test(token)) return 'url';
  if (token.includes('@')) return 'email';
  if (/^[a-z]:[\\/]/.test(token)) return 'windows-path';
  if (isIP(token) !== 0) return 'ip';
  if (/^[a-z]{2}\d{2}[a-z0-9]{8,30}$/.test(token)) return 'iban';
  if (/^[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,126}$/.test(token)) return 'host';
  if (/^[~./]/.test(token)) return 'path';
  return 'long';
}

/** The canonical forms of a normalised token besides itself (gateway/taint-canon.ts), by its class. */
function variants(t: string): string[] {
  switch (classOf(t)) {
    case 'url': {
      const c = canonicalUrl(t);
      return c === undefined ? [] : c.host === undefined ? [c.url] : [c.url, c.host];
    }
    case 'path':
      return [canonicalPath(t)];
    case 'windows-path':
      return [canonicalWindowsPath(t)];
    case 'iban':
    case 'long':
      return [];
    default: {
      const h = canonicalHost(t);
      return h === undefined ? [] : [h];
    }
  }
}

/**
 * Calls `visit` with each distinctive token of a text, normalised and in its canonical forms, in order
 * (a repeat of the same text once only); stops when `visit` returns false. `bareHosts`: also dotted words that look like
 * hosts (on an untrusted page: `webhook: evil.test`).
 */
function scanTokens(text: string, visit: (token: string) => boolean, bareHosts: boolean): boolean {
  const emit = (t: string): boolean => t.length < 6 || visit(t);
  // A page repeats its links: each distinct token is parsed (URL parser) once per text.
  const memo = new Map<string, string[]>();
  const done = new Set<string>();
  const add = (raw: string): boolean => {
    // A token seen before in this text was visited with its forms already (every visitor keeps each once).
    if (done.has(raw)) return true;
    done.add(raw);
    // Kept to their first 256 characters on both sides (memory, and what the log quotes), so a long
    // token still matches itself.
    // Trailing punctuation is stripped with a loop: a regex anchored at the end rescans a run of dots
    // from each of its positions. Spaces go (a spaced IBAN is the same IBAN).
    let end = raw.length;
    while (end > 0 && TRAILING.has(raw[end - 1] as string)) end--;
    let t = raw.slice(0, end);
    if (/\s/.test(t)) t = t.replace(/\s+/g, '');
    t = t.slice(0, MAX_TOKEN_CHARS).toLowerCase();
    if (t.includes('-') && /^[a-z]{2}\d{2}(?:-?[a-z0-9]{1,4}){3,9}$/.test(t)) t = t.replaceAll('-', '');
    if (!emit(t)) return false;
    let vs = memo.get(t);
    if (vs === undefined) {
      vs = variants(t).filter((v) => v !== t);
      memo.set(t, vs);
    }
    for (const v of vs) if (!emit(v.slice(0, MAX_TOKEN_CHARS))) return false;
    return true;
  };
  const urls = urlSpans(text);
  for (const [start, end] of urls) if (!add(text.slice(start, end))) return false;
  let u = 0;
  for (const m of text.matchAll(TOKEN)) {
    // Inside a URL, a path or a long string is the URL's (as one pattern found them before): not a token of its own.
    while (u < urls.length && (urls[u] as [number, number])[1] <= m.index) u++;
    if (u < urls.length && (urls[u] as [number, number])[0] <= m.index) continue;
    if (!add(m[0])) return false;
    // `GITHUB_TOKEN=ghp_…`: the value alone is the secret that was copied.
    if (m[0].includes('=') && !m[0].includes('://')) for (const part of m[0].split('=')) if (part.length >= 24 && !add(part)) return false;
  }
  for (const m of text.matchAll(INNER)) {
    // The IPv6 alternative also matches `a:b:` in prose: only what node:net reads as IPv6 counts.
    const v6 = /^[0-9a-f:.]+$/i.test(m[0]) && m[0].includes(':');
    if (v6 ? isIP(m[0]) === 6 && !add(m[0]) : !add(m[0])) return false;
  }
  for (const [address, domain] of emailsIn(text)) {
    if (!add(address)) return false;
    // The domain of an address: another mailbox at a planted domain is found too.
    if (!add(domain)) return false;
  }
  const bare = new Map<string, string>();
  if (bareHosts)
    for (const m of text.matchAll(BARE_HOST)) {
      const word = m[0].toLowerCase();
      let h = bare.get(word);
      if (h === undefined) {
        const c = canonicalHost(word);
        h = c !== undefined && looksLikeHost(c) ? c : '';
        bare.set(word, h);
      }
      if (h !== '' && !add(h)) return false;
    }
  return true;
}

const LOCAL_PART = /[\p{L}\p{N}\p{M}_.+'-]/u;
const DOMAIN_AT = /\[?[\p{L}\p{N}\p{M}_-]{1,63}(?:[.\u3002\uff0e\uff61][\p{L}\p{N}\p{M}_-]{1,63}){1,126}\]?|\[[0-9a-f:.]{2,45}\]/iuy;

/**
 * Each e-mail address in a text, canonical (gateway/taint-canon.ts), with its domain: found from each
 * `@` (at most 64 local-part characters before it, RFC 5321, or a quoted local part), so the cost is
 * linear in the text whatever it holds. A domain without a local part is still its domain.
 */
function* emailsIn(text: string): Generator<[string, string]> {
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    let start = at;
    if (text[at - 1] === '"') {
      const open = text.lastIndexOf('"', at - 2);
      if (open >= 0 && at - open <= 66) start = open;
    } else while (start > 0 && at - start < 64 && LOCAL_PART.test(text[start - 1] as string)) start--;
    DOMAIN_AT.lastIndex = at + 1;
    const domain = DOMAIN_AT.exec(text)?.[0];
    if (domain === undefined) continue;
    const c = canonicalEmail(text.slice(start, at), domain);
    if (c === undefined) continue;
    if (start === at) yield [c.domain, c.domain];
    else yield [c.address, c.domain];
  }
}

const ENTITIES: Record<string, string> = { commat: '@', period: '.', sol: '/', colon: ':', amp: '&', num: '#', percnt: '%', bsol: '\\' };

/**
 * The text as a reader would see it once decoded: compatibility characters folded (NFKC: a full-width
 * `＠` is `@`), other scripts' full stops made `.`, invisible format characters dropped (a zero-width space
 * inside an address), percent-escapes (`attacker%40evil.test`), HTML character references (`&#64;`,
 * `&commat;`, `&#46` without its `;`) and JSON or JavaScript escapes (`\u002e`, `\x2e`, `\/`) replaced, and
 * the usual spelled-out forms (`[at]`, `(dot)`, `[.]`) joined; undefined when there is nothing to decode.
 * Linear.
 */
function decoded(text: string): string | undefined {
  let out = text;
  if (/[^\x00-\x7f]/.test(out))
    out = out
      .normalize('NFKC')
      .replace(/\p{Cf}/gu, '')
      .replace(OTHER_DOTS, '.');
  if (out.includes('\\'))
    out = out
      .replace(/\\u([0-9a-f]{4})|\\x([0-9a-f]{2})/gi, (_m, u?: string, x?: string) => String.fromCharCode(Number.parseInt(u ?? x ?? '0', 16)))
      .replace(/\\([/@.:])/g, '$1');
  if (/[[({]/.test(out)) out = out.replace(/ {0,3}[[({] {0,3}at {0,3}[\])}] {0,3}/gi, '@').replace(/ {0,3}[[({] {0,3}(?:dot|\.) {0,3}[\])}] {0,3}/gi, '.');
  if (out.includes('%'))
    out = out.replace(/(?:%[0-9a-f]{2}){1,64}/gi, (m) => {
      try {
        return decodeURIComponent(m);
      } catch {
        return m;
      }
    });
  if (out.includes('&'))
    out = out.replace(/&(?:#(\d{1,7});?|#x([0-9a-f]{1,6});?|([a-z]{2,6});)/gi, (m, dec?: string, hex?: string, name?: string) => {
      const code = dec !== undefined ? Number(dec) : hex !== undefined ? Number.parseInt(hex, 16) : undefined;
      if (code !== undefined) return code <= 0x10ffff ? String.fromCodePoint(code) : m;
      return ENTITIES[(name ?? '').toLowerCase()] ?? m;
    });
  return out === text ? undefined : out;
}

/**
 * Scans an untrusted text and, when it differs, its decoded form (see {@link decoded}): every token, and
 * every dotted word that looks like a host ({@link looksLikeHost}).
 */
export function scanAll(text: string, visit: (token: string) => boolean): boolean {
  if (!scanTokens(text, visit, true)) return false;
  const d = decoded(text);
  return d === undefined || scanTokens(d, visit, true);
}

// A host name standing alone (`evil.test`, `bücher.example`), not inside a longer name or after an `@`:
// bounded repeats; labels cannot hold a dot, so a failed match backtracks within one label only.
const BARE_HOST =
  /(?<![\p{L}\p{N}\p{M}_@.\u3002\uff0e\uff61-])[\p{L}\p{N}\p{M}-]{1,63}(?:[.\u3002\uff0e\uff61][\p{L}\p{N}\p{M}-]{1,63}){1,126}(?![\p{L}\p{N}\p{M}_-])/giu;

/**
 * What a call's arguments carry: every token, every bare host name (an address split into user and
 * domain, a host given without a scheme) with its parent domains looked up by the memory, and a whole
 * value that the URL parser reads as a host (`0x0a010203`, `167838211`, `[2001:db8::1]`, `evil。test`).
 */
export function scanArgs(text: string, visit: (token: string) => boolean): boolean {
  const d = decoded(text);
  for (const t of d === undefined ? [text] : [text, d]) {
    if (!scanTokens(t, visit, false)) return false;
    for (const m of t.matchAll(BARE_HOST)) {
      const h = canonicalHost(m[0]) ?? m[0].toLowerCase();
      if (h.length >= 4 && !visit(h)) return false;
    }
    const whole = t.trim();
    if (whole.length > 0 && whole.length <= 255 && !/\s/.test(whole)) {
      const h = canonicalHost(whole);
      if (h !== undefined && h.length >= 4 && !visit(h)) return false;
    }
  }
  return true;
}

/** Distinctive tokens of a text, normalised, each once. */
export function tokensOf(text: string): string[] {
  const out = new Set<string>();
  scanTokens(
    text,
    (t) => {
      out.add(t);
      return true;
    },
    false,
  );
  return [...out];
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
