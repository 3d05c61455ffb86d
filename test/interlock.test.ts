/**
 * The execution interlock (issue 3, second part): a write that cannot be confirmed blocks its tool; the
 * next call asks a person to unlock it and never runs; the block survives a restart; calls of one tool
 * run one at a time, other tools are not held up.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FAKE_UPSTREAM, type Human, NODE, runCli, startAgent, textOf, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { decide as decideOn, pageAddress, pendingCall } from './web-page.js';

function gate(rules = '') {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nexecution:\n  timeout_seconds: 1\n${rules}`,
  );
  return { dir, effects, config };
}

/** Approves calls, and answers unlock requests from a script (true = unlock, false = keep blocked). */
function human(unlocks: boolean[]): Human {
  return (message) => {
    if (/UNLOCK/.test(message)) return { action: 'accept', content: { approve: unlocks.shift() ?? false } };
    return { action: 'accept', content: { approve: true } };
  };
}

describe('execution interlock', () => {
  it('blocks a tool whose write hangs past execution.timeout_seconds; unlocking runs nothing; a fresh call runs', async () => {
    const g = gate();
    const agent = await startAgent(g.config, human([false, true]));
    try {
      const first = verdictOf(await agent.call('hang_write', { n: 1 }))!;
      assert.deepEqual([first.outcome, first.readback, first.blocked], ['executed', 'unclear', true]);
      assert.match(String(first.reason), /execution\.timeout_seconds/);

      const refused = verdictOf(await agent.call('hang_write', { n: 2 }))!;
      assert.deepEqual([refused.outcome, refused.blocked], ['denied', true]);
      assert.match(agent.asked.at(-1)!, /UNLOCK hang_write/);

      const unlocked = verdictOf(await agent.call('hang_write', { n: 3 }))!;
      assert.deepEqual([unlocked.outcome, unlocked.blocked], ['unblocked', false]);
      assert.deepEqual(readFileSync(g.effects, 'utf8').trim().split('\n'), ['{"n":1}'], 'the calls that asked to unlock never ran');

      const fresh = verdictOf(await agent.call('hang_write', { n: 4 }))!;
      assert.equal(fresh.outcome, 'executed');
      assert.deepEqual(readFileSync(g.effects, 'utf8').trim().split('\n'), ['{"n":1}', '{"n":4}']);
    } finally {
      await agent.close();
    }
    const log = readFileSync(join(g.dir, 'audit.jsonl'), 'utf8');
    for (const event of ['execution_started', 'execution_blocked', 'execution_unblocked']) assert.match(log, new RegExp(`"event":"${event}"`));
    assert.equal(runCli(['verify-log', '--config', g.config]).status, 0);
  });

  it('blocks on a failed read-back, and only that tool', async () => {
    const rules =
      'rules:\n  tools:\n    store_lie:\n      action: confirm\n      readback: { tool: get, args: { key: "$args.key" }, expect: { value: "$args.value" } }\n';
    const g = gate(rules);
    const agent = await startAgent(g.config, human([]));
    try {
      const lied = verdictOf(await agent.call('store_lie', { key: 'k', value: 1 }))!;
      assert.deepEqual([lied.readback, lied.blocked], ['failed', true]);
      assert.equal(verdictOf(await agent.call('store', { key: 'other', value: 2 }))?.outcome, 'executed', 'other tools are not blocked');
      assert.equal(textOf(await agent.call('count', {})), '{"executions":2}');
      assert.equal(verdictOf(await agent.call('store_lie', { key: 'k', value: 1 }))?.blocked, true);
      assert.equal(textOf(await agent.call('count', {})), '{"executions":2}', 'a blocked call never runs');
    } finally {
      await agent.close();
    }
  });

  it('blocks a tool whose write answers with an error (it may have taken effect)', async () => {
    const g = gate();
    const agent = await startAgent(g.config, human([]));
    try {
      const v = verdictOf(await agent.call('store_error', { key: 'k', value: 1 }))!;
      assert.deepEqual([v.outcome, v.upstream_error, v.readback, v.blocked], ['executed', true, 'unclear', true]);
    } finally {
      await agent.close();
    }
  });

  it('unlocks through the web page: unblocked, nothing re-executed, and a fresh call then runs', async () => {
    const g = gate('confirm:\n  web: { enabled: true, port: 0 }\n');
    const agent = await startAgent(g.config, undefined);
    try {
      const page = await pageAddress(agent.stderr);
      const decide = async (match: RegExp) => assert.equal(await decideOn(page, await pendingCall(page, match), 'approve', 'ops'), 200);
      const first = agent.call('hang_write', { n: 1 });
      await decide(/hang_write/);
      assert.equal(verdictOf(await first)?.blocked, true);
      const unlock = agent.call('hang_write', { n: 2 });
      await decide(/UNLOCK hang_write/);
      assert.equal(verdictOf(await unlock)?.outcome, 'unblocked');
      assert.deepEqual(readFileSync(g.effects, 'utf8').trim().split('\n'), ['{"n":1}']);
      const fresh = agent.call('hang_write', { n: 3 });
      await decide(/hang_write/);
      assert.equal(verdictOf(await fresh)?.outcome, 'executed');
      assert.deepEqual(readFileSync(g.effects, 'utf8').trim().split('\n'), ['{"n":1}', '{"n":3}']);
    } finally {
      await agent.close();
    }
  });

  it('refuses to start, naming the file, when the log is corrupt or its head is gone', async () => {
    const g = gate();
    const agent = await startAgent(g.config, human([]));
    await agent.call('store', { key: 'k', value: 1 });
    await agent.close();
    const logPath = join(g.dir, 'audit.jsonl');
    const original = readFileSync(logPath, 'utf8');
    writeFileSync(logPath, original.replace('"event":"decision"', '"event":"decisioN"').replace(/"seq":2,/, '"seq":9,'));
    let r = runCli(['serve', '--config', g.config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`${logPath.replace(/[/.]/g, '\\$&')} line \\d+`));
    writeFileSync(logPath, original);
    rmSync(`${logPath}.head`);
    r = runCli(['serve', '--config', g.config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no signed head \(.*audit\.jsonl\.head\)/);
  });

  it('keeps a tool blocked across a restart when the gate died during its execution', async () => {
    const g = gate();
    const agent = await startAgent(g.config, human([]));
    const pending = agent.call('hang_write', { n: 1 }, { timeout: 60_000 }).catch(() => undefined);
    await waitFor(() => existsSync(g.effects), 5000);
    await waitFor(() => readFileSync(join(g.dir, 'audit.jsonl'), 'utf8').includes('execution_started'), 5000);
    const pid = (agent.client.transport as unknown as { pid: number | null }).pid!;
    process.kill(pid, 'SIGKILL');
    await pending;
    await agent.close().catch(() => {});
    const again = await startAgent(g.config, human([false]));
    try {
      await waitFor(() => /hang_write is blocked since/.test(again.stderr()), 5000);
      assert.match(again.stderr(), /hang_write is blocked since .*outcome is unknown/);
      const v = verdictOf(await again.call('hang_write', { n: 2 }))!;
      assert.deepEqual([v.outcome, v.blocked], ['denied', true]);
      assert.match(again.asked[0]!, /UNLOCK hang_write/);
    } finally {
      await again.close();
    }
    assert.deepEqual(readFileSync(g.effects, 'utf8').trim().split('\n'), ['{"n":1}']);
  });

  it('lets a deny rule win over a lock: no unlock is offered', async () => {
    const g = gate();
    let agent = await startAgent(g.config, human([]));
    assert.equal(verdictOf(await agent.call('hang_write', { n: 1 }))?.blocked, true);
    await agent.close();
    writeFileSync(g.config, `${readFileSync(g.config, 'utf8')}rules:\n  tools:\n    hang_write: { action: deny }\n`);
    agent = await startAgent(g.config, human([true]));
    try {
      const v = verdictOf(await agent.call('hang_write', { n: 2 }))!;
      assert.equal(v.outcome, 'denied');
      assert.match(String(v.reason), /rule "hang_write"/);
      assert.equal(agent.asked.length, 0);
    } finally {
      await agent.close();
    }
  });

  it('runs parallel calls of one tool one at a time, without holding up other tools', async () => {
    const g = gate();
    const asked: number[] = [];
    const agent = await startAgent(g.config, () => {
      asked.push(Date.now());
      return { action: 'accept', content: { approve: true } };
    });
    try {
      const started = Date.now();
      const a = agent.call('slow_write', { n: 1 }).then(() => Date.now());
      const b = agent.call('slow_write', { n: 2 }).then(() => Date.now());
      const read = agent.call('echo', { x: 1 }).then(() => Date.now());
      const [doneA, doneB, doneRead] = await Promise.all([a, b, read]);
      assert.equal(asked.length, 2);
      assert.ok(asked[1]! >= Math.min(doneA, doneB) - 5, 'the second call was asked about only after the first finished');
      assert.ok(doneRead - started < Math.min(doneA, doneB) - started, 'the read was not held up');
    } finally {
      await agent.close();
    }
  });
});
