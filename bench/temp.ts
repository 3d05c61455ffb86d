/**
 * Temp folders for the benches: removed when the bench process exits, whether it finished, threw, or was
 * stopped with Ctrl-C or SIGTERM (turned into a normal exit so the removal runs). The benches stop the
 * processes they start before they end; a folder a stray process still writes into is removed anyway.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/**
 * Makes a fresh folder under the system temp folder, removed at process exit.
 * @param prefix the folder's name before mkdtemp's six random characters, e.g. 'lookfirst-bench-'.
 * @throws Error from the file system when the folder cannot be made.
 */
export function benchDir(prefix: string): string {
  if (made.length === 0) {
    process.on('exit', () => {
      for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    });
    process.once('SIGINT', () => process.exit(130));
    process.once('SIGTERM', () => process.exit(143));
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
