/**
 * The leak guard for temp folders, loaded with `--import` by the test command (package.json "test") in each
 * test file's process. It points TMPDIR at a fresh folder for that file, so everything the file and the
 * processes it starts put in the temp folder lands there; when the file's process exits, anything still
 * there is named on stderr and the file fails (exit code 1), then the folder is removed.
 *
 * Why per file, in the file's own process: Node 20's runner loads `--import` modules only in the test
 * processes, not in the runner, and has no global setup or teardown hook; a check that ran after the
 * runner would print after its summary, which CI reads. This way the report lands in the leaking file's
 * own output, before the summary, and the exit code stays the runner's.
 * Processes the tests start inherit TMPDIR and the marker below, so they are checked with the file but
 * never guard (or fail) on their own. The check stays the process's last exit listener, so cleanups that
 * run at exit (however late they were registered) run before it.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MARKER = 'LOOKFIRST_TEMP_GUARD';
/** Caches of tools that processes started with `--import tsx` keep in the temp folder; not a test's leak. */
const TOOL_CACHES = /^tsx-\d+$/;
/** How long (ms) the check waits at exit for processes the tests stopped to finish removing their own folders. */
const GRACE_MS = 3000;

/** Whether process `pid` still runs (a pid reused by another process counts as running: its folder is left). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the folders of test files whose process is gone without its exit check: one killed by SIGKILL
 * (a runner's timeout, a CI stop) runs no exit listener, so its folder would stay for good.
 */
function sweepOrphans(root: string): void {
  for (const name of readdirSync(root)) {
    const pid = Number(/^lf-test-(\d+)-/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || running(pid)) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
    } catch {
      // Another file's guard removed it first, or it is not ours to remove: either way, not this file's failure.
    }
  }
}

if (process.env.NODE_TEST_CONTEXT !== undefined && process.env[MARKER] === undefined) {
  sweepOrphans(tmpdir());
  // The pid in the name lets a later file's guard tell an orphan (its process gone) from a running file's folder.
  const dir = mkdtempSync(join(tmpdir(), `lf-test-${process.pid}-`));
  // Traversable, so that a server the tests run as another user (PostgreSQL, when run as root) reaches
  // its own 0700 folder inside; the folders the tests make stay 0700.
  chmodSync(dir, 0o755);
  process.env.TMPDIR = dir;
  process.env[MARKER] = dir;
  const check = () => {
    let left = readdirSync(dir).filter((name) => !TOOL_CACHES.test(name));
    // A process the tests stopped may still be removing its own scratch folder as this one exits (Chromium
    // removes its .org.chromium.Chromium.* folder after browser.close() resolves): give such cleanups a
    // moment (an exit listener can only wait synchronously) before calling anything a leak.
    for (let waited = 0; left.length > 0 && waited < GRACE_MS; waited += 100) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      left = readdirSync(dir).filter((name) => !TOOL_CACHES.test(name));
    }
    if (left.length > 0) {
      const shown = left.slice(0, 10).join(', ') + (left.length > 10 ? `, and ${left.length - 10} more` : '');
      process.stderr.write(
        `temp-guard: this test file left ${left.length} item(s) in its temp folder: ${shown}. ` +
          'Remove what a test makes in t.after or an after hook (test/temp.ts does it for you), and stop the processes it starts first.\n',
      );
      process.exitCode = 1;
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      // Something still writes there (a process the file did not stop): say so; an exit listener must not throw.
      process.stderr.write(`temp-guard: cannot remove ${dir} (${(err as Error).message}): stop the processes the tests start.\n`);
      process.exitCode = 1;
    }
  };
  process.on('exit', check);
  // The check must be the last exit listener: a helper's exit-time cleanup (test/postgres.ts stops its
  // server and removes the server's folder) registered after it would otherwise be reported as a leak,
  // and find its folder gone under the running server. Each time another is added, the check moves behind it.
  process.on('newListener', (event, listener) => {
    if (event !== 'exit' || listener === check) return;
    // 'newListener' comes before the listener is added: move the check once it is there.
    queueMicrotask(() => {
      process.removeListener('exit', check);
      process.on('exit', check);
    });
  });
}
