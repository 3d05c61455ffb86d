import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, sha256Hex } from './canonical.js';
import { dryRunSessions, promotions } from './ledger.js';

let seq = 0;
const entry = (fields: Record<string, unknown>) => ({ seq: seq++, ts: 1000 + seq, ...fields });

function recorded(callId: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const canonical = canonicalJson(args);
  const sha = sha256Hex(canonical);
  return [
    entry({ event: 'call_received', call_id: callId, tool: 'write_file', args_sha256: sha }),
    entry({ event: 'decision', call_id: callId, action: 'confirm' }),
    entry({
      event: 'dry_run_recorded',
      call_id: callId,
      tool: 'write_file',
      upstream: 'files',
      upstream_tool: 'write_file',
      args: canonical,
      args_sha256: sha,
      ...extra,
    }),
  ];
}

describe('the audit log as a ledger of dry runs', () => {
  it('groups recorded calls by gate run, in order, with their arguments', () => {
    seq = 0;
    const log = [
      entry({ event: 'gate_started' }),
      ...recorded('a', { path: '/a', content: 'x' }),
      entry({ event: 'gate_stopped' }),
      entry({ event: 'gate_started' }),
      entry({ event: 'read', tool: 'read_file' }),
      entry({ event: 'gate_started' }),
      ...recorded('b', { path: '/b' }, { taint: 'TAINTED: "x"' }),
      ...recorded('c', { path: '/c' }),
    ];
    const sessions = dryRunSessions(log);
    assert.deepEqual(
      sessions.map((s) => [s.startSeq, s.calls.map((c) => c.callId)]),
      [
        [0, ['a']],
        [7, ['b', 'c']],
      ],
    );
    assert.deepEqual(sessions[0]?.calls[0]?.args, { content: 'x', path: '/a' });
    assert.equal(sessions[1]?.calls[0]?.taint, 'TAINTED: "x"');
  });

  it('refuses a recording whose arguments do not match the hash, are not canonical, or belong to no call', () => {
    seq = 0;
    const good = recorded('a', { path: '/a' });
    const swapped = recorded('b', { path: '/b' });
    (swapped[2] as Record<string, unknown>).args = canonicalJson({ path: '/etc/passwd' });
    const loose = recorded('c', { path: '/c' });
    (loose[2] as Record<string, unknown>).args = '{ "path": "/c" }';
    const orphan = recorded('d', { path: '/d' }).slice(2);
    const s = dryRunSessions([entry({ event: 'gate_started' }), ...good, ...swapped, ...loose, ...orphan])[0];
    assert.deepEqual(
      s?.calls.map((c) => c.callId),
      ['a'],
    );
    assert.equal(s?.problems.length, 3);
    assert.match(s?.problems[0]?.message ?? '', /do not match their args_sha256 \(call b\)/);
    assert.match(s?.problems[1]?.message ?? '', /do not match their args_sha256 \(call c\)/);
    assert.match(s?.problems[2]?.message ?? '', /no call_received entry .* \(call d\)/);
  });

  it('knows which recorded calls a promote already sent, which it only tried, and which ended unsettled', () => {
    const log = [
      { event: 'call_received', call_id: 'r1', replay_of: 'a', tool: 'write_file' },
      { event: 'execution_started', call_id: 'r1' },
      { event: 'execution_resolved', call_id: 'r1' },
      { event: 'call_received', call_id: 'r2', replay_of: 'b', tool: 'write_file' },
      { event: 'decision', call_id: 'r2', action: 'deny' },
      // A later attempt that was refused does not hide the earlier one that ran.
      { event: 'call_received', call_id: 'r3', replay_of: 'a', tool: 'write_file' },
      { event: 'execution_started', call_id: 'other' },
      // Sent, no clean end: unsettled until a person unlocks its tool.
      { event: 'call_received', call_id: 'r4', replay_of: 'c', tool: 'edit_file' },
      { event: 'execution_started', call_id: 'r4' },
      { event: 'execution_blocked', call_id: 'r4', tool: 'edit_file' },
      { event: 'call_received', call_id: 'r5', replay_of: 'd', tool: 'move_file' },
      { event: 'execution_started', call_id: 'r5' },
      { event: 'execution_unblocked', call_id: 'u1', tool: 'move_file', blocked_call: 'r5' },
      // An unlock of the same tool for another call's block settles nothing here, wherever it stands.
      { event: 'execution_unblocked', call_id: 'u2', tool: 'edit_file', blocked_call: 'live-1' },
    ];
    const done = promotions(log);
    assert.deepEqual(done.get('a'), { callId: 'r1', started: true, settled: true, tool: 'write_file' });
    assert.deepEqual(done.get('b'), { callId: 'r2', started: false, settled: false, tool: 'write_file' });
    assert.deepEqual(done.get('c'), { callId: 'r4', started: true, settled: false, tool: 'edit_file' });
    assert.deepEqual(done.get('d'), { callId: 'r5', started: true, settled: true, tool: 'move_file' });
    assert.equal(done.has('other'), false);
  });

  it('marks a replay a rule settled though it did not end as asked (upstream error, unknown outcome, read-back unclear)', () => {
    const replay = (id: string, of: string, ...after: Record<string, unknown>[]) => [
      { event: 'call_received', call_id: id, replay_of: of, tool: 'write_file' },
      { event: 'execution_started', call_id: id },
      ...after.map((e) => ({ call_id: id, ...e })),
      { event: 'execution_resolved', call_id: id },
    ];
    const done = promotions([
      ...replay('r1', 'a', { event: 'executed', outcome: 'upstream_error' }),
      ...replay('r2', 'b', { event: 'execution_failed', outcome: 'unknown' }),
      ...replay('r3', 'c', { event: 'executed', outcome: 'ok' }, { event: 'readback', outcome: 'unclear' }),
      ...replay('r4', 'd', { event: 'executed', outcome: 'ok' }, { event: 'readback', outcome: 'ok' }),
      // A person unlocked the tool after a failed read-back: they looked, so it counts as settled cleanly.
      { event: 'call_received', call_id: 'r5', replay_of: 'e', tool: 'write_file' },
      { event: 'execution_started', call_id: 'r5' },
      { event: 'readback', call_id: 'r5', outcome: 'failed' },
      { event: 'execution_unblocked', call_id: 'u1', tool: 'write_file', blocked_call: 'r5' },
    ]);
    assert.equal(done.get('a')?.notClean, 'upstream_error');
    assert.equal(done.get('b')?.notClean, 'outcome_unknown');
    assert.equal(done.get('c')?.notClean, 'readback_unclear');
    assert.equal(done.get('d')?.notClean, undefined);
    assert.deepEqual(done.get('e'), { callId: 'r5', started: true, settled: true, tool: 'write_file' });
  });
});
