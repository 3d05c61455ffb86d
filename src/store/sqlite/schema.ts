/**
 * The SQLite store's tables, and how its failures read to a person. Kept apart from the store so the
 * schema is one glance: records by (kind, key), the change log watchers poll, and a schema version row.
 */
import { StoreError } from '../store.js';

/** The schema version this code reads and writes; a file with another version is refused. */
export const SCHEMA_VERSION = 1;

/** Idempotent DDL, run in one immediate transaction at open. Values are JSON text; times are ms since the epoch. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS store_records (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  expires_at_ms INTEGER,
  PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS store_records_expiry ON store_records (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS store_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, key TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO store_meta (name, value) VALUES ('schema_version', '${SCHEMA_VERSION}');
`;

/**
 * Turns a better-sqlite3 (or open-time) failure into a StoreError with a sentence saying what to do.
 * A StoreError passes through unchanged.
 */
export function toStoreError(where: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const missingFolder = /directory does not exist/.test(String((err as Error)?.message));
  const code = missingFolder ? 'SQLITE_CANTOPEN' : String((err as { code?: unknown })?.code ?? '');
  if (code === 'LOOKFIRST_CLOSED') return new StoreError('STORE_UNAVAILABLE', `${where} is closed: open the store again`, { cause: err });
  if (code === 'LOOKFIRST_SCHEMA')
    return new StoreError(
      'STORE_CORRUPT',
      `${where} holds another schema version than this lookfirst (${SCHEMA_VERSION}): use the lookfirst that wrote it, or move the file away`,
      {
        cause: err,
      },
    );
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))
    return new StoreError(
      'STORE_CORRUPT',
      `${where} is not a readable SQLite database: move it away (the audit log still holds every decision) and restart, or restore it from a backup`,
      {
        cause: err,
      },
    );
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
    return new StoreError('STORE_UNAVAILABLE', `${where} stayed locked by another process for too long: check for a stuck lookfirst process and retry`, {
      cause: err,
    });
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM') || code === 'SQLITE_AUTH')
    return new StoreError('STORE_UNAVAILABLE', `${where} cannot be opened for writing: check that its folder exists and that this user may write to it`, {
      cause: err,
    });
  if (code.startsWith('SQLITE_FULL') || code.startsWith('SQLITE_IOERR'))
    return new StoreError('STORE_UNAVAILABLE', `${where} cannot be written (disk full or I/O error): free space or check the disk, then retry`, { cause: err });
  return new StoreError('STORE_UNAVAILABLE', `${where} failed (${code || 'unknown error'}): check the file and its folder, then retry`, { cause: err });
}
