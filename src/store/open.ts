/**
 * Opens the store a config names: memory, one SQLite file, or a PostgreSQL database. The gate calls this
 * once at start; the config's `store` key (src/config) resolves to the argument.
 */
import { createMemoryStore } from './memory/memory.js';
import { createPostgresStore } from './postgres/postgres.js';
import { createSqliteStore } from './sqlite/sqlite.js';
import type { Store, StoreConfig, StoreOptions } from './store.js';

/**
 * Opens a store.
 * @param config `{ kind: 'memory' }`, `{ kind: 'sqlite', path }` (the file; its folder must exist) or
 *   `{ kind: 'postgres', url }` (`postgres://` or `postgresql://`).
 * @param opts `clock` for every expiry decision (default systemClock).
 * @throws StoreError `STORE_UNAVAILABLE` when the backing cannot be opened or reached, `STORE_CORRUPT` when
 *   it holds something this lookfirst cannot read.
 */
export async function openStore(config: StoreConfig, opts: StoreOptions = {}): Promise<Store> {
  switch (config.kind) {
    case 'memory':
      return createMemoryStore(opts);
    case 'sqlite':
      return createSqliteStore(config.path, opts);
    case 'postgres':
      return createPostgresStore(config.url, opts);
  }
}
