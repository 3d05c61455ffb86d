/**
 * `lookfirst serve --transport http`: the gate as a Streamable HTTP server at /mcp, driven by the SDK's
 * own HTTP client. A bearer token is required when configured (401 without or with a wrong one, and
 * nothing runs); a foreign Origin or a rebinding Host is refused; two clients are isolated sessions (one
 * cannot re-attach to the other's held call); reads and approved writes work as on stdio.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FAKE_UPSTREAM, NODE, ResultSchema, runCli, textOf, tmp, verdictOf, writeConfig } from './helpers.js';
import { httpGate, TOKEN } from './http-gate.js';
import { decide, http, pendingCall } from './web-page.js';

async function connect(url: URL, token: string | undefined, name = 'http-agent') {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
  const call = (tool: string, args: Record<string, unknown>) =>
    client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, ResultSchema, { timeout: 20_000 }) as Promise<Record<string, unknown>>;
  return { client, call };
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('serve over Streamable HTTP', () => {
  it('reads pass and an approved write runs once, over HTTP with the token', async () => {
    const g = await httpGate();
    const a = await connect(g.url, TOKEN);
    assert.equal(textOf(await a.call('echo', { hello: 'http' })), '{"hello":"http"}');
    const write = a.call('write_note', { note: 'over http' });
    assert.equal(await decide(g.page, await pendingCall(g.page), 'approve', 'ivy'), 200);
    const v = verdictOf(await write);
    assert.equal(v?.outcome, 'executed');
    assert.equal(v?.approved_by, 'web:ivy');
    await a.client.close();
    await g.stop();
    assert.equal(g.executed(), 1);
  });

  it('answers 401 without the token or with a wrong one, and runs nothing', async () => {
    const g = await httpGate();
    for (const auth of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, `bearer ${TOKEN}`, TOKEN]) {
      const r = await http(g.port, 'POST', '/mcp', { ...MCP_HEADERS, ...(auth ? { authorization: auth } : {}) }, INIT);
      assert.equal(r.status, 401, String(auth));
      assert.match(String(r.headers['www-authenticate']), /Bearer/);
    }
    await assert.rejects(connect(g.url, 'not-the-token'), /401|Unauthorized|refused/i);
    // A session opened with the token cannot be used without it.
    const a = await connect(g.url, TOKEN);
    const sessionId = (a.client.transport as StreamableHTTPClientTransport).sessionId!;
    const call = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'write_note', arguments: { n: 1 } } });
    const r = await http(g.port, 'POST', '/mcp', { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, call);
    assert.equal(r.status, 401);
    await a.client.close();
    await g.stop();
    assert.equal(g.executed(), 0);
    assert.doesNotMatch(g.stderr(), new RegExp(TOKEN), 'the token is never printed');
  });

  it('refuses a foreign Origin and a rebinding Host', async () => {
    const g = await httpGate();
    const auth = { authorization: `Bearer ${TOKEN}` };
    assert.equal((await http(g.port, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, origin: 'https://evil.example' }, INIT)).status, 403);
    assert.equal((await http(g.port, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, host: `evil.example:${g.port}` }, INIT)).status, 403);
    assert.equal((await http(g.port, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, origin: `http://127.0.0.1:${g.port}` }, INIT)).status, 200);
    // Refused before a gateway session is made for it (a flood of these must not pile sessions up).
    for (let i = 0; i < 20; i++) assert.equal((await http(g.port, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, accept: 'application/json' }, INIT)).status, 406);
    assert.doesNotMatch(g.stderr(), /client connection: Not Acceptable/);
    await g.stop();
  });

  it('keeps two clients apart: one cannot re-attach to the other\u2019s held call', async () => {
    const g = await httpGate();
    const a = await connect(g.url, TOKEN, 'client-a');
    const b = await connect(g.url, TOKEN, 'client-b');
    const va = verdictOf(await a.call('write_note', { note: 'same' }));
    assert.equal(va?.outcome, 'pending');
    const vb = verdictOf(await b.call('write_note', { note: 'same' }));
    assert.equal(vb?.outcome, 'pending');
    assert.notEqual(va?.call_id, vb?.call_id, 'the same arguments from another session are another call');
    const state = JSON.parse((await http(g.page.port, 'GET', `/state.json?k=${g.page.key}`)).body) as { pending: { client: string }[] };
    assert.deepEqual(state.pending.map((p) => p.client).sort(), ['client-a', 'client-b']);
    // Approving A's call lets only A's retry run it.
    const cardA = await pendingCall(g.page, /client-a/);
    assert.equal(await decide(g.page, cardA, 'approve', 'jo'), 200);
    const vb2 = verdictOf(await b.call('write_note', { note: 'same' }));
    assert.equal(vb2?.outcome, 'pending', 'B is still waiting on its own call');
    assert.equal(g.executed(), 0);
    const va2 = verdictOf(await a.call('write_note', { note: 'same' }));
    assert.equal(va2?.outcome, 'executed');
    assert.equal(va2?.call_id, va?.call_id);
    await a.client.close();
    await b.client.close();
    await g.stop();
    assert.equal(g.executed(), 1);
  });

  it('refuses to start off loopback without a token, or with a short token', () => {
    const dir = tmp();
    const config = writeConfig(dir, `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\n`);
    const off = runCli(['serve', '--config', config, '--transport', 'http', '--host', '0.0.0.0', '--port', '0']);
    assert.equal(off.status, 1);
    assert.match(off.stderr, /off this machine's loopback, needs a bearer token: set http\.token_file/);
    writeFileSync(join(dir, 'short.txt'), 'short-token');
    writeFileSync(config, `${readFileSync(config, 'utf8')}http:\n  token_file: short.txt\n`);
    const short = runCli(['serve', '--config', config, '--transport', 'http', '--port', '0']);
    assert.equal(short.status, 1);
    assert.match(short.stderr, /http\.token_file .* holds 11 characters; at least 32/);
    assert.doesNotMatch(short.stderr, /short-token/);
  });

  it('warns on loopback without a token that every local process can call tools', async () => {
    const g = await httpGate('', false);
    assert.match(g.stderr(), /no http\.token_file: every process on this machine can call tools/);
    const a = await connect(g.url, undefined);
    assert.equal(textOf(await a.call('echo', { open: true })), '{"open":true}');
    await a.client.close();
    await g.stop();
  });
});
