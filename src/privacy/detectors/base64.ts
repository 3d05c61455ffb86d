/**
 * A credential hidden in Base64: a run of 26 or more Base64 or base64url characters, padding aside (the
 * shortest known credential, an AWS key id of 20 bytes, encodes to 27 and a `=`) that decodes to printable text containing a
 * credential of a known shape (./secret.ts). The whole run is masked, detail 'Base64 of a …'. Runs that
 * decode to binary (hashes, random ids) or to harmless text are left alone; a run glued to a word character
 * is read from its start all the same (a Base64 run has no natural word boundary).
 * @see RFC 4648 §4, §5
 */
import { forEachRun, TOKENISH } from './chars.js';
import { findShapes } from './secret.js';
import { type Candidate, RANK } from './types.js';

/** Shortest run (padding aside) that can be the Base64 of a credential. */
export const MIN_BASE64_RUN = 26;

/** True when at least 95% of the decoded bytes are printable ASCII, tab or line breaks (stops at the first 5% bad). */
function printable(s: string): boolean {
  const limit = s.length / 20;
  let bad = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (((c < 32 && c !== 9 && c !== 10 && c !== 13) || c > 126) && ++bad > limit) return false;
  }
  return true;
}

/** True when text[start, end) has an upper-case letter, a lower-case one, and a digit, `+` or `/` (hashes and words have not). */
function mixed(text: string, start: number, end: number): boolean {
  let upper = false;
  let lower = false;
  let other = false;
  for (let i = start; i < end && !(upper && lower && other); i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
    else if ((c >= 48 && c <= 57) || c === 43 || c === 47) other = true;
  }
  return upper && lower && other;
}

/** "a GitHub token", "an AWS access key". */
function withArticle(detail: string): string {
  return /^[AEIOU]/.test(detail) ? `an ${detail}` : `a ${detail}`;
}

/** Pushes every Base64 run in `text` that decodes to a known credential shape onto `out` (label SECRET). */
export function findBase64Secrets(text: string, out: Candidate[]): void {
  forEachRun(text, TOKENISH, MIN_BASE64_RUN, (start, end) => findBase64InRun(text, out, start, end));
}

/** Pushes the run of token characters text[start, runEnd) (and its `=` padding) when it is the Base64 of a credential. */
export function findBase64InRun(text: string, out: Candidate[], start: number, runEnd: number): void {
  if (runEnd - start < MIN_BASE64_RUN || !mixed(text, start, runEnd)) return;
  let end = runEnd;
  while (end < text.length && end - runEnd < 2 && text[end] === '=') end++;
  const run = text.slice(start, end);
  if (!/[0-9+/]/.test(run) || !/[A-Z]/.test(run) || !/[a-z]/.test(run)) return;
  // The run may start mid-quantum when glued to other text: the first alignment that decodes to text counts.
  for (let skip = 0; skip < 4; skip++) {
    const decoded = Buffer.from(run.slice(skip), 'base64').toString('latin1');
    if (!printable(decoded)) continue;
    const inner: Candidate[] = [];
    findShapes(decoded, inner);
    if (inner[0]) out.push({ start, end, label: 'SECRET', detail: `Base64 of ${withArticle(inner[0].detail)}`, rank: RANK.shape });
    return;
  }
}
