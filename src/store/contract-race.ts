/**
 * Helpers of the store contract (contract.ts): racing consume-once from several real processes, waiting
 * for a condition or a notification with a deadline, and a value that is not JSON. Each racer is test/store-worker.ts in its own `node` process;
 * all open the store first, then start together on one signal, so their calls truly overlap.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Store, StoreConfig } from './store.js';

/** Bound of waiting for a notification (ms): a liveness bound, not a timing assertion. */
export const NOTIFY_DEADLINE_MS = 2000;

const WORKER = fileURLToPath(new URL('../../test/store-worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Bound of one cross-process race, start-up included (ms). */
export const RACE_TIMEOUT_MS = 60_000;

/**
 * Starts one racer process per argument list (`node --import tsx <worker> ...args`), waits until each has
 * printed `ready` (its store is open), writes `go` to all at once, and returns each one's last stdout line
 * parsed as JSON. Used by the store contract and the device suites.
 * @throws Error when a racer does not start, answer or exit cleanly within RACE_TIMEOUT_MS.
 */
export async function raceProcesses(worker: string, argLists: string[][]): Promise<unknown[]> {
  const children = argLists.map((args) => spawn(process.execPath, ['--import', 'tsx', worker, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }));
  const timer = setTimeout(() => {
    for (const c of children) c.kill('SIGKILL');
  }, RACE_TIMEOUT_MS);
  try {
    const outputs = children.map(
      (c) =>
        new Promise<string>((resolve, reject) => {
          let out = '';
          let err = '';
          c.stdout.on('data', (d: Buffer) => {
            out += d.toString();
          });
          c.stderr.on('data', (d: Buffer) => {
            err += d.toString();
          });
          c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`racer exited ${code}: ${err.slice(-2000)}`))));
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
    return (await Promise.all(outputs)).map((o) => JSON.parse(o.trim().split('\n').at(-1) as string));
  } finally {
    clearTimeout(timer);
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  }
}

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
  const args = [JSON.stringify(config), kind, key, String(callsEach)];
  const results = (await raceProcesses(
    WORKER,
    Array.from({ length: processes }, () => args),
  )) as { wins: number; errors: string[] }[];
  return { wins: results.map((r) => r.wins), errors: results.flatMap((r) => r.errors) };
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

/**
 * Writes through `writer` until `watched`'s watcher sees the key; resolves to the ms from the last write.
 * @throws AssertionError when nothing is seen within NOTIFY_DEADLINE_MS.
 */
export async function seeChange(watched: Store, writer: Store, kind: string): Promise<number> {
  const seen = new Set<string>();
  const off = watched.watch(kind, (k) => seen.add(k));
  try {
    const deadline = performance.now() + NOTIFY_DEADLINE_MS;
    for (let i = 0; ; i++) {
      const at = performance.now();
      await writer.put(kind, 'changed', i);
      while (!seen.has('changed') && performance.now() - at < 200) await new Promise((r) => setTimeout(r, 2));
      if (seen.has('changed')) return Math.round(performance.now() - at);
      assert.ok(performance.now() < deadline, `no notification within ${NOTIFY_DEADLINE_MS} ms`);
    }
  } finally {
    off();
  }
}

/** An object that contains itself (not JSON). */
export function cyclic(): unknown {
  const a: Record<string, unknown> = { name: 'loop' };
  a.self = a;
  return a;
}
