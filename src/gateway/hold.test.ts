import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
    assert.equal(await holds.take(h), true);
    assert.equal(await holds.take(h), false);
    assert.equal(holds.find('t', call(1).argsSha256), undefined);
  });

  it('a claim at or past the deadline is refused and logged as a lapse, even before the timer fires', async () => {
    const { holds, log } = registry();
    const h = holds.open(call(2), Date.now() + 30, async () => approved);
    await h.decided;
    // Block the event loop past the deadline, so the expiry timer cannot have run yet.
    const until = Date.now() + 60;
    while (Date.now() < until);
    assert.equal(await holds.take(h), false);
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
    assert.equal(await holds.take(a), false);
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
});
