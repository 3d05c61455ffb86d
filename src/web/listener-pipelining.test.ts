import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { close, listen } from './http.js';
import { createListener, type ListenerLimits, type PrincipalOf } from './listener.js';

const servers: ReturnType<typeof createListener>[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await close(s);
});

async function start(limits: Partial<ListenerLimits>, handler: Parameters<typeof createListener>[0], principalOf?: PrincipalOf): Promise<number> {
  const server = createListener(handler, limits, principalOf);
  servers.push(server);
  return listen(server, '127.0.0.1', 0, 'test listener', 'test.port');
}

function socket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
}

const closed = (s: Socket) => (s.destroyed ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r())));
const until = async (f: () => boolean) => {
  while (!f()) await new Promise((r) => setTimeout(r, 5));
};

function get(port: number, path = '/', headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

const pipelined = (path: string, n: number) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(n);

describe('listener under pipelining', () => {
  it('hands a connection its pipelined requests one at a time, in order', async () => {
    let open = 0;
    let most = 0;
    const port = await start({}, (req, res) => {
      open++;
      most = Math.max(most, open);
      setTimeout(() => {
        open--;
        res.end(req.url);
      }, 5);
    });
    const s = await socket(port);
    let text = '';
    s.on('data', (d) => (text += d));
    s.write(['/p1', '/p2', '/p3', '/p4'].map((p) => pipelined(p, 1)).join(''));
    await until(() => (text.match(/HTTP\/1\.1 200/g) ?? []).length === 4);
    s.destroy();
    assert.equal(most, 1, 'never two requests of one connection in progress');
    assert.deepEqual(text.match(/\/p\d/g), ['/p1', '/p2', '/p3', '/p4']);
  });

  it('closes a connection that pipelines more requests than it may behind one in progress', async () => {
    const port = await start({ maxPipelined: 3 }, () => {});
    const s = await socket(port);
    s.on('error', () => {});
    s.write(pipelined('/', 10));
    await closed(s);
    assert.ok(s.destroyed);
  });

  it('gives back every slot when a client that never read its answers closes', async () => {
    const big = 'x'.repeat(256 * 1024);
    const port = await start({ maxBusyPerAddress: 2 }, (req, res) => {
      if (req.url === '/hold') return;
      res.end(req.url === '/big' ? big : 'ok');
    });
    const flood = [await socket(port), await socket(port)];
    for (const s of flood) {
      s.on('error', () => {});
      s.pause();
      s.write(pipelined('/big', 200));
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await get(port), { status: 200, body: 'ok' }, 'served while the flood is queued');
    for (const s of flood) s.destroy();
    await Promise.all(flood.map(closed));
    const holders = [await socket(port), await socket(port)];
    for (const s of holders) s.write(pipelined('/hold', 1));
    const third = await get(port);
    assert.equal(third.status, 503, 'the cap is counted from the two held requests alone, not leaked slots');
    for (const s of holders) s.destroy();
    await Promise.all(holders.map(closed));
    assert.deepEqual(await get(port), { status: 200, body: 'ok' }, 'their slots came back when they closed');
  });
});

describe('listener with principals', () => {
  it('answers a principal over its own cap 503, and serves another principal and the unauthenticated on the same address', async () => {
    const held: (() => void)[] = [];
    const port = await start(
      { maxBusyPerPrincipal: 2, maxBusyPerAddress: 2 },
      (req, res) => {
        if (req.url === '/hold') held.push(() => res.end('late'));
        else res.end('ok');
      },
      (req) => (typeof req.headers['x-who'] === 'string' ? req.headers['x-who'] : undefined),
    );
    const a = [get(port, '/hold', { 'x-who': 'a' }), get(port, '/hold', { 'x-who': 'a' })];
    await until(() => held.length === 2);
    const over = await get(port, '/', { 'x-who': 'a' });
    assert.equal(over.status, 503);
    assert.match(over.body, /too many requests in progress with your credentials \(2\)/);
    assert.deepEqual(await get(port, '/', { 'x-who': 'b' }), { status: 200, body: 'ok' });
    assert.deepEqual(await get(port, '/'), { status: 200, body: 'ok' });
    for (const h of held) h();
    assert.deepEqual(
      (await Promise.all(a)).map((r) => r.status),
      [200, 200],
    );
  });

  it('closes idle connections that never authenticated before a kept-alive authenticated one', async () => {
    const port = await start(
      { headersTimeoutMs: 60_000, keepAliveTimeoutMs: 60_000, maxIdle: 4, maxIdlePerAddress: 4 },
      (_req, res) => res.end('ok'),
      (req) => (req.headers['x-who'] === 'a' ? 'a' : undefined),
    );
    const kept = await socket(port);
    const answered = new Promise<void>((r) => kept.once('data', () => r()));
    kept.write('GET / HTTP/1.1\r\nHost: x\r\nX-Who: a\r\n\r\n');
    await answered;
    const silent: Socket[] = [];
    for (let i = 0; i < 6; i++) silent.push(await socket(port));
    for (const s of silent) s.on('error', () => {});
    await Promise.all(silent.slice(0, 3).map(closed));
    assert.equal(kept.destroyed, false, "the client's kept-alive socket outlives newer silent ones");
    const again = new Promise<string>((r) => kept.once('data', (d) => r(String(d))));
    kept.write('GET / HTTP/1.1\r\nHost: x\r\nX-Who: a\r\n\r\n');
    assert.match(await again, /^HTTP\/1\.1 200/);
    for (const s of [kept, ...silent]) s.destroy();
  });
});

describe('listener with output nobody reads', () => {
  it('closes the connection once its output stops moving, and leaves one waiting for its answer alone', async () => {
    let answer: (() => void) | undefined;
    let unread: Promise<void> | undefined;
    const port = await start({ drainTimeoutMs: 200 }, (req, res) => {
      if (req.url === '/wait') answer = () => res.end('decided');
      else {
        // Seen from the gate's side: a paused client never sees its own socket end.
        unread = new Promise<void>((r) => req.socket.once('close', () => r()));
        res.end('y'.repeat(16 * 1024 * 1024));
      }
    });
    const reader = await socket(port);
    reader.on('error', () => {});
    reader.pause();
    reader.write(pipelined('/big', 1));
    const waiting = get(port, '/wait');
    await until(() => answer !== undefined && unread !== undefined);
    await unread;
    answer!();
    assert.deepEqual(await waiting, { status: 200, body: 'decided' });
    reader.destroy();
  });
});
