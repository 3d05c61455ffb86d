/**
 * Tracing must never change what a call does: with the OTLP receiver down (a closed port) or hanging
 * (accepts, never answers), and with hostile `_meta` trace context (huge, malformed, unicode, arrays and
 * objects instead of strings), a read still passes at once, a write is still held for a person (and
 * declined, nothing is written), and the gate keeps answering. Real gate, real filesystem server.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CallToolResultSchema, filesystemGate, startAgent, textOf, verdictOf } from './helpers.js';

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A port that accepts connections and never answers them (a hung receiver). */
async function hungReceiver(): Promise<string> {
  const s = createServer(() => {});
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as { port: number }).port}/v1/traces`;
}

const TP = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
const HOSTILE_META: unknown[] = [
  { traceparent: 'x'.repeat(1_000_000) },
  { traceparent: `${TP}-${'z'.repeat(500_000)}\n` },
  { traceparent: [TP], tracestate: { a: 1 } },
  { traceparent: { toString: 'x' }, tracestate: ['k=v'] },
  { traceparent: `\u202e${TP}\u0000`, tracestate: '\u{1F600}=\u0007' },
  { traceparent: TP, tracestate: Array.from({ length: 5000 }, (_, i) => `k${i}=v`).join(',') },
  { traceparent: 42, tracestate: null },
];
/** `_meta` that is not an object: the SDK would drop the request unanswered; the gate answers -32600. */
const NOT_OBJECT_META: unknown[] = [[TP], 'traceparent', 5];

describe('tracing with a receiver that is down or hangs, and hostile _meta trace context', () => {
  for (const [what, endpoint] of [
    ['down', async () => 'http://127.0.0.1:1/v1/traces'],
    ['hanging', hungReceiver],
  ] as const) {
    it(`a read passes and a write is still held (receiver ${what})`, { timeout: 180_000 }, async () => {
      const { data, config } = filesystemGate(`confirm:\n  timeout_seconds: 20\ntracing:\n  enabled: true\n  otlp_endpoint: ${await endpoint()}\n`, {
        'hello.txt': 'hello',
      });
      let asked = 0;
      const agent = await startAgent(config, () => {
        asked++;
        return { action: 'decline' };
      });
      try {
        for (const meta of HOSTILE_META) {
          const started = Date.now();
          const read = await agent.client.request(
            { method: 'tools/call', params: { name: 'read_text_file', arguments: { path: join(data, 'hello.txt') }, _meta: meta as never } },
            CallToolResultSchema,
          );
          assert.match(textOf(read as Record<string, unknown>), /hello/, JSON.stringify(meta).slice(0, 80));
          assert.ok(Date.now() - started < 5000, `a read took ${Date.now() - started} ms`);
        }
        for (const meta of NOT_OBJECT_META) {
          const started = Date.now();
          await assert.rejects(
            agent.client.request(
              { method: 'tools/call', params: { name: 'read_text_file', arguments: { path: join(data, 'hello.txt') }, _meta: meta as never } },
              CallToolResultSchema,
              { timeout: 10_000 },
            ),
            /-32600|Invalid Request/,
            JSON.stringify(meta),
          );
          assert.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
        }
        const before = asked;
        const write = await agent.client.request(
          {
            method: 'tools/call',
            params: { name: 'write_file', arguments: { path: join(data, 'new.txt'), content: 'x' }, _meta: HOSTILE_META[1] as Record<string, unknown> },
          },
          CallToolResultSchema,
        );
        assert.equal(asked, before + 1, 'the write was held for a person');
        assert.notEqual(verdictOf(write as Record<string, unknown>)?.outcome, 'executed');
        assert.equal(existsSync(join(data, 'new.txt')), false, 'nothing was written');
      } finally {
        const stopping = Date.now();
        await agent.close();
        assert.ok(Date.now() - stopping < 15_000, 'the gate stops although its receiver is gone');
      }
    });
  }
});
