/**
 * A restart is no escape, and loses nothing: with the default SQLite store beside the log, a gate killed
 * while a call waits for a person keeps the question, and the client's identical retry on the restarted
 * gate collects the approval and runs the call once; a blocked tool stays blocked.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auditEntries, FAKE_UPSTREAM, linesIn, NODE, ResultSchema, tmp, verdictOf, writeConfig } from './helpers.js';
import { serveHttp } from './http-gate.js';
import { decide, pageAddress, pendingCall } from './web-page.js';

const TOKEN = 'restart-t0ken-'.repeat(4);

function setup() {
  const dir = tmp('lf-restart-');
  const effects = join(dir, 'effects.txt');
  writeFileSync(join(dir, 'token.txt'), `${TOKEN}\n`);
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nconfirm:\n  elicitation: false\n  timeout_seconds: 60\n  hold_seconds: 30\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\nhttp:\n  token_file: token.txt\n`,
  );
  return { dir, config, executed: () => linesIn(effects) };
}

async function start(config: string) {
  const served = await serveHttp(config);
  const client = new Client({ name: 'restart-agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(served.url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  return { client, page: await pageAddress(served.stderr), stderr: served.stderr, kill: (signal: NodeJS.Signals = 'SIGKILL') => served.kill(signal) };
}

describe('a gate restarted on its SQLite state', () => {
  it('keeps a waiting question: the retry after the restart collects the approval and the call runs once', async () => {
    const s = setup();
    const first = await start(s.config);
    const lost = first.client
      .request({ method: 'tools/call', params: { name: 'write_note', arguments: { note: 'across a restart' } } }, ResultSchema, { timeout: 60_000 })
      .then(
        () => 'answered',
        () => 'lost',
      );
    await pendingCall(first.page, /across a restart/);
    await first.kill();
    assert.equal(await lost, 'lost');
    assert.ok(existsSync(join(s.dir, 'lookfirst-state.db')), 'the state is beside the log');
    const second = await start(s.config);
    const retry = second.client.request({ method: 'tools/call', params: { name: 'write_note', arguments: { note: 'across a restart' } } }, ResultSchema, {
      timeout: 60_000,
    });
    const card = await pendingCall(second.page, /across a restart/);
    assert.equal(await decide(second.page, card, 'approve', 'frank'), 200);
    const r = (await retry) as Record<string, unknown>;
    assert.equal(verdictOf(r)?.outcome, 'executed', JSON.stringify(r));
    assert.equal(s.executed(), 1);
    const entries = auditEntries(s.dir);
    assert.equal(entries.filter((e) => e.event === 'call_received').length, 1, 'the retry continued the call received before the restart');
    assert.ok(entries.some((e) => e.event === 'call_retried' && e.call_id === verdictOf(r)?.call_id));
    await second.client.close();
    await second.kill();
  });

  it('keeps a question across a normal stop (SIGTERM) too: the retry after the restart collects the approval', async () => {
    const s = setup();
    const first = await start(s.config);
    const lost = first.client
      .request({ method: 'tools/call', params: { name: 'write_note', arguments: { note: 'across a stop' } } }, ResultSchema, { timeout: 10_000 })
      .then(
        (r) => JSON.stringify(r),
        (err: Error) => err.message,
      );
    await pendingCall(first.page, /across a stop/);
    await first.kill('SIGTERM');
    // However the client hears of the stop (the answer, a closed connection, its own timeout), nothing ran.
    assert.match(await lost, /gate stopped while this call waited for a person; its question stays open|Connection closed|fetch failed|terminated|timed out/);
    assert.equal(s.executed(), 0);
    const stopped = auditEntries(s.dir);
    assert.ok(!stopped.some((e) => e.event === 'approval'), JSON.stringify(stopped.filter((e) => e.event === 'approval' || e.event === 'cancelled')));
    const second = await start(s.config);
    const retry = second.client.request({ method: 'tools/call', params: { name: 'write_note', arguments: { note: 'across a stop' } } }, ResultSchema, {
      timeout: 60_000,
    });
    const card = await pendingCall(second.page, /across a stop/);
    assert.equal(await decide(second.page, card, 'approve', 'gina'), 200);
    const r = (await retry) as Record<string, unknown>;
    assert.equal(verdictOf(r)?.outcome, 'executed', JSON.stringify(r));
    assert.equal(s.executed(), 1);
    await second.client.close();
    await second.kill();
  });
});
