import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { ByteBudget, readBounded } from './budget.js';
import { close, listen, readBody } from './http.js';
import { createListener, type ListenerLimits } from './listener.js';

const servers: ReturnType<typeof createListener>[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await close(s);
});

/** A listener that answers `ok`, or runs `handler`. */
async function start(limits: Partial<ListenerLimits>, handler?: Parameters<typeof createListener>[0]): Promise<number> {
  const server = createListener(handler ?? ((_req, res) => res.end('ok')), limits);
  servers.push(server);
  return listen(server, '127.0.0.1', 0, 'test listener', 'test.port');
}

function idleSocket(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(s));
    s.on('error', reject);
  });
}

const closed = (s: Socket) => (s.destroyed || s.readyState === 'closed' ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r())));

function get(port: number, headers: Record<string, string> = {}, body?: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: '/', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('shared listener', () => {
  describe('when a connection sends nothing', () => {
    it('closes it once the headers time out', async () => {
      const port = await start({ headersTimeoutMs: 150 });
      const s = await idleSocket(port);
      s.on('error', () => {});
      await closed(s);
      assert.ok(s.destroyed);
    });
  });

  describe('when a connection trickles its headers', () => {
    it('closes it once the headers time out', async () => {
      const port = await start({ headersTimeoutMs: 150 });
      const s = await idleSocket(port);
      s.on('error', () => {});
      s.write('GET / HTTP/1.1\r\nHost: x\r\n');
      const timer = setInterval(() => !s.destroyed && s.write('X-Slow: 1\r\n'), 20);
      await closed(s);
      clearInterval(timer);
      assert.ok(s.destroyed);
    });
  });

  describe('when idle connections pass the cap', () => {
    it('closes the oldest idle ones and still serves a real client', async () => {
      // Long timeouts: only the cap can close them here.
      const port = await start({ headersTimeoutMs: 60_000, maxIdle: 8, maxIdlePerAddress: 8 });
      const idle: Socket[] = [];
      for (let i = 0; i < 20; i++) idle.push(await idleSocket(port));
      for (const s of idle) s.on('error', () => {});
      await Promise.all(idle.slice(0, 12).map(closed));
      assert.ok(
        idle.slice(12).every((s) => !s.destroyed),
        'the newest idle ones are kept',
      );
      assert.deepEqual(await get(port), { status: 200, body: 'ok' });
      for (const s of idle) s.destroy();
    });

    it('does not spare kept-alive connections: a newcomer is served and the longest idle one closes', async () => {
      const port = await start({ headersTimeoutMs: 60_000, keepAliveTimeoutMs: 60_000, maxIdle: 4, maxIdlePerAddress: 4 });
      const kept: Socket[] = [];
      for (let i = 0; i < 4; i++) {
        const s = await idleSocket(port);
        s.on('error', () => {});
        const answered = new Promise<void>((r) => s.once('data', () => r()));
        s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        await answered;
        kept.push(s);
      }
      const newcomer = await idleSocket(port);
      newcomer.on('error', () => {});
      const reply = new Promise<string>((r) => newcomer.once('data', (d) => r(String(d))));
      newcomer.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.match(await reply, /^HTTP\/1\.1 200/);
      await closed(kept[0]!);
      assert.equal(kept[3]!.destroyed, false);
      for (const s of [...kept, newcomer]) s.destroy();
    });

    it('closes the oldest idle connection of the same address first', async () => {
      const port = await start({ headersTimeoutMs: 60_000, maxIdle: 100, maxIdlePerAddress: 4 });
      const other = await idleSocket(port, '127.0.0.2');
      other.on('error', () => {});
      const mine: Socket[] = [];
      for (let i = 0; i < 6; i++) mine.push(await idleSocket(port, '127.0.0.3'));
      for (const s of mine) s.on('error', () => {});
      await Promise.all(mine.slice(0, 2).map(closed));
      assert.equal(other.destroyed, false, "another address's idle connection is not touched");
      for (const s of [other, ...mine]) s.destroy();
    });
  });

  describe('when one address has too many requests in progress', () => {
    it('answers 503 with what to do', async () => {
      const waiting: (() => void)[] = [];
      const port = await start({ maxBusyPerAddress: 2 }, (_req, res) => {
        waiting.push(() => res.end('late'));
      });
      const first = [get(port), get(port)];
      while (waiting.length < 2) await new Promise((r) => setTimeout(r, 10));
      const third = await get(port);
      assert.equal(third.status, 503);
      assert.match(third.body, /too many requests in progress from your address \(2\)/);
      for (const w of waiting) w();
      assert.deepEqual(
        (await Promise.all(first)).map((r) => r.status),
        [200, 200],
      );
    });
  });
});

describe('when one address holds requests whose bodies trickle in', () => {
  it('closes the oldest slow sender to serve a newcomer', async () => {
    let seen = 0;
    const port = await start({ maxBusyPerAddress: 2 }, (req, res) => {
      seen++;
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const slow: Socket[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await idleSocket(port);
      s.on('error', () => {});
      s.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc');
      slow.push(s);
    }
    while (seen < 2) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(await get(port, {}, 'full body', 'POST'), { status: 200, body: 'ok' });
    await closed(slow[0]!);
    assert.equal(slow[1]!.destroyed, false);
    for (const s of slow) s.destroy();
  });
});

describe('request bodies', () => {
  describe('when one body is larger than its bound', () => {
    it('answers 413 from the Content-Length, before reading it', async () => {
      const port = await start({}, async (req, res) => {
        const text = await readBody(req);
        res.statusCode = text === undefined ? 413 : 200;
        res.end();
      });
      const r = await get(port, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) }, undefined, 'POST').catch(() => ({
        status: 413,
        body: '',
      }));
      assert.equal(r.status, 413);
      assert.equal((await get(port, { 'content-type': 'application/json' }, '{}', 'POST')).status, 200);
    });
  });

  describe('when the budget shared by all requests is spent', () => {
    it('answers 503, and takes bodies again once earlier responses closed', async () => {
      const budget = new ByteBudget(1000, 1000);
      const held: (() => void)[] = [];
      const port = await start({}, async (req, res) => {
        const r = await readBounded(req, res, 800, budget);
        if (!r.ok) {
          res.writeHead(r.status);
          res.end(r.message);
          return;
        }
        held.push(() => res.end('ok'));
      });
      const first = get(port, {}, 'x'.repeat(700), 'POST');
      while (held.length < 1) await new Promise((r) => setTimeout(r, 10));
      const second = await get(port, {}, 'y'.repeat(700), 'POST');
      assert.equal(second.status, 503);
      assert.match(second.body, /holding as many request bytes as it may \(1000 bytes/);
      const chunked = await get(port, { 'transfer-encoding': 'chunked' }, 'z'.repeat(400), 'POST').catch(() => ({ status: 503, body: '' }));
      assert.equal(chunked.status, 503, 'a body without Content-Length is counted as it arrives');
      held.shift()!();
      assert.equal((await first).status, 200);
      assert.equal(budget.usedBytes, 0, 'the bytes are given back when the response closes');
      const third = get(port, {}, 'w'.repeat(700), 'POST');
      while (held.length < 1) await new Promise((r) => setTimeout(r, 10));
      held.shift()!();
      assert.equal((await third).status, 200);
    });
  });

  describe('when one owner holds its share of the budget', () => {
    it('answers that owner 503 while another owner is still served', async () => {
      const budget = new ByteBudget(1000, 600);
      const held: (() => void)[] = [];
      const port = await start({}, async (req, res) => {
        const r = await readBounded(req, res, 800, budget, String(req.headers['x-owner']));
        if (!r.ok) {
          res.writeHead(r.status);
          res.end(r.message);
          return;
        }
        held.push(() => res.end('ok'));
      });
      const first = get(port, { 'x-owner': 'a' }, 'x'.repeat(500), 'POST');
      while (held.length < 1) await new Promise((r) => setTimeout(r, 10));
      const again = await get(port, { 'x-owner': 'a' }, 'y'.repeat(200), 'POST');
      assert.equal(again.status, 503);
      assert.match(again.body, /your requests in progress already hold 600 bytes, the most one client may/);
      const other = get(port, { 'x-owner': 'b' }, 'z'.repeat(400), 'POST');
      while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
      for (const h of held.splice(0)) h();
      assert.deepEqual(
        (await Promise.all([first, other])).map((r) => r.status),
        [200, 200],
      );
      assert.equal(budget.usedBytes, 0);
    });
  });
});
