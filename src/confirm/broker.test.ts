import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvalEntry } from '../gateway/pipeline/entries.js';
import { createDecisionTracker } from '../observe/decisions.js';
import type { Approval } from '../types.js';
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

describe('when nobody decides (the client cancels, the deadline passes)', () => {
  /** What tail and stats make of an approval as the gate logs it (gateway/pipeline/entries.ts). */
  const observed = (a: Approval) => {
    const t = createDecisionTracker();
    const call = { call_id: 'c', tool: 't' };
    t.push({ seq: 1, ts: 1000, event: 'call_received', ...call });
    t.push({ seq: 2, ts: 1010, event: 'decision', ...call, action: 'confirm', reason: 'm' });
    const [r] = t.push({ seq: 3, ts: 23_610, ...approvalEntry(call, a) });
    return r && [r.outcome, r.channel, r.approver, r.decisionMs];
  };

  it('a cancellation while the page shows the call names no channel and no person, and says where it was shown', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [recording('web').channel], pending });
    const cancel = new AbortController();
    const answer = broker.confirm(req(), cancel.signal);
    await new Promise((res) => setImmediate(res));
    cancel.abort();
    const a = await answer;
    assert.deepEqual(a, { kind: 'denied', channel: 'none', reason: 'cancelled by the client before a decision; it was shown on web' });
    assert.deepEqual(observed(a), ['cancelled', undefined, undefined, undefined]);
    assert.equal(pending.history()[0]?.decision, 'withdrawn');
  });

  it('a timeout names no channel and no person, and reads as timed out', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({ inClient: [], outOfBand: [recording('web').channel, recording('webhook').channel], pending });
    const a = await broker.confirm(req(30), new AbortController().signal);
    assert.deepEqual(a, {
      kind: 'denied',
      channel: 'none',
      reason: 'nobody decided before the confirmation timeout (confirm.timeout_seconds); it was shown on web, webhook',
    });
    assert.deepEqual(observed(a), ['timed out', undefined, undefined, undefined]);
    assert.equal(pending.history()[0]?.decision, 'timed out');
  });

  it('leaves out of "shown on" a channel that could not show the call', async () => {
    const pending = new PendingApprovals();
    const broker = new ConfirmBroker({
      inClient: [],
      outOfBand: [recording('web').channel, recording('webhook', 'the receiver answered 500').channel],
      pending,
    });
    const a = await broker.confirm(req(50), new AbortController().signal);
    assert.equal(a.kind === 'denied' && a.reason, 'nobody decided before the confirmation timeout (confirm.timeout_seconds); it was shown on web');
  });

  it('a cancellation while the client itself asks (elicitation) names no channel and no person', async () => {
    const pending = new PendingApprovals();
    const cancel = new AbortController();
    const elicitation: ConfirmChannel = {
      name: 'elicitation',
      availability: () => true,
      // The client's dialog goes away with the request: it answers nothing a person chose.
      ask: (_r, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => resolve({ kind: 'denied', channel: 'elicitation', reason: 'no decision before the confirmation timeout' })),
        ),
    };
    const answer = new ConfirmBroker({ inClient: [elicitation], outOfBand: [], pending }).confirm(req(), cancel.signal);
    cancel.abort();
    const a = await answer;
    assert.deepEqual(a, { kind: 'denied', channel: 'none', reason: 'cancelled by the client before a decision; it was shown on elicitation' });
    assert.deepEqual(observed(a), ['cancelled', undefined, undefined, undefined]);
  });

  /** The broker's answer when the client cancels just as the channel answers `answer`. */
  async function answeredAsCancelled(answer: Awaited<ReturnType<ConfirmChannel['ask']>>) {
    const cancel = new AbortController();
    const elicitation: ConfirmChannel = {
      name: 'elicitation',
      availability: () => true,
      ask: async () => {
        cancel.abort();
        return answer;
      },
    };
    return new ConfirmBroker({ inClient: [elicitation], outOfBand: [], pending: new PendingApprovals() }).confirm(req(), cancel.signal);
  }

  it("a person's no that came in as the client cancelled stays that person's", async () => {
    const a = await answeredAsCancelled({ kind: 'denied', channel: 'elicitation', actor: 'elicitation:x', trust: 'client', reason: 'the person declined' });
    assert.equal(a.kind === 'denied' && a.actor, 'elicitation:x');
    assert.deepEqual(observed(a), ['denied', 'elicitation', 'elicitation:x', 22_600]);
  });

  it('an approval that comes in after the client cancelled is still no approval', async () => {
    const a = await answeredAsCancelled({ kind: 'approved', channel: 'elicitation', actor: 'elicitation:x', trust: 'client' });
    assert.equal(a.kind, 'denied');
    assert.deepEqual(observed(a), ['cancelled', undefined, undefined, undefined]);
  });

  it('a channel that fails names no channel and no person: the gate denied it', async () => {
    const pending = new PendingApprovals();
    const elicitation: ConfirmChannel = {
      name: 'elicitation',
      availability: () => true,
      ask: async () => {
        throw new Error('boom');
      },
    };
    const a = await new ConfirmBroker({ inClient: [elicitation], outOfBand: [], pending }).confirm(req(), new AbortController().signal);
    assert.deepEqual(a, { kind: 'denied', channel: 'none', reason: 'the elicitation channel failed (boom)' });
    assert.deepEqual(observed(a), ['denied', undefined, undefined, undefined]);
  });
});
