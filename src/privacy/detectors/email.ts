/**
 * E-mail addresses, an RFC 5322 / RFC 6531 subset: a dot-atom local part of letters (any script), digits
 * and `._%+-` (no leading, trailing or double dot, at most 64 characters) and a domain of at least two
 * labels (letters of any script, digits, `-`: internationalised domains as typed) whose last label (the
 * TLD) is 2–24 letters or an `xn--` A-label. Quoted local parts and IP-literal domains are not matched.
 * Escaped, encoded, full-width and invisible-split addresses (`jane\u0040corp.example`, `jane%40…`,
 * `jane&#64;…`, `jane＠…`) are read in the decoded view (./normalize.ts).
 *
 * The scan looks for '@' only (no per-character regex attempt over the text) and reads outwards from it.
 * Not an address: `scheme://user:pass@host` and `//user@host` (a URL's userinfo: the local part follows
 * `//` or `//user:`; the keyed-value detector masks the password), `@scope/package`, `lodash@4.17.21` (the
 * TLD must be letters), a file name such as `icon@2x.png` (a two-label domain whose TLD is a common file
 * extension). An address in a URL path (`https://x.example/u/jane@corp.example`) and `mailto:x@example.com`
 * are addresses.
 * @see RFC 5322 §3.4.1 (addr-spec); RFC 6531 §3.3; RFC 1035 (labels)
 */
import { type Candidate, RANK } from './types.js';

const NOT_USER = /[\s/@]/;
const ASCII_DOMAIN_RE = /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,16}[A-Za-z]{2,24}/y;
const DOMAIN_RE = /(?:[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}-]{0,61}[\p{L}\p{N}\p{M}])?\.){1,16}(?:xn--[A-Za-z0-9-]{1,59}|\p{L}{2,24})/uy;
const LETTER_RE = /[\p{L}\p{M}\p{N}]/u;
/** File extensions that end names like `icon@2x.png` (not TLDs anyone mails to). */
const FILE_EXT = new Set(
  'png jpg jpeg gif svg webp ico bmp tif tiff avif heic pdf js mjs cjs ts tsx jsx css scss less json yaml yml txt html htm xml gz map wasm woff woff2 ttf otf eot mp3 mp4 webm wav lock'.split(
    ' ',
  ),
);

/** Whether the ':' at `colon` ends the user of a URL's userinfo (`scheme://user:`), read back at most 256 characters. */
function isUserinfo(text: string, colon: number): boolean {
  const window = text.slice(Math.max(0, colon - 256), colon);
  const slashes = window.lastIndexOf('://');
  return slashes !== -1 && !NOT_USER.test(window.slice(slashes + 3));
}

function isLocalCode(c: number): boolean {
  if (c >= 0x80) return c < 0xd800 || c > 0xdfff ? LETTER_RE.test(String.fromCharCode(c)) : false;
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

function isDomainCode(c: number): boolean {
  if (c >= 0x80) return LETTER_RE.test(String.fromCharCode(c));
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;
}

/** Whether the ASCII domain characters from `i` on are followed by a non-ASCII one (a Unicode domain). */
function nonAsciiInDomain(text: string, i: number): boolean {
  const limit = Math.min(text.length, i + 256);
  while (i < limit && (isDomainAscii(text.charCodeAt(i)) || text.charCodeAt(i) === 46)) i++;
  return i < limit && text.charCodeAt(i) >= 0x80;
}

function isDomainAscii(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45;
}

/** Pushes every e-mail address in `text` onto `out`. */
export function findEmails(text: string, out: Candidate[]): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start <= 64 && isLocalCode(text.charCodeAt(start - 1))) start--;
    if (at - start > 64) continue;
    while (start < at && text[start] === '.') start++;
    if (start === at || text[at - 1] === '.' || text.slice(start, at).includes('..')) continue;
    const before = text[start - 1];
    if (before === '/' && text[start - 2] === '/') continue;
    if (before === ':' && isUserinfo(text, start - 1)) continue;
    // ASCII domains first (the common case, a faster regex); a domain with other letters by the Unicode one.
    ASCII_DOMAIN_RE.lastIndex = at + 1;
    let d = ASCII_DOMAIN_RE.exec(text);
    if (d ? text.charCodeAt(at + 1 + d[0].length) >= 0x80 : nonAsciiInDomain(text, at + 1)) {
      DOMAIN_RE.lastIndex = at + 1;
      d = DOMAIN_RE.exec(text);
    }
    if (!d) continue;
    const end = at + 1 + d[0].length;
    const dot = d[0].lastIndexOf('.');
    if (FILE_EXT.has(d[0].slice(dot + 1).toLowerCase()) && d[0].indexOf('.') === dot) continue;
    if (end < text.length && (isDomainCode(text.charCodeAt(end)) || text[end] === '@')) continue;
    out.push({ start, end, label: 'EMAIL', detail: 'e-mail address', rank: RANK.email });
  }
}
