/**
 * One connection to a Streamable HTTP upstream carries every call of every client: it must not pile up
 * abort listeners. The SDK transport gives all its requests one long-lived AbortSignal, and fetch adds a
 * listener to it per request that it drops only when the request is garbage-collected; the gate's fetch
 * (gateway/transport/http-session.ts) gives each request a signal of its own, all aborted by one listener
 * on the shared signal and forgotten when they settle, and raw reads (gateway/transport/http-post.ts) put
 * none on it. Thousands of calls, 50 at a time, on both paths, through one upstream connection: the
 * connection's signal keeps one listener, and no MaxListenersExceededWarning is emitted.
 * The upstream is a real SDK server process (test/fixtures/session-http-server.mjs).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { UpstreamConfig } from '../src/config/load.js';
import { type RawReply, Upstream } from '../src/gateway/upstream.js';
import { NODE, ROOT } from './helpers.js';

const CALLS = 2000;
const CONCURRENCY = 50;

describe('one HTTP upstream connection under thousands of calls', () => {
  let server: ChildProcess;
  let url: string;
  const warnings: Error[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'MaxListenersExceededWarning') warnings.push(w);
  };
  before(async () => {
    process.on('warning', onWarning);
    server = spawn(NODE, [join(ROOT, 'test/fixtures/session-http-server.mjs'), '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server.once('exit', (code) => reject(new Error(`the server exited (${code}): ${out}`)));
    });
  });
  after(() => {
    process.off('warning', onWarning);
    server.kill('SIGTERM');
  });

  /** Runs `CALLS` calls, `CONCURRENCY` at a time; returns the most abort listeners seen on `signal` meanwhile. */
  async function run(signal: AbortSignal, call: (i: number) => Promise<void>): Promise<number> {
    let most = 0;
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        await call(i);
        most = Math.max(most, getEventListeners(signal, 'abort').length);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return most;
  }

  it('keeps the listeners on the connection signal bounded on the SDK path and the raw path, and warns of nothing', async () => {
    const config: UpstreamConfig = { kind: 'http', name: 'up', url, headers: {}, timeoutMs: 30_000 };
    const logs: string[] = [];
    const upstream = new Upstream(config, { notification: () => {}, log: (m) => logs.push(m) });
    try {
      const client: Client = await upstream.connect();
      const signal = (client.transport as unknown as { _abortController: AbortController })._abortController.signal;
      assert.ok(signal instanceof AbortSignal, 'the SDK transport still shares one AbortController across its requests');

      const sdkMost = await run(signal, async (i) => {
        const r = await upstream.request('tools/call', { name: 'echo', arguments: { i } });
        assert.equal((r.content as { text: string }[])[0]!.text, JSON.stringify({ i }));
      });
      const rawMost = await run(
        signal,
        (i) =>
          new Promise<void>((resolve, reject) => {
            const sent = upstream.sendRaw(
              'tools/call',
              { name: 'echo', arguments: { i } },
              (reply: RawReply) => {
                if (reply.kind === 'failed') return reject(reply.error);
                const result = reply.message.result as { content: { text: string }[] };
                assert.equal(result.content[0]!.text, JSON.stringify({ i }));
                resolve();
              },
              { readOnly: true },
            );
            if (sent === undefined) reject(new Error('not connected'));
          }),
      );
      await new Promise((r) => setImmediate(r));
      const left = getEventListeners(signal, 'abort').length;
      assert.ok(sdkMost <= 1, `SDK path: one listener on the signal, whatever the calls in flight (saw ${sdkMost})`);
      assert.ok(rawMost <= 1, `raw path: the raw POSTs add none (saw ${rawMost})`);
      assert.ok(left <= 1, `after the calls, still one (saw ${left})`);
      assert.deepEqual(
        warnings.map((w) => w.message),
        [],
      );
      assert.deepEqual(
        logs.filter((l) => !/connection closed/.test(l)),
        [],
      );
    } finally {
      await upstream.close();
    }
  });
});
