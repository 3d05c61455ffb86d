import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDecisionTracker, decisionsOf, parseEntryLine, unattendedOutcome } from './decisions.js';

/** Entries as the gate writes them (fields from audit/events.ts), numbered in order. */
function entries(list: Record<string, unknown>[], startTs = 1_000_000): Record<string, unknown>[] {
  return list.map((e, i) => ({ v: 1, seq: i, ts: (e.ts as number | undefined) ?? startTs + i * 10, prev: '0', sig: 'x', ...e }));
}

const call = (id: string, tool = 'write_note') => ({ call_id: id, tool });

function run(list: Record<string, unknown>[]) {
  const t = createDecisionTracker();
  const records = entries(list).flatMap((e) => t.push(e));
  return { records, open: t.open() };
}

describe('decisions from entries', () => {
  it('a read is one decision, with no call id', () => {
    const { records } = run([{ event: 'read', tool: 'echo', upstream: 'u', upstream_tool: 'echo', reason: 'r', outcome: 'ok' }]);
    assert.deepEqual(records, [{ ts: 1_000_000, seq: 0, tool: 'echo', outcome: 'read ok' }]);
  });

  it('an approved write that ran: executed ok, with channel, approver and time to decision from the hold', () => {
    const { records, open } = run([
      { event: 'call_received', ...call('c1'), ts: 100 },
      { event: 'decision', ...call('c1'), action: 'confirm', reason: 'mutation', ts: 110 },
      { event: 'approval', ...call('c1'), approved: true, channel: 'web', actor: 'web:alice', ts: 4110 },
      { event: 'execution_started', ...call('c1'), ts: 4120 },
      { event: 'executed', ...call('c1'), outcome: 'ok', ts: 4130 },
      { event: 'readback', ...call('c1'), outcome: 'none', ts: 4140 },
      { event: 'execution_resolved', ...call('c1'), ts: 4150 },
      { event: 'receipt_issued', ...call('c1'), receipt_sha256: 'ab', ts: 4160 },
    ]);
    assert.deepEqual(records, [
      { ts: 4150, seq: 6, tool: 'write_note', callId: 'c1', outcome: 'executed ok', channel: 'web', approver: 'web:alice', decisionMs: 4000 },
    ]);
    assert.deepEqual(open, []);
  });

  it('a read-back that disagrees makes it executed failed; an unclear one executed unclear; an upstream error failed', () => {
    const ran = (id: string, extra: Record<string, unknown>[]) => [
      { event: 'call_received', ...call(id) },
      { event: 'decision', ...call(id), action: 'allow', reason: 'rule', rule: 'write_*' },
      { event: 'execution_started', ...call(id) },
      ...extra,
      { event: 'execution_blocked', ...call(id), reason: 'x' },
    ];
    const { records } = run([
      ...ran('a', [
        { event: 'executed', ...call('a'), outcome: 'ok' },
        { event: 'readback', ...call('a'), outcome: 'failed', detail: 'content differs' },
      ]),
      ...ran('b', [
        { event: 'executed', ...call('b'), outcome: 'ok' },
        { event: 'readback', ...call('b'), outcome: 'unclear' },
      ]),
      ...ran('c', [{ event: 'executed', ...call('c'), outcome: 'upstream_error' }]),
    ]);
    assert.deepEqual(
      records.map((r) => [r.callId, r.outcome, r.rule, r.detail]),
      [
        ['a', 'executed failed', 'write_*', 'read-back failed: content differs'],
        ['b', 'executed unclear', 'write_*', 'read-back unclear'],
        ['c', 'executed failed', 'write_*', 'the upstream answered with an error'],
      ],
    );
  });

  it('denied by a rule, denied by a person, lapsed, dry-run, cancelled, refused, unknown', () => {
    const { records } = run([
      { event: 'call_received', ...call('r') },
      { event: 'decision', ...call('r'), action: 'deny', reason: 'rule "drop_*"', rule: 'drop_*' },
      { event: 'call_received', ...call('p') },
      { event: 'decision', ...call('p'), action: 'confirm', reason: 'm' },
      { event: 'approval', ...call('p'), approved: false, channel: 'elicitation', actor: 'elicitation:claude', reason: 'the person declined' },
      { event: 'call_received', ...call('l') },
      { event: 'decision', ...call('l'), action: 'confirm', reason: 'm' },
      { event: 'approval_pending', ...call('l'), channels: 'web', until: 'x' },
      { event: 'approval', ...call('l'), approved: true, channel: 'web', actor: 'web:gus' },
      { event: 'approval_lapsed', ...call('l'), actor: 'web:gus', reason: 'no request from the client was waiting' },
      { event: 'call_received', ...call('d'), dry_run: true },
      { event: 'decision', ...call('d'), action: 'confirm', reason: 'm' },
      { event: 'dry_run_recorded', ...call('d'), upstream: 'u', upstream_tool: 't', args_sha256: 'a', args: '{}' },
      { event: 'call_received', ...call('x') },
      { event: 'decision', ...call('x'), action: 'confirm', reason: 'm' },
      { event: 'cancelled', ...call('x'), stage: 'waiting' },
      { event: 'placeholder_refused', ...call('z'), upstream: 'u', unknown: 1, locked: false, reason: 'unknown placeholder' },
      { event: 'call_received', ...call('u') },
      { event: 'decision', ...call('u'), action: 'allow', reason: 'rule', rule: 'ok' },
      { event: 'execution_started', ...call('u') },
      { event: 'execution_failed', ...call('u'), outcome: 'unknown', reason: 'timed out' },
      { event: 'execution_resolved', ...call('u') },
    ]);
    assert.deepEqual(
      records.map((r) => [r.callId, r.outcome, r.channel, r.approver, r.rule, r.detail]),
      [
        ['r', 'denied', undefined, undefined, 'drop_*', 'rule "drop_*"'],
        ['p', 'denied', 'elicitation', 'elicitation:claude', undefined, 'the person declined'],
        ['l', 'lapsed', 'web', 'web:gus', undefined, 'no request from the client was waiting'],
        ['d', 'dry-run', undefined, undefined, undefined, undefined],
        ['x', 'cancelled', undefined, undefined, undefined, 'waiting'],
        ['z', 'refused', undefined, undefined, undefined, 'unknown placeholder'],
        ['u', 'unknown', undefined, undefined, 'ok', 'timed out'],
      ],
    );
  });

  it('a call sent and then blocked by a restart, with no answer logged, is unknown', () => {
    const { records } = run([
      { event: 'call_received', ...call('c') },
      { event: 'decision', ...call('c'), action: 'allow', reason: 'r' },
      { event: 'execution_started', ...call('c') },
      { event: 'gate_stopped', reason: 'crash' },
      { event: 'gate_started', version: '1', pid: 1, upstreams: 'u' },
      { event: 'execution_blocked', ...call('c'), reason: 'cut off' },
    ]);
    assert.deepEqual(
      records.map((r) => [r.outcome, r.detail]),
      [['unknown', 'cut off']],
    );
  });

  it('a call held with no answer is open, and not a decision', () => {
    const { records, open } = run([
      { event: 'call_received', ...call('w'), ts: 5 },
      { event: 'decision', ...call('w'), action: 'confirm', reason: 'm', ts: 7 },
      { event: 'approval_pending', ...call('w'), channels: 'web', until: 'x', ts: 9 },
    ]);
    assert.deepEqual(records, []);
    assert.deepEqual(open, [{ callId: 'w', tool: 'write_note', heldTs: 7 }]);
  });

  it('ignores entries of unknown kinds and objects that are not entries', () => {
    const t = createDecisionTracker();
    assert.deepEqual(t.push({ seq: 1, ts: 1, event: 'from_a_newer_gate', call_id: 'a', tool: 't' }), []);
    assert.deepEqual(t.push({ event: 'read', tool: 't', outcome: 'ok' }), []);
  });
});

