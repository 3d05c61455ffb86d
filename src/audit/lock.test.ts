import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { raceProcesses } from '../store/contract-race.js';
import { releaseLock, takeLock } from './lock.js';

const WORKER = fileURLToPath(new URL('../../test/lock-race-worker.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lf-lock-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A pid no process has now: far above any pid_max this kernel allows. */
const GONE_PID = 4_194_304 + 17;

describe('the audit log lock', () => {
  it('is created whole, refuses a second taker while its holder lives, and leaves no scratch file', () => {
    const lock = join(dir, 'a.lock');
    takeLock(lock, 'a.jsonl', () => {});
    assert.equal(readFileSync(lock, 'utf8').split('\n')[0], String(process.pid));
    assert.throws(
      () => takeLock(lock, 'a.jsonl', () => {}),
      (e: { code?: string; message: string }) => e.code === 'AUDIT_LOCKED' && /pid \d+/.test(e.message),
    );
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.startsWith('a.lock.')),
      [],
    );
    releaseLock(lock);
    assert.equal(existsSync(lock), false);
  });

  it('takes over a lock whose process is gone, and says so', () => {
    const lock = join(dir, 'b.lock');
    writeFileSync(lock, `${GONE_PID}\n\n`);
    const warnings: string[] = [];
    takeLock(lock, 'b.jsonl', (m) => warnings.push(m));
    assert.equal(readFileSync(lock, 'utf8').split('\n')[0], String(process.pid));
    assert.match(warnings.join('\n'), /stale lock/);
    releaseLock(lock);
  });

  for (const start of ['absent', 'stale'] as const) {
    it(`has exactly one winner when six processes race for it (${start} at the start)`, async () => {
      const lock = join(dir, `race-${start}.lock`);
      if (start === 'stale') writeFileSync(lock, `${GONE_PID}\n\n`);
      const results = (await raceProcesses(
        WORKER,
        Array.from({ length: 6 }, () => [lock, 'race.jsonl', '4000']),
      )) as { won: boolean; code?: string }[];
      assert.equal(results.filter((r) => r.won).length, 1, JSON.stringify(results));
      for (const r of results.filter((x) => !x.won)) assert.equal(r.code, 'AUDIT_LOCKED');
      assert.deepEqual(
        readdirSync(dir).filter((n) => n.startsWith(`race-${start}.lock`)),
        [],
      );
    });
  }
});
