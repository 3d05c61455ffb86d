import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { type PostgresServer, postgresMissing, startPostgres } from '../../../test/postgres.js';
import { storeContract } from '../contract.js';
import { waitFor } from '../contract-race.js';
import { StoreError } from '../store.js';
import { createPostgresStore } from './postgres.js';

// One real server (Debian's postgresql, test/postgres.ts) for the whole file; cases use their own kinds.
const missing = postgresMissing();
let server: PostgresServer | undefined;
before(async () => {
  if (!missing) server = await startPostgres();
});
after(() => server?.stop());

if (missing) {
  describe('postgres store', () => {
    it('runs against a real PostgreSQL', (t) => t.skip(missing));
  });
} else {
  storeContract('postgres', async (opts) => {
    const url = server!.url;
    return { store: await createPostgresStore(url, opts), reopen: (o) => createPostgresStore(url, o ?? opts), spawnArgs: { kind: 'postgres', url } };
  });

  describe('postgres LISTEN connection', () => {
    describe('when the server drops it', () => {
      it('reconnects and the watcher sees later changes', async () => {
        const store = await createPostgresStore(server!.url);
        const seen: string[] = [];
        const off = store.watch('dropped', (k) => seen.push(k));
        const admin = new pg.Client({ connectionString: server!.url });
        await admin.connect();
        try {
          const listening = async () =>
            ((await admin.query("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND state = 'idle'")).rows as { pid: number }[]).map((r) => r.pid);
          await waitForAsync(async () => (await listening()).length > 0, 'a LISTEN connection');
          const old = await listening();
          await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [old]);
          // Termination is asynchronous: wait until only a new backend listens.
          await waitForAsync(async () => {
            const now = await listening();
            return now.length > 0 && now.every((pid) => !old.includes(pid));
          }, 'a new LISTEN connection');
          seen.length = 0;
          await admin.query(`SELECT pg_notify('lookfirst_store', '{"kind":"dropped","key":"after"}')`);
          await store.put('dropped', 'written', 1);
          await waitFor(() => seen.includes('after') && seen.includes('written'), 'notifications after the reconnect');
        } finally {
          off();
          await admin.end();
          await store.close();
        }
      });
    });
  });

  describe('postgres connection problems', () => {
    describe('when nothing listens at the url', () => {
      it('refuses with STORE_UNAVAILABLE, naming host and port but not the password', async () => {
        await assert.rejects(createPostgresStore('postgresql://lf:s3cret-pw@127.0.0.1:1/db'), (err: unknown) => {
          assert.ok(err instanceof StoreError);
          assert.equal(err.code, 'STORE_UNAVAILABLE');
          assert.match(err.message, /127\.0\.0\.1:1\/db.*check that it runs/);
          assert.doesNotMatch(err.message, /s3cret/);
          return true;
        });
      });
    });
  });
}

async function waitForAsync(condition: () => Promise<boolean>, what: string): Promise<void> {
  const end = performance.now() + 5000;
  while (!(await condition())) {
    if (performance.now() > end) throw new Error(`${what} did not come within 5 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
