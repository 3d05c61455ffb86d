/**
 * The verifier and the gate's start-up check on splices, reorderings and keys, as properties over real
 * logs: two logs written by the gate under one key, heads signed at any size (a head that lags after a
 * crash, or an older head put back), every splice of one into the other, every swap and every reordering.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { headAt, makeLog, textOf } from '../../../test/audit-logs.js';
import { sha256Hex } from '../canonical.js';
import { checkBeforeAppend } from './append-check.js';
import { verifyLog } from './verify.js';

const N = 12;
const a = await makeLog(N);
const b = await makeLog(N, { keyOf: a, tag: 'other' });
const stranger = await makeLog(N);

/** The smallest line a report names (0 is the head as a whole, left out). */
const firstLine = (problems: { line: number }[]) => Math.min(...problems.map((p) => p.line).filter((l) => l > 0));

const gateStart = (lines: string[], head: { note: string } | undefined) => checkBeforeAppend(Buffer.from(textOf(lines)), head?.note, a.verifier);

describe('when entries of another log under the same key are spliced in', () => {
  it('reports "spliced" at the first spliced line, past a lagging head or under it (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N }), fc.integer({ min: 1, max: N - 1 }), fc.integer({ min: 1, max: N }), (h, i, len) => {
        const j = Math.min(N, i + len);
        const spliced = [...a.lines.slice(0, i), ...b.lines.slice(i, j), ...a.lines.slice(j)];
        const head = headAt(a, a.lines, h);
        const r = verifyLog(textOf(spliced), a.verifier, [head]);
        assert.equal(r.verdict, 'tampered');
        assert.ok(
          r.problems.some((p) => p.kind === 'spliced' && p.line === i + 1),
          JSON.stringify(r.problems),
        );
        assert.equal(firstLine(r.problems), i + 1);
        const start = gateStart(spliced, head);
        assert.deepEqual(start.ok ? undefined : start.problem, { kind: 'line', line: i + 1, what: 'does not continue the hash chain' });
      }),
      { numRuns: 150 },
    );
  });

  it('names the foreign lines, or without a head on the log’s chain the line where the chain breaks, when the splice starts at the first entry, unless the whole log is the other one (property)', () => {
    // Two first entries both link to the start: which is the log's own shows from the head's chain tip,
    // or, when the head's tip is not in the file, only where the other chain ends.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N }), fc.integer({ min: 1, max: N }), (h, j) => {
        const spliced = [...b.lines.slice(0, j), ...a.lines.slice(j)];
        const r = verifyLog(textOf(spliced), a.verifier, [headAt(a, a.lines, h)]);
        if (j === N && h === 0) return assert.equal(r.verdict, 'intact', 'another whole log under the key, and a head that covers nothing');
        assert.equal(r.verdict, 'tampered');
        // The whole log replaced: the head's Merkle root tells.
        if (j === N) return assert.ok(r.problems.some((p) => p.kind === 'head'));
        assert.ok(firstLine(r.problems) <= j + 1, JSON.stringify(r.problems));
        // A head whose chain tip is in the file says which lines are foreign: named from the first of them.
        if (h > j)
          assert.ok(
            r.problems.some((p) => p.kind === 'spliced' && p.line === 1 && (p.through ?? 1) === j),
            JSON.stringify(r.problems),
          );
        else assert.ok(r.problems.some((p) => p.kind === 'spliced' && p.line === j + 1));
      }),
      { numRuns: 60 },
    );
  });

  it('names the splice, or the line right after it, when another log\u2019s entries are inserted between the log\u2019s own (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N - 1 }), fc.integer({ min: 1, max: 4 }), (i, x, len) => {
        const y = Math.min(N, x + len);
        const inserted = [...a.lines.slice(0, i), ...b.lines.slice(x, y), ...a.lines.slice(i)];
        const r = verifyLog(textOf(inserted), a.verifier, [headAt(a, a.lines, i)]);
        assert.equal(r.verdict, 'tampered');
        assert.ok(
          r.problems.some((p) => p.line >= i + 1 && p.line <= i + (y - x) + 1),
          JSON.stringify(r.problems),
        );
        assert.equal(gateStart(inserted, headAt(a, a.lines, i)).ok, false);
      }),
      { numRuns: 150 },
    );
  });

  it('passes the log itself, with any head of it, at any size (the properties above are not vacuous)', () => {
    for (let h = 0; h <= N; h++) {
      assert.equal(verifyLog(textOf(a.lines), a.verifier, [headAt(a, a.lines, h)]).verdict, 'intact');
      assert.equal(gateStart(a.lines, headAt(a, a.lines, h)).ok, true);
    }
  });
});

