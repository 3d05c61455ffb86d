/**
 * One racer for the audit lock (src/audit/lock.test.ts): waits for `go` on stdin, tries to take the lock,
 * prints `{ "won": true }` or `{ "won": false, "code": … }`. A winner holds the lock (stays alive) for
 * `hold` ms, so that every loser meets a live holder, then releases it.
 * Usage: node --import tsx test/lock-race-worker.ts <lock> <log> <hold ms>
 */
import { createInterface } from 'node:readline';
import { releaseLock, takeLock } from '../src/audit/lock.js';

const [lock = '', log = '', hold = '0'] = process.argv.slice(2);
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line !== 'go') continue;
  lines.close();
  try {
    takeLock(lock, log, () => {});
    await new Promise((r) => setTimeout(r, Number(hold)));
    releaseLock(lock);
    process.stdout.write(`${JSON.stringify({ won: true })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ won: false, code: (err as { code?: string }).code })}\n`);
  }
}
