/**
 * A Streamable HTTP upstream (`url:` in the config): the real server-everything in its streamableHttp
 * mode behind the gate. Reads pass (fast path over HTTP), writes are held.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { approve, decline, EVERYTHING_SERVER, NODE, runCli, startAgent, textOf, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('a Streamable HTTP upstream', () => {
  let server: ChildProcess;
  let port: number;
  let config: string;

  before(async () => {
    port = await freePort();
    let out = '';
    server = spawn(NODE, [EVERYTHING_SERVER, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (c) => (out += c));
    server.stderr?.on('data', (c) => (out += c));
    assert.ok(await waitFor(() => new RegExp(String(port)).test(out), 10_000), out);
    config = writeConfig(tmp(), `upstreams:\n  ev:\n    url: http://127.0.0.1:${port}/mcp\n`);
  });
  after(() => void server.kill());

  it('passes a read and holds a write', async () => {
    const agent = await startAgent(config, decline);
    try {
      assert.equal(textOf(await agent.call('echo', { message: 'over http' })), 'Echo: over http');
      const write = await agent.call('toggle-simulated-logging', {});
      assert.equal(verdictOf(write)?.outcome, 'denied');
      assert.equal(agent.asked.length, 1);
    } finally {
      await agent.close();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });

  it('executes an approved write once', async () => {
    const agent = await startAgent(config, approve);
    try {
      const write = await agent.call('toggle-simulated-logging', {});
      assert.equal(verdictOf(write)?.outcome, 'executed', JSON.stringify(write));
    } finally {
      await agent.close();
    }
  });
});
