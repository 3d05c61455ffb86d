import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUDIT_EVENTS } from './events.js';
import { KEY_FIELDS, keyFieldsOf, mergeTimeline } from './timeline.js';

const line = (e: Record<string, unknown>) => JSON.stringify({ v: 1, prev: '0', sig: 'x', ...e });
const text = (...es: Record<string, unknown>[]) => `${es.map(line).join('\n')}\n`;

// Replica A receives call c1 and asks a person; replica B takes the retry and executes it.
const a = text(
  { seq: 0, ts: 1000, event: 'gate_started', replica: 'host-a-1', pid: 1 },
  { seq: 1, ts: 2000, event: 'call_received', call_id: 'c1', tool: 'fs/write', client: 'agent' },
  { seq: 2, ts: 2001, event: 'decision', call_id: 'c1', tool: 'fs/write', action: 'confirm', reason: 'write' },
  { seq: 3, ts: 5000, event: 'read', tool: 'fs/read', outcome: 'ok' },
);
const b = text(
  { seq: 0, ts: 1500, event: 'gate_started', replica: 'host-b-2', pid: 2 },
  { seq: 1, ts: 2001, event: 'call_retried', call_id: 'c1', tool: 'fs/write' },
  { seq: 2, ts: 3000, event: 'approval', call_id: 'c1', tool: 'fs/write', approved: true, actor: 'ana', channel: 'web' },
  { seq: 3, ts: 3000, event: 'executed', call_id: 'c1', tool: 'fs/write', outcome: 'ok' },
);

describe('mergeTimeline', () => {
  it('orders entries of several logs by time, then log name, then seq', () => {
    const { entries, skipped } = mergeTimeline([
      { log: 'b', text: b },
      { log: 'a', text: a },
    ]);
    assert.equal(skipped, 0);
    assert.deepEqual(
      entries.map((e) => `${e.ts} ${e.log} ${e.seq}`),
      ['1000 a 0', '1500 b 0', '2000 a 1', '2001 a 2', '2001 b 1', '3000 b 2', '3000 b 3', '5000 a 3'],
    );
  });

  it('names the replica from the last gate_started of each log', () => {
    const { entries } = mergeTimeline([
      { log: 'a', text: a },
      { log: 'b', text: b },
    ]);
    assert.equal(entries.find((e) => e.event === 'executed')?.replica, 'host-b-2');
    assert.equal(entries.find((e) => e.event === 'decision')?.replica, 'host-a-1');
  });

  describe('with a call id', () => {
    it("tells one call's story across logs", () => {
      const { entries } = mergeTimeline(
        [
          { log: 'a', text: a },
          { log: 'b', text: b },
        ],
        { callId: 'c1' },
      );
      assert.deepEqual(
        entries.map((e) => `${e.log} ${e.event}`),
        ['a call_received', 'a decision', 'b call_retried', 'b approval', 'b executed'],
      );
    });

    it('returns nothing for a call no log has', () => {
      assert.deepEqual(mergeTimeline([{ log: 'a', text: a }], { callId: 'nope' }).entries, []);
    });
  });

  describe('when lines are not entries', () => {
    it('skips and counts them', () => {
      const { entries, skipped } = mergeTimeline([
        { log: 'x', text: `not json\n[1]\n{"seq":"0","ts":1,"event":"read"}\n${line({ seq: 0, ts: 1, event: 'read' })}\n` },
      ]);
      assert.equal(entries.length, 1);
      assert.equal(skipped, 3);
    });
  });

  it('skips, and counts, a line whose ts no Date can show or whose seq is not finite (timeline --include-unverified reads such logs)', () => {
    const text = ['{"seq":1,"ts":1e300,"event":"gate_started"}', '{"seq":1e999,"ts":5,"event":"x"}', '{"seq":2,"ts":7,"event":"x"}', ''].join('\n');
    const { entries, skipped } = mergeTimeline([{ log: 'a', text }]);
    assert.deepEqual(
      entries.map((e) => e.seq),
      [2],
    );
    assert.equal(skipped, 2);
  });

  it('merges no logs into an empty timeline', () => {
    assert.deepEqual(mergeTimeline([]), { entries: [], skipped: 0 });
  });
});

describe('keyFieldsOf', () => {
  it('has key fields for every event the gate writes', () => {
    assert.deepEqual(Object.keys(KEY_FIELDS).sort(), [...AUDIT_EVENTS].sort());
  });

  it('shows the present key fields of the event, in order', () => {
    assert.equal(keyFieldsOf({ event: 'approval', approved: false, channel: 'web', actor: 'ana' }), 'approved=false actor=ana channel=web');
    assert.equal(keyFieldsOf({ event: 'decision', action: 'deny', reason: 'r' }), 'action=deny');
  });

  it('shows nothing for an event it does not know', () => {
    assert.equal(keyFieldsOf({ event: 'future_event', action: 'x' }), '');
  });

  it('cuts long values', () => {
    assert.equal(keyFieldsOf({ event: 'gate_stopped', reason: 'r'.repeat(200) }).length, 'reason='.length + 80);
  });
});
