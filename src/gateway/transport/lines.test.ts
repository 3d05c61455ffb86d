import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isJsonRpcMessage, LineReader } from './lines.js';

function read(chunks: Buffer[], maxBytes?: number) {
  const messages: unknown[] = [];
  const errors: string[] = [];
  const r = new LineReader(
    (m) => messages.push(m),
    (e) => errors.push(e.message),
    maxBytes,
  );
  for (const c of chunks) r.push(c);
  return { messages, errors };
}

const msg = (id: number, text: string) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

describe('line framing', () => {
  it('yields the same messages however the bytes are chunked, multi-byte characters included (property)', () => {
    const stream = Buffer.from([msg(1, 'héllo 😀'), msg(2, 'x'.repeat(300)), msg(3, '')].map((m) => `${JSON.stringify(m)}\n`).join(''));
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 20 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const chunks = points.slice(1).map((end, i) => stream.subarray(points[i], end));
        assert.deepEqual(read(chunks).messages, [msg(1, 'héllo 😀'), msg(2, 'x'.repeat(300)), msg(3, '')]);
      }),
    );
  });

  it('strips one trailing CR and skips empty lines', () => {
    const { messages, errors } = read([Buffer.from(`\r\n${JSON.stringify(msg(1, 'a'))}\r\n\n`)]);
    assert.deepEqual(messages, [msg(1, 'a')]);
    assert.deepEqual(errors, []);
  });

  it('reports and drops noise, including a JSON array that is not a message', () => {
    const { messages, errors } = read([Buffer.from(`Server v1.2.3\n[1,2,3]\n${JSON.stringify(msg(1, 'a'))}\n`)]);
    assert.deepEqual(messages, [msg(1, 'a')]);
    assert.equal(errors.length, 2);
  });

  it('drops an oversized line with bounded memory and reads the next one', () => {
    const big = Buffer.from(`${JSON.stringify(msg(1, 'y'.repeat(5000)))}\n`);
    const chunks = [big.subarray(0, 1000), big.subarray(1000, 3000), big.subarray(3000), Buffer.from(`${JSON.stringify(msg(2, 'ok'))}\n`)];
    const { messages, errors } = read(chunks, 2048);
    assert.deepEqual(messages, [msg(2, 'ok')]);
    assert.match(errors[0]!, /exceeded the 2048-byte limit/);
  });
});

describe('JSON-RPC envelope check', () => {
  it('accepts requests, notifications, results and errors', () => {
    for (const m of [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'x' } },
    ]) {
      assert.equal(isJsonRpcMessage(m), true, JSON.stringify(m));
    }
  });
  it('rejects everything else', () => {
    for (const m of [
      null,
      [],
      { id: 1, method: 'x' },
      { jsonrpc: '1.0', id: 1, method: 'x' },
      { jsonrpc: '2.0', id: 1, method: 'x', params: [1] },
      { jsonrpc: '2.0', id: null, method: 'x' },
      { jsonrpc: '2.0', id: {}, result: {} },
      { jsonrpc: '2.0', id: 1, result: 'x' },
      { jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'y' } },
      { jsonrpc: '2.0', id: 1 },
    ]) {
      assert.equal(isJsonRpcMessage(m), false, JSON.stringify(m));
    }
  });
});

describe('when a request carries a _meta that the SDK would drop without an answer', () => {
  it('is not a JSON-RPC request here, so it is answered with -32600', () => {
    for (const meta of [['x'], 'str', 5, null, { progressToken: 1.5 }, { progressToken: {} }])
      assert.equal(isJsonRpcMessage({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', _meta: meta } }), false, JSON.stringify(meta));
    for (const meta of [{}, { progressToken: 'p' }, { progressToken: 3 }, { traceparent: ['x'] }])
      assert.equal(isJsonRpcMessage({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', _meta: meta } }), true, JSON.stringify(meta));
  });
});
