import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import { ConfirmBroker } from './broker.js';
import type { ApprovalRequest, OutOfBandChannel } from './channel.js';
import { PendingApprovals } from './pending.js';

/** SHA-256 of `{}`, the arguments every question here holds (a question's arguments must hash to it). */
const EMPTY_SHA = '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a';

const req = (id: string, ms = 60_000): ApprovalRequest => ({
  call: { callId: id, tool: 't', upstream: 'u', upstreamTool: 't', args: {}, argsCanonical: '{}', argsSha256: EMPTY_SHA },
  summary: 't',
  deadlineMs: Date.now() + ms,
});
const shown: OutOfBandChannel = { name: 'webhook', availability: () => true, present: async () => true };
const who = { channel: 'webhook', actor: 'webhook:bob', trust: 'shared-secret' } as const;
const tick = () => new Promise((r) => setImmediate(r));

describe('pending approvals: how a call that no longer waits ended', () => {
  it('says a second decision is a replay, naming the first decision and who took it', async () => {
    const pending = new PendingApprovals();
    const answer = new ConfirmBroker({ inClient: [], outOfBand: [shown], pending }).confirm(req('c1'), new AbortController().signal);
    await tick();
    assert.deepEqual(await pending.decide('c1', EMPTY_SHA, false, who), { ok: true });
    await answer;
    assert.equal((await pending.decide('c1', EMPTY_SHA, true, who)).ok, false);
    assert.deepEqual(pending.ended('c1'), { kind: 'decided', by: 'webhook:bob', approved: false });
  });

  it('tells a timeout (nobody decided) from the client withdrawing the call', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [shown], pending });
    const timedOut = await broker.confirm(req('c2', 0), new AbortController().signal);
    assert.match(timedOut.kind === 'denied' ? timedOut.reason : '', /nobody decided before the confirmation timeout/);
    assert.deepEqual(pending.ended('c2'), { kind: 'timed out' });
    const cancel = new AbortController();
    const withdrawn = broker.confirm(req('c3'), cancel.signal);
    await tick();
    cancel.abort();
    const w = await withdrawn;
    assert.match(w.kind === 'denied' ? w.reason : '', /cancelled by the client/);
    assert.equal(pending.ended('c3')?.kind, 'withdrawn');
  });

  it('knows nothing of a call it never held', () => {
    assert.equal(new PendingApprovals().ended('never'), undefined);
  });
});

describe('when two gate replicas share one store', () => {
  it("lists a call held on A on B's page, and B's decision reaches the call waiting on A", async () => {
    const store = createMemoryStore();
    const [a, b] = [new PendingApprovals(undefined, { store }), new PendingApprovals(undefined, { store })];
    await Promise.all([a.ready, b.ready]);
    const answer = new ConfirmBroker({ inClient: [], outOfBand: [shown], pending: a }).confirm(req('x1'), new AbortController().signal);
    await tick();
    await tick();
    assert.deepEqual(
      b.list().map((v) => v.callId),
      ['x1'],
    );
    assert.deepEqual(await b.decide('x1', EMPTY_SHA, true, who), { ok: true });
    const approval = await answer;
    assert.equal(approval.kind, 'approved');
    assert.equal((await a.decide('x1', EMPTY_SHA, false, who)).ok, false, 'the first decision anywhere wins');
    assert.deepEqual(a.ended('x1'), { kind: 'decided', by: 'webhook:bob', approved: true });
    a.close();
    b.close();
  });

  it('lets a replica wait for the decision of a call another replica holds', async () => {
    const store = createMemoryStore();
    const [a, b] = [new PendingApprovals(undefined, { store }), new PendingApprovals(undefined, { store })];
    const held = new ConfirmBroker({ inClient: [], outOfBand: [shown], pending: a }).confirm(req('x2'), new AbortController().signal);
    await tick();
    const waited = b.awaitDecision('x2', new AbortController().signal);
    assert.deepEqual(await a.decide('x2', EMPTY_SHA, false, who), { ok: true });
    assert.equal((await waited).kind, 'denied');
    assert.equal((await held).kind, 'denied');
    a.close();
    b.close();
  });
});
