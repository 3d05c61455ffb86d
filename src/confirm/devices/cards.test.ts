import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ChannelAnswer } from '../channel.js';
import { PendingApprovals } from '../pending.js';
import type { CardSet, DeviceDecision } from './card-types.js';
import { CARD_MS, Cards, SECOND_MS } from './cards.js';
import { DeviceRegistry } from './registry.js';
import { heldCall, newKey, raceWorkers, storeKits, testClock } from './test-kit.js';

const kits = storeKits();
after(() => {
  for (const k of kits) k.cleanup();
});

const DECISION_CHECKS = ['device_paired', 'card_set_open', 'not_expired', 'words_choose_card', 'action_unchanged', 'nonce_consumed_once'];
const tap = { method: 'tap' } as const;
const failedOf = (d: DeviceDecision) => (d.ok ? undefined : d.failed);

for (const kit of kits) {
  describe(`cards on paired devices (${kit.name} store)`, () => {
    const setup = async () => {
      const clock = testClock();
      const { store, config } = kit.open(clock);
      const pending = new PendingApprovals(clock, { store });
      await pending.ready;
      const registry = new DeviceRegistry({ store, clock });
      const cards = new Cards({ store, clock, pending, registry, defaultUser: 'owner' });
      const alice = await registry.register({ user: 'alice', name: 'Pixel', key: newKey() });
      const aborts: AbortController[] = [];
      const answers: Promise<ChannelAnswer>[] = [];
      const hold = (id: string, o: Partial<Parameters<typeof heldCall>[1]> = {}) => {
        const ac = new AbortController();
        aborts.push(ac);
        const { answer } = pending.hold(heldCall(id, { user: 'alice', deadlineMs: clock.nowMs() + 600_000, ...o }), o.channels ?? ['web', 'device'], ac.signal);
        answers.push(answer);
        return answer;
      };
      const done = async () => {
        for (const a of aborts) a.abort();
        await Promise.all(answers);
        pending.close();
        await store.close();
      };
      return { clock, store, config, pending, registry, cards, alice, hold, done };
    };
    const card = (set: CardSet, callId: string) => {
      const c = set.cards.find((x) => x.call_id === callId);
      assert.ok(c, `card ${callId} in the set`);
      return c;
    };

    it("shows the device its user's waiting calls on channel device, oldest first, with 32-hex nonces and 120 s", async () => {
      const t = await setup();
      t.hold('c1');
      t.clock.advance(10);
      t.hold('c2');
      t.hold('bobs', { user: 'bob' });
      t.hold('webonly', { channels: ['web'] });
      t.hold('nouser', { user: undefined });
      const set = await t.cards.issue(t.alice);
      assert.match(set.set_id, /^cs_[0-9a-f]{16}$/);
      assert.deepEqual(
        set.cards.map((c) => [c.position, c.call_id, c.stage]),
        [
          [1, 'c1', 'first'],
          [2, 'c2', 'first'],
        ],
      );
      for (const c of set.cards) {
        assert.match(c.nonce, /^[0-9a-f]{32}$/);
        assert.equal(c.expires_at, new Date(t.clock.nowMs() + CARD_MS).toISOString());
      }
      const owner = await t.registry.register({ user: 'owner', name: 'o', key: newKey() });
      assert.deepEqual(
        (await t.cards.issue(owner)).cards.map((c) => c.call_id),
        ['nouser'],
      );
      await t.done();
    });

    it("never lets a card outlive its call's deadline", async () => {
      const t = await setup();
      t.hold('soon', { deadlineMs: t.clock.nowMs() + 5000 });
      const set = await t.cards.issue(t.alice);
      assert.equal(card(set, 'soon').expires_at, new Date(t.clock.nowMs() + 5000).toISOString());
      await t.done();
    });

    it('gives back the same open set while more than 30 s are left, and a new one after, or when the cards change', async () => {
      const t = await setup();
      t.hold('c1');
      const a = await t.cards.issue(t.alice);
      t.clock.advance(80_000);
      const b = await t.cards.issue(t.alice);
      assert.deepEqual(b, a);
      t.clock.advance(10_000);
      const c = await t.cards.issue(t.alice);
      assert.notEqual(c.set_id, a.set_id);
      assert.notEqual(card(c, 'c1').nonce, card(a, 'c1').nonce);
      t.hold('c2');
      const d = await t.cards.issue(t.alice);
      assert.notEqual(d.set_id, c.set_id);
      await t.done();
    });

    it('mints no new set per poll when a new one would not live longer (a call near its deadline, a second stage)', async () => {
      const t = await setup();
      t.hold('soon', { deadlineMs: t.clock.nowMs() + 20_000 });
      const first = await t.cards.issue(t.alice);
      for (let i = 0; i < 20; i++) {
        t.clock.advance(500);
        assert.equal((await t.cards.issue(t.alice)).set_id, first.set_id, `poll ${i} minted a new set`);
      }
      assert.equal((await t.store.list('cardset')).length, 1);
      assert.equal((await t.store.list('card-nonce')).length, 1);
      t.clock.advance(10_001);
      const after = await t.cards.issue(t.alice);
      assert.notEqual(after.set_id, first.set_id, 'an expired set is never given back');
      assert.equal(after.cards.length, 0);
      await t.done();
    });

    it('decides a call by tap: every check passes by name, the evidence is written, the call is approved by the device', async () => {
      const t = await setup();
      const answer = t.hold('c1');
      const set = await t.cards.issue(t.alice);
      const c = card(set, 'c1');
      const d = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: c.nonce, approve: true, how: tap });
      assert.ok(d.ok && d.status === 'decided');
      assert.deepEqual(
        d.checks.map((x) => [x.name, x.ok]),
        DECISION_CHECKS.map((n) => [n, true]),
      );
      const a = await answer;
      assert.equal(a.kind, 'approved');
      if (a.kind !== 'approved') return;
      assert.equal(a.actor, 'device:alice/Pixel');
      assert.equal(a.trust, 'device-key');
      assert.equal(a.evidence?.ref, d.evidenceRef);
      const ev = await t.cards.evidence.get(d.evidenceRef);
      assert.equal(ev?.deviceId, t.alice.id);
      assert.equal(ev?.cardText, 'write_file c1');
      assert.equal(ev?.method, 'tap');
      assert.equal(await t.cards.evidence.forCall('c1'), d.evidenceRef);
      await t.done();
    });

    it('closes the set with the decision: a replay fails card_set_open, and a fresh card of a decided call fails action_unchanged', async () => {
      const t = await setup();
      t.hold('c1');
      t.hold('c2');
      const set = await t.cards.issue(t.alice);
      const phone2 = await t.registry.register({ user: 'alice', name: 'Tablet', key: newKey() });
      const other = await t.cards.issue(phone2);
      const first = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: false, how: tap });
      assert.ok(first.ok);
      const replay = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
      assert.equal(failedOf(replay), 'card_set_open');
      const sameSet = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c2', nonce: card(set, 'c2').nonce, approve: true, how: tap });
      assert.equal(failedOf(sameSet), 'card_set_open');
      assert.equal(sameSet.ok ? 0 : sameSet.httpStatus, 409);
      assert.deepEqual(
        sameSet.checks.map((x) => x.name),
        DECISION_CHECKS,
      );
      const stale = await t.cards.decide(phone2, { setId: other.set_id, callId: 'c1', nonce: card(other, 'c1').nonce, approve: true, how: tap });
      assert.equal(failedOf(stale), 'action_unchanged');
      const fresh = await t.cards.issue(t.alice);
      assert.deepEqual(
        fresh.cards.map((c) => [c.position, c.call_id]),
        [[1, 'c2']],
      );
      const ok = await t.cards.decide(t.alice, { setId: fresh.set_id, callId: 'c2', nonce: card(fresh, 'c2').nonce, approve: true, how: tap });
      assert.ok(ok.ok);
      await t.done();
    });

    it('refuses a wrong nonce (nonce_consumed_once) and changes nothing: the right nonce still works', async () => {
      const t = await setup();
      t.hold('c1');
      const set = await t.cards.issue(t.alice);
      const bad = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: '0'.repeat(32), approve: true, how: tap });
      assert.equal(failedOf(bad), 'nonce_consumed_once');
      const invented = await t.cards.decide(t.alice, { setId: 'cs_0000000000000000', callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
      assert.equal(failedOf(invented), 'card_set_open');
      const good = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
      assert.ok(good.ok);
      await t.done();
    });

    it('never throws on a malformed decision: it fails a named check instead', async () => {
      const t = await setup();
      t.hold('c1');
      const set = await t.cards.issue(t.alice);
      const junk = [
        { setId: 7, callId: null, nonce: {}, approve: 'yes', how: undefined },
        { setId: set.set_id, callId: 'c1', nonce: 'x', approve: true, how: { method: 'telepathy', transcript: 5, audioSha256: 'no' } },
      ] as unknown as Parameters<typeof t.cards.decide>[1][];
      for (const req of junk) {
        const d = await t.cards.decide(t.alice, req);
        assert.equal(d.ok, false);
        assert.deepEqual(
          d.checks.map((c) => c.name),
          DECISION_CHECKS,
        );
      }
      await t.done();
    });

    it('refuses an expired card (not_expired)', async () => {
      const t = await setup();
      t.hold('c1');
      const set = await t.cards.issue(t.alice);
      t.clock.advance(CARD_MS);
      const d = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
      assert.equal(failedOf(d), 'not_expired');
      await t.done();
    });

    it("refuses another user's device and a revoked device with device_paired (403)", async () => {
      const t = await setup();
      t.hold('c1');
      const set = await t.cards.issue(t.alice);
      const bob = await t.registry.register({ user: 'bob', name: 'b', key: newKey() });
      const asBob = await t.cards.decide(bob, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
      assert.equal(failedOf(asBob), 'device_paired');
      assert.equal(asBob.ok ? 0 : asBob.httpStatus, 403);
      await t.registry.revoke(t.alice.id);
      const revoked = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
      assert.equal(failedOf(revoked), 'device_paired');
      await t.done();
    });

    it('needs a second, separately nonced yes for a high-risk call, within 60 s', async () => {
      const t = await setup();
      const answer = t.hold('big', { risk: 'high' });
      const set = await t.cards.issue(t.alice);
      const first = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'big', nonce: card(set, 'big').nonce, approve: true, how: tap });
      assert.ok(first.ok && first.status === 'second_needed');
      const second = card(first.cards, 'big');
      assert.equal(second.stage, 'second');
      assert.notEqual(second.nonce, card(set, 'big').nonce);
      assert.equal(second.expires_at, new Date(t.clock.nowMs() + SECOND_MS).toISOString());
      assert.equal(t.pending.get('big')?.callId, 'big', 'still waiting after the first yes');
      const d = await t.cards.decide(t.alice, { setId: first.cards.set_id, callId: 'big', nonce: second.nonce, approve: true, how: tap });
      assert.ok(d.ok && d.status === 'decided');
      assert.equal((await t.cards.evidence.get(d.evidenceRef))?.stage, 'second');
      assert.equal((await answer).kind, 'approved');
      await t.done();
    });

    it('lets the second yes lapse after 60 s, and takes a no at the first stage at once', async () => {
      const t = await setup();
      t.hold('big', { risk: 'high' });
      const answer = t.hold('big2', { risk: 'high' });
      const set = await t.cards.issue(t.alice);
      const first = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'big', nonce: card(set, 'big').nonce, approve: true, how: tap });
      assert.ok(first.ok && first.status === 'second_needed');
      t.clock.advance(SECOND_MS);
      const late = await t.cards.decide(t.alice, { setId: first.cards.set_id, callId: 'big', nonce: card(first.cards, 'big').nonce, approve: true, how: tap });
      assert.equal(failedOf(late), 'not_expired');
      const again = await t.cards.issue(t.alice);
      assert.equal(card(again, 'big').stage, 'first');
      const no = await t.cards.decide(t.alice, { setId: again.set_id, callId: 'big2', nonce: card(again, 'big2').nonce, approve: false, how: tap });
      assert.ok(no.ok && no.status === 'decided');
      assert.equal((await answer).kind, 'denied');
      await t.done();
    });

    it('lets two concurrent decisions from one set through exactly once', async () => {
      const t = await setup();
      t.hold('c1');
      t.hold('c2');
      const set = await t.cards.issue(t.alice);
      const both = await Promise.all(
        ['c1', 'c2'].map((id) => t.cards.decide(t.alice, { setId: set.set_id, callId: id, nonce: card(set, id).nonce, approve: true, how: tap })),
      );
      assert.equal(both.filter((d) => d.ok).length, 1);
      assert.equal(both.map(failedOf).filter(Boolean)[0], 'card_set_open');
      await t.done();
    });

    describe('by voice', () => {
      it('picks the card the words name, confirms or cancels the final card, and chooses none for refused words', async () => {
        const t = await setup();
        t.hold('c1');
        t.hold('c2');
        t.hold('c3');
        const set = await t.cards.issue(t.alice);
        const pick = await t.cards.pickByWords(set.set_id, { kind: 'pick', position: 2 });
        assert.deepEqual(pick, { ok: true, position: 2, callId: 'c2', approve: true, nonce: card(set, 'c2').nonce });
        assert.deepEqual(await t.cards.pickByWords(set.set_id, { kind: 'confirm' }), {
          ok: true,
          position: 3,
          callId: 'c3',
          approve: true,
          nonce: card(set, 'c3').nonce,
        });
        assert.deepEqual(await t.cards.pickByWords(set.set_id, { kind: 'cancel' }), {
          ok: true,
          position: 3,
          callId: 'c3',
          approve: false,
          nonce: card(set, 'c3').nonce,
        });
        assert.equal((await t.cards.pickByWords(set.set_id, { kind: 'pick', position: 4 })).ok, false);
        assert.equal((await t.cards.pickByWords(set.set_id, { kind: 'refuse', reason: 'not two' })).ok, false);
        await t.done();
      });

      it('decides the picked card with the transcript recorded, and refuses words that choose none (words_choose_card)', async () => {
        const t = await setup();
        t.hold('c1');
        const answer = t.hold('c2');
        const set = await t.cards.issue(t.alice);
        const none = await t.cards.decideByWords(t.alice, set.set_id, { kind: 'refuse', reason: '"yes no" says both' }, { transcript: 'yes no' });
        assert.equal(failedOf(none), 'words_choose_card');
        assert.deepEqual(
          none.checks.map((c) => c.name),
          DECISION_CHECKS,
        );
        const notChosen = await t.cards.decide(t.alice, {
          setId: set.set_id,
          callId: 'c2',
          nonce: card(set, 'c2').nonce,
          approve: true,
          how: { method: 'voice', wordsChoose: false },
        });
        assert.equal(failedOf(notChosen), 'words_choose_card');
        const d = await t.cards.decideByWords(
          t.alice,
          set.set_id,
          { kind: 'pick', position: 2 },
          { transcript: 'the second one', audioSha256: 'a'.repeat(64) },
        );
        assert.ok(d.ok && d.status === 'decided');
        const ev = await t.cards.evidence.get(d.evidenceRef);
        assert.deepEqual([ev?.method, ev?.transcript, ev?.audioSha256, ev?.callId], ['voice', 'the second one', 'a'.repeat(64), 'c2']);
        const a = await answer;
        assert.equal(a.kind === 'approved' && a.evidence?.transcript, 'the second one');
        await t.done();
      });
    });

    describe('evidence before execution', () => {
      it('passes once for the decided call; a second use fails evidence_unused', async () => {
        const t = await setup();
        t.hold('c1');
        const set = await t.cards.issue(t.alice);
        const d = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
        assert.ok(d.ok && d.status === 'decided');
        const sha = card(set, 'c1').args_sha256;
        const wrongCall = await t.cards.evidence.checkExecution(d.evidenceRef, 'c2', sha);
        assert.equal(wrongCall.ok ? '' : wrongCall.failed, 'evidence_for_card_set');
        const changed = await t.cards.evidence.checkExecution(d.evidenceRef, 'c1', 'f'.repeat(64));
        assert.equal(changed.ok ? '' : changed.failed, 'action_unchanged');
        const invented = await t.cards.evidence.checkExecution('ev_0000000000000000', 'c1', sha);
        assert.equal(invented.ok ? '' : invented.failed, 'evidence_exists');
        const once = await t.cards.evidence.checkExecution(d.evidenceRef, 'c1', sha);
        assert.ok(once.ok, 'the refused attempts did not spend it');
        assert.deepEqual(
          once.checks.map((c) => c.name),
          ['evidence_exists', 'evidence_for_card_set', 'evidence_unused', 'action_unchanged', 'not_expired'],
        );
        const twice = await t.cards.evidence.checkExecution(d.evidenceRef, 'c1', sha);
        assert.equal(twice.ok ? '' : twice.failed, 'evidence_unused');
        await t.done();
      });

      it("fails not_expired past the call's deadline, and evidence_exists for a no", async () => {
        const t = await setup();
        t.hold('c1', { deadlineMs: t.clock.nowMs() + 100_000 });
        t.hold('c2');
        const set = await t.cards.issue(t.alice);
        const yes = await t.cards.decide(t.alice, { setId: set.set_id, callId: 'c1', nonce: card(set, 'c1').nonce, approve: true, how: tap });
        assert.ok(yes.ok && yes.status === 'decided');
        const set2 = await t.cards.issue(t.alice);
        const no = await t.cards.decide(t.alice, { setId: set2.set_id, callId: 'c2', nonce: card(set2, 'c2').nonce, approve: false, how: tap });
        assert.ok(no.ok && no.status === 'decided');
        const denied = await t.cards.evidence.checkExecution(no.evidenceRef, 'c2', card(set2, 'c2').args_sha256);
        assert.equal(denied.ok ? '' : denied.failed, 'evidence_exists');
        t.clock.advance(100_000);
        const late = await t.cards.evidence.checkExecution(yes.evidenceRef, 'c1', card(set, 'c1').args_sha256);
        assert.equal(late.ok ? '' : late.failed, 'not_expired');
        await t.done();
      });
    });

    if (kit.name === 'sqlite')
      it('lets exactly one of 4 processes deciding the same card at once through', async () => {
        const t = await setup();
        const answer = t.hold('c1');
        const set = await t.cards.issue(t.alice);
        // The question must be in the store before the racers read it.
        while (!(await t.store.get('pending', 'c1'))) await new Promise((r) => setTimeout(r, 5));
        const args = ['decide', JSON.stringify(t.config), JSON.stringify(t.alice), set.set_id, 'c1', card(set, 'c1').nonce];
        const out = (await raceWorkers([args, args, args, args])) as { ok: boolean; failed?: string }[];
        assert.equal(out.filter((o) => o.ok).length, 1, JSON.stringify(out));
        assert.equal((await answer).kind, 'approved');
        await t.done();
      });
  });
}
