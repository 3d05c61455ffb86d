/**
 * Helpers of the store contract (contract.ts): racing consume-once from several real processes, and
 * waiting for a condition with a deadline. Each racer is test/store-worker.ts in its own `node` process;
 * all open the store first, then start together on one signal, so their calls truly overlap.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StoreConfig } from './store.js';

const WORKER = fileURLToPath(new URL('../../test/store-worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Bound of one cross-process race, start-up included (ms). */
export const RACE_TIMEOUT_MS = 60_000;

/**
 * Starts `processes` racers on the store `config` names, each firing `callsEach` consume-once calls on
 * kind/key at the same signal.
 * @returns the number of wins of each process and every error code a racer hit.
 * @throws Error when a racer does not start, answer or exit cleanly within RACE_TIMEOUT_MS.
 */
export async function raceAcrossProcesses(
  config: StoreConfig,
  kind: string,
  key: string,
  processes: number,
  callsEach: number,
): Promise<{ wins: number[]; errors: string[] }> {
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config), kind, key, String(callsEach)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const timer = setTimeout(() => {
    for (const c of children) c.kill('SIGKILL');
  }, RACE_TIMEOUT_MS);
  try {
    const outputs = children.map(
      (c) =>
        new Promise<string[]>((resolve, reject) => {
          let out = '';
          let err = '';
          c.stdout.on('data', (d: Buffer) => {
            out += d.toString();
          });
          c.stderr.on('data', (d: Buffer) => {
            err += d.toString();
          });
          c.on('exit', (code) => (code === 0 ? resolve(out.trim().split('\n')) : reject(new Error(`racer exited ${code}: ${err.slice(-2000)}`))));
        }),
    );
    const ready = children.map(
      (c) =>
        new Promise<void>((resolve) => {
          const onData = (d: Buffer) => {
            if (!d.toString().includes('ready')) return;
            c.stdout.off('data', onData);
            resolve();
          };
          c.stdout.on('data', onData);
        }),
    );
    await Promise.race([Promise.all(ready), Promise.all(outputs)]);
    for (const c of children) c.stdin.write('go\n');
    const results = (await Promise.all(outputs)).map((lines) => JSON.parse(lines.at(-1)!) as { wins: number; errors: string[] });
    return { wins: results.map((r) => r.wins), errors: results.flatMap((r) => r.errors) };
  } finally {
    clearTimeout(timer);
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  }
}

/**
 * Polls `condition` every few ms until it holds.
 * @throws Error naming `what` when it does not hold within `deadlineMs` (a liveness bound).
 */
export async function waitFor(condition: () => boolean, what: string, deadlineMs = 2000): Promise<void> {
  const end = performance.now() + deadlineMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error(`${what} did not come within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
