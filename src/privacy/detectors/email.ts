/**
 * E-mail addresses, an RFC 5322 subset: a dot-atom local part of [A-Za-z0-9._%+-] (no leading, trailing or
 * double dot, at most 64 characters) and a DNS domain of at least two labels whose last label (the TLD) is
 * 2–24 letters. Quoted local parts, IP-literal domains and internationalised domains are not matched.
 *
 * The scan looks for '@' only (no per-character regex attempt over the text) and reads outwards from it.
 * Not an address: `scheme://user:pass@host` (a URL's userinfo: the local part follows `//` or `//user:`;
 * the keyed-value detector masks the password), `@scope/package`, `lodash@4.17.21` (the TLD must be
 * letters). `mailto:x@example.com` is an address. Known over-match: `icon@2x.png` reads as an address.
 * @see RFC 5322 §3.4.1 (addr-spec); RFC 1035 (labels)
 */
import { type Candidate, RANK } from './types.js';

const NOT_USER = /[\s/@]/;
const DOMAIN_RE = /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}/y;

/** Whether the ':' at `colon` ends the user of a URL's userinfo (`scheme://user:`), read back at most 256 characters. */
function isUserinfo(text: string, colon: number): boolean {
  const window = text.slice(Math.max(0, colon - 256), colon);
  const slashes = window.lastIndexOf('://');
  return slashes !== -1 && !NOT_USER.test(window.slice(slashes + 3));
}

function isLocalCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

function isDomainCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;
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
    if (before === '/') continue;
    if (before === ':' && isUserinfo(text, start - 1)) continue;
    DOMAIN_RE.lastIndex = at + 1;
    const d = DOMAIN_RE.exec(text);
    if (!d) continue;
    const end = at + 1 + d[0].length;
    if (end < text.length && (isDomainCode(text.charCodeAt(end)) || text[end] === '@')) continue;
    out.push({ start, end, label: 'EMAIL', detail: 'e-mail address', rank: RANK.email });
  }
}
