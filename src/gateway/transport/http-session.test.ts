import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isSessionEnded, mayResend, SessionEndedError, SessionGuard } from './http-session.js';

/**
 * A real HTTP server that answers by the session id it is sent (`<status>-<kind>`), and counts what it
 * receives. Kinds: `none` (id-less JSON-RPC error), `same` (an error carrying the request's id), `text`
 * (the same id as a string), `other` (another request's id), `sse` (the request's answer as an SSE event),
 * `big` (an id-less error padded past what the guard reads), `plain` (not JSON).
 */
describe('SessionGuard', () => {
  let server: Server;
  let url: string;
  const received: (string | undefined)[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const sid = req.headers['mcp-session-id'] as string | undefined;
        received.push(sid);
        const requestId = (JSON.parse(body || '{}') as { id?: unknown }).id ?? null;
        const [status, kind, word] = (sid ?? 'ok').split('-');
        const message =
          word === 'session' ? 'Bad Request: No valid session ID provided' : word === 'payment' ? 'payment provider session expired' : 'Parse error';
        const error = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } });
        const code = Number(status);
        if (!Number.isInteger(code)) {
          res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' }).end('{}');
          return;
        }
        if (kind === 'sse') res.writeHead(code, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${error(requestId)}\n\n`);
        else if (kind === 'plain') res.writeHead(code, { 'content-type': 'text/plain' }).end('Session not found');
        else {
          const id = kind === 'same' ? requestId : kind === 'text' ? String(requestId) : kind === 'other' ? 999 : null;
          const json = kind === 'big' ? `${error(id).slice(0, -1)},"pad":"${'x'.repeat(20_000)}"}` : error(id);
          res.writeHead(code, { 'content-type': 'application/json' }).end(json);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const send = (guard: SessionGuard, sid?: string, path = '/mcp') =>
    guard.fetch(`${url}${path}`, {
      method: 'POST',
      headers: sid ? { 'mcp-session-id': sid } : {},
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'pay' } }),
    });
  const endedBy = async (guard: SessionGuard, sid: string) => {
    const err = await send(guard, sid).then(
      () => undefined,
      (e: unknown) => e,
    );
    return err instanceof SessionEndedError ? err.status : undefined;
  };

  describe('when the server answers 404 with no answer to the request', () => {
    it('throws SessionEndedError(404) and never sends that session id again', async () => {
      const guard = new SessionGuard();
      assert.equal(await endedBy(guard, '404-none'), 404);
      assert.equal(guard.isDead('404-none'), true);
      const before = received.length;
      const refused = await send(guard, '404-none').catch((e: unknown) => e);
      assert.ok(refused instanceof SessionEndedError && refused.status === undefined, 'refused locally, with no status');
      assert.equal(received.length, before, 'nothing reached the server');
      assert.equal((await send(guard, 'alive')).status, 200, 'other sessions are not affected');
    });

    it('takes a plain-text 404 body as the session ending too', async () => {
      assert.equal(await endedBy(new SessionGuard(), '404-plain'), 404);
    });
  });

  describe('when the answer carries the request id, whatever the status', () => {
    for (const sid of ['404-same', '404-text', '404-sse', '400-same-session', '400-same-payment', '400-text-payment', '400-sse-payment']) {
      it(`hands ${sid} to the SDK as the request's answer and keeps the session`, async () => {
        const guard = new SessionGuard();
        const response = await send(guard, sid);
        assert.equal(response.status, Number(sid.slice(0, 3)));
        assert.match(await response.text(), /"id":"?2"?/, 'the body reaches the SDK whole');
        assert.equal(guard.isDead(sid), false);
      });
    }
  });

  describe('when the server answers 400', () => {
    it('ends the session only for an id-less error naming the session', async () => {
      const guard = new SessionGuard();
      assert.equal(await endedBy(guard, '400-none-session'), 400);
      assert.equal(await endedBy(guard, '400-none-payment'), 400, 'an id-less error naming some session counts, as server-everything words it');
      for (const sid of ['400-none-parse', '400-other-session', '400-plain-session', '400-big-session']) {
        assert.equal(await endedBy(guard, sid), undefined, sid);
        assert.equal(guard.isDead(sid), false, sid);
      }
    });
  });

  it('takes a 404 body too large to read whole as an answer (it may hold one)', async () => {
    const guard = new SessionGuard();
    assert.equal((await send(guard, '404-big')).status, 404);
    assert.equal(guard.isDead('404-big'), false);
  });

  it('does not take a 404 without a session id as a session ending', async () => {
    const guard = new SessionGuard();
    assert.equal((await send(guard, undefined, '/missing')).status, 404);
    assert.equal(guard.isDead(undefined), false);
  });
});

describe('mayResend', () => {
  it('allows a tools/call only when the caller proved it read-only', () => {
    assert.deepEqual([mayResend('tools/call', undefined), mayResend('tools/call', false), mayResend('tools/call', true)], [false, false, true]);
  });

  it('allows requests that change nothing upstream, and no method it does not know', () => {
    assert.deepEqual(
      ['tools/list', 'resources/read', 'prompts/get', 'ping'].map((m) => mayResend(m, undefined)),
      [true, true, true, true],
    );
    assert.deepEqual(
      ['tasks/cancel', 'initialize', 'x-vendor/charge', 'sampling/createMessage'].map((m) => mayResend(m, true)),
      [false, false, false, false],
    );
  });
});

describe('isSessionEnded', () => {
  it('is true for SessionEndedError and the SDK wrapping its text, false otherwise', () => {
    assert.equal(isSessionEnded(new SessionEndedError(404)), true);
    assert.equal(isSessionEnded(new Error(`Failed to reconnect: ${new SessionEndedError().message}`)), true);
    assert.equal(isSessionEnded(Object.assign(new Error('x'), { code: 404 })), false);
    assert.equal(isSessionEnded(new Error('fetch failed')), false);
  });
});
