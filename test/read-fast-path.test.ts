/**
 * Allowed reads take the raw fast path (gateway/fast-path.ts): the same guarantees as the SDK path for
 * timeouts, lost connections and the audit log.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import canonicalize from 'canonicalize';
import { approve, FAKE_UPSTREAM, NODE, runCli, startAgent, textOf, tmp, waitFor, writeConfig } from './helpers.js';

const gate = (upstreamExtra = '', extra = '') => {
  const dir = tmp();
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n${upstreamExtra}${extra}`,
  );
  return { dir, config };
};

describe('read fast path', () => {
  it('answers a read that outlives the upstream timeout with a timeout error and stays up', async () => {
    const g = gate('    timeout_seconds: 1\n');
    const agent = await startAgent(g.config, approve);
    try {
      const err = await agent.call('slow', {}).catch((e: Error & { code?: number }) => e);
      assert.ok(err instanceof Error);
      assert.equal((err as { code?: number }).code, -32001);
      assert.match(err.message, /did not answer within 1000 ms/);
      assert.equal(textOf(await agent.call('echo', { ok: 1 })), '{"ok":1}');
    } finally {
      await agent.close();
    }
  });

  it('answers a read whose upstream dies with a connection error, then reconnects and re-reads its tools', async () => {
    const g = gate();
    const agent = await startAgent(g.config, approve);
    let listChanged = 0;
    agent.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
    try {
      const err = await agent.call('crash_read', {}).catch((e: Error) => e);
      assert.ok(err instanceof Error);
      assert.equal((err as { code?: number }).code, -32000);
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(textOf(await agent.call('echo', { back: true })), '{"back":true}');
      assert.ok(await waitFor(() => listChanged === 1, 3000), 'the client is told to re-list after the restart');
    } finally {
      await agent.close();
    }
  });

  it('logs each read behind the answer, with the hash of its arguments', async () => {
    const g = gate();
    const agent = await startAgent(g.config, approve);
    const args = { b: [1, 2], a: 'é' };
    await agent.call('echo', args);
    await agent.close();
    const reads = readFileSync(join(g.dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.event === 'read');
    assert.equal(reads.length, 1);
    assert.equal(reads[0].tool, 'echo');
    assert.equal(reads[0].outcome, 'ok');
    assert.equal(reads[0].args_sha256, createHash('sha256').update(canonicalize(args)!).digest('hex'));
    assert.equal(runCli(['verify-log', '--config', g.config]).status, 0);
  });

  it('logs no reads with audit.reads: false, but still logs writes', async () => {
    const g = gate('', `audit:\n  reads: false\n`);
    const agent = await startAgent(g.config, approve);
    await agent.call('echo', {});
    assert.equal(textOf(await agent.call('write_note', { n: 1 })), 'noted');
    await agent.close();
    const events = readFileSync(join(g.dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).event);
    assert.ok(!events.includes('read'));
    assert.ok(events.includes('approval'));
  });
});
