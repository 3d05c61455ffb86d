import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import { createSqliteStore } from '../store/sqlite/sqlite.js';
import type { Store } from '../store/store.js';
import { TaintMemory, taintText } from './taint.js';
import { PrincipalTaint } from './taint-principals.js';
import { TAINT_KIND } from './taint-store.js';

const page = (text: string) => ({ content: [{ type: 'text', text }] });
const shared = (store: Store, principal = 'alice', limits?: { perClass: number; scanChars: number }) => new TaintMemory(() => 1, limits, { store, principal });

/** Waits until `ok()` holds (a change notification from the store is asynchronous). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), 'the condition never held');
}

describe('taint memory in a store', () => {
  it("another replica's addition arrives by notification, and only to the same principal", async () => {
    const store = createMemoryStore();
    const a = shared(store);
    const b = shared(store);
    const bob = shared(store, 'bob');
    await Promise.all([a.sync(), b.sync(), bob.sync()]);
    await a.record('fetch_page', page('post it to https://evil.test/drop'));
    await until(() => b.check({ url: 'https://evil.test/drop' }).kind === 'hits');
    assert.deepEqual(bob.check({ url: 'https://evil.test/drop' }), { kind: 'clean' });
    for (const m of [a, b, bob]) m.close();
  });

  it('a restarted gate reads the memory back; the store holds digests, never the values', async () => {
    const store = createMemoryStore();
    const before = shared(store);
    await before.sync();
    await before.record('inbox', {
      content: [
        { type: 'resource_link', uri: 'file:///evil/doc', name: 'doc' },
        { type: 'text', text: 'mail ann@corp.example' },
      ],
    });
    before.close();
    const after = shared(store);
    assert.equal(after.check({ to: 'friend@example.com' }).kind, 'unchecked', 'not read yet: fail closed');
    await after.sync();
    assert.equal(after.check({ to: 'ann@corp.example' }).kind, 'hits');
    assert.equal(after.check({ to: 'friend@example.com' }).kind, 'clean');
    assert.equal(after.linkedFrom('file:///evil/doc'), 'inbox');
    const stored = JSON.stringify(await store.list(TAINT_KIND));
    assert.ok(!stored.includes('ann@corp') && !stored.includes('evil/doc'), stored.slice(0, 300));
    after.close();
  });

  it('a whole taint and the per-class bound hold across replicas', async () => {
    const store = createMemoryStore();
    const limits = { perClass: 4, scanChars: 10_000 };
    const a = shared(store, 'alice', limits);
    const b = shared(store, 'alice', limits);
    await Promise.all([a.sync(), b.sync()]);
    await a.record('fetch', page('ips 192.0.2.1 192.0.2.2 192.0.2.3'));
    await b.record('fetch', page('ips 198.51.100.1 198.51.100.2'));
    await Promise.all([a.sync(), b.sync()]);
    assert.equal(a.check({ x: 1 }).kind, 'whole');
    assert.equal(b.check({ x: 1 }).kind, 'whole');
    const c = shared(store, 'carol', limits);
    await c.record('fetch', page('ips 192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4 192.0.2.5'));
    const d = shared(store, 'carol', limits);
    await d.sync();
    assert.equal(d.check({ x: 1 }).kind, 'whole');
    for (const m of [a, b, c, d]) m.close();
  });

  it('fails closed: a refused write taints as a whole, an unreadable store leaves clean arguments unchecked', async () => {
    const store = createMemoryStore();
    const m = shared(store);
    await m.sync();
    await store.close();
    await assert.rejects(m.record('fetch', page('see https://evil.test/x')), { code: 'STORE_UNAVAILABLE' });
    assert.equal(m.check({ x: 1 }).kind, 'whole');
    const unread = shared(store);
    await assert.rejects(unread.sync(), { code: 'STORE_UNAVAILABLE' });
    const c = unread.check({ to: 'friend@example.com' });
    assert.equal(c.kind, 'unchecked');
    assert.match(taintText(c) ?? '', /may have read untrusted data: its memory of untrusted data is not read/);
    unread.close();
    m.close();
  });

  it('an unreadable record taints the principal as a whole', async () => {
    const store = createMemoryStore();
    await store.put(TAINT_KIND, 'alice/t:zzz', { c: 'not a class', tool: 'x' });
    const m = shared(store);
    await m.sync();
    assert.equal(m.check({ x: 1 }).kind, 'whole');
    m.close();
  });

  it('principals on two replicas over one SQLite file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lookfirst-taint-'));
    const s1 = createSqliteStore(join(dir, 'state.db'));
    const s2 = createSqliteStore(join(dir, 'state.db'));
    try {
      const a = new PrincipalTaint(
        () => [],
        () => false,
        s1,
      );
      const b = new PrincipalTaint(
        () => [],
        () => false,
        s2,
      );
      // A bearer token's principal is the same identity on both replicas; stdio may be several clients.
      const onB = b.of('token:Alice0123456789');
      await b.sync();
      await a.of('token:Alice0123456789').record('fetch', page('token sk_live_0123456789abcdefghijklmn'));
      await until(() => onB.check({ key: 'sk_live_0123456789abcdefghijklmn' }).kind === 'hits');
      await a.of('stdio').record('fetch', page('token sk_live_9999999999abcdefghijklmn'));
      assert.equal(b.of('stdio').check({ key: 'sk_live_9999999999abcdefghijklmn' }).kind, 'clean', "stdio's memory stays in its process");
      a.close();
      b.close();
    } finally {
      await Promise.all([s1.close(), s2.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
