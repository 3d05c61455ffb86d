import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpPoster, RedirectedError, SseReader } from './http-post.js';
import { SessionEndedError, SessionGuard } from './http-session.js';

describe('SseReader', () => {
  const read = (chunks: string[], max = 1 << 20) => {
    const out: string[] = [];
    const r = new SseReader((d) => out.push(d), max);
    const ok = chunks.every((c) => r.push(c));
    return { out, ok };
  };

  it('hands over the data of message events, whatever the line breaks and however the chunks split', () => {
    const text = ': comment\r\nid: 1\r\nevent: message\r\ndata: {"a":1}\r\n\r\ndata: {"b":\ndata: 2}\n\nevent: other\ndata: skipped\n\rdata:{"c":3}\r\r';
    const whole = read([text]).out;
    assert.deepEqual(whole, ['{"a":1}', '{"b":\n2}', '{"c":3}']);
    for (let i = 1; i < text.length; i++) assert.deepEqual(read([text.slice(0, i), text.slice(i)]).out, whole, `split at ${i}`);
  });

  it('ignores an event without data and a trailing event with no blank line', () => {
    assert.deepEqual(read(['id: 7\n\n', 'data: {"x":1}']).out, []);
  });

  it('stops when one event grows past the limit', () => {
    assert.equal(read([`data: ${'x'.repeat(100)}`], 50).ok, false);
  });
});

describe('HttpPoster', () => {
  let server: Server;
  let url: URL;
  /** What the server does with the next POST, by the request's `params.how`. */
  const handlers: Record<string, (req: IncomingMessage, res: ServerResponse, id: unknown) => void> = {
    json: (_req, res, id) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { ok: 1 } })),
    sse: (_req, res, id) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } })}\n\n`);
      setTimeout(() => res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { ok: 2 } })}\n\n`), 20);
    },
    silent: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(': nothing\n\n');
    },
    gone: (_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}'),
    answered: (_req, res, id) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'bad session args' } })),
    moved: (_req, res) => res.writeHead(307, { location: '/elsewhere' }).end(),
  };
  const seen: { session?: string; version?: string; auth?: string }[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const m = JSON.parse(body) as { id: unknown; params: { how: string } };
        seen.push({
          session: req.headers['mcp-session-id'] as string | undefined,
          version: req.headers['mcp-protocol-version'] as string | undefined,
          auth: req.headers.authorization,
        });
        handlers[m.params.how]!(req, res, m.id);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const post = (poster: HttpPoster, how: string, session = 's-1') => {
    const messages: Record<string, unknown>[] = [];
    const unanswered: string[] = [];
    const id = `lf-${how}`;
    const p = poster.post(
      { jsonrpc: '2.0', id, method: 'tools/call', params: { how } },
      id,
      { sessionId: session, protocolVersion: '2025-11-25' },
      {
        message: (m) => messages.push(m),
        unanswered: (why) => unanswered.push(why),
      },
    );
    return { sent: p.sent, messages, unanswered };
  };

  it('reads a JSON answer and an SSE answer, each message once, with the session and the configured headers', async () => {
    const poster = new HttpPoster(url, { Authorization: 'Bearer k' }, new SessionGuard(), 1 << 20);
    try {
      const a = post(poster, 'json');
      await a.sent;
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(a.messages, [{ jsonrpc: '2.0', id: 'lf-json', result: { ok: 1 } }]);
      const b = post(poster, 'sse');
      await b.sent;
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(
        b.messages.map((m) => m.method ?? m.result),
        ['notifications/message', { ok: 2 }],
      );
      assert.deepEqual(a.unanswered.concat(b.unanswered), []);
      assert.deepEqual(seen.at(-1), { session: 's-1', version: '2025-11-25', auth: 'Bearer k' });
    } finally {
      poster.close();
    }
  });

  it('says so when the answer ends without a response', async () => {
    const poster = new HttpPoster(url, {}, new SessionGuard(), 1 << 20);
    try {
      const c = post(poster, 'silent');
      await c.sent;
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(c.unanswered, ['ended its answer stream without answering']);
    } finally {
      poster.close();
    }
  });

  it('ends the session on a 404 with no answer, and never sends that session id again', async () => {
    const guard = new SessionGuard();
    const poster = new HttpPoster(url, {}, guard, 1 << 20);
    try {
      const err = await post(poster, 'gone', 'dead-1').sent.catch((e: unknown) => e);
      assert.ok(err instanceof SessionEndedError && err.status === 404);
      assert.equal(guard.isDead('dead-1'), true);
      const before = seen.length;
      const again = await post(poster, 'json', 'dead-1').sent.catch((e: unknown) => e);
      assert.ok(again instanceof SessionEndedError && again.status === undefined, 'refused locally');
      assert.equal(seen.length, before, 'nothing was sent');
    } finally {
      poster.close();
    }
  });

  it('takes a 400 that carries the request id as an answer, not as the session ending', async () => {
    const guard = new SessionGuard();
    const poster = new HttpPoster(url, {}, guard, 1 << 20);
    try {
      const err = await post(poster, 'answered', 'alive-1').sent.catch((e: unknown) => e);
      assert.ok(err instanceof Error && !(err instanceof SessionEndedError));
      assert.match((err as Error).message, /bad session args/);
      assert.equal(guard.isDead('alive-1'), false);
    } finally {
      poster.close();
    }
  });

  it('leaves a redirect to the caller, unread', async () => {
    const poster = new HttpPoster(url, {}, new SessionGuard(), 1 << 20);
    try {
      const err = await post(poster, 'moved').sent.catch((e: unknown) => e);
      assert.ok(err instanceof RedirectedError && err.status === 307);
    } finally {
      poster.close();
    }
  });
});
