/**
 * The PostgreSQL store (`pg` Pool): one table, for a gate that runs as several processes or hosts. Every
 * atomic operation is a single statement (sql.ts): `INSERT … ON CONFLICT … WHERE expired` for
 * put-if-absent, `UPDATE … WHERE version = $n` for compare-and-set, `DELETE … RETURNING` for consume-once,
 * each sending its NOTIFY in the same transaction. Watchers get changes through one LISTEN connection
 * (listen.ts) that reconnects when it drops.
 *
 * Security posture: the store is never the only record of a decision (the audit log is). Messages name
 * the server as host:port/database, never the user or password of store.url, and never a value.
 */
import pg from 'pg';
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
import { Listener } from './listen.js';
import { describeUrl, SCHEMA_VERSION, SQL, toStoreError } from './sql.js';

/** How often expired rows are swept while watchers exist (ms). */
export const POSTGRES_SWEEP_MS = 1000;
/** How long `watching()` waits for the LISTEN connection (ms). */
export const POSTGRES_LISTEN_WAIT_MS = 10_000;

interface Row {
  key: string;
  value: string;
  version: number;
  expires_at_ms: string | number | null;
}

/**
 * Connects to PostgreSQL and creates the table when missing.
 * @param url `postgres://` or `postgresql://` connection string.
 * @param opts `clock` for every expiry decision (default systemClock).
 * @throws StoreError `STORE_UNAVAILABLE` when the server cannot be reached or refuses, `STORE_CORRUPT` when
 *   the table holds another schema version.
 */
export async function createPostgresStore(url: string, opts: StoreOptions = {}): Promise<Store> {
  const clock = opts.clock ?? systemClock;
  const where = describeUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {}); // An idle client dropped: the pool replaces it; the next query reports real trouble.
  const run = async (text: string, values: unknown[] = []) => {
    try {
      return await pool.query(text, values);
    } catch (err) {
      throw toStoreError(where, err);
    }
  };
  try {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const statement of SQL.init) await client.query(statement);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    throw toStoreError(where, err);
  }
  const version = (await run(SQL.schemaVersion)).rows[0]?.value;
  if (version !== String(SCHEMA_VERSION)) {
    await pool.end().catch(() => {});
    throw new StoreError(
      'STORE_CORRUPT',
      `${where} holds another store schema version than this lookfirst (${SCHEMA_VERSION}): use the lookfirst that wrote it`,
    );
  }

  const watchers = new Watchers();
  let closed = false;
  let sweepTimer: NodeJS.Timeout | undefined;
  const listener = new Listener(
    url,
    () => !closed && watchers.active,
    (kind, key) => watchers.notify(kind, key),
    () => void resync(),
  );
  /** Notifies every live key of the watched kinds: covers writes made while no LISTEN was active. */
  async function resync(): Promise<void> {
    for (const kind of watchers.kinds()) {
      const rows = await run(SQL.list, [kind, clock.nowMs()]).catch(() => undefined);
      for (const r of (rows?.rows ?? []) as Row[]) watchers.notify(kind, r.key);
    }
  }
  const ready = (kind: string, key?: string) => {
    if (closed) throw new StoreError('STORE_UNAVAILABLE', `${where}: this store is closed: open it again`);
    verifyKindKey(kind, key);
  };
  const out = <T>(kind: string, r: Row): StoreRecord<T> =>
    toRecord<T>(kind, r.key, fromJsonText<T>(kind, r.key, r.value, where), Number(r.version), r.expires_at_ms === null ? null : Number(r.expires_at_ms));
  /** This store's own write, told to its watchers directly while LISTEN is not up yet (else NOTIFY brings it). */
  const local = (kind: string, key: string) => {
    if (watchers.active && !listener.connected) queueMicrotask(() => watchers.notify(kind, key));
  };
  const one = async <T>(kind: string, text: string, values: unknown[], write = true) => {
    const row = (await run(text, values)).rows[0] as Row | undefined;
    if (row && write) local(kind, row.key);
    return row && out<T>(kind, row);
  };

  const store: Store = {
    kind: 'postgres',
    async get<T>(kind: string, key: string) {
      ready(kind, key);
      return one<T>(kind, SQL.get, [kind, key, clock.nowMs()], false);
    },
    async putIfAbsent<T>(kind: string, key: string, value: T, opts?: PutOptions) {
      ready(kind, key);
      const now = clock.nowMs();
      return one<T>(kind, SQL.putIfAbsent, [kind, key, toJsonText(kind, key, value), expiryOf(now, opts) ?? null, now]);
    },
    async put<T>(kind: string, key: string, value: T, opts?: PutOptions) {
      ready(kind, key);
      const text = toJsonText(kind, key, value);
      return (await one<T>(kind, SQL.put, [kind, key, text, expiryOf(clock.nowMs(), opts) ?? null]))!;
    },
    async compareAndSet<T>(kind: string, key: string, expectedVersion: number, value: T, opts?: PutOptions) {
      ready(kind, key);
      if (expectedVersion === 0) return store.putIfAbsent<T>(kind, key, value, opts);
      const now = clock.nowMs();
      const text = toJsonText(kind, key, value);
      return one<T>(kind, SQL.compareAndSet, [kind, key, text, expiryOf(now, opts) ?? null, expectedVersion, now]);
    },
    async consumeOnce<T>(kind: string, key: string) {
      ready(kind, key);
      return one<T>(kind, SQL.consumeOnce, [kind, key, clock.nowMs()]);
    },
    async delete(kind: string, key: string) {
      ready(kind, key);
      const row = (await run(SQL.delete, [kind, key, clock.nowMs()])).rows[0] as { live: boolean } | undefined;
      if (row) local(kind, key);
      return row?.live === true;
    },
    async list<T>(kind: string) {
      ready(kind);
      return ((await run(SQL.list, [kind, clock.nowMs()])).rows as Row[]).map((r) => out<T>(kind, r));
    },
    async watching() {
      if (!(await listener.ready(POSTGRES_LISTEN_WAIT_MS)))
        throw new StoreError('STORE_UNAVAILABLE', `${where}: the LISTEN connection for change notifications did not come up: check the server, then retry`);
    },
    watch(kind: string, fn: (key: string) => void) {
      ready(kind);
      const off = watchers.add(kind, fn);
      listener.ensure();
      if (!sweepTimer) {
        sweepTimer = setInterval(() => void store.sweep().catch(() => {}), POSTGRES_SWEEP_MS);
        sweepTimer.unref();
      }
      return () => {
        off();
        if (watchers.active) return;
        clearInterval(sweepTimer);
        sweepTimer = undefined;
        listener.release();
      };
    },
    async sweep() {
      if (closed) return 0;
      const rows = (await run(SQL.sweep, [clock.nowMs()])).rows as { kind: string; key: string }[];
      for (const r of rows) local(r.kind, r.key);
      return rows.length;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweepTimer);
      watchers.clear();
      await listener.stop();
      await pool.end().catch(() => {});
    },
  };
  return store;
}
