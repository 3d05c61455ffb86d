import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { raceProcesses } from '../../store/contract-race.js';
import { createMemoryStore } from '../../store/memory/memory.js';
import { createSqliteStore } from '../../store/sqlite/sqlite.js';
import type { Store, StoreConfig } from '../../store/store.js';
import type { Risk } from '../../types.js';
import type { ApprovalRequest } from '../channel.js';

/** A clock the test sets and moves (ms since epoch). */
export interface TestClock {
  nowMs(): number;
  advance(ms: number): void;
}

/** A clock starting at `startMs`. */
export function testClock(startMs = 1_800_000_000_000): TestClock {
  let now = startMs;
  return {
    nowMs: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** One store backing under test. */
export interface StoreKit {
  name: 'memory' | 'sqlite';
  open(clock: TestClock): { store: Store; config?: StoreConfig };
  cleanup(): void;
}

/** The memory store and a SQLite store in a fresh temp folder (removed by `cleanup`). */
export function storeKits(): StoreKit[] {
  const dir = mkdtempSync(join(tmpdir(), 'lf-devices-'));
  let n = 0;
  return [
    { name: 'memory', open: (clock) => ({ store: createMemoryStore({ clock }) }), cleanup: () => {} },
    {
      name: 'sqlite',
      open: (clock) => {
        const path = join(dir, `state-${++n}.db`);
        return { store: createSqliteStore(path, { clock }), config: { kind: 'sqlite', path } };
      },
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    },
  ];
}

/** A fresh device key: base64url of 32 random bytes, as a phone makes it. */
export const newKey = (): string => randomBytes(32).toString('base64url');

/** A held call whose arguments hash to its args_sha256, shown on `channels`, for `user`. */
export function heldCall(
  id: string,
  o: { user?: string; risk?: Risk; deadlineMs: number; channels?: string[]; args?: Record<string, unknown> },
): ApprovalRequest {
  const argsCanonical = JSON.stringify(o.args ?? { path: `notes/${id}.txt` });
  return {
    call: {
      callId: id,
      tool: 'write_file',
      upstream: 'fs',
      upstreamTool: 'write_file',
      args: JSON.parse(argsCanonical),
      argsCanonical,
      argsSha256: createHash('sha256').update(argsCanonical).digest('hex'),
    },
    summary: `write_file ${id}`,
    deadlineMs: o.deadlineMs,
    user: o.user,
    risk: o.risk ?? 'medium',
  };
}

const WORKER = fileURLToPath(new URL('../../../test/device-race-worker.ts', import.meta.url));

/**
 * Starts one racer process per argument list (test/device-race-worker.ts), waits until all have opened
 * the store, starts them together, and returns each one's JSON answer (store/contract-race.ts).
 * @throws Error when a racer fails or the race takes over 60 s.
 */
export function raceWorkers(argLists: string[][]): Promise<unknown[]> {
  return raceProcesses(WORKER, argLists);
}
