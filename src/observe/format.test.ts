import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayWidth } from '../core/text-width.js';
import type { DecisionRecord } from './decisions.js';
import { durationOf, type Paint, toJsonRecord, toLine } from './format.js';

const TS = Date.parse('2026-12-02T04:39:35.123Z');
const executed: DecisionRecord = {
  ts: TS,
  seq: 6,
  tool: 'write_note',
  callId: '7c6bd005-055a-4b2e-a891-7f4394ae0167',
  outcome: 'executed ok',
  channel: 'web',
  approver: 'web:alice',
  decisionMs: 4000,
};

describe('toLine', () => {
  it('shows time, outcome, channel, who and the short call id in fixed columns, then the tool', () => {
    assert.equal(toLine(executed), '2026-12-02T04:39:35Z  executed ok       web          web:alice               7c6bd005  write_note');
  });

  it('keeps the columns aligned for long tool names, long approvers and long channels', () => {
    const lines = [
      toLine(executed),
      toLine({ ...executed, tool: 'filesystem__create_directory', outcome: 'executed unclear' }),
      toLine({ ...executed, tool: 'github__create_or_update_file_contents_in_repository_branch', approver: 'web:someone.with.a.long@example.com' }),
      toLine({ ...executed, tool: 'x', channel: 'a-channel-name-past-its-column', outcome: 'denied', detail: 'the person declined' }),
      toLine({ ts: TS, seq: 1, tool: 'memory__read_graph', outcome: 'read ok' }),
    ];
    // The tool starts at the same column on every line, whatever came before it.
    const toolAt = lines.map((l, i) => l.indexOf(['write_note', 'filesystem__create_directory', 'github__', 'x', 'memory__read_graph'][i]!));
    assert.deepEqual(new Set(toolAt).size, 1, lines.join('\n'));
    assert.match(lines[1]!, /filesystem__create_directory$/);
    assert.match(lines[2]!, / web:someone\.with\.a\.lo\u2026 {2}/);
    assert.match(lines[3]!, / a-channel-\u2026 /);
  });

  it('keeps the columns aligned in terminal cells for wide approvers and channels, cutting without splitting a character', () => {
    const lines = [
      toLine(executed),
      toLine({ ...executed, approver: 'web:承認者' }),
      toLine({ ...executed, approver: 'web:山田太郎さんの承認アカウント' }),
      toLine({ ...executed, channel: '🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵' }),
    ];
    const cellsBefore = (l: string) => displayWidth(l.slice(0, l.indexOf('write_note')));
    assert.equal(new Set(lines.map(cellsBefore)).size, 1, lines.join('\n'));
    assert.match(lines[2]!, /\u2026/);
    assert.ok(
      lines.every((l) => !/[\ud800-\udbff](?![\udc00-\udfff])/.test(l)),
      'no lone surrogate',
    );
  });

  it('names the rule when a rule decided, and adds why for what is not a clean run', () => {
    const line = toLine({ ts: TS, seq: 1, tool: 'drop_table', callId: 'abcdef0123', outcome: 'denied', rule: 'drop_*', detail: 'rule "drop_*"' });
    assert.match(line, /denied +- +rule drop_\* +abcdef01 {2}drop_table {2}rule "drop_\*"$/);
  });

  it('shows a call nobody decided (cancelled, timed out) with dashes for channel and who', () => {
    const { channel: _c, approver: _a, decisionMs: _d, ...nobody } = executed;
    const reason = 'cancelled by the client before a decision; it was shown on web';
    assert.equal(
      toLine({ ...nobody, outcome: 'cancelled', detail: reason }),
      `2026-12-02T04:39:35Z  cancelled         -            -                       7c6bd005  write_note  ${reason}`,
    );
    assert.match(toLine({ ...nobody, outcome: 'timed out' }), /Z {2}timed out +- +- +7c6bd005 {2}write_note$/);
  });

  it('shows a read with dashes for what it has not', () => {
    assert.match(toLine({ ts: TS, seq: 1, tool: 'echo', outcome: 'read ok' }), /read ok +- +- +- +echo$/);
  });

  it('keeps text from the log on one line, hidden characters made visible', () => {
    const line = toLine({ ...executed, tool: 'evil\nTOOL\u202e', detail: 'a\rb' });
    assert.equal(line.includes('\n'), false);
    assert.equal(line.includes('\r'), false);
    assert.equal(line.includes('\u202e'), false);
  });

  it('colours the outcome through the paint it is given', () => {
    const tag: Paint = (c, t) => `<${c}>${t}</${c}>`;
    assert.match(toLine(executed, tag), /<green>executed ok +<\/green>/);
    assert.match(toLine({ ...executed, outcome: 'denied' }, tag), /<red>denied/);
    assert.match(toLine({ ...executed, outcome: 'lapsed' }, tag), /<yellow>lapsed/);
    assert.match(toLine({ ...executed, outcome: 'timed out' }, tag), /<yellow>timed out/);
  });
});

describe('toJsonRecord', () => {
  it('is snake_case with an ISO time, and parses back', () => {
    const j = JSON.parse(JSON.stringify(toJsonRecord(executed)));
    assert.deepEqual(j, {
      time: '2026-12-02T04:39:35.123Z',
      ts: TS,
      seq: 6,
      tool: 'write_note',
      outcome: 'executed ok',
      channel: 'web',
      approver: 'web:alice',
      call_id: executed.callId,
      decision_ms: 4000,
    });
  });
});

describe('durationOf', () => {
  it('picks a unit a person reads at a glance', () => {
    assert.equal(durationOf(850), '850 ms');
    assert.equal(durationOf(4200), '4.2 s');
    assert.equal(durationOf(210_000), '3.5 min');
    assert.equal(durationOf(7_200_000), '2.0 h');
  });
});
