/**
 * Audit log verifier. Pure: takes the log's text, the public key and the head notes, returns a report.
 * No I/O, no clock, no env, so it can run anywhere the evidence is (own export path `lookfirst/verify`).
 *
 * What it tells apart, each by 1-based line number:
 * - edited:    the signature does not match the line, and the next line does not link to it;
 * - forged:    the line links into the chain but is not signed by the log's key (the chain was rebuilt,
 *              or an unsigned entry was appended past the head);
 * - inserted:  dropping the line heals the chain, or it repeats an entry number already seen;
 * - removed:   an entry number is missing (reported at the line where it should have been);
 * - reordered: a validly signed entry appears after one with a higher number;
 * - truncated: the head records more entries than the log holds;
 * - head:      the head's signature, Merkle root or chain hash does not match the log.
 * Missing evidence is never a clean verdict: without a head, truncation at the end cannot be seen.
 */
import type { KeyObject } from 'node:crypto';
import { sha256Hex } from '../canonical.js';
import { GENESIS_PREV, verifyEntrySignature } from '../entry.js';
import { CompactTree, leafHash } from '../merkle.js';
import { type NoteVerifier, openNote, parseCheckpoint } from '../note.js';

/** Extension line name carrying the chain tip in a lookfirst checkpoint. */
const CHAIN_EXTENSION = 'lookfirst-chain';

/** Kinds of tampering the verifier reports. */
export type ProblemKind = 'edited' | 'forged' | 'inserted' | 'removed' | 'reordered' | 'truncated' | 'head';

/** One finding. `line` is 1-based in the log (0 when it concerns a head file as a whole). */
export interface Problem {
  kind: ProblemKind;
  line: number;
  message: string;
}

/** A head to check the log against: the note's text and where it came from (for messages). */
export interface HeadInput {
  label: string;
  note: string;
}

/** Verdict: `intact` (exit 0), `tampered` (exit 2), `unproven` (no head to check the end against). */
export interface VerifyReport {
  verdict: 'intact' | 'tampered' | 'unproven';
  entries: number;
  problems: Problem[];
  warnings: string[];
}

interface Item {
  line: number;
  raw: string;
  hash: string;
  entry: Record<string, unknown> | undefined;
  sigOk: boolean;
  seq: number | undefined;
  kind?: ProblemKind;
}

/**
 * Verifies a log against its key and heads.
 * @param logText the whole JSONL file.
 * @param verifier the log's public key (note verifier).
 * @param heads heads to check against (the sidecar, a trusted copy); empty → verdict at best `unproven`.
 */
export function verifyLog(logText: string, verifier: NoteVerifier, heads: HeadInput[]): VerifyReport {
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const items = parseItems(logText, verifier.key, problems);
  const mismatch = keyMismatch(items, heads, verifier);
  if (mismatch) return { verdict: 'unproven', entries: items.length, problems: [], warnings: [mismatch] };

  classifyBadSignatures(items, heads, verifier, problems);
  checkNumbering(items, problems);
  for (const head of heads) checkHead(head, items, verifier, problems, warnings);
  if (heads.length === 0) warnings.push('no head to check against: entries cut from the end of the log would go unnoticed');

  problems.sort((a, b) => a.line - b.line);
  const verdict = problems.length > 0 ? 'tampered' : heads.length === 0 ? 'unproven' : 'intact';
  return { verdict, entries: items.length, problems, warnings };
}

/**
 * Not one entry verifies and a head is signed under another key name: the public key given is most
 * likely not this log's. Saying "every line forged" would mislead; no verdict can be given.
 */
function keyMismatch(items: Item[], heads: HeadInput[], verifier: NoteVerifier): string | undefined {
  if (items.length === 0 || items.some((i) => i.sigOk)) return undefined;
  const signers = heads.flatMap((h) => [...h.note.matchAll(/^\u2014 (\S+) /gmu)].map((m) => m[1]!)).filter((n) => n !== verifier.name);
  if (signers.length === 0) return undefined;
  return `no entry verifies with the public key ${verifier.name}, and the head is signed by ${[...new Set(signers)].join(', ')}: this public key is probably not this log's. Point audit.key/audit.pub at the pair that wrote the log.`;
}

function parseItems(text: string, key: KeyObject, problems: Problem[]): Item[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  const last = lines.pop();
  if (last !== '') problems.push({ kind: 'edited', line: lines.length + 1, message: 'the last line has no newline: torn or appended by hand' });
  return lines.map((raw, i) => {
    let entry: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) entry = parsed as Record<string, unknown>;
    } catch {
      entry = undefined;
    }
    const seq = typeof entry?.seq === 'number' && Number.isInteger(entry.seq) ? entry.seq : undefined;
    return { line: i + 1, raw, hash: sha256Hex(raw), entry, sigOk: entry ? verifyEntrySignature(entry, key) : false, seq };
  });
}

