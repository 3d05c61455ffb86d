import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDecisionTracker, decisionsOf, parseEntryLine } from './decisions.js';

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