describe('parseEntryLine and decisionsOf', () => {
  it('parses an entry and refuses what is not one', () => {
    assert.deepEqual(parseEntryLine('{"event":"x","seq":1,"ts":2}'), { event: 'x', seq: 1, ts: 2 });
    assert.equal(parseEntryLine('{"event":"x"}'), undefined);
    assert.equal(parseEntryLine('[1]'), undefined);
    assert.equal(parseEntryLine('{"event":"x","seq":1,'), undefined);
  });

  it('leaves out a last line with no newline yet (still being written), and counts lines that are not entries', () => {
    const read = JSON.stringify({ v: 1, seq: 0, ts: 1, event: 'read', tool: 'echo', outcome: 'ok' });
    const { records, skipped } = decisionsOf(`${read}\nnot json\n${read.slice(0, 20)}`);
    assert.equal(records.length, 1);
    assert.equal(skipped, 1);
    assert.equal(decisionsOf('').records.length, 0);
  });
});

describe('when a line has a ts no Date can show (a hostile or broken log)', () => {
  it('is not an entry, so showing the decisions never throws', () => {
    for (const ts of [1e300, -1e300, 8.64e15 + 1]) {
      const line = JSON.stringify({ seq: 1, ts, event: 'read', tool: 'echo', outcome: 'ok' });
      assert.equal(parseEntryLine(line), undefined, String(ts));
      assert.deepEqual(decisionsOf(`${line}\n`), { records: [], open: [], skipped: 1 });
    }
    assert.notEqual(parseEntryLine(JSON.stringify({ seq: 1, ts: 8.64e15, event: 'read' })), undefined);
  });
});

