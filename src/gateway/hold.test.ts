import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PendingApprovals } from '../confirm/pending.js';
import { createMemoryStore } from '../store/memory/memory.js';
import type { Approval, ToolCall } from '../types.js';
import { Holds } from './hold.js';

const call = (n: number): ToolCall => ({
  callId: `c${n}`,
  tool: 't',
  upstream: 'u',
  upstreamTool: 't',
  args: { n },
  argsCanonical: `{"n":${n}}`,
  argsSha256: String(n).repeat(64).slice(0, 64),
});
const approved: Approval = { kind: 'approved', channel: 'web', actor: 'web:a', trust: 'self-declared' };

function registry() {
  const log: string[] = [];
  const holds = new Holds({
    logApproval: async (c, a) => void log.push(`approval ${c.callId} ${a.kind}`),
    logLapse: async (c, _a, reason) => void log.push(`lapsed ${c.callId} ${reason}`),
  });
  return { holds, log };
}

describe('holds', () => {
  it('a decided hold is claimed once: a second claim gets nothing', async () => {
    const { holds } = registry();
    const h = holds.open(call(1), Date.now() + 10_000, async () => approved);
    await h.decided;
    assert.equal(await holds.take(h), 'taken');
    assert.equal(await holds.take(h), 'lapsed');
    assert.equal(holds.find('t', call(1).argsSha256), undefined);
  });

  it("times people's answers for the metrics, and counts a denial nobody gave (no actor) without a time", async () => {
    const seen: [string, string, number | undefined][] = [];
    const metrics = { decided: (c: string, d: string, ms?: number) => void seen.push([c, d, ms]) } as unknown as ConstructorParameters<
      typeof Holds
    >[0]['metrics'];
    const holds = new Holds({ logApproval: async () => {}, logLapse: async () => {}, metrics });
    await holds.open(call(9), Date.now() + 10_000, async () => approved).decided;
    await holds.open(call(10), Date.now() + 10_000, async () => ({ kind: 'denied', channel: 'none', reason: 'cancelled by the client before a decision' }))
      .decided;
    assert.equal(seen[0]?.[1], 'approved');
    assert.equal(typeof seen[0]?.[2], 'number');
    assert.deepEqual(seen[1], ['none', 'denied', undefined]);
  });

  it('a claim at or past the deadline is refused and logged as a lapse, even before the timer fires', async () => {
    const { holds, log } = registry();
    const h = holds.open(call(2), Date.now() + 30, async () => approved);
    await h.decided;
    // Block the event loop past the deadline, so the expiry timer cannot have run yet.
    const until = Date.now() + 60;
    while (Date.now() < until);
    assert.equal(await holds.take(h), 'lapsed');
    assert.deepEqual(log, ['approval c2 approved', 'lapsed c2 the retry came after confirm.timeout_seconds']);
  });

  it('closing the session logs unclaimed approvals as lapsed and withdraws open questions', async () => {
    const { holds, log } = registry();
    const a = holds.open(call(3), Date.now() + 10_000, async () => approved);
    await a.decided;
    let withdrawn = false;
    holds.open(
      call(4),
      Date.now() + 10_000,
      (signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            withdrawn = true;
            resolve({ kind: 'denied', channel: 'web', reason: 'withdrawn' });
          }),
        ),
    );
    await holds.closeAll('the client disconnected');
    assert.ok(withdrawn);
    assert.ok(log.includes('lapsed c3 the client disconnected'));
    assert.ok(log.includes('approval c4 denied'));
    assert.equal(await holds.take(a), 'lapsed');
  });

  it('a request waiting on a question the client is asked itself is not cut short by the hold', async () => {
    const { holds } = registry();
    let decide: (a: Approval) => void = () => {};
    const h = holds.open(call(5), Date.now() + 10_000, () => new Promise((r) => (decide = r)));
    const waiting = holds.wait(h, new AbortController().signal, 20);
    await new Promise((r) => setTimeout(r, 60));
    decide(approved);
    assert.equal(await waiting, 'decided');
  });

  describe('when two gate replicas share one store', () => {
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const shared = (store: ReturnType<typeof createMemoryStore>, pending: PendingApprovals, owner: string, replica: string) =>
      new Holds({ logApproval: async () => {}, logLapse: async () => {}, shared: { store, owner: () => owner, replica, pending } });

    it('one claim wins; the other replica is told the call was claimed elsewhere', async () => {
      const store = createMemoryStore();
      const pending = new PendingApprovals(undefined, { store });
      const c = { ...call(7), callId: uuid(7) };
      const [a, b] = [shared(store, pending, 'token:x:app', 'a'), shared(store, pending, 'token:x:app', 'b')];
      const ha = a.open(c, Date.now() + 10_000, async () => approved);
      await new Promise((r) => setImmediate(r));
      const hb = await b.findShared('t', c.argsSha256);
      assert.ok(hb, 'the same owner finds the hold on another replica');
      await ha.decided;
      assert.equal(await a.take(ha), 'taken');
      assert.equal(await b.take(hb), 'elsewhere');
      pending.close();
    });

    it('another owner never finds it, and a stored hold naming other arguments is not taken over', async () => {
      const store = createMemoryStore();
      const pending = new PendingApprovals(undefined, { store });
      const c = { ...call(8), callId: uuid(8) };
      const a = shared(store, pending, 'token:x:app', 'a');
      a.open(c, Date.now() + 10_000, async () => approved);
      await new Promise((r) => setImmediate(r));
      assert.equal(await shared(store, pending, 'token:y:app', 'b').findShared('t', c.argsSha256), undefined, 'another principal');
      assert.equal(await shared(store, pending, 'token:x:other', 'b').findShared('t', c.argsSha256), undefined, 'another client of the same token');
      // Someone rewrites the stored hold to name other arguments under the same key: it is refused.
      const key = JSON.stringify(['token:x:app', 't', c.argsSha256]);
      const rec = await store.get<{ call: ToolCall; deadlineMs: number; replica: string }>('hold', key);
      await store.put('hold', key, { ...rec?.value, call: { ...c, argsSha256: 'f'.repeat(64), args: { evil: true } } });
      assert.equal(await shared(store, pending, 'token:x:app', 'b').findShared('t', c.argsSha256), undefined);
      pending.close();
    });
  });
});

describe('findByCallId with a shared store (a decided call after a restart)', () => {
  const id = '0f0e0d0c-0b0a-4908-8706-050403020100';
  const shared = (store: ReturnType<typeof createMemoryStore>, pending: PendingApprovals, owner: string) =>
    new Holds({ logApproval: async () => {}, logLapse: async () => {}, shared: { store, owner: () => owner, replica: 'r1', pending } });

  it("finds the owner's own hold record by call id, and never another owner's", async () => {
    const store = createMemoryStore();
    const pending = new PendingApprovals(undefined, { store });
    const first = shared(store, pending, 'token:alice');
    const c = { ...call(9), callId: id };
    const h = first.open(c, Date.now() + 10_000, (signal) => new Promise((r) => signal.addEventListener('abort', () => r(approved))));
    // The record is written behind the open; wait for it.
    for (let i = 0; i < 50 && (await store.list('hold')).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    first.stop();
    await first.closeAll('the gate stopped');
    const other = shared(store, pending, 'token:mallory');
    assert.equal(await other.findByCallId(id), undefined, "another owner's hold is not found");
    const again = shared(store, pending, 'token:alice');
    const found = await again.findByCallId(id);
    assert.equal(found?.call.callId, id, 'the same owner takes it over after the restart');
    again.withdraw(found!);
    h.abort.abort();
    pending.close();
  });
});
