/**
 * Which text of a JSON value taint reads (gateway/taint.ts), walked without recursion so that no nesting
 * can overflow the stack, within a budget of characters.
 *
 * Two walks, because the two sides differ. What an untrusted source returned ({@link walkResult}) is read
 * as an agent can read it: every string, key, number and boolean; base64 content decoded when it is text,
 * and base64 or hex runs inside its text decoded too (as in arguments);
 * content the gate cannot read (a PDF, octet-stream, a charset Node cannot decode, compressed or invalid
 * text) is reported, so that the memory fails closed. Pictures and sound (`image/*`, `audio/*`, `video/*`
 * that are not textual, e.g. not SVG) are the one honest gap: text inside them is not recognised.
 *
 * What a call's arguments carry ({@link walkArgs}) skips nothing whatever its shape claims: every string
 * and key (a `data` beside `type: "image"`, a `blob`, included), and each run of base64, base64url or hex
 * of UTF-8 text (or of gzip/zlib of it) is also read decoded, recursively, within the budget.
 */
import { gunzipSync, inflateSync } from 'node:zlib';

const TEXTUAL_MIME = /^text\/|[/+](?:json|xml|yaml|csv|html|javascript|ecmascript|markdown)\b|^application\/(?:x-www-form-urlencoded|sql|graphql)/i;
const PICTURE_MIME = /^(?:image|audio|video)\//i;
const PLAIN_CHARSET = /^(?:utf-?8|us-ascii|ascii)$/i;

/** What a result walk found it could not read, with why (the memory then taints the session as a whole). */
export type Unreadable = (why: string) => void;

/**
 * Decodes a base64 content field of a result by its mimeType (and charset): the text, `'picture'` for
 * pictures and sound, or why it cannot be read.
 */
function decodeContent(b64: string, mimeType: unknown): { text: string } | { picture: true } | { why: string } {
  const mime = typeof mimeType === 'string' ? mimeType.trim() : '';
  const essence = mime.split(';')[0]?.trim() ?? '';
  if (essence !== '' && !TEXTUAL_MIME.test(essence)) return PICTURE_MIME.test(essence) ? { picture: true } : { why: `content of type ${oneWord(essence)}` };
  const charset = /;\s*charset\s*=\s*"?([\w.:-]{1,40})/i.exec(mime)?.[1];
  const bytes = Buffer.from(b64, 'base64');
  if (isCompressed(bytes)) return { why: 'compressed content' };
  try {
    const decoder = new TextDecoder(charset !== undefined && !PLAIN_CHARSET.test(charset) ? charset : 'utf-8', { fatal: true });
    const text = decoder.decode(bytes);
    if (text.includes('\u0000')) return { why: `binary content declared as ${oneWord(mime)}` };
    return { text };
  } catch {
    return { why: `content in a charset the gate cannot decode (${oneWord(charset ?? 'invalid UTF-8')})` };
  }
}

const oneWord = (s: string): string => JSON.stringify(s.slice(0, 60));

/** gzip, zlib or zip magic bytes. */
function isCompressed(b: Buffer): boolean {
  return (
    (b[0] === 0x1f && b[1] === 0x8b) ||
    (b[0] === 0x78 && (b[1] === 0x01 || b[1] === 0x5e || b[1] === 0x9c || b[1] === 0xda)) ||
    (b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04)
  );
}

/** A budgeted, non-recursive walk; `expand` may turn a string into more text to read (decoded forms). */
function walk(
  value: unknown,
  maxChars: number,
  visit: (text: string) => boolean,
  object: (o: Record<string, unknown>, key: string, inner: unknown, push: (v: unknown) => void) => boolean,
  expand?: (s: string, left: number) => string | undefined,
): boolean {
  let left = maxChars;
  let stopped = false;
  const stack: unknown[] = [value];
  const take = (text: string): boolean => {
    left -= text.length;
    if (left < 0) return false;
    if (!visit(text)) stopped = true;
    return true;
  };
  const push = (v: unknown) => stack.push(v);
  /** A string or key: read, and its decoded form queued when `expand` gives one. */
  const text = (t: string): boolean => {
    if (!take(t)) return false;
    const more = expand?.(t, left);
    if (more !== undefined) stack.push(more);
    return true;
  };
  while (stack.length > 0 && !stopped) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!text(v)) return false;
    } else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') {
      if (!take(String(v))) return false;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      for (const [k, inner] of Object.entries(o).reverse()) {
        if (!text(k)) return false;
        if (!object(o, k, inner, push)) return false;
      }
    }
  }
  return true;
}

