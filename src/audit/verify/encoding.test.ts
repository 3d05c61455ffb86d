/**
 * Only the canonical encoding of a signature, a hash or a line counts. Lenient decoders accept many texts
 * for the same bytes (padding dropped or added, unused low bits set, URL-safe letters, stray characters,
 * JSON with other spacing, key order, escapes or number forms, invalid UTF-8 read as U+FFFD): every such
 * text of a real log's line or head must be named, by the verifier and by the gate's start-up check.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { headAt, makeLog, textOf } from '../../../test/audit-logs.js';
import { checkBeforeAppend } from './append-check.js';
import { decodeBase64Canonical, decodeUtf8Strict } from './encoding.js';
import { verifyLog } from './verify.js';

const N = 6;
const made = await makeLog(N);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Edits that a lenient base64 decoder forgives; applied to canonical text, they keep its bytes. */
const base64Edit = fc.oneof(
  fc.constant((s: string) => s.replace(/=+$/, '')),
  fc.constant((s: string) => s.replace(/=$/, '')),
  fc.integer({ min: 1, max: 3 }).map((n) => (s: string) => s + '='.repeat(n)),
  fc.integer({ min: 1, max: 15 }).map((r) => (s: string) => {
    // The last character before the padding carries unused low bits.
    const at = s.replace(/=+$/, '').length - 1;
    const bits = s.length - at - 1 === 2 ? 0b001111 : s.length - at - 1 === 1 ? 0b000011 : 0;
    const index = ALPHABET.indexOf(s[at]!);
    return `${s.slice(0, at)}${ALPHABET[(index & ~bits) | (r & bits)]}${s.slice(at + 1)}`;
  }),
  fc.constant((s: string) => s.replaceAll('+', '-').replaceAll('/', '_')),
  fc.tuple(fc.nat(), fc.constantFrom(' ', '\t', '.', '!', '*', 'A')).map(
    ([at, c]) =>
      (s: string) =>
        `${s.slice(0, at % (s.length + 1))}${c}${s.slice(at % (s.length + 1))}`,
  ),
);

/** A lenient-equal, different text for `s`, or undefined when the edit changed the bytes or nothing. */
function variant(s: string, edits: ((s: string) => string)[]): string | undefined {
  const v = edits.reduce((t, e) => e(t), s);
  return v !== s && Buffer.from(v, 'base64').equals(Buffer.from(s, 'base64')) ? v : undefined;
}

describe('canonical base64', () => {
  it('decodes the canonical text of any bytes, and no other text that a lenient decoder reads the same (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), fc.array(base64Edit, { minLength: 1, maxLength: 3 }), (bytes, edits) => {
        const s = Buffer.from(bytes).toString('base64');
        assert.deepEqual(decodeBase64Canonical(s), Buffer.from(bytes));
        const v = variant(s, edits);
        fc.pre(v !== undefined);
        assert.equal(decodeBase64Canonical(v!), undefined, JSON.stringify(v));
      }),
    );
  });

  it('reads invalid UTF-8 as nothing, not as U+FFFD', () => {
    assert.equal(decodeUtf8Strict(Buffer.from([0x7b, 0xff, 0x7d])), undefined);
    assert.equal(decodeUtf8Strict(Buffer.from('\uFFFD', 'utf8')), '\uFFFD');
  });
});

