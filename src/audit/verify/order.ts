/**
 * Where each line sits: its signature, its number and its link to the line before. Every line's `prev`
 * is checked against the hash of the line before it, signed or not, so a validly signed entry taken from
 * another log under the same key cannot be spliced in past a head that lags. Each break is reported at
 * its line, once, under the cause that explains it (an edit, a reordering, a removal), or as a splice.
 * Pure.
 */
import { GENESIS_PREV } from '../entry.js';
import type { Item, Problem } from './types.js';

/** Lines whose signature fails are re-encoded, edited, forged or inserted, told apart by how they sit. */
export function classifyUnsigned(items: Item[], headSize: number, hasHead: boolean, problems: Problem[]): void {
  items.forEach((item, k) => {
    if (item.sigOk) return;
    if (item.signed) {
      item.kind = 'encoding';
      problems.push({
        kind: 'encoding',
        line: item.line,
        message: `entry re-encoded: ${item.flaw}. Its content is signed, but these are not the bytes the gate wrote`,
      });
      return;
    }
    const before = k > 0 ? items[k - 1]!.hash : GENESIS_PREV;
    const next = items[k + 1];
    const linksIn = item.prev === before;
    if (next && next.prev === before) {
      item.kind = 'inserted';
      problems.push({ kind: 'inserted', line: item.line, message: 'entry inserted: the chain runs from the line before to the line after, around it' });
    } else if (linksIn && next && next.prev === item.hash) {
      item.kind = 'forged';
      problems.push({ kind: 'forged', line: item.line, message: 'entry forged: it links into the chain but is not signed by the log key' });
    } else if (linksIn && !next && k >= headSize && hasHead) {
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

/**
 * The log's own history among the signed lines, wherever they now stand. With a head that names a chain
 * tip found in the file: the lines whose `prev` links lead back to that tip's chain (the chain itself
 * walked back from the tip, and what continues it). Without one: the lines whose links lead back to the
 * start of the log (so another log under the same key, put in front, would pass for the log's own).
 * @param tips chain tips (hex) recorded by heads that verify under the key and cover at least one entry.
 */
function ownLines(items: Item[], tips: string[]): Set<Item> {
  const byHash = new Map<string, Item>();
  for (const item of items) if (item.signed && !byHash.has(item.hash)) byHash.set(item.hash, item);
  const anchors = new Set<Item>();
  for (const tip of tips) {
    for (let at = byHash.get(tip); at && !anchors.has(at); at = at.prev === undefined ? undefined : byHash.get(at.prev)) anchors.add(at);
  }
  const anchored = anchors.size > 0;
  const own = new Set<Item>(anchors);
  const settled = new Set<Item>(anchors);
  for (const item of items) {
    if (!item.signed || settled.has(item)) continue;
    // Walk back to an anchor (or the start), a settled line or a dead end; hashes cannot cycle.
    const path: Item[] = [];
    let at: Item | undefined = item;
    let reaches = false;
    while (at && !settled.has(at)) {
      path.push(at);
      settled.add(at);
      if (!anchored && at.prev === GENESIS_PREV) {
        reaches = true;
        break;
      }
      at = at.prev === undefined ? undefined : byHash.get(at.prev);
      if (at && settled.has(at)) reaches = own.has(at);
    }
    if (reaches) for (const p of path) own.add(p);
  }
  return own;
}

/**
 * Two signed lines with one entry number: the log's own is the one on the head's chain (or, without a
 * head, whose links lead back to the start of the log), and among those the one that links to the line
 * before it; the other is inserted (a copy, or another log's entry under the same key).
 * @param tips chain tips of the heads that verify (see ownLines); empty without a head.
 */
export function markCopies(items: Item[], problems: Problem[], tips: string[] = []): void {
  const bySeq = new Map<number, Item[]>();
  for (const item of items) {
    if (!item.signed || item.seq === undefined || item.kind === 'inserted') continue;
    const group = bySeq.get(item.seq);
    if (group) group.push(item);
    else bySeq.set(item.seq, [item]);
  }
  let rooted: Set<Item> | undefined;
  for (const [seq, group] of bySeq) {
    if (group.length < 2) continue;
    rooted ??= ownLines(items, tips);
    const inPlace = (i: Item) => i.prev === (items[i.line - 2]?.hash ?? GENESIS_PREV);
    const own = group.find((i) => rooted!.has(i) && inPlace(i)) ?? group.find((i) => rooted!.has(i)) ?? group.find(inPlace) ?? group[0]!;
    for (const item of group) {
      if (item === own) continue;
      item.kind = 'inserted';
      problems.push({
        kind: 'inserted',
        line: item.line,
        message:
          item.hash === own.hash
            ? `entry inserted: a copy of entry #${seq} (line ${own.line})`
            : `entry inserted: a second entry #${seq} (the log's own is at line ${own.line}), signed by this key but not part of this chain: taken from another log under the same key`,
      });
    }
  }
}

/**
 * Entry numbers must run 0,1,2,... in file order. A reordering is reported once, at the first line out of
 * place (the first holding a number while a smaller one still comes later); numbers that never appear
 * are removed, reported where they belonged.
 * @returns the number each placed line holds (an unsigned line's claim only where it fits).
 */
export function checkNumbering(items: Item[], problems: Problem[]): Map<Item, number> {
  const placed = items.filter((i) => i.kind !== 'inserted');
  // The smallest signed number at or after each position, with its line: where a missing number turns up.
  const after: ({ seq: number; line: number } | undefined)[] = new Array(placed.length + 1).fill(undefined);
  for (let k = placed.length - 1; k >= 0; k--) {
    const item = placed[k]!;
    const later = after[k + 1];
    after[k] = item.signed && item.seq !== undefined && (!later || item.seq < later.seq) ? { seq: item.seq, line: item.line } : later;
  }
  const held = new Map<Item, number>();
  const seen = new Set<number>();
  let next = 0;
  let maxSeen = -1;
  let outOfOrder = false;
  placed.forEach((item, k) => {
    const later = after[k + 1];
    let s: number;
    if (item.signed && item.seq !== undefined) s = item.seq;
    else {
      // An unsigned line holds its claimed number only where it agrees with the signed lines after it.
      const claim = item.seq;
      s = claim !== undefined && claim >= next && claim < next + placed.length && !seen.has(claim) && (!later || claim < later.seq) ? claim : next;
    }
    const filledLater = later !== undefined && later.seq < s;
    if (item.signed && !outOfOrder && (s < next || (s > next && filledLater))) {
      outOfOrder = true;
      if (item.kind === undefined) item.kind = 'reordered';
      problems.push({
        kind: 'reordered',
        line: item.line,
        message:
          s > next
            ? `entry reordered: line ${item.line} holds entry #${s}, but entry #${later!.seq} comes later (line ${later!.line}): the lines are out of order from here`
            : `entry reordered: entry #${s} comes after entry #${maxSeen}`,
      });
    }
    held.set(item, s);
    seen.add(s);
    maxSeen = Math.max(maxSeen, s);
    if (s === next || (s > next && !filledLater)) next = s + 1;
    while (seen.has(next)) next++;
    if (outOfOrder && maxSeen < next) outOfOrder = false;
  });
  reportGaps(placed, held, problems);
  return held;
}

/** Numbers missing from 0..max, as ranges, each reported at the first line holding a larger number. */
function reportGaps(placed: Item[], held: Map<Item, number>, problems: Problem[]): void {
  const sorted = [...new Set(held.values())].sort((a, b) => a - b);
  const gaps: { from: number; to: number }[] = [];
  let expect = 0;
  for (const s of sorted) {
    if (s > expect) gaps.push({ from: expect, to: s - 1 });
    expect = s + 1;
  }
  let g = 0;
  for (const item of placed) {
    const s = held.get(item)!;
    for (; g < gaps.length && gaps[g]!.from < s; g++) {
      const { from, to } = gaps[g]!;
      problems.push({
        kind: 'removed',
        line: item.line,
        message: from === to ? `entry #${from} removed (it belonged before this line)` : `entries #${from} to #${to} removed (they belonged before this line)`,
      });
    }
  }
}

/**
 * Checks every signed line's `prev` against the hash of the line before it (inserted lines aside). A
 * break that an edit, a reordering or a removal explains is already reported; any other is a splice.
 */
export function checkLinks(items: Item[], held: Map<Item, number>, problems: Problem[]): void {
  const hashes = new Set(items.map((i) => i.hash));
  const numbers = new Set(held.values());
  const flagged = new Set(problems.filter((p) => p.kind === 'reordered' || p.kind === 'removed').map((p) => p.line));
  const reordering = problems.some((p) => p.kind === 'reordered' || p.kind === 'inserted');
  let before: Item | undefined;
  for (const item of items) {
    if (item.kind === 'inserted') continue;
    const expected = before?.hash ?? GENESIS_PREV;
    const prior = before;
    before = item;
    if (!item.signed || item.prev === expected) continue;
    // The line before is not as written (edited, re-encoded, forged, out of place): its hash moved, not this link.
    if (flagged.has(item.line) || (prior?.kind !== undefined && prior.kind !== 'inserted')) continue;
    const intoThisLog = item.prev === GENESIS_PREV || (item.prev !== undefined && hashes.has(item.prev));
    if (intoThisLog && reordering) continue;
    const seq = item.seq ?? 0;
    if (!intoThisLog && seq > 0 && !numbers.has(seq - 1)) continue;
    if (item.kind === undefined) item.kind = intoThisLog ? 'reordered' : 'spliced';
    problems.push(
      intoThisLog
        ? { kind: 'reordered', line: item.line, message: `entry reordered: its prev is the hash of another line of this log, not of line ${prior?.line ?? 0}` }
        : {
            kind: 'spliced',
            line: item.line,
            message: `chain broken: entry #${seq} is signed by this key, but its prev is not the hash of ${prior ? `line ${prior.line}` : 'the start of the log'}: an entry from another log under the same key, spliced in here, or the entry before it was replaced`,
          },
    );
  }
}
