/**
 * The gate's start on a log whose file is gone or unreadable while its head stays: a head that vouched for
 * entries over a missing log is a cut (the gate refuses, and leaves the head alone), never a fresh start;
 * a head it cannot read is named as the head, not as the log.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { headAt, makeLog } from '../../test/audit-logs.js';
import { loadSigner } from './keys.js';
import { AuditLog } from './writer.js';

type Made = Awaited<ReturnType<typeof makeLog>>;
const open = (made: Made) => AuditLog.open({ logPath: made.logPath, signer: loadSigner(made.keyPath, 'x'), clock: { nowMs: () => 5 }, warn: () => {} });
const refusal = (e: Error & { code?: string }) => e.code === 'AUDIT_LOG_UNREADABLE';

describe('when the log file is deleted while its signed head stays', () => {
  it('refuses to start for a head of any size above zero, creates no log and leaves the head as it was (property)', async () => {
    const made = await makeLog(5);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), async (size) => {
        const note = headAt(made, made.lines, size).note;
        writeFileSync(`${made.logPath}.head`, note);
        rmSync(made.logPath, { force: true });
        await assert.rejects(open(made), (e: Error & { code?: string }) => {
          assert.ok(refusal(e));
          assert.match(e.message, /is missing, but its signed head .* still records entries/);
          assert.match(e.message, /Restore the log from a backup; to start a new log on purpose, move the head aside too/);
          return true;
        });
        assert.equal(existsSync(made.logPath), false, 'no fresh log was started');
        assert.equal(readFileSync(`${made.logPath}.head`, 'utf8'), note, 'the head was not overwritten');
      }),
      { numRuns: 10 },
    );
  });

  it('refuses an emptied log under the same head (the same check on empty bytes)', async () => {
    const made = await makeLog(3);
    writeFileSync(made.logPath, '');
    // Named as verify-log names it: the line where the missing entries begin.
    await assert.rejects(open(made), /line 1: log truncated: head sidecar records 3 entries, the log ends after 0/);
  });

  it('starts on a missing log when its head records no entries, and when there is no head either', async () => {
    const made = await makeLog(2);
    writeFileSync(`${made.logPath}.head`, headAt(made, made.lines, 0).note);
    rmSync(made.logPath);
    const log = await open(made);
    assert.equal(log.sizeAtOpen, 0);
    await log.close();
    rmSync(made.logPath);
    rmSync(`${made.logPath}.head`);
    const fresh = await open(made);
    assert.equal(fresh.sizeAtOpen, 0);
    await fresh.close();
  });
});

describe('when the head cannot be read', () => {
  it('names the head, not the log, and says what to do', async () => {
    const made = await makeLog(2);
    rmSync(`${made.logPath}.head`);
    mkdirSync(`${made.logPath}.head`);
    await assert.rejects(open(made), (e: Error & { code?: string }) => {
      assert.ok(refusal(e));
      assert.match(e.message, new RegExp(`cannot read ${made.logPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.head: `));
      assert.match(e.message, /make it a readable file again/);
      return true;
    });
  });
});
