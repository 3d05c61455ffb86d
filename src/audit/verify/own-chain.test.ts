/**
 * Which chain is the log's own when two logs under one key are mixed: with a head, the one its chain tip
 * leads back along (so another log's first entries put in front are the inserted ones, never the log's own
 * lines); without a head that covers an entry, the one rooted at the start and in place.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { headAt, makeLog, textOf } from '../../../test/audit-logs.js';
import { verifyLog } from './verify.js';

const N = 8;
const a = await makeLog(N);
const b = await makeLog(N, { keyOf: a, tag: 'other' });

describe('when another log\u2019s first entries under the same key are put in among the log\u2019s own', () => {
  it('names only the foreign lines, as inserted, starting at the first of them, for any head that covers an entry (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: N }), fc.integer({ min: 0, max: N }), fc.integer({ min: 1, max: N }), (h, i, k) => {
        const mixed = [...a.lines.slice(0, i), ...b.lines.slice(0, k), ...a.lines.slice(i)];
        const r = verifyLog(textOf(mixed), a.verifier, [headAt(a, a.lines, h)]);
        assert.equal(r.verdict, 'tampered');
        const named = r.problems.filter((p) => p.line > 0);
        assert.ok(
          named.every((p) => p.line > i && p.line <= i + k),
          `a genuine line was named: ${JSON.stringify(named)}`,
        );
        assert.ok(named.some((p) => p.line === i + 1));
        if (i === 0)
          assert.ok(
            named.every((p) => p.kind === 'inserted'),
            JSON.stringify(named),
          );
      }),
      { numRuns: 200 },
    );
  });

  it('says, for the prepended case, where the log\u2019s own entry is', () => {
    const mixed = [...b.lines.slice(0, 3), ...a.lines];
    const r = verifyLog(textOf(mixed), a.verifier, a.heads);
    assert.deepEqual(
      r.problems.map((p) => [p.kind, p.line]),
      [
        ['inserted', 1],
        ['inserted', 2],
        ['inserted', 3],
      ],
    );
    assert.match(r.problems[0]!.message, /the log's own is at line 4/);
  });

  it('falls back to the chain rooted at the start and in place when the head covers nothing (documented limit)', () => {
    const mixed = [...b.lines.slice(0, 3), ...a.lines];
    const r = verifyLog(textOf(mixed), a.verifier, [headAt(a, a.lines, 0)]);
    assert.equal(r.verdict, 'tampered');
    // Without a head that records a chain tip, the first lines are rooted and in place: the others are named.
    assert.ok(r.problems.some((p) => p.line === 4));
  });
});

describe('when another log’s entries under the same key take the place of the log’s own', () => {
  it('names them, from the first, when the head’s chain tip is past them (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N - 2 }), fc.integer({ min: 1, max: N - 1 }), fc.integer({ min: 1, max: N }), (i, len, h) => {
        const j = Math.min(N - 1, i + len);
        fc.pre(h > j);
        const replaced = [...a.lines.slice(0, i), ...b.lines.slice(i, j), ...a.lines.slice(j)];
        const r = verifyLog(textOf(replaced), a.verifier, [headAt(a, a.lines, h)]);
        assert.equal(r.verdict, 'tampered');
        const named = r.problems.filter((p) => p.line > 0);
        assert.equal(Math.min(...named.map((p) => p.line)), i + 1, JSON.stringify(named));
        assert.ok(
          named.every((p) => p.line <= j),
          `a genuine line was named: ${JSON.stringify(named)}`,
        );
      }),
      { numRuns: 150 },
    );
  });
});

describe('when the head carries cosignatures', () => {
  it('accepts a head with another key\u2019s well-formed signature line beside the log key\u2019s (C2SP), and ignores it', async () => {
    const { signatureLine } = await import('../note.js');
    const note = a.heads[0]!.note;
    const body = note.slice(0, note.lastIndexOf('\n\n') + 1);
    const witness = signatureLine(body, (await makeLog(0)).signer);
    const cosigned = `${note}${witness}\n`;
    assert.equal(verifyLog(textOf(a.lines), a.verifier, [{ label: 'head', note: cosigned }]).verdict, 'intact');
    // A cosignature does not stand in for the log key's: alone, it vouches for nothing.
    const alone = `${body}\n${witness}\n`;
    assert.equal(verifyLog(textOf(a.lines), a.verifier, [{ label: 'head', note: alone }]).verdict, 'tampered');
  });

  it('refuses a head with a malformed signature line of any key (not canonical base64 of a key hash and a signature)', () => {
    const note = a.heads[0]!.note;
    for (const junk of ['AAAA', 'AAAAAA==', 'not base64!', 'QUFBQUE']) {
      const r = verifyLog(textOf(a.lines), a.verifier, [{ label: 'head', note: `${note}\u2014 someone ${junk}\n` }]);
      assert.equal(r.verdict, 'tampered', junk);
      assert.match(r.problems[0]!.message, /malformed signature line/);
    }
  });
});
