import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { sha256Hex } from './canonical.js';
import { encodeEntry, GENESIS_PREV } from './entry.js';
import { encodeReceipt, parseReceipt, type Receipt, type ReceiptBody, receiptIdOf, receiptSha256, verifyReceiptSignature } from './receipt.js';
import { checkReceiptLink } from './receipt-link.js';
import { writeReceipt } from './receipts.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const signer = (bytes: Uint8Array) => sign(null, bytes, privateKey);
const CALL = '00000000-0000-4000-8000-000000000001';

function body(over: Partial<ReceiptBody> = {}): ReceiptBody {
  const entry = 'e'.repeat(64);
  return {
    v: 1,
    type: 'lookfirst-receipt',
    id: receiptIdOf(CALL, entry),
    call_id: CALL,
    who: { channel: 'webhook', actor: 'webhook:oncall', trust: 'shared-secret' },
    what: { tool: 'write_file', upstream: 'files', upstream_tool: 'write_file', args_sha256: 'a'.repeat(64), shown: 'write_file · /tmp/x' },
    when: { proposed: '2026-12-02T01:00:00.000Z', confirmed: '2026-12-02T01:00:05.000Z', executed: '2026-12-02T01:00:06.000Z' },
    how: { method: 'webhook' },
    checks: [
      { name: 'shared_secret', ok: true },
      { name: 'action_unchanged', ok: true, detail: 'args_sha256 aaaa' },
      { name: 'call_open', ok: true },
    ],
    outcome: { executed: 'ok', readback: 'ok' },
    audit: { seq: 3, entry_sha256: entry, event: 'executed' },
    key: 'lookfirst/0badc0de',
    ...over,
  };
}

const parsed = (text: string): Receipt => {
  const p = parseReceipt(Buffer.from(text));
  assert.ok(p.ok, JSON.stringify(p));
  return p.receipt;
};

describe('receipt format v1', () => {
  it('round-trips: canonical bytes, one newline, a signature that verifies under the audit key only', () => {
    const text = encodeReceipt(body(), signer);
    assert.ok(text.endsWith('}\n'));
    const p = parseReceipt(Buffer.from(text));
    assert.ok(p.ok && p.canonical);
    assert.equal(verifyReceiptSignature(p.receipt, publicKey), true);
    assert.equal(verifyReceiptSignature(p.receipt, other.publicKey), false);
    assert.deepEqual(Object.keys(JSON.parse(text)), ['audit', 'call_id', 'checks', 'how', 'id', 'key', 'outcome', 'sig', 'type', 'v', 'what', 'when', 'who']);
  });

  it('drops undefined fields before signing (they are not part of the signed bytes)', () => {
    const text = encodeReceipt(body({ how: { method: 'rule', transcript: undefined } }), signer);
    assert.doesNotMatch(text, /transcript/);
    assert.equal(verifyReceiptSignature(parsed(text), publicKey), true);
  });

  describe('when any signed field is edited', () => {
    const edits: [string, (r: Receipt) => void][] = [
      ['who.actor', (r) => (r.who.actor = 'webhook:mallory')],
      ['who.trust', (r) => (r.who.trust = 'authenticated')],
      ['what.args_sha256', (r) => (r.what.args_sha256 = 'b'.repeat(64))],
      ['what.shown', (r) => (r.what.shown = 'something else')],
      ['when.confirmed', (r) => (r.when.confirmed = '2026-12-02T01:00:04.000Z')],
      ['how.method', (r) => (r.how.method = 'tap')],
      ['checks[0].ok', (r) => ((r.checks[0] as { ok: boolean }).ok = false)],
      ['checks removed', (r) => r.checks.pop()],
      ['outcome.readback', (r) => (r.outcome.readback = 'failed')],
      ['audit.seq', (r) => (r.audit.seq = 4)],
      ['audit.entry_sha256', (r) => (r.audit.entry_sha256 = 'f'.repeat(64))],
      ['call_id', (r) => (r.call_id = 'another')],
      ['key', (r) => (r.key = 'lookfirst/00000000')],
    ];
    for (const [name, edit] of edits)
      it(`fails verification (${name})`, () => {
        const r = parsed(encodeReceipt(body(), signer));
        edit(r);
        assert.equal(verifyReceiptSignature(r, publicKey), false);
      });
  });

  it('fails verification for any single-byte change of the file that still parses as a receipt (fast-check)', () => {
    const text = encodeReceipt(body(), signer);
    const bytes = Buffer.from(text);
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (at, delta) => {
        const b = Buffer.from(bytes);
        b[at] = ((b[at] as number) + delta) % 256;
        const p = parseReceipt(b);
        // A change either breaks the receipt, or leaves one whose signature or canonical form no longer holds.
        if (!p.ok) return true;
        return !p.canonical || !verifyReceiptSignature(p.receipt, publicKey);
      }),
      { numRuns: 2000 },
    );
  });

  it('names what is missing from something that is not a receipt', () => {
    const p = parseReceipt(Buffer.from('{"v":2,"type":"x"}\n'));
    assert.ok(!p.ok);
    assert.ok(p.problems.some((m) => /version/.test(m)));
    assert.ok(p.problems.some((m) => /"who"/.test(m)));
    assert.ok(!parseReceipt(Buffer.from([0xff, 0xfe])).ok);
    assert.ok(!parseReceipt(Buffer.from('[1]')).ok);
  });

  it('sees a change of whitespace alone as a non-canonical (edited) receipt', () => {
    const text = encodeReceipt(body(), signer).replace('{"audit"', '{ "audit"');
    const p = parseReceipt(Buffer.from(text));
    assert.ok(p.ok && !p.canonical);
  });
});

