/**
 * A write that a rule allows is still a write (issue 12 §5): nobody is asked, but its entries (received,
 * the decision naming the rule, execution started) are on disk before it is forwarded, and `executed`
 * with the outcome after, whatever `audit.reads` says; its verdict travels in `_meta.lookfirst`. Only a
 * call the classifier proves read-only is logged as a read (and may take the fast path). The upstream
 * reads the gate's log at the moment it executes, so "on disk before" is observed, not assumed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { auditEntries, FAKE_UPSTREAM, NODE, ROOT, runCli, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';

const UPSTREAM = join(ROOT, 'test/fixtures/untrusted-upstream.mjs');

function gate(extra: string) {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  const args = [UPSTREAM, '--side-effects', effects, '--audit', join(dir, 'audit.jsonl')];
  const config = writeConfig(dir, `upstreams:\n  web:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify(args)}\n${extra}`);
  /** What the upstream saw of each send: its arguments and the events of that call already on disk. */
  const sends = () =>
    readFileSync(effects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { args: unknown; logged: string[] });
  return { dir, config, sends };
}

const RULES = 'rules:\n  tools:\n    send_email: { action: allow }\n    browser_navigate: { action: allow }\n    fetch_page: { action: allow }\n';

describe('a write that a rule allows', () => {
  for (const reads of [false, true]) {
    it(`is logged as a write, on disk before it is sent, with its verdict in _meta (audit.reads: ${reads})`, async () => {
      const g = gate(`${RULES}audit:\n  reads: ${reads}\n`);
      const agent = await startAgent(g.config);
      let v: Record<string, unknown> | undefined;
      try {
        v = verdictOf(await agent.call('send_email', { to: 'boss@corp.example', body: 'report' }));
      } finally {
        await agent.close();
      }
      assert.equal(v?.outcome, 'executed');
      assert.equal(v?.approved_by, 'rule "send_email"');
      assert.equal(v?.retry_safe, false);
      assert.deepEqual(g.sends()[0]?.logged, ['call_received', 'decision', 'execution_started'], 'on disk when the upstream ran it');
      const mine = auditEntries(g.dir).filter((e) => e.call_id === v?.call_id);
      assert.deepEqual(
        mine.map((e) => e.event),
        ['call_received', 'decision', 'execution_started', 'executed', 'execution_resolved', 'receipt_issued'],
      );
      assert.equal(mine[1]?.rule, 'send_email');
      assert.equal(mine[1]?.reason, 'rule "send_email"');
      assert.equal(mine[1]?.kind, 'mutation');
      assert.equal(mine[3]?.outcome, 'ok');
      assert.ok(!auditEntries(g.dir).some((e) => e.event === 'read'));
      assert.equal(runCli(['verify-log', '--config', g.config]).status, 0);
    });
  }

  it('leaves its tool unblocked after a restart (its execution is resolved in the log)', async () => {
    const g = gate(RULES);
    for (const note of ['first', 'after the restart']) {
      const agent = await startAgent(g.config);
      try {
        assert.equal(verdictOf(await agent.call('send_email', { to: 'boss@corp.example', body: note }))?.outcome, 'executed', note);
      } finally {
        await agent.close();
      }
    }
    assert.equal(g.sends().length, 2);
  });

  it('is a write when only the tool says it is not read-only (readOnlyHint: false), even under an allow rule', async () => {
    const g = gate(`${RULES}taint:\n  untrusted: ["nothing_untrusted"]\n`);
    const agent = await startAgent(g.config);
    try {
      const v = verdictOf(await agent.call('browser_navigate', { url: 'https://site.example' }));
      assert.equal(v?.approved_by, 'rule "browser_navigate"');
    } finally {
      await agent.close();
    }
    const entries = auditEntries(g.dir);
    assert.ok(entries.some((e) => e.event === 'executed' && e.tool === 'browser_navigate'));
    assert.ok(!entries.some((e) => e.event === 'read'));
  });

  it('leaves a call the classifier proves read-only a read: logged as "read", no verdict, under a rule or not', async () => {
    const g = gate(`${RULES}taint:\n  untrusted: ["nothing_untrusted"]\n`);
    const agent = await startAgent(g.config);
    try {
      assert.equal(verdictOf(await agent.call('fetch_page', { url: 'https://site.example' })), undefined);
    } finally {
      await agent.close();
    }
    const entries = auditEntries(g.dir);
    assert.deepEqual(
      entries.filter((e) => e.tool === 'fetch_page').map((e) => e.event),
      ['read'],
    );
  });

  it('is read back when its rule says how, and a read-back that finds another effect blocks the tool', async () => {
    const readback = (tool: string) =>
      `    ${tool}:\n      action: allow\n      readback: { tool: get, args: { key: "$args.key" }, expect: { value: "$args.value" } }\n`;
    const config = writeConfig(
      tmp(),
      `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\nrules:\n  tools:\n${readback('store')}${readback('store_lie')}confirm:\n  elicitation: false\n`,
    );
    const agent = await startAgent(config);
    try {
      assert.equal(verdictOf(await agent.call('store', { key: 'a', value: 1 }))?.readback, 'ok');
      const lied = verdictOf(await agent.call('store_lie', { key: 'b', value: 100 }));
      assert.equal(lied?.readback, 'failed');
      assert.equal(lied?.blocked, true);
      // The next call of the blocked tool asks a person to unlock it (nobody can here): nothing runs.
      const next = verdictOf(await agent.call('store_lie', { key: 'c', value: 1 }));
      assert.equal(next?.outcome, 'denied');
      assert.equal(next?.blocked, true);
    } finally {
      await agent.close();
    }
  });
});
