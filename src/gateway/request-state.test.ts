import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import { createSqliteStore } from '../store/sqlite/sqlite.js';
import { NONCE_KIND, RequestStates, STATE_KEY } from './request-state.js';

const call = { session: 's1', tool: 'write_note', argsSha256: 'a'.repeat(64), callId: 'c1' };
const want = { session: 's1', tool: 'write_note', argsSha256: 'a'.repeat(64) };

describe('approval request states', () => {
  it('redeem once for the call they were issued for', async () => {
    const states = new RequestStates(60_000);
    const raw = await states.mint({ ...call, expiresMs: Date.now() + 60_000 });
    assert.deepEqual(await states.redeem(raw, want), { ok: true, callId: 'c1' });
    assert.deepEqual(await states.redeem(raw, want), { ok: false, why: 'replayed' });
  });

  it('refuse another session, tool or arguments, and are used up by the attempt', async () => {
    const states = new RequestStates(60_000);
    for (const other of [{ session: 's2' }, { tool: 'delete_note' }, { argsSha256: 'b'.repeat(64) }]) {
      const raw = await states.mint({ ...call, expiresMs: Date.now() + 60_000 });
      assert.deepEqual(await states.redeem(raw, { ...want, ...other }), { ok: false, why: 'foreign' });
      assert.deepEqual(await states.redeem(raw, want), { ok: false, why: 'replayed' });
    }
  });

  it('expire with the approval deadline, before the codec would', async () => {
    let now = 1_000_000;
    const states = new RequestStates(600_000, { clock: { nowMs: () => now } });
    const raw = await states.mint({ ...call, expiresMs: now + 5_000 });
    now += 5_001;
    assert.deepEqual(await states.redeem(raw, want), { ok: false, why: 'expired' });
  });

  it('refuse altered, foreign-process and malformed states', async () => {
    const states = new RequestStates(60_000);
    const raw = await states.mint({ ...call, expiresMs: Date.now() + 60_000 });
    const [v, body, mac] = raw.split('.');
    const payload = JSON.parse(Buffer.from(body ?? '', 'base64url').toString('utf8')) as { p: { h: string } };
    payload.p.h = 'b'.repeat(64);
    const forged = `${v}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    assert.equal(((await states.redeem(forged, want)) as { why: string }).why, 'tampered');
    const elsewhere = await new RequestStates(60_000).mint({ ...call, expiresMs: Date.now() + 60_000 });
    assert.equal(((await states.redeem(elsewhere, want)) as { why: string }).why, 'tampered');
    for (const junk of [undefined, 42, {}, '', 'v1..', 'x'.repeat(5000)]) assert.equal((await states.redeem(junk, want)).ok, false);
    // The genuine state survives the failed attempts.
    assert.deepEqual(await states.redeem(raw, want), { ok: true, callId: 'c1' });
  });

  it("one session's flood of questions cannot close another session's", async () => {
    const states = new RequestStates(60_000);
    const victim = await states.mint({ ...call, expiresMs: Date.now() + 60_000 });
    const first = await states.mint({ ...call, session: 'flood', expiresMs: Date.now() + 60_000 });
    for (let i = 0; i < 200; i++) await states.mint({ ...call, session: 'flood', callId: `f${i}`, expiresMs: Date.now() + 60_000 });
    assert.deepEqual(await states.redeem(victim, want), { ok: true, callId: 'c1' });
    // The flooding session loses its own oldest questions first.
    assert.deepEqual(await states.redeem(first, { ...want, session: 'flood' }), { ok: false, why: 'replayed' });
  });

  it('two replicas on one store: a state minted by one is redeemed by the other, exactly once', async () => {
    const store = createMemoryStore();
    const a = new RequestStates(60_000, { store });
    const b = new RequestStates(60_000, { store });
    await Promise.all([a.ready(), b.ready()]);
    const raw = await a.mint({ ...call, expiresMs: Date.now() + 60_000 });
    const results = await Promise.all([b.redeem(raw, want), a.redeem(raw, want), b.redeem(raw, want)]);
    assert.equal(results.filter((r) => r.ok).length, 1);
    assert.deepEqual(
      results.filter((r) => !r.ok),
      [
        { ok: false, why: 'replayed' },
        { ok: false, why: 'replayed' },
      ],
    );
    assert.equal((await store.list(NONCE_KIND)).length, 0);
  });

  it('two replicas on one SQLite file agree on one key and one redeem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lookfirst-rs-'));
    try {
      const s1 = createSqliteStore(join(dir, 'state.db'));
      const s2 = createSqliteStore(join(dir, 'state.db'));
      const a = new RequestStates(60_000, { store: s1 });
      const b = new RequestStates(60_000, { store: s2 });
      const raw = await b.mint({ ...call, expiresMs: Date.now() + 60_000 });
      assert.deepEqual(await a.redeem(raw, want), { ok: true, callId: 'c1' });
      assert.deepEqual(await b.redeem(raw, want), { ok: false, why: 'replayed' });
      assert.equal((await s1.get(STATE_KEY.kind, STATE_KEY.key))?.version, 1);
      await s1.close();
      await s2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fail closed: a store that cannot be reached mints nothing and redeems nothing', async () => {
    const store = createMemoryStore();
    const states = new RequestStates(60_000, { store });
    const raw = await states.mint({ ...call, expiresMs: Date.now() + 60_000 });
    await store.close();
    assert.deepEqual(await states.redeem(raw, want), { ok: false, why: 'unavailable' });
    await assert.rejects(states.mint({ ...call, expiresMs: Date.now() + 60_000 }), { code: 'STORE_UNAVAILABLE' });
    const fresh = new RequestStates(60_000, { store });
    assert.deepEqual(await fresh.redeem(raw, want), { ok: false, why: 'unavailable' });
    await assert.rejects(fresh.ready(), { code: 'STORE_UNAVAILABLE' });
  });

  it('refuse a key in the store that is not 32 bytes', async () => {
    const store = createMemoryStore();
    await store.put(STATE_KEY.kind, STATE_KEY.key, 'c2hvcnQ=');
    await assert.rejects(new RequestStates(60_000, { store }).ready(), { code: 'STORE_CORRUPT' });
  });
});
