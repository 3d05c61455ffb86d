/**
 * The PostgreSQL store's statements. Each atomic operation is one statement: the write and its NOTIFY run
 * in the same implicit transaction (a CTE whose rows feed `pg_notify`), so a notification is sent exactly
 * when the write commits. Expiry compares against the caller's clock (`$now`), never the server's `now()`,
 * so one injected clock governs every implementation.
 */
import { StoreError } from '../store.js';

/** The one table; the schema version is a row in it under a kind no caller can use (kinds start with a letter). */
export const TABLE = 'lookfirst_store';
/** The one LISTEN/NOTIFY channel; payloads are `{"kind":…,"key":…}`. */
export const CHANNEL = 'lookfirst_store';
/** The schema version this code reads and writes. */
export const SCHEMA_VERSION = 1;
/** Kind of the schema version row. */
export const META_KIND = '_lookfirst';

const NOTIFY = `pg_notify('${CHANNEL}', json_build_object('kind', w.kind, 'key', w.key)::text)`;
const COLS = 'kind, key, value, version, expires_at_ms';
const OUT = `SELECT w.key, w.value, w.version, w.expires_at_ms, ${NOTIFY} AS notified FROM w`;

/** Statements by operation; `$now` is always the last parameter. */
export const SQL = {
  init: [
    `SELECT pg_advisory_xact_lock(hashtext('${TABLE}'))`,
    `CREATE TABLE IF NOT EXISTS ${TABLE} (
      kind text NOT NULL, key text NOT NULL, value text NOT NULL,
      version integer NOT NULL CHECK (version >= 1), expires_at_ms bigint,
      PRIMARY KEY (kind, key))`,
    `CREATE INDEX IF NOT EXISTS ${TABLE}_expiry ON ${TABLE} (expires_at_ms) WHERE expires_at_ms IS NOT NULL`,
    `INSERT INTO ${TABLE} (${COLS}) VALUES ('${META_KIND}', 'schema_version', '${SCHEMA_VERSION}', 1, NULL) ON CONFLICT DO NOTHING`,
  ],
  schemaVersion: `SELECT value FROM ${TABLE} WHERE kind = '${META_KIND}' AND key = 'schema_version'`,
  get: `SELECT key, value, version, expires_at_ms FROM ${TABLE} WHERE kind = $1 AND key = $2 AND (expires_at_ms IS NULL OR expires_at_ms > $3)`,
  list: `SELECT key, value, version, expires_at_ms FROM ${TABLE} WHERE kind = $1 AND (expires_at_ms IS NULL OR expires_at_ms > $2) ORDER BY key COLLATE "C"`,
  /** $1 kind, $2 key, $3 value, $4 expires, $5 now: inserts, or replaces only an expired row. */
  putIfAbsent: `WITH w AS (INSERT INTO ${TABLE} AS t (${COLS}) VALUES ($1, $2, $3, 1, $4)
    ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, version = t.version + 1, expires_at_ms = excluded.expires_at_ms
    WHERE t.expires_at_ms IS NOT NULL AND t.expires_at_ms <= $5 RETURNING t.*) ${OUT}`,
  /** $1 kind, $2 key, $3 value, $4 expires. */
  put: `WITH w AS (INSERT INTO ${TABLE} AS t (${COLS}) VALUES ($1, $2, $3, 1, $4)
    ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, version = t.version + 1, expires_at_ms = excluded.expires_at_ms
    RETURNING t.*) ${OUT}`,
  /** $1 kind, $2 key, $3 value, $4 expires, $5 expected version, $6 now. */
  compareAndSet: `WITH w AS (UPDATE ${TABLE} AS t SET value = $3, version = t.version + 1, expires_at_ms = $4
    WHERE kind = $1 AND key = $2 AND version = $5 AND (expires_at_ms IS NULL OR expires_at_ms > $6) RETURNING t.*) ${OUT}`,
  /** $1 kind, $2 key, $3 now. Concurrent deletes of one row serialise on its row lock: one returns it. */
  consumeOnce: `WITH w AS (DELETE FROM ${TABLE} WHERE kind = $1 AND key = $2 AND (expires_at_ms IS NULL OR expires_at_ms > $3) RETURNING *) ${OUT}`,
  /** $1 kind, $2 key, $3 now. */
  delete: `WITH w AS (DELETE FROM ${TABLE} WHERE kind = $1 AND key = $2 RETURNING kind, key, (expires_at_ms IS NULL OR expires_at_ms > $3) AS live)
    SELECT w.live, ${NOTIFY} AS notified FROM w`,
  /** $1 now. */
  sweep: `WITH w AS (DELETE FROM ${TABLE} WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= $1 AND kind <> '${META_KIND}' RETURNING kind, key)
    SELECT w.kind, w.key, ${NOTIFY} AS notified FROM w`,
  listen: `LISTEN ${CHANNEL}`,
} as const;

/** `host:port/database` of a URL, without user or password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL at ${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname || '/'}`;
  } catch {
    return 'PostgreSQL (store.url is not a valid URL)';
  }
}

/** Turns a `pg` failure into a StoreError with a sentence saying what to do; a StoreError passes through. */
export function toStoreError(where: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const code = String((err as { code?: unknown })?.code ?? '');
  const unavailable = (message: string) => new StoreError('STORE_UNAVAILABLE', message, { cause: err });
  if (code === '28P01' || code === '28000') return unavailable(`${where} refused the login: check the user and password in store.url`);
  if (code === '3D000') return unavailable(`${where}: the database does not exist: create it, or fix the database name in store.url`);
  if (code === '42501') return unavailable(`${where}: the user may not create or write the ${TABLE} table: grant it, or use another user in store.url`);
  if (/^(ECONN|ENOTFOUND|ETIMEDOUT|EAI_|EHOST|ENETUNREACH|08|57P0)/.test(code) || /Connection terminated|timeout/i.test(String((err as Error)?.message)))
    return unavailable(`${where} cannot be reached (${code || 'connection lost'}): check that it runs and that store.url points at it, then retry`);
  return unavailable(`${where} failed (SQLSTATE ${code || 'unknown'}): check the server's log, then retry`);
}
