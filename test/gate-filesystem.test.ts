/**
 * The gate in front of the real @modelcontextprotocol/server-filesystem, with the SDK Client as the agent
 * and an elicitation handler standing in for the human.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type Agent,
  approve,
  connectDirect,
  decline,
  FS_SERVER,
  NODE,
  ResultSchema,
  runCli,
  startAgent,
  textOf,
  tmp,
  verdictOf,
  writeConfig,
} from './helpers.js';

function setup(extraYaml = '') {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'hello.txt'), 'hello, world\n');
  const config = writeConfig(dir, `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${extraYaml}`);
  return { dir, data, config };
}

describe('gate in front of server-filesystem', () => {
  describe('when a read passes through', () => {
    let agent: Agent;
    const env = setup();
    before(async () => {
      agent = await startAgent(env.config, approve);
    });
    after(() => agent.close());

    it('returns a result identical to a direct call, without asking anyone', async () => {
      const direct = await connectDirect(NODE, [FS_SERVER, env.data]);
      try {
        const args = { path: join(env.data, 'hello.txt') };
        const want = await direct.request({ method: 'tools/call', params: { name: 'read_text_file', arguments: args } }, ResultSchema);
        const got = await agent.call('read_text_file', args);
        assert.deepEqual(got, want);
        assert.equal(agent.asked.length, 0);
      } finally {
        await direct.close();
      }
    });

    it('lists the upstream tools unprefixed and unchanged', async () => {
      const direct = await connectDirect(NODE, [FS_SERVER, env.data]);
      try {
        const want = await direct.request({ method: 'tools/list' }, ResultSchema);
        const got = await agent.client.request({ method: 'tools/list' }, ResultSchema);
        assert.deepEqual(got.tools, want.tools);
      } finally {
        await direct.close();
      }
    });
  });

  describe('when the human approves a write_file', () => {
    it('holds it, shows it, executes it once, and the file is there', async () => {
      const env = setup();
      const agent = await startAgent(env.config, approve);
      const path = join(env.data, 'new.txt');
      const result = await agent.call('write_file', { path, content: 'approved content' });
      await agent.close();
      assert.equal(readFileSync(path, 'utf8'), 'approved content');
      assert.equal(agent.asked.length, 1);
      assert.match(agent.asked[0]!, /write_file/);
      assert.match(agent.asked[0]!, /approved content/);
      // The concrete effect comes first, and the risk with the classifier's reason.
      assert.match(agent.asked[0]!, /write_file: writes 16 bytes to \S+/);
      assert.match(agent.asked[0]!, /Risk: high \(annotations: destructiveHint; name verb "write"/);
      const v = verdictOf(result)!;
      assert.equal(v.outcome, 'executed');
      assert.equal(v.approved_by, 'elicitation:test-agent');
      assert.match(String(v.args_sha256), /^[0-9a-f]{64}$/);
      // write_file declares an outputSchema: the verdict stays out of structuredContent.
      assert.equal((result.structuredContent as Record<string, unknown>).lookfirst, undefined);
      const verify = runCli(['verify-log', '--config', env.config, '--json']);
      assert.equal(verify.status, 0, verify.stdout);
      const log = readFileSync(join(env.dir, 'audit.jsonl'), 'utf8');
      assert.match(log, /"event":"approval"/);
      assert.match(log, /"event":"executed"/);
      assert.ok(!log.includes('approved content'), 'arguments never appear in clear in the log');
      assert.ok(log.includes(String(v.args_sha256)));
    });
  });

  describe('when the human declines', () => {
    it('does not write the file and says a retry is safe', async () => {
      const env = setup();
      const agent = await startAgent(env.config, decline);
      const path = join(env.data, 'declined.txt');
      const result = await agent.call('write_file', { path, content: 'x' });
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.equal(result.isError, true);
      assert.match(textOf(result), /NOT executed/);
      assert.match(textOf(result), /retrying is safe/);
      assert.equal(verdictOf(result)?.outcome, 'denied');
    });

    it('treats accept with approve: false as a denial', async () => {
      const env = setup();
      const agent = await startAgent(env.config, () => ({ action: 'accept', content: { approve: false } }));
      const path = join(env.data, 'no.txt');
      const result = await agent.call('write_file', { path, content: 'x' });
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.equal(verdictOf(result)?.outcome, 'denied');
    });
  });

  describe('when nobody answers before the timeout', () => {
    it('denies and never writes, even if the answer comes later', async () => {
      const env = setup('confirm:\n  timeout_seconds: 1\n');
      let release: (() => void) | undefined;
      const agent = await startAgent(env.config, () => new Promise((r) => (release = () => r({ action: 'accept', content: { approve: true } }))));
      const path = join(env.data, 'late.txt');
      const result = await agent.call('write_file', { path, content: 'x' });
      release?.();
      await new Promise((r) => setTimeout(r, 300));
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.equal(verdictOf(result)?.outcome, 'denied');
      assert.match(String(verdictOf(result)?.reason), /timeout/);
    });
  });

  describe('when a deny rule matches', () => {
    it('never reaches the upstream and never asks, even with a human ready to approve', async () => {
      const env = setup('rules:\n  tools:\n    "write_*": { action: deny }\n');
      const agent = await startAgent(env.config, approve);
      const path = join(env.data, 'denied.txt');
      const result = await agent.call('write_file', { path, content: 'x' });
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.equal(agent.asked.length, 0);
      assert.match(String(verdictOf(result)?.reason), /rule "write_\*"/);
    });
  });

  describe('when the client cannot elicit and no web page is enabled', () => {
    it('denies with a message naming the channel to enable', async () => {
      const env = setup();
      const agent = await startAgent(env.config, undefined);
      const path = join(env.data, 'nochannel.txt');
      const result = await agent.call('write_file', { path, content: 'x' });
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.match(textOf(result), /confirm\.web\.enabled/);
    });
  });

  describe('when the arguments are too long for a prompt', () => {
    it('never cuts them: with no other channel the call is denied, unseen', async () => {
      const env = setup();
      const agent = await startAgent(env.config, approve);
      const path = join(env.data, 'long.txt');
      const result = await agent.call('write_file', { path, content: 'y'.repeat(900) });
      await agent.close();
      assert.equal(agent.asked.length, 0);
      assert.equal(existsSync(path), false);
      assert.match(textOf(result), /more than 800/);
    });
  });

  describe('when a tool with an output schema is blocked and a person unlocks it', () => {
    it('answers in a shape the SDK client accepts (its schema checked), and runs nothing', async () => {
      const env = setup();
      const file = join(env.data, 'hello.txt');
      const agent = await startAgent(env.config, approve);
      try {
        // An edit whose text is not in the file: the upstream answers an error, so edit_file is blocked.
        const failed = await agent.call('edit_file', { path: file, edits: [{ oldText: 'absent', newText: 'x' }] });
        assert.equal(verdictOf(failed)?.blocked, true);
        // The SDK's callTool validates structuredContent against edit_file's outputSchema.
        const unlocked = await agent.client.callTool({ name: 'edit_file', arguments: { path: file, edits: [{ oldText: 'hello', newText: 'HELLO' }] } });
        assert.equal(verdictOf(unlocked as Record<string, unknown>)?.outcome, 'unblocked');
        assert.equal(typeof (unlocked.structuredContent as { content?: unknown } | undefined)?.content, 'string');
        assert.equal(readFileSync(file, 'utf8'), 'hello, world\n');
      } finally {
        await agent.close();
      }
    });
  });
});
