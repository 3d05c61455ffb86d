import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayWidth } from '../core/text-width.js';
import { type DecisionRecord, decisionsOf } from './decisions.js';
import { callsLine, computeStats, median, renderStats, statsJson, table } from './stats.js';

const rec = (ts: number, tool: string, outcome: DecisionRecord['outcome'], extra: Partial<DecisionRecord> = {}): DecisionRecord => ({
  ts,
  seq: ts,
  tool,
  outcome,
  ...extra,
});

const records: DecisionRecord[] = [
  rec(50, 'echo', 'read ok'), // before the window
  rec(100, 'echo', 'read ok'),
  rec(110, 'echo', 'read ok'),
  rec(120, 'write_note', 'executed ok', { callId: 'c1', channel: 'web', approver: 'web:alice', decisionMs: 1000 }),
  rec(130, 'write_note', 'denied', { callId: 'c2', channel: 'elicitation', approver: 'elicitation:claude', decisionMs: 3000, detail: 'the person declined' }),
  rec(140, 'drop_table', 'denied', { callId: 'c3', rule: 'drop_*', detail: 'rule "drop_*"' }),
  rec(150, 'write_note', 'lapsed', { callId: 'c4', channel: 'web', approver: 'web:alice', decisionMs: 2000 }),
  rec(160, 'write_note', 'executed unclear', { callId: 'c5', channel: 'web', approver: 'web:bob', decisionMs: 10_000 }),
];

describe('callsLine', () => {
  it('never counts a read as a decision, and says one and many rightly', () => {
    assert.equal(callsLine({ total: 3, reads: 1, decisions: 2 }), '3 calls: 1 read, 2 decisions');
    assert.equal(callsLine({ total: 1, reads: 0, decisions: 1 }), '1 call: 0 reads, 1 decision');
    assert.equal(callsLine({ total: 0, reads: 0, decisions: 0 }), '0 calls');
  });
});

describe('computeStats', () => {
  const s = computeStats(
    records,
    [
      { callId: 'w1', tool: 'write_note', heldTs: 155 },
      { callId: 'w0', tool: 'x', heldTs: 10 },
    ],
    { sinceMs: 100, untilMs: 200 },
  );

  it('counts the calls in the window only, reads apart from decisions', () => {
    assert.equal(s.total, 7);
    assert.equal(s.reads, 2);
    assert.equal(s.decisions, 5);
    assert.deepEqual(s.byTool, [
      { name: 'write_note', count: 4 },
      { name: 'echo', count: 2 },
      { name: 'drop_table', count: 1 },
    ]);
  });

  it('lists outcomes in their fixed order', () => {
    assert.deepEqual(
      s.byOutcome.map((c) => [c.name, c.count]),
      [
        ['executed ok', 1],
        ['executed unclear', 1],
        ['denied', 2],
        ['lapsed', 1],
        ['read ok', 2],
      ],
    );
  });

  it('counts channels and who decided, with none and the rule where no person was asked', () => {
    assert.deepEqual(
      s.byChannel,
      [
        { name: 'web', count: 3 },
        { name: 'none', count: 3 },
        { name: 'elicitation', count: 1 },
      ].sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1)),
    );
    assert.deepEqual(Object.fromEntries(s.byApprover.map((c) => [c.name, c.count])), {
      none: 2,
      'web:alice': 2,
      'elicitation:claude': 1,
      'rule drop_*': 1,
      'web:bob': 1,
    });
  });

  it('takes the median time to decision over the calls a person answered', () => {
    assert.deepEqual(s.decision, { count: 4, medianMs: 2500, maxMs: 10_000 });
  });

  it('lists the denied and lapsed calls, and the calls waiting since the window began', () => {
    assert.deepEqual(
      s.denied.map((r) => r.callId),
      ['c2', 'c3'],
    );
    assert.deepEqual(
      s.lapsed.map((r) => r.callId),
      ['c4'],
    );
    assert.deepEqual(
      s.waiting.map((c) => c.callId),
      ['w1'],
    );
  });

  it('is empty, with no median, over an empty window', () => {
    const e = computeStats(records, [], { sinceMs: 1000, untilMs: 2000 });
    assert.equal(e.total, 0);
    assert.deepEqual(e.decision, { count: 0 });
    assert.match(renderStats(e), /^0 calls from /);
  });

  it('renders aligned tables and JSON with the same numbers', () => {
    const text = renderStats(s);
    assert.match(text, /^7 calls: 2 reads, 5 decisions from 1970-01-01T00:00:00Z to 1970-01-01T00:00:00Z\n/);
    assert.ok(text.includes('By outcome\n  executed ok       1\n  executed unclear  1\n  denied            2\n'), text);
    assert.match(text, /\n {2}median +2\.5 s\n/);
    assert.match(text, /Denied \(2\)/);
    assert.match(text, /Waiting for a person now \(1\)/);
    const j = statsJson(s, 'audit.jsonl') as {
      total: number;
      reads: number;
      decisions: number;
      by_outcome: Record<string, number>;
      time_to_decision: Record<string, number>;
      denied: unknown[];
    };
    assert.deepEqual([j.total, j.reads, j.decisions], [7, 2, 5]);
    assert.equal(j.by_outcome.denied, 2);
    assert.equal(j.time_to_decision.median_ms, 2500);
    assert.equal(j.denied.length, 2);
  });
});

describe('median', () => {
  it('is the middle value, or the mean of the middle two', () => {
    assert.equal(median([]), undefined);
    assert.equal(median([5]), 5);
    assert.equal(median([9, 1, 5]), 5);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });
});

