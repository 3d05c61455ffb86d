/**
 * The SQLite store (better-sqlite3): one file in WAL mode, the embedded default, kept beside the audit
 * log. Safe across processes: every write is one `BEGIN IMMEDIATE` transaction, which takes the file's
 * write lock before it reads, so a compare-and-set or a consume-once cannot interleave with another
 * process's. `busy_timeout` makes a writer wait for the lock instead of failing.
 *
 * Change notification: each write appends (kind, key) to `store_changes` in the same transaction; while
 * watchers exist, a timer (unref'd) reads new rows every SQLITE_POLL_MS, and a write in this process
 * triggers a read at once. The log keeps the last SQLITE_CHANGES_KEPT rows; a watcher that fell further
 * behind gets a notification for every live key of its kinds (spurious, never missed for live records).
 *
 * Security posture: the store is never the only record of a decision (the audit log is). A file that is
 * not a database, or a value that is not JSON, fails loudly (`STORE_CORRUPT`); nothing is read as absent.
 * Calls are synchronous underneath: a write waiting on another process's lock blocks this event loop for
 * at most `busy_timeout`.
 */
import { closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { systemClock } from '../../clock.js';
import { expiryOf, fromJsonText, type PutOptions, type Store, type StoreOptions, type StoreRecord, toJsonText, toRecord, verifyKindKey } from '../store.js';
import { Watchers } from '../watchers.js';
import { SCHEMA, SCHEMA_VERSION, toStoreError } from './schema.js';

/** How often watchers poll the change log (ms). */
export const SQLITE_POLL_MS = 25;
/** How often expired rows are swept while watchers exist (ms). */
export const SQLITE_SWEEP_MS = 1000;
/** How long a write waits for another process's lock before `STORE_UNAVAILABLE` (ms). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;
/** Rows of the change log kept after a sweep. */
export const SQLITE_CHANGES_KEPT = 10_000;

interface Row {
  key: string;
  value: string;
  version: number;
  expires_at_ms: number | null;
}

/**
 * Opens (creating when missing) the store in one SQLite file.
 * @param path the database file; its folder must exist.
 * @param opts `clock` for every expiry decision (default systemClock).
 * @throws StoreError `STORE_UNAVAILABLE` when the file cannot be opened or created, `STORE_CORRUPT` when it
 *   is not a lookfirst store database.
 */
export function createSqliteStore(path: string, opts: StoreOptions = {}): Store {
  const clock = opts.clock ?? systemClock;
  const where = `the store file ${path}`;
  const db = guard(where, () => {
    // Whoever can write the store can record a decision (docs/threat-model.md): only the gate's user may
    // read or write it. SQLite gives its -wal and -shm files the database file's permissions.
    if (path !== ':memory:' && !existsSync(path)) {
      try {
        closeSync(openSync(path, 'a', 0o600));
      } catch {
        // SQLite says below what is wrong with the path, in the words of its own error.
      }
    }
    const d = retain(new Database(path, { timeout: SQLITE_BUSY_TIMEOUT_MS }));
    try {
      // exec, not pragma(): pragma() prepares a statement each time, which would be garbage (see RETAINED).
      d.exec(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL`);
      d.transaction(() => d.exec(SCHEMA)).immediate();
      const version = (retain(d.prepare("SELECT value FROM store_meta WHERE name = 'schema_version'")).get() as { value: string } | undefined)?.value;
      if (version !== String(SCHEMA_VERSION)) throw Object.assign(new Error(`schema version ${version}`), { code: 'LOOKFIRST_SCHEMA' });
      return d;
    } catch (err) {
      d.close();
      throw err;
    }
  });

  const q = retain({
    get: db.prepare('SELECT key, value, version, expires_at_ms FROM store_records WHERE kind = ? AND key = ?'),
    live: db.prepare(
      'SELECT key, value, version, expires_at_ms FROM store_records WHERE kind = ? AND key = ? AND (expires_at_ms IS NULL OR expires_at_ms > ?)',
    ),
    list: db.prepare(
      'SELECT key, value, version, expires_at_ms FROM store_records WHERE kind = ? AND (expires_at_ms IS NULL OR expires_at_ms > ?) ORDER BY key',
    ),
    upsert: db.prepare(
      'INSERT INTO store_records (kind, key, value, version, expires_at_ms) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, version = excluded.version, expires_at_ms = excluded.expires_at_ms',
    ),
    remove: db.prepare('DELETE FROM store_records WHERE kind = ? AND key = ?'),
    change: db.prepare('INSERT INTO store_changes (kind, key) VALUES (?, ?)'),
    expired: db.prepare('DELETE FROM store_records WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ? RETURNING kind, key'),
    prune: db.prepare('DELETE FROM store_changes WHERE seq <= (SELECT MAX(seq) FROM store_changes) - ?'),
    since: db.prepare('SELECT seq, kind, key FROM store_changes WHERE seq > ? ORDER BY seq'),
    lastSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM store_changes'),
  });
  const watchers = new Watchers();
  let lastSeq = 0;
  let pollTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let pollSoon = false;
  let closed = false;

  const out = <T>(kind: string, r: Row) => toRecord<T>(kind, r.key, fromJsonText<T>(kind, r.key, r.value, where), r.version, r.expires_at_ms);
  /** Runs `fn` in one BEGIN IMMEDIATE transaction, mapping SQLite failures to StoreError. */
  const atomic = <R>(kind: string, key: string | undefined, fn: () => R): R => {
    if (closed) throw toStoreError(where, Object.assign(new Error('closed'), { code: 'LOOKFIRST_CLOSED' }));
    verifyKindKey(kind, key);
    const result = guard(where, () => db.transaction(fn).immediate());
    if (watchers.active && !pollSoon) {
      pollSoon = true;
      setImmediate(poll);
    }
    return result;
  };
  const write = <T>(kind: string, key: string, text: string, opts: PutOptions | undefined, previous: Row | undefined): StoreRecord<T> => {
    const version = (previous?.version ?? 0) + 1;
    const expiresAtMs = expiryOf(clock.nowMs(), opts) ?? null;
    q.upsert.run(kind, key, text, version, expiresAtMs);
    q.change.run(kind, key);
    return out<T>(kind, { key, value: text, version, expires_at_ms: expiresAtMs });
  };
  const isLive = (r: Row | undefined, now: number): r is Row => r !== undefined && (r.expires_at_ms === null || r.expires_at_ms > now);

  function poll(): void {
    pollSoon = false;
    if (closed || !watchers.active) return;
    let rows: { seq: number; kind: string; key: string }[];
    try {
      rows = q.since.all(lastSeq) as typeof rows;
    } catch {
      return; // Busy or gone for a moment: the next tick reads the same rows again.
    }
    if (rows.length > 0 && rows[0]!.seq > lastSeq + 1) resync();
    for (const r of rows) {
      lastSeq = r.seq;
      watchers.notify(r.kind, r.key);
    }
  }
  /** The change log was pruned past this watcher: notify every live key of the watched kinds. */
  function resync(): void {
    const now = clock.nowMs();
    for (const kind of watchers.kinds()) for (const r of q.list.all(kind, now) as Row[]) watchers.notify(kind, r.key);
  }
  function stopTimers(): void {
    clearInterval(pollTimer);
    clearInterval(sweepTimer);
    pollTimer = sweepTimer = undefined;
  }

  const store: Store = {
    kind: 'sqlite',
    async get<T>(kind: string, key: string) {
      verifyKindKey(kind, key);
      const r = guard(where, () => q.live.get(kind, key, clock.nowMs()) as Row | undefined);
      return r && out<T>(kind, r);
    },
    async putIfAbsent<T>(kind: string, key: string, value: T, opts?: PutOptions) {
      const text = toJsonText(kind, key, value);
      return atomic(kind, key, () => {
        const prev = q.get.get(kind, key) as Row | undefined;
        return isLive(prev, clock.nowMs()) ? undefined : write<T>(kind, key, text, opts, prev);
      });
    },
    async put<T>(kind: string, key: string, value: T, opts?: PutOptions) {
      const text = toJsonText(kind, key, value);
      return atomic(kind, key, () => write<T>(kind, key, text, opts, q.get.get(kind, key) as Row | undefined));
    },
    async compareAndSet<T>(kind: string, key: string, expectedVersion: number, value: T, opts?: PutOptions) {
      const text = toJsonText(kind, key, value);
      return atomic(kind, key, () => {
        const prev = q.get.get(kind, key) as Row | undefined;
        const liveVersion = isLive(prev, clock.nowMs()) ? prev.version : 0;
        return liveVersion === expectedVersion ? write<T>(kind, key, text, opts, prev) : undefined;
      });
    },
    async consumeOnce<T>(kind: string, key: string) {
      return atomic(kind, key, () => {
        const prev = q.get.get(kind, key) as Row | undefined;
        if (!isLive(prev, clock.nowMs())) return undefined;
        q.remove.run(kind, key);
        q.change.run(kind, key);
        return out<T>(kind, prev);
      });
    },
    async delete(kind: string, key: string) {
      return atomic(kind, key, () => {
        const prev = q.get.get(kind, key) as Row | undefined;
        if (!prev) return false;
        q.remove.run(kind, key);
        q.change.run(kind, key);
        return isLive(prev, clock.nowMs());
      });
    },
    async list<T>(kind: string) {
      verifyKindKey(kind);
      return guard(where, () => q.list.all(kind, clock.nowMs()) as Row[]).map((r) => out<T>(kind, r));
    },
    /** At once: the first watch() reads the change log's position synchronously, so nothing after it is missed. */
    async watching() {},
    watch(kind: string, listener: (key: string) => void) {
      verifyKindKey(kind);
      if (closed) throw toStoreError(where, Object.assign(new Error('closed'), { code: 'LOOKFIRST_CLOSED' }));
      if (!watchers.active) {
        lastSeq = guard(where, () => (q.lastSeq.get() as { seq: number }).seq);
        pollTimer = setInterval(poll, SQLITE_POLL_MS).unref();
        sweepTimer = setInterval(() => void store.sweep().catch(() => {}), SQLITE_SWEEP_MS).unref();
      }
      const off = watchers.add(kind, listener);
      return () => {
        off();
        if (!watchers.active) stopTimers();
      };
    },
    async sweep() {
      if (closed) return 0;
      const removed = guard(where, () =>
        db
          .transaction(() => {
            const rows = q.expired.all(clock.nowMs()) as { kind: string; key: string }[];
            for (const r of rows) q.change.run(r.kind, r.key);
            q.prune.run(SQLITE_CHANGES_KEPT);
            return rows.length;
          })
          .immediate(),
      );
      if (removed > 0 && watchers.active) setImmediate(poll);
      return removed;
    },
    async close() {
      if (closed) return;
      closed = true;
      stopTimers();
      watchers.clear();
      db.close();
    },
  };
  return store;
}

/**
 * Every Database and Statement this process made, kept reachable until it exits. On Node 24.19 and later,
 * better-sqlite3 before 13 aborts the process (`Assertion failed: (env) != nullptr` in
 * RemoveEnvironmentCleanupHook) when the garbage collector finalizes one of its objects outside a
 * JavaScript context; 13 fixes it but does not run on Node 20, and one pinned version serves 20, 22 and
 * 24 (README "Development"). Objects that are never garbage are destroyed by Node's own cleanup at exit,
 * where that is safe. The cost is bounded: one handle and eleven statements per store opened, and a
 * process opens one store (tests open a few hundred). Statements are made only at open for this reason;
 * transactions reuse statements better-sqlite3 keeps per database.
 */
const RETAINED = new Set<object>();

/** Keeps `o` reachable for the life of the process (see RETAINED); returns it. */
function retain<T extends object>(o: T): T {
  RETAINED.add(o);
  return o;
}

/** Runs one SQLite call, turning its failures into StoreError. */
function guard<R>(where: string, fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    throw toStoreError(where, err);
  }
}
