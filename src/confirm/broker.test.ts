import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfirmBroker } from './broker.js';
import type { ApprovalRequest, ConfirmChannel, OutOfBandChannel } from './channel.js';
import { PendingApprovals } from './pending.js';

/** SHA-256 of `{}`, the arguments every question here holds (a question's arguments must hash to it). */
const EMPTY_SHA = '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a';

const req = (ms = 5000): ApprovalRequest => ({
  call: { callId: `c-${Math.random()}`, tool: 't', upstream: 'u', upstreamTool: 't', args: {}, argsCanonical: '{}', argsSha256: EMPTY_SHA },
  summary: 't',
  deadlineMs: Date.now() + ms,
});

/** An out-of-band channel that records what it was shown and when it was told to stop showing it. */
function recording(name: string, present: true | string = true) {
  const log: string[] = [];
  const channel: OutOfBandChannel = {
    name,
    availability: () => true,
    present: async (r, signal) => {
      log.push(`shown ${r.call.callId}`);
      signal.addEventListener('abort', () => log.push('withdrawn'));
      return present;
    },
  };
  return { channel, log };
}

const who = { channel: 'a', actor: 'a:alice', trust: 'self-declared' } as const;

describe('confirm broker', () => {
  it('shows a call on every out-of-band channel at once; the first decision wins and the rest withdraw it', async () => {
    const pending = new PendingApprovals();
    const a = recording('a');
    const b = recording('b');
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [a.channel, b.channel], pending });
    const r = req();
    const answer = broker.confirm(r, new AbortController().signal);
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(pending.get(r.call.callId)?.channels, ['a', 'b']);
    assert.deepEqual(await pending.decide(r.call.callId, r.call.argsSha256, true, who), { ok: true });
    const second = await pending.decide(r.call.callId, r.call.argsSha256, false, { ...who, channel: 'b', actor: 'b:bob' });
    assert.equal(second.ok, false, 'a second decision finds nothing to decide');
    const approval = await answer;
    assert.equal(approval.kind, 'approved');
    assert.equal(approval.actor, 'a:alice');
    assert.deepEqual(a.log.slice(1), ['withdrawn']);
    assert.deepEqual(b.log.slice(1), ['withdrawn']);
    assert.equal(pending.history()[0]?.decision, 'approved');
  });

  it('denies at once, naming each reason, when no channel can show the call', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [recording('webhook', 'the receiver answered 500').channel], pending });
    const started = Date.now();
    const approval = await broker.confirm(req(60_000), new AbortController().signal);
    assert.equal(approval.kind, 'denied');
    assert.match(approval.kind === 'denied' ? approval.reason : '', /webhook: the receiver answered 500/);
    assert.ok(Date.now() - started < 1000);
    assert.equal(pending.list().length, 0);
  });

  it('a timeout and a client cancellation deny, and a late decision is refused', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [recording('a').channel], pending });
    const r = req(50);
    const timedOut = await broker.confirm(r, new AbortController().signal);
    assert.match(timedOut.kind === 'denied' ? timedOut.reason : '', /nobody decided/);
    assert.deepEqual((await pending.decide(r.call.callId, r.call.argsSha256, true, who)).ok, false);
    const cancel = new AbortController();
    const r2 = req();
    const answer = broker.confirm(r2, cancel.signal);
    cancel.abort();
    const cancelled = await answer;
    assert.match(cancelled.kind === 'denied' ? cancelled.reason : '', /cancelled by the client/);
    assert.equal(pending.history()[0]?.decision, 'withdrawn');
  });

  it('refuses a decision naming other arguments, and keeps the call waiting', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [recording('a').channel], pending });
    const r = req();
    const answer = broker.confirm(r, new AbortController().signal);
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(await pending.decide(r.call.callId, 'b'.repeat(64), true, who), {
      ok: false,
      status: 'mismatch',
      reason: 'the arguments named are not the arguments held; reload and look again',
    });
    assert.ok(pending.get(r.call.callId));
    await pending.decide(r.call.callId, r.call.argsSha256, false, who);
    assert.equal((await answer).kind, 'denied');
  });

  it('uses the in-client channel first and shows nothing elsewhere when it answers', async () => {
    const pending = new PendingApprovals();
    const a = recording('a');
    const elicitation: ConfirmChannel = {
      name: 'elicitation',
      availability: () => true,
      ask: async () => ({ kind: 'approved', channel: 'elicitation', actor: 'elicitation:x', trust: 'client' }),
    };
    const approval = await new ConfirmBroker({ inClient: [elicitation], outOfBand: [a.channel], pending }).confirm(req(), new AbortController().signal);
    assert.equal(approval.kind === 'approved' && approval.trust, 'client');
    assert.deepEqual(a.log, []);
  });
});
