/**
 * `receipt show|verify` on files that are not receipts: hostile bytes never reach the terminal raw, and
 * what cannot be a receipt (a device, a FIFO, a huge file) is refused at once with a usage error (exit 1),
 * not read forever.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LookfirstError } from '../../errors.js';
import { MAX_RECEIPT_BYTES, RECEIPT_EXIT, receiptShowCommand, receiptVerifyCommand } from './receipt.js';

const dir = mkdtempSync(join(tmpdir(), 'lf-receipt-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `f` with stdout captured; returns its result and what it wrote. */
function captured<T>(f: () => T): { value: T; out: string } {
  const write = process.stdout.write;
  let out = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    return { value: f(), out };
  } finally {
    process.stdout.write = write;
  }
}

const RAW = /[\u0000-\u0008\u000b-\u001f\u007f\u202e]/;

describe('receipt show on hostile bytes', () => {
  it('escapes control characters quoted from a file that is not JSON (exit 2)', () => {
    const file = join(dir, 'escape.json');
    writeFileSync(file, '\u001b[2J\u001b[32mreceipt verified\u202e');
    const { value, out } = captured(() => receiptShowCommand(file, {}));
    assert.equal(value, RECEIPT_EXIT.failed);
    assert.doesNotMatch(out.replace(/\u001b\[[0-9;]*m/g, ''), RAW, JSON.stringify(out));
    assert.match(out, /\\u001B/);
  });

  it('escapes control characters in a well-formed but forged receipt', () => {
    const file = join(dir, 'forged.json');
    const esc = '\u001b[2J';
    const receipt = {
      v: 1,
      type: 'lookfirst-receipt',
      id: 'rc_0123456789abcdef',
      call_id: `c${esc}`,
      key: 'k',
      sig: 'x',
      who: { channel: 'web', actor: `alice${esc}\nreceipt verified`, trust: 'web' },
      what: { tool: `t${esc}`, upstream: 'u', upstream_tool: 'u', args_sha256: 'a'.repeat(64), shown: esc },
      when: { confirmed: '2026-01-01T00:00:00.000Z', executed: '2026-01-01T00:00:00.000Z' },
      how: { method: 'page' },
      checks: [{ name: `n${esc}`, ok: true, detail: `d${esc}\nok    fake` }],
      outcome: { executed: 'ok' },
      audit: { seq: 0, entry_sha256: 'b'.repeat(64), event: 'executed' },
    };
    writeFileSync(file, JSON.stringify(receipt));
    for (const json of [false, true]) {
      const { out } = captured(() => receiptShowCommand(file, { json }));
      assert.doesNotMatch(out.replace(/\u001b\[[0-9;]*m/g, '').replace(/\n/g, ''), RAW, JSON.stringify(out));
      assert.ok(!out.includes('\u001b[2J'), 'no raw escape');
      if (!json) assert.equal(out.split('\n').filter((l) => l.includes('fake')).length, 1, 'a detail cannot start a line of its own');
    }
  });
});

describe('receipt show|verify on what cannot be a receipt', () => {
  const usage = (f: () => unknown, re: RegExp) => assert.throws(f, (e: unknown) => e instanceof LookfirstError && e.code === 'USAGE' && re.test(e.message));

  it('refuses a device at once (/dev/zero would never end)', () => {
    usage(() => receiptShowCommand('/dev/zero', {}), /not a regular file/);
    usage(() => receiptVerifyCommand('/dev/zero', { log: 'x', pub: 'y' }), /not a regular file/);
  });

  it('refuses a FIFO without blocking on it', () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    usage(() => receiptShowCommand(fifo, {}), /not a regular file/);
  });

  it('refuses a file larger than any receipt', () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, Buffer.alloc(MAX_RECEIPT_BYTES + 1, 0x20));
    usage(() => receiptShowCommand(big, {}), /more than any receipt/);
  });

  it('says which file could not be read', () => {
    usage(() => receiptShowCommand(join(dir, 'missing.json'), {}), /no such file: .*missing\.json/);
  });
});
