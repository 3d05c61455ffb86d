/**
 * Bad input and failing upstreams: a clear error naming what is wrong and where; the gate stays up;
 * nothing is executed on doubt; nothing is half-logged.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FAKE_UPSTREAM, MAIN, NODE, ResultSchema, runCli, startAgent, textOf, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

const fakeConfig = (dir: string, extra = '') =>
  `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n${extra}`;

describe('bad config', () => {
  it('names the line of invalid YAML and exits 1', () => {
    const dir = tmp();
    const config = writeConfig(dir, 'upstreams:\n  fake:\n    command: [node\nconfirm: {\n', { keygen: false });
    const r = runCli(['serve', '--config', config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /line \d+: YAML syntax: /);
  });

  it('names an unknown key and its line, with every other problem', () => {
    const dir = tmp();
    const config = writeConfig(dir, `${fakeConfig(dir)}confirm:\n  timeout_secs: 5\n  elicitation: maybe\n`, { keygen: false });
    const r = runCli(['serve', '--config', config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /line 6: confirm\.timeout_secs: unknown key "timeout_secs"/);
    assert.match(r.stderr, /line 7: confirm\.elicitation:/);
  });

  it('says how to create a missing audit key', () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir), { keygen: false });
    const r = runCli(['serve', '--config', config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /Create one with: node \S+main\.js keygen --config \S+lookfirst\.yaml/);
  });

  it('says so when the config file cannot be read', () => {
    const r = runCli(['verify-log', '--config', '/nonexistent/lookfirst.yaml']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no such file\. Pass the path of your lookfirst\.yaml with --config/);
  });
});

describe('rules', () => {
  it('warns at start about a rule that matches no tool, with its line, and names the unprefixed tool a prefixed rule meant', async () => {
    const dir = tmp();
    const config = writeConfig(
      dir,
      fakeConfig(dir, 'rules:\n  tools:\n    wirte_note: { action: deny }\n    "echo*": { action: confirm }\n    fake__write_note: { action: deny }\n'),
    );
    const agent = await startAgent(config, approve);
    try {
      await waitFor(() => /serving/.test(agent.stderr()), 3000);
      assert.match(agent.stderr(), /warning: rule "wirte_note" \(line 7\) matches no tool/);
      assert.doesNotMatch(agent.stderr(), /rule "echo\*"/);
      assert.match(agent.stderr(), /rule "fake__write_note" \(line 9\) matches no tool.*with one upstream tools are not prefixed: did you mean "write_note"\?/);
    } finally {
      await agent.close();
    }
  });
});

describe('keygen', () => {
  it('creates a 0600 private key once and refuses to overwrite it', () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir), { keygen: false });
    const first = runCli(['keygen', '--config', config]);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(statSync(join(dir, 'audit.key')).mode & 0o777, 0o600);
    assert.match(readFileSync(join(dir, 'audit.pub'), 'utf8'), /^lookfirst\/[0-9a-f]{8}\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+\n$/);
    const key = readFileSync(join(dir, 'audit.key'), 'utf8');
    const second = runCli(['keygen', '--config', config]);
    assert.equal(second.status, 1);
    assert.match(second.stderr, /never overwrites/);
    assert.equal(readFileSync(join(dir, 'audit.key'), 'utf8'), key);
  });
  it('makes the key folder the config names (private), and says what to do when it cannot write there', () => {
    const dir = tmp();
    const config = writeConfig(dir, `${fakeConfig(dir)}audit:\n  key: keys/gate/audit.key\n`, { keygen: false });
    const made = runCli(['keygen', '--config', config]);
    assert.equal(made.status, 0, made.stderr);
    assert.equal(statSync(join(dir, 'keys/gate')).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, 'keys/gate/audit.key')).mode & 0o777, 0o600);
    // A folder that cannot be made (a file stands where it should be): a sentence, no stack trace.
    writeFileSync(join(dir, 'blocker'), 'not a folder');
    const bad = writeConfig(dir, `${fakeConfig(dir)}audit:\n  key: blocker/audit.key\n`, { keygen: false });
    const refused = runCli(['keygen', '--config', bad]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /cannot write the audit key at .*blocker.* \((ENOTDIR|EEXIST)\): give audit\.key a path in a folder you can write/);
    assert.doesNotMatch(refused.stderr, /unexpected error|at \S+\.js:\d+/);
  });
});

describe('secret files', () => {
  it('warns at start, as ssh does, when the audit key or the token file is readable by group or others', async () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir));
    chmodSync(join(dir, 'audit.key'), 0o644);
    const agent = await startAgent(config, approve);
    try {
      assert.ok(
        await waitFor(() => /warning: the audit key .*audit\.key is readable by others \(mode 0644\): run chmod 600 /.test(agent.stderr()), 5000),
        agent.stderr(),
      );
    } finally {
      await agent.close();
    }
    chmodSync(join(dir, 'audit.key'), 0o600);
    const quiet = await startAgent(config, approve);
    try {
      await quiet.client.listTools();
      assert.doesNotMatch(quiet.stderr(), /is readable by/);
    } finally {
      await quiet.close();
    }
  });
});

describe('one writer per log', () => {
  it('refuses a second gate on the same log with a clear message', async () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir));
    const agent = await startAgent(config, approve);
    try {
      const r = runCli(['serve', '--config', config]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /another lookfirst \(pid \d+\) is writing/);
    } finally {
      await agent.close();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });
});

describe('upstream failures', () => {
  it('starts without an unreachable upstream, answers with a clear error, and stays up', async () => {
    const dir = tmp();
    const config = writeConfig(dir, `upstreams:\n  gone:\n    command: /nonexistent/mcp-server\n`);
    const agent = await startAgent(config, approve);
    try {
      assert.match(agent.stderr(), /upstream "gone" is not reachable/);
      const { tools } = await agent.client.request({ method: 'tools/list' }, ResultSchema);
      assert.deepEqual(tools, []);
      const err = await agent.call('anything', {}).catch((e: Error) => e);
      // Its tools were never listed: the call names the upstream that is down (issue 17, item 9).
      assert.ok(err instanceof Error && /upstream "gone" is not reachable/.test(err.message), String(err));
      await agent.client.ping();
    } finally {
      await agent.close();
    }
  });

  it('reports an upstream crash mid-write as outcome unknown, blocks the tool, never re-sends it, and reconnects for the next call', async () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir));
    const agent = await startAgent(config, approve);
    const effects = join(dir, 'effects.txt');
    try {
      const crashed = await agent.call('crash_write', { amount: 1 });
      assert.equal(crashed.isError, true);
      assert.equal(verdictOf(crashed)?.outcome, 'executed');
      assert.equal(verdictOf(crashed)?.readback, 'unclear');
      assert.equal(verdictOf(crashed)?.blocked, true);
      assert.match(textOf(crashed), /may or may not have taken effect/);
      assert.equal(readFileSync(effects, 'utf8').trim().split('\n').length, 1);
      await new Promise((r) => setTimeout(r, 1100));
      const next = await agent.call('write_note', { amount: 2 });
      assert.equal(verdictOf(next)?.outcome, 'executed', textOf(next));
      assert.deepEqual(readFileSync(effects, 'utf8').trim().split('\n'), ['{"amount":1}', '{"amount":2}']);
    } finally {
      await agent.close();
    }
    const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
    assert.match(log, /"event":"execution_failed"[^\n]*"outcome":"unknown"/);
    assert.equal(runCli(['verify-log', '--config', config]).status, 0, 'every entry whole, chain intact');
  });

  it('keeps arguments that are not an object from executing', async () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir));
    const agent = await startAgent(config, approve);
    try {
      const r = (await agent.client.request({ method: 'tools/call', params: { name: 'write_note', arguments: ['x'] as never } }, ResultSchema)) as Record<
        string,
        unknown
      >;
      assert.equal(verdictOf(r)?.outcome, 'denied');
      assert.equal(agent.asked.length, 0);
      assert.equal(existsSync(join(dir, 'effects.txt')), false);
    } finally {
      await agent.close();
    }
  });
});

describe('crash safety of the log', () => {
  it('takes over the lock of a gate that was killed, and the log still verifies', async () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir));
    const child = spawn(NODE, [MAIN, 'serve', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
    await waitFor(() => existsSync(join(dir, 'audit.jsonl.lock')) && existsSync(join(dir, 'audit.jsonl')), 5000);
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    assert.ok(existsSync(join(dir, 'audit.jsonl.lock')), 'the killed gate left its lock');
    const agent = await startAgent(config, approve);
    try {
      await waitFor(() => /stale lock/.test(agent.stderr()), 3000);
      assert.match(agent.stderr(), /removed the stale lock .* is gone/);
      await agent.call('echo', {});
    } finally {
      await agent.close();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });

  it('quarantines a torn last line at start and keeps the chain verifiable', async () => {
    const dir = tmp();
    const config = writeConfig(dir, fakeConfig(dir));
    let agent = await startAgent(config, approve);
    await agent.call('echo', {});
    await agent.close();
    const logPath = join(dir, 'audit.jsonl');
    writeFileSync(logPath, `${readFileSync(logPath, 'utf8')}{"event":"approval","seq":`);
    agent = await startAgent(config, approve);
    await waitFor(() => /torn line/.test(agent.stderr()), 3000);
    assert.match(agent.stderr(), /torn line .* moved it to .*audit\.jsonl\.quarantine/);
    await agent.call('echo', {});
    await agent.close();
    assert.equal(readFileSync(`${logPath}.quarantine`, 'utf8'), '{"event":"approval","seq":\n');
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });
});