describe('table', () => {
  it('aligns text left and numbers right', () => {
    assert.deepEqual(
      table([
        ['a', '1'],
        ['long name', '100'],
      ]),
      ['  a            1', '  long name  100'],
    );
  });
  it('aligns by terminal cells, so wide names (CJK, emoji) keep the numbers in one column', () => {
    assert.deepEqual(
      table([
        ['承認者', '1'],
        ['ab', '100'],
        ['🚀x', '7'],
      ]),
      ['  承認者    1', '  ab      100', '  🚀x       7'],
    );
  });
});

describe('when a window holds hundreds of thousands of answered calls', () => {
  it('finds the longest time to decision without overflowing the stack', () => {
    const many: DecisionRecord[] = Array.from({ length: 300_000 }, (_, i) => ({
      ts: 1000 + i,
      seq: i,
      tool: 't',
      callId: `c${i}`,
      outcome: 'executed ok',
      decisionMs: i,
    }));
    const s = computeStats(many, [], { sinceMs: 0, untilMs: 1e12 });
    assert.equal(s.decision.maxMs, 299_999);
    assert.equal(s.decision.count, 300_000);
  });
});

describe('when the log holds names a megabyte long, or emoji where a column ends', () => {
  it('cuts names and details to their columns by cells, never leaving half a surrogate pair', () => {
    const huge = '👨‍👩‍👧‍👦'.repeat(100_000);
    const detail = `${'d'.repeat(79)}🚀🚀🚀`; // a slice at 80 code units would end in half of the first rocket
    const s = computeStats(
      [rec(100, huge, 'denied', { callId: 'c1', approver: huge, detail }), rec(110, huge, 'executed ok', { callId: 'c2' })],
      [{ tool: huge, callId: 'c3', heldTs: 120 }],
      { sinceMs: 0, untilMs: 1e12 },
    );
    const started = performance.now();
    const text = renderStats(s);
    assert.ok(performance.now() - started < 5_000, 'rendered in linear time');
    for (const line of text.split('\n')) assert.ok(displayWidth(line) < 400, `a line of ${displayWidth(line)} cells`);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(text), 'no lone high surrogate');
    assert.match(text, /d{79}\u2026/);
  });
});

describe('when calls were cancelled or timed out while they waited for a person', () => {
  /** The log of the user's run: one call approved on the page after 200 ms, one the client cancelled after 22.6 s (as logged before the fix), one that timed out. */
  const entry = (seq: number, ts: number, e: Record<string, unknown>) => JSON.stringify({ v: 1, seq, ts, prev: '0', sig: 'x', tool: 'write_note', ...e });
  const held = (id: string, ts: number) => [
    { ts, e: { event: 'call_received', call_id: id } },
    { ts: ts + 10, e: { event: 'decision', call_id: id, action: 'confirm', reason: 'mutation' } },
  ];
  const log = [
    ...held('ok', 1000),
    { ts: 1210, e: { event: 'approval', call_id: 'ok', approved: true, channel: 'web', actor: 'web:alice' } },
    { ts: 1220, e: { event: 'execution_started', call_id: 'ok' } },
    { ts: 1230, e: { event: 'executed', call_id: 'ok', outcome: 'ok' } },
    { ts: 1240, e: { event: 'execution_resolved', call_id: 'ok' } },
    ...held('cx', 2000),
    { ts: 24_610, e: { event: 'approval', call_id: 'cx', approved: false, channel: 'web', reason: 'cancelled by the client before a decision' } },
    { ts: 24_620, e: { event: 'cancelled', call_id: 'cx', stage: 'before_execution' } },
    ...held('to', 30_000),
    {
      ts: 90_010,
      e: {
        event: 'approval',
        call_id: 'to',
        approved: false,
        channel: 'none',
        reason: 'nobody decided before the confirmation timeout (confirm.timeout_seconds)',
      },
    },
  ]
    .map((x, i) => `${entry(i, x.ts, x.e)}\n`)
    .join('');
  const { records, open } = decisionsOf(log);
  const s = computeStats(records, open, { sinceMs: 0, untilMs: 100_000 });

  it('counts only the answer a person gave in time to decision', () => {
    assert.deepEqual(s.decision, { count: 1, medianMs: 200, maxMs: 200 });
    assert.match(renderStats(s), /answered by a person +1\n {2}median +200 ms\n/);
  });

  it('shows them as cancelled and timed out, decided by nobody on no channel', () => {
    assert.deepEqual(
      s.byOutcome.map((c) => [c.name, c.count]),
      [
        ['executed ok', 1],
        ['timed out', 1],
        ['cancelled', 1],
      ],
    );
    assert.deepEqual(Object.fromEntries(s.byChannel.map((c) => [c.name, c.count])), { web: 1, none: 2 });
    assert.deepEqual(Object.fromEntries(s.byApprover.map((c) => [c.name, c.count])), { 'web:alice': 1, none: 2 });
    assert.deepEqual(s.denied, []);
  });

  it('lists the timed-out calls, in the text and in JSON', () => {
    assert.deepEqual(
      s.timedOut.map((r) => r.callId),
      ['to'],
    );
    assert.match(renderStats(s), /\nTimed out \(1\)\n {2}\S+ {2}write_note {2}to {2}- {2}nobody decided before/);
    const j = statsJson(s, 'audit.jsonl') as { timed_out: { call_id: string }[]; by_outcome: Record<string, number> };
    assert.deepEqual(
      j.timed_out.map((c) => c.call_id),
      ['to'],
    );
    assert.equal(j.by_outcome.cancelled, 1);
  });

  it('leaves a time out of the median even on a record that carries one', () => {
    const odd = computeStats([rec(1, 't', 'cancelled', { decisionMs: 22_600 }), rec(2, 't', 'timed out', { decisionMs: 60_000 })], [], {
      sinceMs: 0,
      untilMs: 10,
    });
    assert.deepEqual(odd.decision, { count: 0 });
  });
});