describe('when a line of the log is encoded otherwise', () => {
  it('names the line whose signature is any other base64 text of the same bytes, at verify and at gate start (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N - 1 }), fc.array(base64Edit, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: N }), (k, edits, h) => {
        const sig = (JSON.parse(made.lines[k]!) as { sig: string }).sig;
        const v = variant(sig, edits);
        fc.pre(v !== undefined);
        const lines = made.lines.map((l, i) => (i === k ? l.replace(`"sig":"${sig}"`, `"sig":${JSON.stringify(v)}`) : l));
        const r = verifyLog(textOf(lines), made.verifier, [headAt(made, made.lines, h)]);
        assert.equal(r.verdict, 'tampered');
        assert.ok(
          r.problems.some((p) => p.kind === 'encoding' && p.line === k + 1 && /base64/.test(p.message)),
          JSON.stringify(r.problems),
        );
        const start = checkBeforeAppend(Buffer.from(textOf(lines)), headAt(made, made.lines, h).note, made.verifier);
        assert.equal(start.ok, false);
        if (k >= h) assert.deepEqual(start.ok ? undefined : start.problem, { kind: 'line', line: k + 1, what: "is not signed by this gate's key" });
      }),
      { numRuns: 200 },
    );
  });

  it('names the line whose prev hash is written in another case (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: N - 1 }), fc.uint8Array({ minLength: 64, maxLength: 64 }), (k, mask) => {
        const prev = (JSON.parse(made.lines[k]!) as { prev: string }).prev;
        const other = [...prev].map((c, i) => (mask[i]! & 1 ? c.toUpperCase() : c)).join('');
        fc.pre(other !== prev);
        const lines = made.lines.map((l, i) => (i === k ? l.replace(prev, other) : l));
        const r = verifyLog(textOf(lines), made.verifier, made.heads);
        assert.equal(r.verdict, 'tampered');
        assert.equal(r.problems[0]?.line, k + 1, JSON.stringify(r.problems));
      }),
    );
  });

  it('names the line written as other JSON of the same entry: spacing, key order, escapes, number forms (property)', () => {
    const form = fc.record({
      reverse: fc.boolean(),
      space: fc.constantFrom('', ' '),
      number: fc.constantFrom(
        (n: number) => String(n),
        (n: number) => `${n}.0`,
        (n: number) => `${n}e0`,
      ),
      escape: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: N - 1 }), form, fc.integer({ min: 0, max: N }), (k, f, h) => {
        const entry = JSON.parse(made.lines[k]!) as Record<string, unknown>;
        const keys = Object.keys(entry);
        if (f.reverse) keys.reverse();
        const value = (v: unknown) =>
          typeof v === 'number'
            ? f.number(v)
            : f.escape && typeof v === 'string'
              ? JSON.stringify(v).replace(/[a-z]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
              : JSON.stringify(v);
        const line = `{${keys.map((key) => `${JSON.stringify(key)}:${f.space}${value(entry[key])}`).join(',')}}`;
        fc.pre(line !== made.lines[k]);
        const lines = made.lines.map((l, i) => (i === k ? line : l));
        const r = verifyLog(textOf(lines), made.verifier, [headAt(made, made.lines, h)]);
        assert.equal(r.verdict, 'tampered');
        assert.ok(
          r.problems.some((p) => p.kind === 'encoding' && p.line === k + 1),
          JSON.stringify(r.problems),
        );
        const start = checkBeforeAppend(Buffer.from(textOf(lines)), headAt(made, made.lines, h).note, made.verifier);
        assert.equal(start.ok, false);
        if (k >= h)
          assert.deepEqual(start.ok ? undefined : start.problem, { kind: 'line', line: k + 1, what: 'is not in the canonical encoding the gate writes' });
      }),
      { numRuns: 200 },
    );
  });

  it('names a line whose bytes are not UTF-8 even though a lenient decoder reads the same text', async () => {
    const odd = await makeLog(3, { tag: '\uFFFD' });
    const bytes = Buffer.from(textOf(odd.lines));
    const at = bytes.indexOf(Buffer.from('\uFFFD', 'utf8'), bytes.indexOf(0x0a) + 1);
    const bad = Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]);
    assert.equal(bad.toString('utf8'), bytes.toString('utf8'), 'a lenient decoder sees no change');
    const r = verifyLog(bad, odd.verifier, odd.heads);
    assert.deepEqual(
      r.problems.map((p) => [p.kind, p.line]),
      [['encoding', 2]],
    );
    assert.match(r.problems[0]!.message, /not valid UTF-8/);
  });
});

describe('when the head is encoded otherwise', () => {
  it('rejects a head whose signature is any other base64 text of the same bytes (property)', () => {
    const note = made.heads[0]!.note;
    const sig = /\u2014 \S+ (\S+)\n$/u.exec(note)![1]!;
    fc.assert(
      fc.property(fc.array(base64Edit, { minLength: 1, maxLength: 3 }), (edits) => {
        const v = variant(sig, edits);
        fc.pre(v !== undefined);
        const head = { label: 'head sidecar', note: note.replace(sig, v!) };
        const r = verifyLog(textOf(made.lines), made.verifier, [head]);
        assert.equal(r.verdict, 'tampered');
        assert.ok(r.problems.some((p) => p.kind === 'head' && p.line === 0));
        assert.equal(checkBeforeAppend(Buffer.from(textOf(made.lines)), head.note, made.verifier).ok, false);
      }),
    );
  });

  it('rejects a head whose root or chain hash is written otherwise', () => {
    const note = made.heads[0]!.note;
    const [origin, size, root, chain] = note.split('\n');
    for (const changed of [
      note.replace(`\n${root}\n`, `\n${root!.replace(/=$/, '')}\n`),
      note.replace(
        chain!,
        chain!.replace(/[a-f]/, (c) => c.toUpperCase()),
      ),
      note.replace(`${origin}\n${size}\n`, `${origin}\n0${size}\n`),
    ]) {
      assert.notEqual(changed, note);
      const r = verifyLog(textOf(made.lines), made.verifier, [{ label: 'head sidecar', note: changed }]);
      assert.equal(r.verdict, 'tampered');
      assert.equal(checkBeforeAppend(Buffer.from(textOf(made.lines)), changed, made.verifier).ok, false);
    }
  });
});
