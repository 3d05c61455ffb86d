/**
 * Clients served over Streamable HTTP take the read fast path (gateway/fast-path.ts) as stdio clients do,
 * with the same promises: each raw answer goes back on the HTTP response stream of the POST that carried
 * its request (many sessions, many calls in flight at once), a client's cancel reaches the upstream under
 * the upstream's id and its late answer is dropped, a timeout answers with a JSON-RPC error, and each read
 * is logged behind its answer. The upstream (test/fixtures/fake-upstream.mjs) records what it received, so
 * the tests see which path a call took: the fast path sends ids the gate minted (`lf-…`).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { auditEntries, FAKE_UPSTREAM, NODE, textOf, tmp, waitFor, writeConfig } from './helpers.js';
import { serveHttp } from './http-gate.js';

/** The gate over HTTP (loopback, no token) in front of the fake upstream, which records what it receives. */
async function gate(upstreamExtra = '', extra = '') {
  const dir = tmp();
  const events = join(dir, 'events.jsonl');
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt'), '--events', events])}\n${upstreamExtra}confirm:\n  elicitation: false\n${extra}`,
  );
  const served = await serveHttp(config);
  const received = () =>
    existsSync(events)
      ? readFileSync(events, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { method?: string; id?: unknown; params?: Record<string, unknown> })
      : [];
  return { dir, url: served.url, received, stderr: served.stderr, stop: () => served.kill('SIGTERM') };
}

async function client(url: URL): Promise<Client> {
  const c = new Client({ name: 'http-fast-path', version: '1' }, { capabilities: {} });
  await c.connect(new StreamableHTTPClientTransport(url));
  return c;
}

const call = (c: Client, name: string, args: Record<string, unknown>, opts: { signal?: AbortSignal; timeout?: number } = {}) =>
  c.request({ method: 'tools/call', params: { name, arguments: args } }, ResultSchema, { timeout: opts.timeout ?? 20_000, signal: opts.signal }) as Promise<
    Record<string, unknown>
  >;

describe('the read fast path over Streamable HTTP', () => {
  it('answers every call of many sessions on its own stream, raw, each read logged behind its answer', async () => {
    const g = await gate();
    const clients = await Promise.all([0, 1, 2].map(() => client(g.url)));
    try {
      const results = await Promise.all(clients.flatMap((c, s) => Array.from({ length: 20 }, (_, i) => call(c, 'echo', { s, i }).then((r) => ({ r, s, i })))));
      for (const { r, s, i } of results) {
        assert.equal(textOf(r), JSON.stringify({ s, i }), 'each answer reaches the call it answers');
        // Byte for byte: the fake upstream's extra fields survive, as on the stdio fast path.
        assert.equal(r.xTop, 'kept');
      }
      const calls = g.received().filter((e) => e.method === 'tools/call');
      assert.equal(calls.length, 60);
      assert.ok(
        calls.every((e) => typeof e.id === 'string' && e.id.startsWith('lf-')),
        `every read went raw: ${JSON.stringify(calls.map((e) => e.id))}`,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await g.stop();
    }
    const reads = auditEntries(g.dir).filter((e) => e.event === 'read');
    assert.equal(reads.length, 60, 'one read entry per call');
    assert.ok(reads.every((e) => e.outcome === 'ok' && e.tool === 'echo'));
  });

  it('forwards a cancel under the upstream id and drops the late answer; the session goes on', async () => {
    const g = await gate();
    const c = await client(g.url);
    try {
      const ac = new AbortController();
      const pending = call(c, 'slow', {}, { signal: ac.signal }).catch((e: Error) => e);
      assert.ok(await waitFor(() => g.received().some((e) => e.method === 'tools/call' && e.params?.name === 'slow'), 5000));
      const upstreamId = g.received().find((e) => e.method === 'tools/call' && e.params?.name === 'slow')!.id;
      assert.match(String(upstreamId), /^lf-/);
      ac.abort('no longer needed');
      assert.ok((await pending) instanceof Error);
      assert.ok(
        await waitFor(() => g.received().some((e) => e.method === 'notifications/cancelled' && e.params?.requestId === upstreamId), 5000),
        'the cancel reaches the upstream under its own id',
      );
      // The fake upstream answers a cancelled call anyway: that late answer must go nowhere, and the
      // session must keep serving.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(textOf(await call(c, 'echo', { next: 1 })), '{"next":1}');
    } finally {
      await c.close();
      await g.stop();
    }
  });

  it('answers a read that outlives the upstream timeout with a JSON-RPC timeout error', async () => {
    const g = await gate('    timeout_seconds: 1\n');
    const c = await client(g.url);
    try {
      const err = (await call(c, 'slow', {}).catch((e: Error) => e)) as Error & { code?: number };
      assert.ok(err instanceof Error);
      assert.equal(err.code, -32001);
      assert.match(err.message, /did not answer within 1000 ms/);
      assert.equal(textOf(await call(c, 'echo', { ok: 1 })), '{"ok":1}');
    } finally {
      await c.close();
      await g.stop();
    }
  });

  it('answers a request that reuses an id in progress on its own POST, never on the first one', async () => {
    const g = await gate('', 'rules:\n  tools:\n    slow_write: { action: allow }\n');
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(g.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'dup', version: '1' } },
      }),
    });
    const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-06-18' };
    await init.text();
    await fetch(g.url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    const post = (name: string, args: Record<string, unknown>) =>
      fetch(g.url, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: args } }),
      }).then((r) => r.text());
    const write = post('slow_write', { text: 'w1' });
    await waitFor(() => g.received().some((e) => e.method === 'tools/call' && e.params?.name === 'slow_write'), 5000);
    const read = await post('echo', { text: 'r' });
    assert.match(read, /already used by a request in progress/, 'the second request is refused on its own POST');
    const first = await write;
    assert.match(first, /"outcome":"executed"/, 'the write answers on the POST that sent it');
    assert.doesNotMatch(first, /already used/);
    await g.stop();
  });
});
