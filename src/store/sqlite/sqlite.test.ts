import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { storeContract } from '../contract.js';
import { StoreError } from '../store.js';
import { createSqliteStore } from './sqlite.js';

/** Handles the tests open on their own, kept reachable for the reason sqlite.ts keeps its own. */
const kept: object[] = [];

const dir = mkdtempSync(join(tmpdir(), 'lf-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeContract('sqlite', async (opts) => {
  const path = join(dir, `state-${++n}.db`);
  return { store: createSqliteStore(path, opts), reopen: async (o) => createSqliteStore(path, o ?? opts), spawnArgs: { kind: 'sqlite', path } };
});

describe('sqlite store file', () => {
  describe('when the file is not a database', () => {
    it('refuses with STORE_CORRUPT and says to move it away', () => {
      const path = join(dir, 'garbage.db');
      writeFileSync(path, 'this is not a database, it is a shopping list. '.repeat(200));
      assert.throws(
        () => createSqliteStore(path),
        (err: unknown) => err instanceof StoreError && err.code === 'STORE_CORRUPT' && /move it away/.test(err.message),
      );
    });
  });

  describe('when its folder does not exist', () => {
    it('refuses with STORE_UNAVAILABLE and says to check the folder', () => {
      assert.throws(
        () => createSqliteStore(join(dir, 'no-such-folder', 'state.db')),
        (err: unknown) => err instanceof StoreError && err.code === 'STORE_UNAVAILABLE' && /folder exists/.test(err.message),
      );
    });
  });

  describe('when a stored value is not JSON', () => {
    it('get throws STORE_CORRUPT naming the kind and key, never answering absent', async () => {
      const path = join(dir, 'bad-value.db');
      const store = createSqliteStore(path);
      await store.put('approval', 'call-9', { ok: true });
      await store.close();
      const Database = (await import('better-sqlite3')).default;
      const db = new Database(path);
      // Never garbage: Node 24 aborts when better-sqlite3 12's objects are finalized (RETAINED in sqlite.ts).
      kept.push(db);
      db.exec("UPDATE store_records SET value = '{not json' WHERE key = 'call-9'");
      db.close();
      const again = createSqliteStore(path);
      await assert.rejects(
        again.get('approval', 'call-9'),
        (err: unknown) => err instanceof StoreError && err.code === 'STORE_CORRUPT' && /approval\/"call-9"/.test(err.message),
      );
      await again.close();
    });
  });
});