describe('when nobody decided a held call (the client cancelled it, or its deadline passed)', () => {
  /** A call held for a person on the page from ts 100, then the given entries (ts from 200 on). */
  const held = (id: string, ...then: Record<string, unknown>[]) => [
    { event: 'call_received', ...call(id), ts: 90 },
    { event: 'decision', ...call(id), action: 'confirm', reason: 'mutation', ts: 100 },
    ...then.map((e, i) => ({ ...call(id), ts: 200 + i * 10, ...e })),
  ];

  it('reads a cancellation as cancelled, with no channel, approver or time, and once (the cancelled entry after it is the same call)', () => {
    const { records, open } = run(
      held(
        'c',
        { event: 'approval', approved: false, channel: 'none', reason: 'cancelled by the client before a decision; it was shown on web', ts: 22_700 },
        { event: 'cancelled', stage: 'before_execution', ts: 22_710 },
      ),
    );
    assert.deepEqual(records, [
      { ts: 22_700, seq: 2, tool: 'write_note', callId: 'c', outcome: 'cancelled', detail: 'cancelled by the client before a decision; it was shown on web' },
    ]);
    assert.deepEqual(open, []);
  });

  it('reads a log written before the fix the same: a denial naming the channel shown on and no actor', () => {
    const { records } = run([
      ...held(
        'old',
        { event: 'approval', approved: false, channel: 'web', reason: 'cancelled by the client before a decision' },
        { event: 'cancelled', stage: 'before_execution' },
      ),
      ...held('late', {
        event: 'approval',
        approved: false,
        channel: 'web+webhook',
        reason: 'nobody decided before the confirmation timeout (confirm.timeout_seconds)',
      }),
      ...held('store', { event: 'approval', approved: false, channel: 'store', reason: 'withdrawn: the client cancelled the call' }),
      ...held('elic', {
        event: 'approval',
        approved: false,
        channel: 'elicitation',
        reason: 'no decision before the confirmation timeout (confirm.timeout_seconds)',
      }),
    ]);
    assert.deepEqual(
      records.map((r) => [r.callId, r.outcome, r.channel, r.approver, r.decisionMs]),
      [
        ['old', 'cancelled', undefined, undefined, undefined],
        ['late', 'timed out', undefined, undefined, undefined],
        ['store', 'cancelled', undefined, undefined, undefined],
        ['elic', 'timed out', undefined, undefined, undefined],
      ],
    );
  });

  it('reads a denial by the gate (no channel could ask, a channel failed) as denied by nobody, untimed', () => {
    const { records } = run([
      ...held('none', { event: 'approval', approved: false, channel: 'none', reason: 'no confirmation channel could ask a person (web: disabled); to fix: x' }),
      ...held('fail', { event: 'approval', approved: false, channel: 'elicitation', reason: 'the elicitation channel failed (boom)' }),
    ]);
    assert.deepEqual(
      records.map((r) => [r.callId, r.outcome, r.channel, r.approver, r.decisionMs]),
      [
        ['none', 'denied', undefined, undefined, undefined],
        ['fail', 'denied', undefined, undefined, undefined],
      ],
    );
  });

  it("goes by who decided, not by the words: a person's denial stays a person's, whatever its reason says", () => {
    const { records } = run(
      held('p', { event: 'approval', approved: false, channel: 'web', actor: 'web:alice', reason: 'cancelled by the client before a decision', ts: 300 }),
    );
    assert.deepEqual(
      records.map((r) => [r.outcome, r.channel, r.approver, r.decisionMs]),
      [['denied', 'web', 'web:alice', 200]],
    );
  });

  it('forgets what an earlier approval of the call said (a definition a person accepted)', () => {
    const { records } = run(
      held(
        'd',
        { event: 'approval', purpose: 'definition', approved: true, channel: 'web', actor: 'web:alice' },
        { event: 'approval', approved: false, channel: 'none', reason: 'cancelled by the client before a decision' },
      ),
    );
    assert.deepEqual(
      records.map((r) => [r.outcome, r.channel, r.approver, r.decisionMs]),
      [['cancelled', undefined, undefined, undefined]],
    );
  });

  it('still reads a cancelled entry of another call, or of a call not seen before, as a cancellation', () => {
    const { records } = run([
      ...held('a', { event: 'approval', approved: false, channel: 'none', reason: 'cancelled by the client before a decision' }),
      { event: 'cancelled', ...call('b'), stage: 'waiting' },
    ]);
    assert.deepEqual(
      records.map((r) => [r.callId, r.outcome]),
      [
        ['a', 'cancelled'],
        ['b', 'cancelled'],
      ],
    );
  });
});

describe('unattendedOutcome', () => {
  it('is undefined for a decision that names who made it, and for an approval', () => {
    assert.equal(unattendedOutcome({ approved: false, actor: 'terminal:root', reason: 'nobody decided before the confirmation timeout' }), undefined);
    assert.equal(unattendedOutcome({ approved: true, channel: 'web', reason: 'cancelled by the client' }), undefined);
  });

  it('tells a cancellation, a timeout and a denial by the gate apart, for an empty or missing reason too', () => {
    assert.equal(unattendedOutcome({ approved: false, reason: 'cancelled by the client before a decision' }), 'cancelled');
    assert.equal(unattendedOutcome({ approved: false, reason: 'nobody decided before the confirmation timeout (confirm.timeout_seconds)' }), 'timed out');
    assert.equal(unattendedOutcome({ approved: false, reason: 'the audit log cannot be written (EIO)' }), 'denied');
    assert.equal(unattendedOutcome({ approved: false, actor: '', reason: '' }), 'denied');
    assert.equal(unattendedOutcome({ approved: false }), 'denied');
  });
});
