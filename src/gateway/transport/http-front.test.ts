import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HttpFrontTransport } from './http-front.js';

/** Stands in for the SDK transport: records what is left to it, answers what it is handed with 299. */
function sdkStub() {
  const left: unknown[] = [];
  const sent: unknown[] = [];
  const stub = {
    sessionId: 'sess-1',
    onmessage: undefined as ((m: JSONRPCMessage, extra?: unknown) => void) | undefined,
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((e: Error) => void) | undefined,
    start: async () => {},
    close: async () => stub.onclose?.(),
    send: async (m: unknown) => void sent.push(m),
    handleRequest: async (_req: unknown, res: { writeHead: (s: number) => { end: () => void } }, body: unknown) => {
      left.push(body);
      res.writeHead(299).end();
    },
  };
  return { stub, left, sent };
}

describe('HttpFrontTransport', () => {
  let server: Server;
  let url: string;
  let front: HttpFrontTransport;
  let sdk: ReturnType<typeof sdkStub>;
  const received: JSONRPCMessage[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => void front.handleRequest(req, res, body ? JSON.parse(body) : undefined));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const fresh = () => {
    sdk = sdkStub();
    front = new HttpFrontTransport(sdk.stub as unknown as StreamableHTTPServerTransport);
    received.length = 0;
    front.onmessage = (m) => void received.push(m);
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
  const call = (id: string | number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } });
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it('answers a call on its own POST, as JSON when the response comes first', async () => {
    fresh();
    const response = post(call(7));
    await until(() => received.length === 1);
    assert.deepEqual(received[0], call(7));
    await front.send({ jsonrpc: '2.0', id: 7, result: { content: [] } } as JSONRPCMessage);
    const res = await response;
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('mcp-session-id'), 'sess-1');
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 7, result: { content: [] } });
    assert.deepEqual([sdk.left, sdk.sent], [[], []], 'nothing went through the SDK transport');
  });

  it('streams what is sent for the call before its response, then the response, on that POST only', async () => {
    fresh();
    const response = post(call('a'));
    await until(() => received.length === 1);
    await front.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } } as JSONRPCMessage, {
      relatedRequestId: 'a',
    });
    // Another request's notification is not this call's: it goes to the SDK transport.
    await front.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } } as JSONRPCMessage, { relatedRequestId: 'b' });
    await front.send({ jsonrpc: '2.0', id: 'a', result: {} } as JSONRPCMessage);
    const res = await response;
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    assert.deepEqual(
      events.map((e) => e.method ?? e.id),
      ['notifications/progress', 'a'],
    );
    assert.equal(sdk.sent.length, 1);
  });

  it('leaves to the SDK transport what it does not vouch for: other methods, batches, a bad Accept, an unknown version, an id in flight', async () => {
    fresh();
    const cases: [unknown, Record<string, string>][] = [
      [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, {}],
      [[call(2)], {}],
      [call(3), { accept: 'application/json' }],
      [call(4), { 'mcp-protocol-version': '1999-01-01' }],
      [{ jsonrpc: '2.0', id: null, method: 'tools/call', params: {} }, {}],
    ];
    for (const [body, headers] of cases) assert.equal((await post(body, headers)).status, 299, JSON.stringify(body));
    const first = post(call(5));
    await until(() => received.length === 1);
    assert.equal((await post(call(5))).status, 299, 'the same id while the first is in flight');
    await front.send({ jsonrpc: '2.0', id: 5, result: {} } as JSONRPCMessage);
    assert.equal((await first).status, 200);
    assert.equal(sdk.left.length, cases.length + 1);
  });

  it('ends the stream of a call the client cancels, and every open one when the session closes', async () => {
    fresh();
    const cancelled = post(call(8));
    const open = post(call(9));
    await until(() => received.length === 2);
    sdk.stub.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8 } } as JSONRPCMessage);
    assert.equal(await (await cancelled).text(), '');
    await front.close();
    assert.equal(await (await open).text(), '');
    // A late answer goes nowhere (and does not throw).
    await front.send({ jsonrpc: '2.0', id: 9, result: {} } as JSONRPCMessage);
  });
});