/**
 * Every piece of text in an untrusted result an agent can read: strings, object keys, numbers and
 * booleans, at any depth. The base64 `data` of image and audio content and a resource `blob` are decoded
 * when their mimeType is textual (or absent: a blob); pictures and sound are skipped; anything else the
 * gate cannot read is reported to `unreadable` (and not visited). `visit` returns false to stop early.
 * @returns false when the pieces went past `maxChars` (the rest was not visited), else true.
 */
export function walkResult(value: unknown, maxChars: number, visit: (text: string) => boolean, unreadable: Unreadable): boolean {
  let left = maxChars;
  return walk(
    value,
    maxChars,
    (t) => {
      left -= t.length;
      return visit(t);
    },
    (o, k, inner, push) => {
      const media = (o.type === 'image' || o.type === 'audio') && k === 'data';
      if ((k === 'blob' || media) && typeof inner === 'string') {
        // Decoded text is at most three quarters of the base64 text: checked before decoding.
        if (inner.length * 0.75 > left) return false;
        const d = decodeContent(inner, o.mimeType ?? (media ? `${o.type}/unknown` : undefined));
        if ('text' in d) push(d.text);
        else if ('why' in d) unreadable(d.why);
        return true;
      }
      push(inner);
      return true;
    },
    // "Decode this: bWFsbG9y…": an agent can undo base64 on a page as well as a reader can.
    decodedRuns,
  );
}

// Runs of base64/base64url (or hex) anywhere in a string: a whole value, a `data:…;base64,` URL, a
// `payload: <base64>` line. At least 12 characters: 9 bytes, shorter than any remembered token's encoding.
const ENCODED_RUN = /[A-Za-z0-9+/_-]{12,}={0,2}/g;
const HEXISH = /^(?:[0-9a-f]{2}){6,}$/i;

/** The UTF-8 text a base64 or hex run encodes (gzip/zlib undone, within `left` characters), else undefined. */
function decodeRun(run: string, left: number): string | undefined {
  let bytes = Buffer.from(run, HEXISH.test(run) ? 'hex' : 'base64');
  if (isCompressed(bytes)) {
    // A zip archive is not opened (honest limit); gzip and zlib streams are.
    if (bytes[0] === 0x50) return undefined;
    try {
      const opts = { maxOutputLength: Math.max(1, left) };
      bytes = bytes[0] === 0x1f ? gunzipSync(bytes, opts) : inflateSync(bytes, opts);
    } catch {
      return undefined;
    }
  }
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.length > 0 && text !== run && !text.includes('\u0000') ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every string and key of a call's arguments, skipping nothing (whatever `type` or key name a value has),
 * numbers and booleans too; each run of base64/base64url or hex in a string (the whole value, a data URL,
 * a line of text) that encodes UTF-8 text (also gzip or zlib of it) is read decoded as well, and so on
 * recursively within the budget.
 * @returns false when the pieces went past `maxChars` (the rest was not visited), else true.
 */
export function walkArgs(value: unknown, maxChars: number, visit: (text: string) => boolean): boolean {
  return walk(
    value,
    maxChars,
    visit,
    (_o, _k, inner, push) => {
      push(inner);
      return true;
    },
    decodedRuns,
  );
}

/** The texts that the base64 or hex runs of a string encode, joined by line breaks; undefined when none. */
function decodedRuns(s: string, left: number): string | undefined {
  let out: string | undefined;
  for (const m of s.matchAll(ENCODED_RUN)) {
    const text = decodeRun(m[0], left);
    if (text !== undefined) out = out === undefined ? text : `${out}\n${text}`;
  }
  return out;
}
