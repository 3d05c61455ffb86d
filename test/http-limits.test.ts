/**
 * `serve --transport http` under a flood, with the real gate and the SDK's own HTTP client: an attacker
 * that holds many idle TCP connections (to the MCP endpoint and to the approval page, reopening each one
 * the gate closes) and opens MCP sessions with its own token up to its cap and past it, does not lock a
 * legitimate client out: the client reads, gets a write approved on the page, and keeps its session.
 * The attacker gives up only its own oldest sessions, and cannot use the client's session id. Neither do
 * pipelined requests whose answers are never read, one token holder's calls in progress, questions left
 * open under made-up 2026-07-28 client names, or churned silent connections. A body larger than a message
 * may be is refused with 413 before it is read.
 */
import assert from 'node:assert/strict';
import { type ClientRequest, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { ResultSchema as ModernResult } from '@modelcontextprotocol/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema, textOf, verdictOf } from './helpers.js';
import { httpGate, TOKEN } from './http-gate.js';
import { decide, http, pendingCall } from './web-page.js';

const ATTACKER = 'attacker-'.repeat(5);
/** The endpoint's per-principal cap (DEFAULT_SESSION_CAPS.perPrincipal). */
const PER_PRINCIPAL = 64;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const init = (name: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
  });

/** Keeps `n` silent connections open to `port`, reopening each one the gate closes, until stopped. */
function holdIdle(port: number, n: number): { stop: () => void; closedByGate: () => number } {
  let active = true;
  let closed = 0;
  const sockets = new Set<Socket>();
  const open = () => {
    if (!active) return;
    const s = connect({ port, host: '127.0.0.1' });
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => {
      sockets.delete(s);
      if (!active) return;
      closed++;
      setTimeout(open, 100);
    });
  };
  for (let i = 0; i < n; i++) open();
  return {
    stop: () => {
      active = false;
      for (const s of sockets) s.destroy();
    },
    closedByGate: () => closed,
  };
}