describe('checkReceiptLink', () => {
  const { privateKey: logKey, publicKey: logPub } = generateKeyPairSync('ed25519');
  /** A log of `n` entries; entry 2 is the call's executed entry; returns its bytes and that entry's hash. */
  function makeLog(receiptSha: string | undefined): { log: Buffer; hash: string } {
    let prev = GENESIS_PREV;
    const lines: string[] = [];
    const fields = [
      { event: 'call_received', call_id: CALL, tool: 'write_file' },
      { event: 'execution_started', call_id: CALL, tool: 'write_file' },
      { event: 'executed', call_id: CALL, tool: 'write_file', outcome: 'ok' },
      ...(receiptSha ? [{ event: 'receipt_issued', call_id: CALL, tool: 'write_file', receipt_sha256: receiptSha }] : []),
    ];
    for (const [i, f] of fields.entries()) {
      const line = encodeEntry(f, i, 1_800_000_000_000 + i, prev, logKey);
      prev = sha256Hex(line);
      lines.push(line);
    }
    return { log: Buffer.from(`${lines.join('\n')}\n`), hash: sha256Hex(lines[2] as string) };
  }

  it('holds for the entry at its seq with its hash, and a receipt_issued naming it', () => {
    const { hash } = makeLog(undefined);
    const r = parsed(encodeReceipt(body({ audit: { seq: 2, entry_sha256: hash, event: 'executed' }, id: receiptIdOf(CALL, hash) }), signer));
    const sha = receiptSha256(encodeReceipt(body({ audit: { seq: 2, entry_sha256: hash, event: 'executed' }, id: receiptIdOf(CALL, hash) }), signer));
    const { log } = makeLog(sha);
    assert.deepEqual(checkReceiptLink(r, sha, log, logPub), []);
    assert.deepEqual(
      checkReceiptLink(r, sha, makeLog(undefined).log, logPub).map((p) => p.name),
      ['not_issued'],
    );
  });

  it('says the entry is missing from a log cut before it, and from another log', () => {
    const { log, hash } = makeLog('c'.repeat(64));
    const r = parsed(encodeReceipt(body({ audit: { seq: 2, entry_sha256: hash, event: 'executed' } }), signer));
    const cut = Buffer.from(`${log.toString().split('\n').slice(0, 2).join('\n')}\n`);
    const problems = checkReceiptLink(r, 'c'.repeat(64), cut, logPub);
    assert.equal(problems[0]?.name, 'entry_missing');
    assert.match(problems[0]?.message ?? '', /its audit entry \(seq 2\) is missing from the log/);
    const elsewhere = parsed(encodeReceipt(body({ audit: { seq: 2, entry_sha256: 'd'.repeat(64), event: 'executed' } }), signer));
    assert.equal(checkReceiptLink(elsewhere, 'c'.repeat(64), log, logPub)[0]?.name, 'entry_changed');
    // The right bytes under another key are not this log's entry.
    assert.ok(checkReceiptLink(r, 'c'.repeat(64), log, other.publicKey).some((p) => p.name === 'entry_unsigned'));
  });
});

describe('writeReceipt', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lf-receipts-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes <call id>.json (0644, folder 0755) whose SHA-256 it returns, and never overwrites one', () => {
    const folder = join(dir, 'receipts');
    const issued = writeReceipt(folder, body(), signer);
    assert.equal(issued.path, join(folder, `${CALL}.json`));
    assert.equal(statSync(issued.path).mode & 0o777, 0o644);
    assert.equal(statSync(folder).mode & 0o777, 0o755 & ~process.umask());
    assert.equal(issued.sha256, sha256Hex(readFileSync(issued.path)));
    assert.throws(() => writeReceipt(folder, body(), signer), /exists already/);
  });

  it('refuses a call id that is not a plain file name', () => {
    assert.throws(() => writeReceipt(dir, body({ call_id: '../escape' }), signer), /cannot name a receipt file/);
  });
});
