/**
 * Temp folders for tests, removed when the test process ends, whether its tests passed or failed.
 * Removal at process exit (not per test) because helpers such as `tmp()` and `makeLog()` are called from
 * module scope, hooks, tests and fast-check properties alike, and have no test context to hang an
 * `after` hook on. The exit listener is prepended so it runs before test/temp-guard.ts checks for leftovers.
 * A test that makes many folders (a property run) should still remove each one itself with `removeTemp`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();
let listening = false;

/**
 * Makes a fresh folder (mode 0700) under the system temp folder, removed at process exit at the latest.
 * @param prefix the folder's name before mkdtemp's six random characters, e.g. 'lf-e2e-'.
 * @throws Error from the file system when the folder cannot be made.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  if (!listening) {
    listening = true;
    process.prependListener('exit', removeAllTemp);
  }
  return dir;
}

/** Removes a folder made by `tempDir` now (idempotent; a folder already gone is fine). */
export function removeTemp(dir: string): void {
  made.delete(dir);
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Removes every folder still registered; exit listeners must be synchronous, hence rmSync. */
function removeAllTemp(): void {
  for (const dir of made) {
    try {
      removeTemp(dir);
    } catch {
      // A folder that cannot be removed is left for the guard to name; exiting must not throw.
    }
  }
}