describe('when lines are out of order', () => {
  it('names the first line out of place for any swap of two lines, and nothing before it (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N - 1 }), fc.integer({ min: 0, max: N - 1 }), fc.integer({ min: 0, max: N }), (x, y, h) => {
        fc.pre(x !== y);
        const [lo, hi] = x < y ? [x, y] : [y, x];
        const swapped = [...a.lines];
        [swapped[lo], swapped[hi]] = [swapped[hi]!, swapped[lo]!];
        const r = verifyLog(textOf(swapped), a.verifier, [headAt(a, a.lines, h)]);
        assert.equal(r.verdict, 'tampered');
        assert.equal(firstLine(r.problems), lo + 1, JSON.stringify(r.problems));
        assert.deepEqual(
          r.problems.filter((p) => p.kind === 'reordered').map((p) => p.line),
          [lo + 1],
        );
        const start = gateStart(swapped, headAt(a, a.lines, h));
        assert.equal(start.ok ? 0 : start.problem.kind === 'line' && start.problem.line, lo + 1);
      }),
      { numRuns: 200 },
    );
  });

  it('names the first line out of place for any reordering of a stretch of lines (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N - 2 }), fc.integer({ min: 2, max: N }), fc.integer(), (start, len, seed) => {
        const end = Math.min(N, start + len);
        const stretch = fc.sample(fc.shuffledSubarray(a.lines.slice(start, end), { minLength: end - start, maxLength: end - start }), {
          numRuns: 1,
          seed,
        })[0]!;
        const reordered = [...a.lines.slice(0, start), ...stretch, ...a.lines.slice(end)];
        const first = reordered.findIndex((l, k) => l !== a.lines[k]);
        fc.pre(first >= 0);
        const r = verifyLog(textOf(reordered), a.verifier, a.heads);
        assert.equal(firstLine(r.problems), first + 1, JSON.stringify(r.problems));
        assert.equal(r.problems.find((p) => p.line === first + 1)?.kind, 'reordered');
      }),
      { numRuns: 200 },
    );
  });
});

describe('when arbitrary lines are put in', () => {
  const junk = fc.oneof(
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b.filter((x) => x !== 0x0a))),
    fc.object().map((o) => Buffer.from(JSON.stringify(o))),
    fc
      .record({ seq: fc.integer({ min: -1, max: 1e9 }), prev: fc.constantFrom(...a.lines.map((l) => sha256Hex(l))), sig: fc.base64String() })
      .map((o) => Buffer.from(JSON.stringify(o))),
  );
  const withLine = (k: number, line: Buffer, replace: boolean) => {
    const ls: Buffer[] = a.lines.map((l) => Buffer.from(l));
    ls.splice(k, replace ? 1 : 0, line);
    return Buffer.concat(ls.flatMap((l) => [l, Buffer.from('\n')]));
  };

  it('names any line inserted or put in place of an entry, and never throws (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N }), junk, fc.boolean(), (k, line, replace) => {
        fc.pre(!replace || k < N);
        const bytes = withLine(k, line, replace);
        const r = verifyLog(bytes, a.verifier, a.heads);
        assert.equal(r.verdict, 'tampered');
        assert.ok(
          r.problems.some((p) => p.line === k + 1),
          JSON.stringify(r.problems),
        );
        assert.equal(checkBeforeAppend(bytes, a.heads[0]!.note, a.verifier).ok, false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('when the log or its head is signed by another key', () => {
  it('calls a log and head signed wholly by another key tampered, naming both key ids and how to tell the two cases apart', () => {
    const r = verifyLog(textOf(stranger.lines), a.verifier, stranger.heads);
    assert.equal(r.verdict, 'tampered');
    const p = r.problems.find((x) => x.kind === 'key');
    assert.ok(p, JSON.stringify(r.problems));
    assert.match(p.message, new RegExp(`${a.verifier.name}.*key id ${a.verifier.keyId.toString('hex')}`));
    assert.match(p.message, new RegExp(`${stranger.verifier.name}.*key id ${stranger.verifier.keyId.toString('hex')}`));
    assert.match(p.message, /wrong key or a forgery\?.*audit\.pub.*forged/i);
  });

  it('shows a crafted signer name as visible codes, never as terminal controls', () => {
    const note = stranger.heads[0]!.note.replace(`\u2014 ${stranger.verifier.name} `, '\u2014 evil\u001b]0;owned\u0007\u202e ');
    const r = verifyLog(textOf(stranger.lines), a.verifier, [{ label: 'head sidecar', note }]);
    assert.equal(r.verdict, 'tampered');
    const text = r.problems.map((p) => p.message).join('\n');
    assert.match(text, /evil\\u\{1b\}\]0;owned\\u\{7\}\\u\{202e\}/);
    assert.doesNotMatch(text, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  });

  it('calls a log signed by another key tampered even with no head to name that key', () => {
    const r = verifyLog(textOf(stranger.lines), a.verifier, []);
    assert.equal(r.verdict, 'tampered');
    assert.equal(r.problems[0]?.kind, 'key');
  });

  it('judges the lines one by one when the head is this key\u2019s and no entry is: they were replaced', () => {
    const r = verifyLog(textOf(stranger.lines), a.verifier, a.heads);
    assert.equal(r.verdict, 'tampered');
    assert.equal(firstLine(r.problems), 1);
    assert.ok(r.problems.every((p) => p.kind !== 'key'));
  });

  it('refuses, at gate start, a log whose head another key signed', () => {
    const start = checkBeforeAppend(Buffer.from(textOf(stranger.lines)), stranger.heads[0]!.note, a.verifier);
    assert.equal(start.ok ? undefined : start.problem.kind, 'head');
  });

  it('refuses, at gate start, entries past the head that another key signed', () => {
    const start = checkBeforeAppend(Buffer.from(textOf(stranger.lines)), headAt(a, [], 0).note, a.verifier);
    assert.equal(start.ok, false);
  });
});
