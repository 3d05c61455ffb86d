/**
 * Entry numbers: each placed line holds one (a run of lines that are not entries, one per line), they must
 * run 0,1,2,... in file order, a reordering is named at its first line out of place, and numbers that never
 * appear are removed. Pure.
 */
import type { Item, Problem } from './types.js';

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
    // A run of lines that are not entries holds one number per line (numbers below `next` need no `seen`).
    maxSeen = Math.max(maxSeen, s + item.span - 1);
    if (s === next || (s > next && !filledLater)) next = s + item.span;
    while (seen.has(next)) next++;
    if (outOfOrder && maxSeen < next) outOfOrder = false;
  });
  reportGaps(placed, held, problems);
  return held;
}

/** The numbers the placed lines hold, as sorted, merged ranges (a run of lines holds one per line). */
export function heldRanges(held: Map<Item, number>): [number, number][] {
  const ranges = [...held].map(([item, s]): [number, number] => [s, s + item.span - 1]).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** Numbers missing from 0..max, as ranges, each reported at the first line holding a larger number. */
function reportGaps(placed: Item[], held: Map<Item, number>, problems: Problem[]): void {
  const gaps: { from: number; to: number }[] = [];
  let expect = 0;
  for (const [from, to] of heldRanges(held)) {
    if (from > expect) gaps.push({ from: expect, to: from - 1 });
    expect = to + 1;
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
