/**
 * A log flooded with lines that are not entries (empty lines, text, unsigned objects) stays cheap to
 * verify: a run of such lines is one item and one finding (a range of lines), whatever its length, and a
 * report lists at most MAX_PROBLEMS findings, counting the rest. Checked on the verifier's state and
 * report, not on time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { headAt, makeLog, textOf } from '../../../test/audit-logs.js';
import { parseItems } from './items.js';
import { MAX_PROBLEMS, type Problem, verifyLog } from './verify.js';

const N = 6;
const a = await makeLog(N);

/** Lines that cannot be part of the chain: none is signed, none links to the line before. */
const junkLine = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 40 }).filter((s) => !s.includes('\n')),
  fc.constant('{}'),
  fc.constant('{"prev":"x","seq":3}'),
  fc.constant(`{"prev":"${'0'.repeat(63)}1","sig":"AAAA"}`),
);

const lineOf = (p: Problem) => [p.line, p.through ?? p.line];

describe('when a run of lines that are not entries is put in', () => {
  it('reports the whole run once, as one range, and keeps one item for it, wherever it is and however long (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N }), fc.array(junkLine, { minLength: 2, maxLength: 300 }), fc.integer({ min: 1, max: N }), (i, run, h) => {
        const flooded = [...a.lines.slice(0, i), ...run, ...a.lines.slice(i)];
        const r = verifyLog(textOf(flooded), a.verifier, [headAt(a, a.lines, h)]);
        assert.equal(r.verdict, 'tampered');
        assert.equal(r.entries, N + run.length);
        const named = r.problems.filter((p) => p.line > 0);
        assert.deepEqual(named.map(lineOf), [[i + 1, i + run.length]], JSON.stringify(r.problems));
        assert.equal(named[0]!.kind, 'inserted');
        assert.equal(parseItems(Buffer.from(textOf(flooded)), a.verifier.key, []).length, N + 1);
      }),
      { numRuns: 150 },
    );
  });

  it('names a million empty lines after the last entry as one range, with one item for them', () => {
    const flooded = Buffer.concat([Buffer.from(textOf(a.lines)), Buffer.alloc(1_000_000, 0x0a)]);
    const r = verifyLog(flooded, a.verifier, a.heads);
    assert.equal(r.verdict, 'tampered');
    assert.deepEqual(
      r.problems.map((p) => [p.kind, ...lineOf(p)]),
      [['inserted', N + 1, N + 1_000_000]],
    );
    assert.match(r.problems[0]!.message, /^1000000 empty lines after the last entry/);
    assert.equal(parseItems(flooded, a.verifier.key, []).length, N + 1);
  });

  it('merges consecutive lines with one finding into a range (three edited entries)', () => {
    const edited = a.lines.map((l, k) => (k >= 1 && k <= 3 ? l.replace('"reason":"', '"reason":"x') : l));
    const r = verifyLog(textOf(edited), a.verifier, a.heads);
    const ranges = r.problems.filter((p) => p.line > 0 && p.line <= 4).map((p) => [p.kind, ...lineOf(p)]);
    assert.ok(ranges.length <= 2, JSON.stringify(r.problems));
    assert.equal(ranges[0]![1], 2);
  });
});

describe('when a log holds more findings than a report lists', () => {
  it(`lists the first ${MAX_PROBLEMS}, from the first line on, and counts the rest`, () => {
    // Copies of the first entry between text lines: findings that differ from line to line.
    const lines = [...a.lines];
    for (let k = 0; k < 3000; k++) lines.push(k % 2 === 0 ? a.lines[0]! : `junk ${k}`);
    const r = verifyLog(textOf(lines), a.verifier, a.heads);
    assert.equal(r.verdict, 'tampered');
    assert.equal(r.problems.length, MAX_PROBLEMS);
    assert.ok(r.omitted > 0);
    assert.equal(r.problems[0]!.line, N + 1);
    const listedLines = r.problems.reduce((n, p) => n + (p.through ?? p.line) - p.line + 1, 0);
    assert.ok(listedLines + r.omitted <= 3000 && listedLines + r.omitted >= MAX_PROBLEMS + 1);
  });

  it('lists everything, omitting nothing, below the cap', () => {
    const r = verifyLog(textOf([...a.lines, 'junk']), a.verifier, a.heads);
    assert.equal(r.omitted, 0);
    assert.equal(r.problems.length, 1);
  });
});
