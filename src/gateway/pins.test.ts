import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import { createSqliteStore } from '../store/sqlite/sqlite.js';
import { definitionSha, PIN_KIND, PINNED_UPSTREAM_KIND, pinnedPart, ToolPins } from './pins.js';

const dir = mkdtempSync(join(tmpdir(), 'lookfirst-pins-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `log${++n}.jsonl.pins.json`);

const tool = (name: string, description = `does ${name}`) => ({ name, description, inputSchema: { type: 'object' } });

/** Waits until `ok()` holds (a change notification from the store is asynchronous). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), 'the condition never held');
}

describe('tool pins', () => {
  it('pin the first listing (even an empty one), then report each distinct change once', async () => {
    const pins = new ToolPins(fresh());
    assert.deepEqual(await pins.observe('fs', [tool('read'), tool('write')]), { changed: [], added: [] });
    assert.deepEqual(await pins.observe('empty', []), { changed: [], added: [] });
    assert.ok(pins.has('empty'));
    assert.deepEqual(pins.status('fs', 'read', definitionSha(tool('read'))), { kind: 'pinned' });
    assert.deepEqual(await pins.observe('fs', [tool('read', 'B'), tool('write'), tool('delete')]), { changed: ['read'], added: ['delete'] });
    assert.deepEqual(await pins.observe('fs', [tool('read', 'B'), tool('write'), tool('delete')]), { changed: [], added: [] });
    assert.deepEqual(await pins.observe('fs', [tool('read', 'C')]), { changed: ['read'], added: [] });
    assert.deepEqual(pins.status('fs', 'read', definitionSha(tool('read', 'C'))), { kind: 'changed', previous: pinnedPart(tool('read')) });
    assert.deepEqual(pins.status('fs', 'delete', 'x'), { kind: 'new' });
    assert.deepEqual(pins.status('other', 'read', 'x'), { kind: 'new' });
    await pins.accept('fs', tool('read', 'C'));
    assert.deepEqual(pins.status('fs', 'read', definitionSha(tool('read', 'C'))), { kind: 'pinned' });
    assert.deepEqual(pins.definition('fs', 'read'), pinnedPart(tool('read', 'C')));
    await pins.close();
  });

  it('without a store of its own: keeps the pins file, so a restart is no escape', async () => {
    const path = fresh();
    const first = new ToolPins(path);
    await first.observe('fs', [tool('read')]);
    await first.accept('fs', tool('write'));
    await first.close();
    const again = new ToolPins(path);
    // Answered from the file at once, before any await.
    assert.deepEqual(again.status('fs', 'write', definitionSha(tool('write'))), { kind: 'pinned' });
    assert.deepEqual(await again.observe('fs', [tool('read', 'rug pull')]), { changed: ['read'], added: [] });
    await again.close();
  });

  it('import the older pins file once, for upstreams the store has no pins for, and never delete it', async () => {
    const path = fresh();
    const old = new ToolPins(path);
    await old.observe('fs', [tool('read')]);
    await old.observe('mail', [tool('send')]);
    const store = createMemoryStore();
    await store.put(PINNED_UPSTREAM_KIND, 'mail', true);
    await store.put(PIN_KIND, 'mail/send', { sha: definitionSha(tool('send', 'newer')), definition: pinnedPart(tool('send', 'newer')) });
    const pins = new ToolPins(path, { store });
    await pins.ready();
    assert.deepEqual(pins.status('fs', 'read', definitionSha(tool('read'))), { kind: 'pinned' });
    // The store's own pins win over the file's.
    assert.deepEqual(pins.status('mail', 'send', definitionSha(tool('send', 'newer'))), { kind: 'pinned' });
    assert.equal((await store.get(PIN_KIND, 'fs/read'))?.version, 1);
    assert.ok(existsSync(path));
    // A later start does not import again: what a person accepted since stays.
    const before = readFileSync(path, 'utf8');
    await pins.accept('fs', tool('read', 'accepted'));
    await pins.close();
    const later = new ToolPins(path, { store });
    await later.ready();
    assert.deepEqual(later.status('fs', 'read', definitionSha(tool('read', 'accepted'))), { kind: 'pinned' });
    await later.close();
    // A memory store keeps nothing across restarts: the file is still written then.
    assert.notEqual(readFileSync(path, 'utf8'), before);
  });

  it('two replicas on one store: a pin accepted on one is seen by the other', async () => {
    const store = createMemoryStore();
    const a = new ToolPins(fresh(), { store });
    const b = new ToolPins(fresh(), { store });
    await Promise.all([a.ready(), b.ready()]);
    await a.observe('fs', [tool('read')]);
    await until(() => b.has('fs'));
    assert.deepEqual(b.status('fs', 'read', definitionSha(tool('read'))), { kind: 'pinned' });
    // B sees the rug pull (its first sight is A's pin) and a person accepts it on A.
    assert.deepEqual(await b.observe('fs', [tool('read', 'evil')]), { changed: ['read'], added: [] });
    await a.accept('fs', tool('read', 'evil'));
    await until(() => b.status('fs', 'read', definitionSha(tool('read', 'evil'))).kind === 'pinned');
    await Promise.all([a.close(), b.close()]);
  });

  it('two replicas seeing an upstream first at once: the first pin wins, the other reports its difference', async () => {
    const store = createMemoryStore();
    const a = new ToolPins(fresh(), { store });
    const b = new ToolPins(fresh(), { store });
    const [ra, rb] = await Promise.all([a.observe('fs', [tool('read')]), b.observe('fs', [tool('read', 'other')])]);
    const reports = [ra, rb].map((r) => r.changed.length);
    assert.deepEqual(reports.sort(), [0, 1]);
    await b.sync();
    await a.sync();
    const winner = (await store.get<{ sha: string }>(PIN_KIND, 'fs/read'))?.value.sha;
    assert.equal(a.status('fs', 'read', winner ?? '').kind, 'pinned');
    assert.equal(b.status('fs', 'read', winner ?? '').kind, 'pinned');
    await Promise.all([a.close(), b.close()]);
  });

  it('two replicas on one SQLite file, through its change log', async () => {
    const file = join(dir, 'state.db');
    const s1 = createSqliteStore(file);
    const s2 = createSqliteStore(file);
    const a = new ToolPins(fresh(), { store: s1 });
    const b = new ToolPins(fresh(), { store: s2 });
    await Promise.all([a.ready(), b.ready()]);
    await a.observe('fs', [tool('read')]);
    await a.accept('fs', tool('write'));
    await until(() => b.status('fs', 'write', definitionSha(tool('write'))).kind === 'pinned');
    await Promise.all([a.close(), b.close()]);
    await Promise.all([s1.close(), s2.close()]);
  });

  it('fail closed: a store error pins nothing and the caller hears of it', async () => {
    const store = createMemoryStore();
    const pins = new ToolPins(fresh(), { store });
    await pins.observe('fs', [tool('read')]);
    await store.close();
    await assert.rejects(pins.accept('fs', tool('read', 'B')), { code: 'STORE_UNAVAILABLE' });
    assert.equal(pins.status('fs', 'read', definitionSha(tool('read', 'B'))).kind, 'changed');
    await assert.rejects(pins.observe('web', [tool('fetch')]), { code: 'STORE_UNAVAILABLE' });
    assert.equal(pins.has('web'), false);
    await assert.rejects(new ToolPins(fresh(), { store }).ready(), { code: 'STORE_UNAVAILABLE' });
  });

  it('any tool name round-trips through its store key', async () => {
    const store = createMemoryStore();
    const odd = tool('a/b\u0000c%20 é');
    await new ToolPins(fresh(), { store }).observe('fs', [odd]);
    const other = new ToolPins(fresh(), { store });
    await other.ready();
    assert.deepEqual(other.status('fs', String(odd.name), definitionSha(odd)), { kind: 'pinned' });
    await other.close();
  });

  it('refuse a pins file it cannot read', () => {
    const path = fresh();
    writeFileSync(path, '{"v":2}');
    assert.throws(() => new ToolPins(path), { code: 'PINS' });
  });
});
