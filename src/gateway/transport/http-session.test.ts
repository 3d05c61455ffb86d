import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isSessionEnded, SessionEndedError, SessionGuard } from './http-session.js';

/** A real HTTP server that answers by the session id it is sent, and counts what it receives. */
describe('SessionGuard', () => {
  let server: Server;
  let url: string;
  const received: (string | undefined)[] = [];
  before(async () => {
    server = createServer((req, res) => {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      received.push(sid);
      const json = (status: number, message: string) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
      if (sid === 'gone-404') json(404, 'Session not found');
      else if (sid === 'gone-400') json(400, 'Bad Request: No valid session ID provided');
      else if (sid === 'bad-400') json(400, 'Parse error');
      else if (sid === undefined && req.url === '/missing') json(404, 'no such endpoint');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const send = (guard: SessionGuard, sid?: string, path = '/mcp') =>
    guard.fetch(`${url}${path}`, { method: 'POST', headers: sid ? { 'mcp-session-id': sid } : {}, body: '{}' });

  describe('when the server answers 404 for a session', () => {
    it('never sends that session id again: the next request is refused before it leaves', async () => {
      const guard = new SessionGuard();
      assert.equal((await send(guard, 'gone-404')).status, 404);
      assert.equal(guard.isDead('gone-404'), true);
      const before = received.length;
      await assert.rejects(send(guard, 'gone-404'), SessionEndedError);
      assert.equal(received.length, before, 'nothing reached the server');
      assert.equal((await send(guard, 'alive')).status, 200, 'other sessions are not affected');
    });
  });

  describe('when the server answers 400', () => {
    it('takes an error naming the session as the session ended, and any other 400 as not', async () => {
      const guard = new SessionGuard();
      await send(guard, 'gone-400');
      await send(guard, 'bad-400');
      assert.deepEqual([guard.isDead('gone-400'), guard.isDead('bad-400')], [true, false]);
    });
  });

  it('does not take a 404 without a session id as a session ending', async () => {
    const guard = new SessionGuard();
    assert.equal((await send(guard, undefined, '/missing')).status, 404);
    assert.equal(guard.isDead(undefined), false);
  });

  describe('isSessionEnded', () => {
    it('is true for the local refusal and for a 404 or 400 of a dead session, false otherwise', async () => {
      const guard = new SessionGuard();
      await send(guard, 'gone-404');
      assert.equal(isSessionEnded(new SessionEndedError(), undefined, undefined), true);
      assert.equal(isSessionEnded(Object.assign(new Error('x'), { code: 404 }), guard, 'gone-404'), true);
      assert.equal(isSessionEnded(Object.assign(new Error('x'), { code: 404 }), guard, 'alive'), false);
      assert.equal(isSessionEnded(Object.assign(new Error('x'), { code: 500 }), guard, 'gone-404'), false);
      assert.equal(isSessionEnded(new Error('fetch failed'), guard, 'gone-404'), false);
    });
  });
});
