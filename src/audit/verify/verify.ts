/**
 * Audit log verifier. Pure: takes the log's bytes, the public key and the head notes, returns a report.
 * No I/O, no clock, no env, so it can run anywhere the evidence is (own export path `lookfirst/verify`).
 *
 * Every finding names a 1-based line (see ProblemKind): each line's encoding is checked to be the
 * canonical one (items.ts), its signature, its number and its `prev` link to the line before (order.ts),
 * then the heads (head.ts). Missing evidence is never a clean verdict: without a head, truncation at the
 * end cannot be seen. A log that no entry of verifies under the configured key is tampered, with both key
 * ids named, never "no verdict": the evidence does not vouch for itself under the key the user trusts.
 */

import type { NoteVerifier } from '../note.js';
import { checkHead, headSizeOf, headTips, keyMismatch } from './head.js';
import { lineCount, parseItems } from './items.js';
import { checkNumbering } from './numbering.js';
import { checkLinks, classifyUnsigned, markCopies, ownLines } from './order.js';
import { type HeadInput, MAX_PROBLEMS, type Problem, type VerifyReport } from './types.js';

export { type HeadInput, MAX_PROBLEMS, type Problem, type ProblemKind, type VerifyReport } from './types.js';

/**
 * Verifies a log against its key and heads.
 * @param log the whole JSONL file: its bytes (checked exactly, invalid UTF-8 included) or its text.
 * @param verifier the configured public key (note verifier).
 * @param heads heads to check against (the sidecar, a trusted copy); empty → verdict at best `unproven`.
 */
export function verifyLog(log: string | Uint8Array, verifier: NoteVerifier, heads: HeadInput[]): VerifyReport {
  const data = typeof log === 'string' ? Buffer.from(log, 'utf8') : Buffer.from(log.buffer, log.byteOffset, log.byteLength);
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const items = parseItems(data, verifier.key, problems);
  const entries = lineCount(items);
  if (heads.length === 0) warnings.push('no head to check against: entries cut from the end of the log would go unnoticed');
  const mismatch = keyMismatch(items, heads, verifier);
  if (mismatch) return { verdict: 'tampered', entries, ...listed([mismatch, ...problems]), warnings };

  const headSize = Math.max(0, ...heads.map((h) => headSizeOf(h, verifier) ?? 0));
  classifyUnsigned(items, headSize, heads.length > 0, problems);
  const chain = ownLines(items, headTips(heads, verifier));
  markCopies(items, problems, chain);
  const held = checkNumbering(items, problems);
  checkLinks(items, held, problems, chain);
  for (const head of heads) checkHead(head, data, items, verifier, problems, warnings);

  const verdict = problems.length > 0 ? 'tampered' : heads.length === 0 ? 'unproven' : 'intact';
  return { verdict, entries, ...listed(problems), warnings };
}

/**
 * The problems as listed: by line, a run of lines with one finding merged into one range, at most
 * MAX_PROBLEMS of them; the rest counted.
 */
function listed(problems: Problem[]): { problems: Problem[]; omitted: number } {
  problems.sort((a, b) => a.line - b.line);
  const merged: Problem[] = [];
  for (const p of problems) {
    const last = merged.at(-1);
    if (last && last.line > 0 && last.kind === p.kind && last.message === p.message && p.line === (last.through ?? last.line) + 1)
      last.through = p.through ?? p.line;
    else merged.push({ ...p });
  }
  return { problems: merged.slice(0, MAX_PROBLEMS), omitted: Math.max(0, merged.length - MAX_PROBLEMS) };
}
