/**
 * A credential hidden in Base64: a run of 28 or more Base64 or base64url characters (the shortest known
 * credential, an AWS key id of 20 bytes, encodes to 28) that decodes to printable text containing a
 * credential of a known shape (./secret.ts). The whole run is masked, detail 'Base64 of a …'. Runs that
 * decode to binary (hashes, random ids) or to harmless text are left alone; a run glued to a word character
 * is read from its start all the same (a Base64 run has no natural word boundary).
 * @see RFC 4648 §4, §5
 */
import { findShapes } from './secret.js';
import { type Candidate, RANK } from './types.js';

const RUN_RE = /[A-Za-z0-9+/_-]{28,}={0,2}/g;

/** True when at least 95% of the decoded bytes are printable ASCII, tab or line breaks. */
function printable(s: string): boolean {
  let bad = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c > 126) bad++;
  }
  return bad * 20 <= s.length;
}

/** "a GitHub token", "an AWS access key". */
function withArticle(detail: string): string {
  return /^[AEIOU]/.test(detail) ? `an ${detail}` : `a ${detail}`;
}

/** Pushes every Base64 run in `text` that decodes to a known credential shape onto `out` (label SECRET). */
export function findBase64Secrets(text: string, out: Candidate[]): void {
  RUN_RE.lastIndex = 0;
  for (let m = RUN_RE.exec(text); m !== null; m = RUN_RE.exec(text)) {
    const run = m[0];
    if (!/[0-9+/]/.test(run) || !/[A-Z]/.test(run) || !/[a-z]/.test(run)) continue;
    // Four alignments: the run may start mid-quantum when glued to other text; the whole run is masked.
    let detail: string | undefined;
    for (let skip = 0; skip < 4 && detail === undefined; skip++) {
      const decoded = Buffer.from(run.slice(skip), 'base64').toString('latin1');
      if (!printable(decoded)) continue;
      const inner: Candidate[] = [];
      findShapes(decoded, inner);
      if (inner[0]) detail = `Base64 of ${withArticle(inner[0].detail)}`;
    }
    if (detail !== undefined) out.push({ start: m.index, end: m.index + run.length, label: 'SECRET', detail, rank: RANK.shape });
  }
}
