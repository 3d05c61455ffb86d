import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PendingApprovals } from '../pending.js';
import { Cards } from './cards.js';
import { DeviceRegistry } from './registry.js';
import { heldCall, newKey, storeKits, testClock } from './test-kit.js';

const kits = storeKits();
after(() => {
  for (const k of kits) k.cleanup();
});

for (const kit of kits) {
  describe(`a high-risk call's two yeses (${kit.name} store)`, () => {
    it('keeps a spoken first yes in the evidence of a tapped second yes, and gives it to the approval', async () => {
      const clock = testClock();
      const { store } = kit.open(clock);
      const pending = new PendingApprovals(clock, { store });
      await pending.ready;
      const registry = new DeviceRegistry({ store, clock });
      const cards = new Cards({ store, clock, pending, registry, defaultUser: 'owner' });
      const alice = await registry.register({ user: 'alice', name: 'Pixel', key: newKey() });
      const ac = new AbortController();
      const { answer } = pending.hold(heldCall('big', { user: 'alice', risk: 'high', deadlineMs: clock.nowMs() + 600_000 }), ['device'], ac.signal);
      try {
        const set = await cards.issue(alice);
        const firstAt = clock.nowMs();
        const first = await cards.decideByWords(alice, set.set_id, { kind: 'confirm' }, { transcript: 'yes', audioSha256: 'b'.repeat(64) });
        assert.ok(first.ok && first.status === 'second_needed', JSON.stringify(first));
        clock.advance(5_000);
        const second = first.cards.cards.find((c) => c.call_id === 'big');
        assert.equal(second?.stage, 'second');
        const d = await cards.decide(alice, { setId: first.cards.set_id, callId: 'big', nonce: String(second?.nonce), approve: true, how: { method: 'tap' } });
        assert.ok(d.ok && d.status === 'decided', JSON.stringify(d));
        const want = { method: 'voice', transcript: 'yes', audioSha256: 'b'.repeat(64), decidedAtMs: firstAt };
        const ev = await cards.evidence.get(d.evidenceRef);
        assert.equal(ev?.method, 'tap');
        assert.deepEqual(ev?.first, want);
        const a = await answer;
        assert.equal(a.kind, 'approved');
        assert.deepEqual(a.kind === 'approved' ? a.evidence?.first : undefined, want);
        assert.equal(a.kind === 'approved' ? a.evidence?.method : undefined, 'tap');
      } finally {
        ac.abort();
        await answer;
        pending.close();
        await store.close();
      }
    });
  });
}
