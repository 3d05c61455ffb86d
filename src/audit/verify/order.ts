/**
 * Where each line sits: its signature, its number and its link to the line before. Every line's `prev`
 * is checked against the hash of the line before it, signed or not, so a validly signed entry taken from
 * another log under the same key cannot be spliced in past a head that lags. Each break is reported at
 * its line, once, under the cause that explains it (an edit, a reordering, a removal), or as a splice.
 * Pure.
 */
import { GENESIS_PREV } from '../entry.js';
import { heldRanges } from './numbering.js';
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
    if (item.span > 1) {
      // A run of lines that are not entries: put in around the chain, or in place of entries.
      const through = item.line + item.span - 1;
      const atEnd = !next && item.line - 1 >= headSize && hasHead;
      item.kind = (next && next.prev === before) || atEnd ? 'inserted' : 'edited';
      const what = item.empty
        ? 'empty lines'
        : item.object === false
          ? 'lines that are not JSON objects'
          : item.object
            ? 'entries whose signatures do not match their content'
            : 'lines that are not entries signed by the log key (some not JSON objects)';
      problems.push({
        kind: item.kind,
        line: item.line,
        through,
        message: atEnd
          ? `${item.span} ${what} after the last entry`
          : item.kind === 'inserted'
            ? `${item.span} ${what} inserted: the chain runs around them`
            : `${item.span} ${what}, in place of entries`,
      });
    } else if (next && next.prev === before) {
      item.kind = 'inserted';
      problems.push({ kind: 'inserted', line: item.line, message: 'entry inserted: the chain runs from the line before to the line after, around it' });
    } else if (linksIn && next && next.prev === item.hash) {
      item.kind = 'forged';
      problems.push({ kind: 'forged', line: item.line, message: 'entry forged: it links into the chain but is not signed by the log key' });
    } else if (linksIn && !next && item.line - 1 >= headSize && hasHead) {
      item.kind = 'forged';
      problems.push({ kind: 'forged', line: item.line, message: 'entry forged: appended past the signed head without the log key' });
    } else {
      item.kind = 'edited';
      problems.push({
        kind: 'edited',
        line: item.line,
        message: item.object ? 'entry edited: its signature does not match its content' : 'entry edited: the line is not a JSON object',
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
export function ownLines(items: Item[], tips: string[]): OwnChain {
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
  return { lines: own, anchored };
}

/** The log's own lines, and whether a head's chain tip decided them (else: rooted at the start). */
export interface OwnChain {
  lines: Set<Item>;
  anchored: boolean;
}

/**
 * Two signed lines with one entry number: the log's own is the one on the head's chain (or, without a
 * head, whose links lead back to the start of the log), and among those the one that links to the line
 * before it; the other is inserted (a copy, or another log's entry under the same key).
 * @param chain the log's own lines (ownLines, with the tips of the heads that verify).
 */
export function markCopies(items: Item[], problems: Problem[], chain: OwnChain = ownLines(items, [])): void {
  const bySeq = new Map<number, Item[]>();
  for (const item of items) {
    if (!item.signed || item.seq === undefined || item.kind === 'inserted') continue;
    const group = bySeq.get(item.seq);
    if (group) group.push(item);
    else bySeq.set(item.seq, [item]);
  }
  const rooted = chain.lines;
  let index: Map<Item, string> | undefined;
  for (const [seq, group] of bySeq) {
    if (group.length < 2) continue;
    index ??= new Map(items.map((i, k) => [i, k > 0 ? items[k - 1]!.hash : GENESIS_PREV]));
    const before = index;
    const inPlace = (i: Item) => i.prev === before.get(i);
    const own = group.find((i) => rooted.has(i) && inPlace(i)) ?? group.find((i) => rooted.has(i)) ?? group.find(inPlace) ?? group[0]!;
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
 * Checks every signed line's `prev` against the hash of the line before it (inserted lines aside). A
 * break that an edit, a reordering or a removal explains is already reported; any other is a splice.
 */
export function checkLinks(items: Item[], held: Map<Item, number>, problems: Problem[], chain?: OwnChain): void {
  const hashes = new Set(items.map((i) => i.hash));
  const ranges = heldRanges(held);
  const isHeld = (n: number) => {
    let [lo, hi] = [0, ranges.length - 1];
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [from, to] = ranges[mid]!;
      if (n < from) hi = mid - 1;
      else if (n > to) lo = mid + 1;
      else return true;
    }
    return false;
  };
  const flagged = new Set(problems.filter((p) => p.kind === 'reordered' || p.kind === 'removed').map((p) => p.line));
  const reordering = problems.some((p) => p.kind === 'reordered' || p.kind === 'inserted');
  let before: Item | undefined;
  let foreignStart: Item | undefined;
  let foreignEnd: Item | undefined;
  for (const item of items) {
    if (item.kind === 'inserted') continue;
    const expected = before?.hash ?? GENESIS_PREV;
    const prior = before;
    before = item;
    // A run of signed lines off the head's chain, each linking to the one before.
    if (chain?.anchored && item.signed && item.kind === undefined && !chain.lines.has(item)) {
      if (!(foreignEnd && foreignEnd === prior && item.prev === expected)) foreignStart = item;
      foreignEnd = item;
    }
    if (!item.signed || item.prev === expected) continue;
    // The line before is not as written (edited, re-encoded, forged, out of place): its hash moved, not this link.
    if (flagged.has(item.line) || (prior?.kind !== undefined && prior.kind !== 'inserted')) continue;
    const intoThisLog = item.prev === GENESIS_PREV || (item.prev !== undefined && hashes.has(item.prev));
    if (intoThisLog && reordering) continue;
    const seq = item.seq ?? 0;
    if (!intoThisLog && seq > 0 && !isHeld(seq - 1)) continue;
    // The head's chain runs through this line but not through the signed lines before it (a chain of
    // their own): they are another log's entries under the same key, put in place of the log's own.
    // Named from the first of them.
    if (!intoThisLog && foreignEnd === prior && foreignStart && prior && chain?.lines.has(item)) {
      prior.kind = 'spliced';
      const [from, to] = [foreignStart.seq ?? '?', prior.seq ?? '?'];
      problems.push({
        kind: 'spliced',
        line: foreignStart.line,
        ...(prior.line > foreignStart.line ? { through: prior.line } : {}),
        message: `${from === to ? `entry #${from} is` : `entries #${from} to #${to} are`} signed by this key, but the head's chain does not run through them (line ${item.line} links to another entry): another log's entries under the same key, put in place of the log's own`,
      });
      continue;
    }
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