/** An SDK client with `token`, connected, and its tools/call. */
async function sdkClient(url: URL, token: string) {
  const client = new Client({ name: 'legit', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  const call = (tool: string, args: Record<string, unknown>) =>
    client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, ResultSchema, { timeout: 20_000 }) as Promise<Record<string, unknown>>;
  return { client, call };
}

const modernEnvelope = (name: string) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name, version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

async function openSession(port: number, token: string, name: string): Promise<{ status: number; id?: string }> {
  const r = await http(port, 'POST', '/mcp', { ...MCP_HEADERS, authorization: `Bearer ${token}` }, init(name));
  return { status: r.status, id: r.headers['mcp-session-id'] as string | undefined };
}

describe('serve over HTTP under a flood', () => {
  it('serves a legitimate SDK client while an attacker holds idle connections and opens sessions up to its cap', async () => {
    const g = await httpGate('', true, false, [TOKEN, ATTACKER]);
    const floods = [holdIdle(g.port, 400), holdIdle(g.page.port, 400)];
    try {
      // The attacker opens sessions up to its own cap, all idle.
      const attacker: string[] = [];
      for (let i = 0; i < PER_PRINCIPAL; i++) {
        const s = await openSession(g.port, ATTACKER, `flood-${i}`);
        assert.equal(s.status, 200, `attacker session ${i}`);
        attacker.push(s.id!);
      }
      // The legitimate client, with its own token, through the same flood.
      const client = new Client({ name: 'legit', version: '1.0.0' }, { capabilities: {} });
      const transport = new StreamableHTTPClientTransport(g.url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
      await client.connect(transport);
      const call = (tool: string, args: Record<string, unknown>) =>
        client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, ResultSchema, { timeout: 20_000 }) as Promise<
          Record<string, unknown>
        >;
      assert.equal(textOf(await call('echo', { n: 1 })), '{"n":1}');

      // Past its cap the attacker gives up its own oldest sessions, never the client's, even when it
      // opens them all at once.
      const more = await Promise.all(Array.from({ length: 30 }, (_, i) => openSession(g.port, ATTACKER, `more-${i}`)));
      assert.deepEqual(new Set(more.map((m) => m.status)), new Set([200]));
      attacker.push(...more.map((m) => m.id!));
      const probe = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      const headers = (token: string, id: string) => ({
        ...MCP_HEADERS,
        authorization: `Bearer ${token}`,
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-06-18',
      });
      assert.equal((await http(g.port, 'POST', '/mcp', headers(ATTACKER, attacker[0]!), probe)).status, 404, "the attacker's oldest session was closed");
      assert.equal((await http(g.port, 'POST', '/mcp', headers(ATTACKER, attacker[40]!), probe)).status, 200, 'a newer one was kept');
      assert.equal(
        (await http(g.port, 'POST', '/mcp', headers(ATTACKER, transport.sessionId!), probe)).status,
        404,
        "another principal's session id is unknown to the attacker",
      );
      assert.match(g.stderr(), /the oldest idle session of token:[A-Za-z0-9_-]{16}, closed for its new one/);
      let alive = 0;
      for (const id of attacker) if ((await http(g.port, 'POST', '/mcp', headers(ATTACKER, id), probe)).status === 200) alive++;
      assert.equal(alive, PER_PRINCIPAL, 'the attacker holds exactly its cap, however it opened them');

      // The client's session still works, and the page (flooded too) still approves.
      assert.equal(textOf(await call('echo', { n: 2 })), '{"n":2}');
      const write = call('write_note', { note: 'under flood' });
      assert.equal(await decide(g.page, await pendingCall(g.page), 'approve', 'ivy'), 200);
      assert.equal(verdictOf(await write)?.outcome, 'executed');
      assert.ok(
        floods.every((f) => f.closedByGate() > 0),
        'the gate closed idle connections to make room',
      );
      await client.close();
    } finally {
      for (const f of floods) f.stop();
      await g.stop();
    }
    assert.equal(g.executed(), 1);
  });

  it('serves an SDK client while connections pipeline thousands of requests without reading the answers, and after they leave', async () => {
    const g = await httpGate();
    const flood: Socket[] = [];
    try {
      const nope = await http(g.port, 'GET', '/nope');
      assert.equal(nope.status, 404);
      assert.equal(nope.headers.connection, 'close', 'an unauthenticated error closes the connection');
      for (const [port, path] of [
        [g.port, '/nope'],
        [g.page.port, '/static/app.js'],
      ] as const)
        for (let i = 0; i < 2; i++) {
          const s = connect({ port, host: '127.0.0.1' });
          s.on('error', () => {});
          s.pause();
          s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`.repeat(3000));
          flood.push(s);
        }
      await new Promise((r) => setTimeout(r, 500));
      const during = await sdkClient(g.url, TOKEN);
      assert.equal(textOf(await during.call('echo', { n: 1 })), '{"n":1}');
      assert.equal((await http(g.page.port, 'GET', `/state.json?k=${g.page.key}`)).status, 200);
      for (const s of flood) s.destroy();
      const after = await sdkClient(g.url, TOKEN);
      assert.equal(textOf(await after.call('echo', { n: 2 })), '{"n":2}');
      assert.equal((await http(g.page.port, 'GET', `/state.json?k=${g.page.key}`)).status, 200);
      await Promise.all([during.client.close(), after.client.close()]);
    } finally {
      for (const s of flood) s.destroy();
      await g.stop();
    }
  });

  it("serves another token's SDK client while one token holder has more calls in progress than it may", async () => {
    const g = await httpGate('', true, false, [TOKEN, ATTACKER]);
    const held: ClientRequest[] = [];
    try {
      const s = await openSession(g.port, ATTACKER, 'busy');
      const headers = { ...MCP_HEADERS, authorization: `Bearer ${ATTACKER}`, 'mcp-session-id': s.id!, 'mcp-protocol-version': '2025-06-18' };
      await http(g.port, 'POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      // The calls within the cap stay in progress (`slow` answers only when cancelled); those past it are
      // refused at once. Wait for the refusals only, so the other client is served while the rest still run.
      const refused = await new Promise<number>((resolve) => {
        let count = 0;
        const timer = setTimeout(() => resolve(count), 20_000);
        for (let i = 0; i < 270; i++) {
          const r = request({ host: '127.0.0.1', port: g.port, method: 'POST', path: '/mcp', headers, agent: false }, (res) => {
            res.resume();
            if (res.statusCode === 503 && ++count === 270 - 256) {
              clearTimeout(timer);
              resolve(count);
            }
          });
          r.on('error', () => {});
          r.end(JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'slow', arguments: {} } }));
          held.push(r);
        }
      });
      assert.equal(refused, 270 - 256, 'the token holder is refused past its own cap');
      const other = await sdkClient(g.url, TOKEN);
      assert.equal(textOf(await other.call('echo', { n: 1 })), '{"n":1}');
      await other.client.close();
    } finally {
      for (const r of held) r.destroy();
      await g.stop();
    }
  });

  it('serves a 2026-07-28 client of another token while one token holder leaves questions open under many made-up client names', async () => {
    const g = await httpGate('', true, false, [TOKEN, ATTACKER]);
    try {
      // The 64 sessions within the cap keep their questions open (held for a person); the ones past it are
      // refused at once. Wait for a refusal only, so the legitimate client is served while the questions are open.
      const answers = Array.from({ length: 70 }, (_, i) =>
        http(
          g.port,
          'POST',
          '/mcp',
          { ...MCP_HEADERS, authorization: `Bearer ${ATTACKER}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'write_note' },
          JSON.stringify({
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: { name: 'write_note', arguments: { note: `n${i}` }, _meta: modernEnvelope(`made-up-${i}`) },
          }),
        ),
      );
      const refusal = await new Promise<string | undefined>((resolve) => {
        let left = answers.length;
        const settled = () => {
          if (--left === 0) resolve(undefined);
        };
        for (const a of answers)
          a.then((r) => (/these credentials already hold 64 2026-07-28 client sessions/.test(r.body) ? resolve(r.body) : settled()), settled);
      });
      assert.match(refusal ?? '(no refusal)', /these credentials already hold 64 2026-07-28 client sessions/);
      const client = new ModernClient({ name: 'legit-2026', version: '1' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new ModernTransport(g.url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
      const r = await client.request({ method: 'tools/call', params: { name: 'echo', arguments: { n: 3 } } }, ModernResult, { timeout: 20_000 });
      assert.equal(textOf(r as Record<string, unknown>), '{"n":3}');
      await client.close();
    } finally {
      await g.stop();
    }
  });

  it("keeps an SDK client's kept-alive connection while an attacker churns more silent connections than the idle cap", async () => {
    const g = await httpGate();
    const churn = holdIdle(g.port, 1100);
    try {
      const c = await sdkClient(g.url, TOKEN);
      for (let i = 0; i < 10; i++) {
        assert.equal(textOf(await c.call('echo', { i })), `{"i":${i}}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(churn.closedByGate() > 0, 'the gate closed silent connections to make room');
      await c.client.close();
    } finally {
      churn.stop();
      await g.stop();
    }
  });

  it('refuses a body larger than a message may be with 413, before reading it', async () => {
    const g = await httpGate();
    try {
      const r = await http(g.port, 'POST', '/mcp', {
        ...MCP_HEADERS,
        authorization: `Bearer ${TOKEN}`,
        'content-length': String(65 * 1024 * 1024),
      }).catch((err: Error) => ({ status: 0, body: err.message, headers: {} }));
      assert.equal(r.status, 413, r.body);
      assert.match(r.body, /larger than 67108864 bytes, the most one request may carry/);
    } finally {
      await g.stop();
    }
  });

  it('refuses a token file line that is too short, naming the line and never the text', async () => {
    const { runCli, tmp, writeConfig, NODE, FAKE_UPSTREAM } = await import('./helpers.js');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = tmp();
    writeFileSync(join(dir, 'tokens.txt'), `${TOKEN}\nshort-second-token\n`);
    const config = writeConfig(
      dir,
      `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\nhttp:\n  token_file: tokens.txt\n`,
    );
    const r = runCli(['serve', '--config', config, '--transport', 'http', '--port', '0']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /http\.token_file .*tokens\.txt line 2 holds 18 characters; each token needs at least 32/);
    assert.doesNotMatch(r.stderr, /short-second-token|t0ken-/);
  });
});