/** Lines whose signature fails are edited, forged or inserted, told apart by how they sit in the chain. */
function classifyBadSignatures(items: Item[], heads: HeadInput[], verifier: NoteVerifier, problems: Problem[]): void {
  const headSize = Math.max(0, ...heads.map((h) => headSizeOf(h, verifier) ?? 0));
  items.forEach((item, k) => {
    if (item.sigOk) return;
    const before = k > 0 ? items[k - 1]!.hash : GENESIS_PREV;
    const next = items[k + 1];
    const linksIn = item.entry?.prev === before;
    if (next && next.entry?.prev === before) {
      item.kind = 'inserted';
      problems.push({ kind: 'inserted', line: item.line, message: 'entry inserted: the chain runs from the line before to the line after, around it' });
    } else if (linksIn && next && next.entry?.prev === item.hash) {
      item.kind = 'forged';
      problems.push({ kind: 'forged', line: item.line, message: 'entry forged: it links into the chain but is not signed by the log key' });
    } else if (linksIn && !next && k >= headSize && heads.length > 0) {
      item.kind = 'forged';
      problems.push({ kind: 'forged', line: item.line, message: 'entry forged: appended past the signed head without the log key' });
    } else {
      item.kind = 'edited';
      problems.push({
        kind: 'edited',
        line: item.line,
        message: item.entry ? 'entry edited: its signature does not match its content' : 'entry edited: the line is not a JSON object',
      });
    }
  });
}

/** Entry numbers must run 0,1,2,... in file order: gaps are removals, going back is reordering or a copy. */
function checkNumbering(items: Item[], problems: Problem[]): void {
  const seen = new Map<number, Item>();
  let max = -1;
  let last = -1;
  for (const item of items) {
    if (item.kind === 'inserted') continue;
    if (!item.sigOk) {
      // An edited line still holds its place; when its number is unreadable, it is the next one.
      const seq = item.seq ?? last + 1;
      if (!seen.has(seq)) seen.set(seq, item);
      last = seq;
      continue;
    }
    if (item.seq === undefined) continue;
    last = item.seq;
    const earlier = seen.get(item.seq);
    if (earlier) {
      problems.push({ kind: 'inserted', line: item.line, message: `entry inserted: a copy of entry #${item.seq} (line ${earlier.line})` });
      continue;
    }
    if (item.seq < max) {
      problems.push({ kind: 'reordered', line: item.line, message: `entry reordered: entry #${item.seq} comes after entry #${max}` });
    }
    seen.set(item.seq, item);
    max = Math.max(max, item.seq);
  }
  for (let s = 0; s < max; s++) {
    if (seen.has(s)) continue;
    const after = items.find((i) => i.seq !== undefined && i.seq > s && i.kind !== 'inserted');
    problems.push({ kind: 'removed', line: after?.line ?? items.length + 1, message: `entry #${s} removed (it belonged before this line)` });
  }
}

function headSizeOf(head: HeadInput, verifier: NoteVerifier): number | undefined {
  const opened = openNote(head.note, verifier);
  return opened.ok ? parseCheckpoint(opened.text)?.size : undefined;
}

/** Checks one head: signature, origin, size against the log, Merkle root and chain tip over its prefix. */
function checkHead(head: HeadInput, items: Item[], verifier: NoteVerifier, problems: Problem[], warnings: string[]): void {
  const opened = openNote(head.note, verifier);
  if (!opened.ok) {
    problems.push({ kind: 'head', line: 0, message: `${head.label}: ${opened.reason}` });
    return;
  }
  const cp = parseCheckpoint(opened.text);
  if (!cp) {
    problems.push({ kind: 'head', line: 0, message: `${head.label}: signed, but not a checkpoint` });
    return;
  }
  if (cp.origin !== verifier.name)
    problems.push({ kind: 'head', line: 0, message: `${head.label}: origin "${cp.origin}" is not this log's key name "${verifier.name}"` });
  // A loop, not Math.max(...spread): a log of a few hundred thousand entries would overflow the stack.
  let maxSeq = -1;
  for (const i of items) if (i.sigOk && i.seq !== undefined && i.seq > maxSeq) maxSeq = i.seq;
  if (items.length < cp.size || maxSeq + 1 < cp.size) {
    const held = Math.min(items.length, maxSeq + 1);
    problems.push({
      kind: 'truncated',
      line: items.length + 1,
      message: `log truncated: ${head.label} records ${cp.size} entries, the log ends after ${held}`,
    });
    return;
  }
  const tree = new CompactTree();
  for (const item of items.slice(0, cp.size)) tree.appendLeafHash(leafHash(Buffer.from(item.raw, 'utf8')));
  const chain = cp.extensions.find((e) => e.startsWith(`${CHAIN_EXTENSION} `))?.slice(CHAIN_EXTENSION.length + 1);
  const tip = cp.size > 0 ? items[cp.size - 1]!.hash : GENESIS_PREV;
  const lineProblems = problems.some((p) => p.kind !== 'head' && p.line <= cp.size);
  if (!tree.root().equals(cp.root) && !lineProblems) {
    problems.push({ kind: 'head', line: 0, message: `${head.label}: Merkle root over the first ${cp.size} entries does not match` });
  } else if (chain !== tip && !lineProblems) {
    problems.push({ kind: 'head', line: cp.size, message: `${head.label}: chain hash of entry #${cp.size - 1} does not match` });
  }
  if (items.length > cp.size) warnings.push(`${head.label} covers ${cp.size} of ${items.length} entries; the rest are checked by signature and chain only`);
}
