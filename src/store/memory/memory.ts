/**
 * The in-memory store: one process, gone on restart. For tests, `--dry-run` experiments and a gate that
 * keeps no state across restarts. Every operation runs to completion inside one synchronous section, so
 * the atomic operations are atomic within the process; there is no other process to race with.
 *
 * Security posture: the store is never the only record of a decision (the audit log is). Values are
 * copied through JSON on the way in and out, so a caller can never change a stored record by mutating an
 * object it passed or received.
 */
import { systemClock } from '../../clock.js';
import {
  expiryOf,
  fromJsonText,
  type PutOptions,
  type Store,
  StoreError,
  type StoreOptions,
  type StoreRecord,
  toJsonText,
  toRecord,
  verifyKindKey,
} from '../store.js';
import { Watchers } from '../watchers.js';

interface Row {
  text: string;
  version: number;
  expiresAtMs?: number;
}

/** How often expired records are swept while watchers exist (ms). */
export const MEMORY_SWEEP_MS = 1000;

/**
 * Opens an empty in-memory store.
 * @param opts `clock` for every expiry decision (default systemClock).
 */
export function createMemoryStore(opts: StoreOptions = {}): Store {
  const clock = opts.clock ?? systemClock;
  const rows = new Map<string, Map<string, Row>>();
  const watchers = new Watchers();
  let sweepTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const open = (kind: string, key?: string) => {
    if (closed) throw new StoreError('STORE_UNAVAILABLE', 'the in-memory store is closed: open a new one');
    verifyKindKey(kind, key);
  };
  const live = (row: Row | undefined, now: number) => (row && (row.expiresAtMs === undefined || row.expiresAtMs > now) ? row : undefined);
  const changed = (kind: string, key: string) => queueMicrotask(() => watchers.notify(kind, key));
  const out = <T>(kind: string, key: string, row: Row) => toRecord<T>(kind, key, fromJsonText<T>(kind, key, row.text, 'memory'), row.version, row.expiresAtMs);
  const write = <T>(kind: string, key: string, text: string, opts?: PutOptions): StoreRecord<T> => {
    const byKey = rows.get(kind) ?? new Map<string, Row>();
    rows.set(kind, byKey);
    const row: Row = { text, version: (byKey.get(key)?.version ?? 0) + 1, expiresAtMs: expiryOf(clock.nowMs(), opts) };
    byKey.set(key, row);
    changed(kind, key);
    return out<T>(kind, key, row);
  };
  const remove = (kind: string, key: string) => {
    const byKey = rows.get(kind);
    byKey?.delete(key);
    if (byKey?.size === 0) rows.delete(kind);
  };

  const store: Store = {
    kind: 'memory',
    async get<T>(kind: string, key: string) {
      open(kind, key);
      const row = live(rows.get(kind)?.get(key), clock.nowMs());
      return row && out<T>(kind, key, row);
    },
    async putIfAbsent<T>(kind: string, key: string, value: T, opts?: PutOptions) {
      open(kind, key);
      const text = toJsonText(kind, key, value);
      if (live(rows.get(kind)?.get(key), clock.nowMs())) return undefined;
      return write<T>(kind, key, text, opts);
    },
    async put<T>(kind: string, key: string, value: T, opts?: PutOptions) {
      open(kind, key);
      return write<T>(kind, key, toJsonText(kind, key, value), opts);
    },
    async compareAndSet<T>(kind: string, key: string, expectedVersion: number, value: T, opts?: PutOptions) {
      open(kind, key);
      const text = toJsonText(kind, key, value);
      const row = live(rows.get(kind)?.get(key), clock.nowMs());
      if ((row?.version ?? 0) !== expectedVersion) return undefined;
      return write<T>(kind, key, text, opts);
    },
    async consumeOnce<T>(kind: string, key: string) {
      open(kind, key);
      const row = live(rows.get(kind)?.get(key), clock.nowMs());
      if (!row) return undefined;
      remove(kind, key);
      changed(kind, key);
      return out<T>(kind, key, row);
    },
    async delete(kind: string, key: string) {
      open(kind, key);
      const row = rows.get(kind)?.get(key);
      if (!row) return false;
      remove(kind, key);
      changed(kind, key);
      return live(row, clock.nowMs()) !== undefined;
    },
    async list<T>(kind: string) {
      open(kind);
      const now = clock.nowMs();
      const keys = [...(rows.get(kind)?.entries() ?? [])].filter(([, r]) => live(r, now)).map(([k]) => k);
      return keys.sort().map((k) => out<T>(kind, k, rows.get(kind)!.get(k)!));
    },
    async watching() {},
    watch(kind: string, listener: (key: string) => void) {
      open(kind);
      const off = watchers.add(kind, listener);
      if (!sweepTimer) {
        sweepTimer = setInterval(() => void store.sweep(), MEMORY_SWEEP_MS);
        sweepTimer.unref();
      }
      return () => {
        off();
        if (!watchers.active && sweepTimer) {
          clearInterval(sweepTimer);
          sweepTimer = undefined;
        }
      };
    },
    async sweep() {
      if (closed) return 0;
      const now = clock.nowMs();
      let removed = 0;
      for (const [kind, byKey] of [...rows]) {
        for (const [key, row] of [...byKey]) {
          if (live(row, now)) continue;
          remove(kind, key);
          changed(kind, key);
          removed++;
        }
      }
      return removed;
    },
    async close() {
      closed = true;
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = undefined;
      watchers.clear();
      rows.clear();
    },
  };
  return store;
}
