/**
 * The webhook decision listener shares the gate's listener limits: while an attacker holds many idle
 * connections to it (reopening each one the gate closes), a receiver's decision still lands; a body larger
 * than a decision may be is refused with 413 from its Content-Length, before it is read.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { WebhookPreview } from '../src/confirm/channels/webhook.js';
import { FS_SERVER, NODE, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

const SECRET = 'l1stener-'.repeat(5);

describe('webhook decision listener', () => {
  it('takes a decision while idle connections flood it, and refuses an oversized body with 413', async () => {
    const previews: WebhookPreview[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        previews.push(JSON.parse(body) as WebhookPreview);
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(dir, 'webhook.secret'), `${SECRET}\n`);
    const config = writeConfig(
      dir,
      `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 20\n  elicitation: false\n  webhook:\n    url: http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook\n    allow_insecure_loopback: true\n    secret_file: webhook.secret\n    listen_port: 0\n`,
    );
    const agent = await startAgent(config);
    const path = join(data, 'flood.txt');
    const result = agent.call('write_file', { path, content: 'x' });
    assert.ok(await waitFor(() => previews.length > 0, 10_000), 'no preview reached the receiver');
    const p = previews[0]!;
    const url = new URL(p.decision_url);
    let active = true;
    const sockets = new Set<Socket>();
    let closedByGate = 0;
    const open = () => {
      if (!active) return;
      const s = connect({ port: Number(url.port), host: '127.0.0.1' });
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        if (!active) return;
        closedByGate++;
        setTimeout(open, 100);
      });
    };
    try {
      for (let i = 0; i < 400; i++) open();
      const big = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: url.port,
            method: 'POST',
            path: url.pathname,
            headers: { 'content-type': 'application/json', 'content-length': '1048576' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(big, 413);
      const res = await fetch(p.decision_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve', actor: 'oncall', args_sha256: p.args_sha256, token: p.token }),
      });
      assert.equal(res.status, 200, await res.text());
      assert.equal(verdictOf(await result)?.outcome, 'executed');
      assert.ok(closedByGate > 0, 'the gate closed idle connections to make room');
    } finally {
      active = false;
      for (const s of sockets) s.destroy();
      await agent.close();
      await new Promise((r) => receiver.close(r));
    }
  });
});
