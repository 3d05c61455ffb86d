/**
 * A process that opens and closes many SQLite stores while the garbage collector runs exits cleanly. On
 * Node 24.19 and later, better-sqlite3 12 aborts the process when a collected Statement or Database is
 * finalized outside a JavaScript context (RETAINED in sqlite.ts); CI runs this suite on Node 20, 22 and 24.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lf-sqlite-gc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SCRIPT = `
import { createSqliteStore } from './src/store/sqlite/sqlite.ts';
const dir = process.argv[1];
for (let round = 0; round < 40; round++) {
  for (let i = 0; i < 5; i++) {
    const store = createSqliteStore(dir + '/s' + ((round * 5 + i) % 7) + '.db');
    await store.put('approval', 'k' + i, { round });
    await store.get('approval', 'k' + i);
    await store.list('approval');
    await store.close();
  }
  const junk = [];
  for (let j = 0; j < 200000; j++) junk.push({ j });
  await new Promise((r) => setTimeout(r, 5));
}
`;

it('opens and closes 200 stores among garbage collections, then exits with 0 (no native abort at a finalizer)', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT, dir], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.doesNotMatch(r.stderr, /Assertion failed/, r.stderr.slice(-2000));
  assert.equal(r.status, 0, r.stderr.slice(-2000));
});
