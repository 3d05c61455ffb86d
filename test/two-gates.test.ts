/**
 * Two clients on one config: the second gate cannot write the first's audit log (one writer per log) or
 * listen on its page's port, and its client must be told why in the error it shows, not just
 * "Connection closed". The recipe README gives (own audit.log, `confirm.web.port: 0`) runs both, and
 * through the SQLite store they share, a call held by one is decided on the other's page.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { approve, FAKE_UPSTREAM, linesIn, MAIN, NODE, runCli, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { decide, pageAddress, pendingCall } from './web-page.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const upstream = (dir: string) =>
  `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n`;

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, 'close');
  return port;
}

/** Connects an SDK client to `serve --config config`; resolves with the error connect() rejected with, and the gate's stderr. */
async function refusedConnect(config: string): Promise<{ error: Error; stderr: string }> {
  const transport = new StdioClientTransport({
    command: NODE,
    args: [MAIN, 'serve', '--config', config],
    stderr: 'pipe',
    env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1', NO_COLOR: '1' },
  });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const client = new Client({ name: 'second-client', version: '1.0.0' }, { capabilities: {} });
  const error = await client.connect(transport).then(
    () => assert.fail('the second gate served its client'),
    (e: Error) => e,
  );
  const pid = transport.pid;
  // The gate exits on its own after answering; wait for it (and its last stderr line).
  await waitFor(() => {
    try {
      if (pid !== null) process.kill(pid, 0);
      return pid === null;
    } catch {
      return true;
    }
  }, 10_000);
  await client.close().catch(() => {});
  return { error, stderr };
}

describe('a second gate on the same config', () => {
  it("tells its client why it stopped: the log's writer, its pid, and how to run two", async () => {
    const dir = tmp();
    dirs.push(dir);
    const config = writeConfig(dir, upstream(dir));
    const first = await startAgent(config, approve);
    try {
      const { error, stderr } = await refusedConnect(config);
      assert.match(error.message, /lookfirst could not start: another lookfirst \(pid \d+\) is writing \S+audit\.jsonl/);
      assert.match(error.message, /its own audit\.log and confirm\.web\.port: 0/);
      assert.match(error.message, /serve --transport http/);
      assert.match(stderr, /another lookfirst \(pid \d+\) is writing/);
      // The first gate is untouched: it still serves.
      assert.ok((await first.client.listTools()).tools.length > 0);
    } finally {
      await first.close();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });

  it('exits on its own while its client keeps stdin open, whether it sent a request, a batch, garbage or nothing', async () => {
    const dir = tmp();
    dirs.push(dir);
    const config = writeConfig(dir, upstream(dir));
    const first = await startAgent(config, approve);
    try {
      const inputs = [
        '',
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_note","arguments":{"note":"x"}}}\n',
        '[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]\n',
        `not json ${'x'.repeat(100_000)}\n`,
      ];
      for (const input of inputs) {
        const gate = spawn(NODE, [MAIN, 'serve', '--config', config], {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1', NO_COLOR: '1' },
        });
        let out = '';
        gate.stdout.on('data', (c: Buffer) => {
          out += c.toString();
        });
        gate.stdin.on('error', () => {});
        gate.stdin.write(input);
        // stdin stays open, as a client that keeps its end of the pipe does.
        const t0 = performance.now();
        const exited = once(gate, 'exit');
        const timer = setTimeout(() => gate.kill('SIGKILL'), 15_000);
        const [code, signal] = (await exited) as [number | null, string | null];
        clearTimeout(timer);
        gate.stdin.destroy();
        assert.equal(signal, null, `the refusing gate did not exit by itself (input ${JSON.stringify(input.slice(0, 40))})`);
        assert.equal(code, 1);
        assert.ok(performance.now() - t0 < 12_000);
        if (input.includes('"id":7')) assert.match(out, /"id":7,"error":\{"code":-32603,"message":"lookfirst could not start: another lookfirst/);
      }
    } finally {
      await first.close();
    }
    // Nothing the refused clients sent ran: the first gate's log still verifies and holds no call of theirs.
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
    assert.equal(linesIn(join(dir, 'effects.txt')), 0);
  });

  it("tells its client which port is taken when only the approval page's port is shared", async () => {
    const dir = tmp();
    dirs.push(dir);
    const port = await freePort();
    const config = writeConfig(dir, `${upstream(dir)}confirm:\n  web: { enabled: true, port: ${port} }\n`);
    const second = join(dir, 'second.yaml');
    writeFileSync(second, `${upstream(dir)}audit: { log: audit-2.jsonl }\nconfirm:\n  web: { enabled: true, port: ${port} }\n`);
    const first = await startAgent(config, approve);
    try {
      const { error } = await refusedConnect(second);
      assert.match(error.message, new RegExp(`approval page cannot listen on 127\\.0\\.0\\.1:${port}: it is already in use`));
      assert.match(error.message, /confirm\.web\.port/);
    } finally {
      await first.close();
    }
  });

  it("runs beside the first with its own audit.log and confirm.web.port: 0, and its held call is decided on the first's page", async () => {
    const dir = tmp();
    dirs.push(dir);
    const confirm = 'confirm:\n  elicitation: false\n  timeout_seconds: 60\n  hold_seconds: 30\n  web: { enabled: true, port: 0 }\n';
    const config = writeConfig(dir, `${upstream(dir)}${confirm}`);
    const second = join(dir, 'second.yaml');
    writeFileSync(second, `${upstream(dir)}audit: { log: audit-2.jsonl }\n${confirm}`);
    const first = await startAgent(config);
    const other = await startAgent(second).catch(async (e) => {
      await first.close();
      throw e;
    });
    try {
      assert.ok((await first.client.listTools()).tools.length > 0);
      const answer = other.call('write_note', { note: 'held by the second gate' });
      // The two gates share the SQLite store beside their logs: the first gate's page lists the call.
      const page = await pageAddress(first.stderr);
      const card = await pendingCall(page, /held by the second gate/);
      assert.equal(await decide(page, card, 'approve', 'alice'), 200);
      const r = await answer;
      assert.equal(verdictOf(r)?.outcome, 'executed', JSON.stringify(r));
      assert.equal(linesIn(join(dir, 'effects.txt')), 1);
    } finally {
      await other.close();
      await first.close();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
    assert.equal(runCli(['verify-log', '--config', second]).status, 0);
  });
});
