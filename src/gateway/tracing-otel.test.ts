import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, describe, it } from 'node:test';
import { noTracer } from './tracing.js';
import { createOtelTracer } from './tracing-otel.js';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  status?: { code?: number };
}

describe('the OpenTelemetry tracer', async () => {
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const doc = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
      for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/traces`;
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('starts a trace of its own for a malformed traceparent, and never throws for it', async () => {
    const tracer = await createOtelTracer({ endpoint: url, serviceName: 't', version: '0' });
    for (const meta of [{ traceparent: 'not-a-traceparent' }, { traceparent: `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01` }, { traceparent: 42 }, 'x', null]) {
      tracer.startCall(meta, 'echo')?.end('read');
    }
    await tracer.close();
    assert.equal(spans.length, 5);
    for (const s of spans) {
      assert.equal(s.parentSpanId || undefined, undefined, JSON.stringify(s));
      assert.notEqual(s.traceId, '0'.repeat(32));
    }
  });

  it("marks a child span whose step threw, and passes the step's error on unchanged", async () => {
    spans.length = 0;
    const tracer = await createOtelTracer({ endpoint: url, serviceName: 't', version: '0' });
    const call = tracer.startCall({ traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` }, 'write');
    assert.ok(call);
    const boom = new Error('upstream gone');
    await assert.rejects(
      call.child('forward', () => Promise.reject(boom)),
      (err) => err === boom,
    );
    assert.equal(await call.child('read-back', async () => 7), 7);
    call.end('executed');
    call.end('denied'); // only the first end counts
    await tracer.close();
    const byName = new Map(spans.map((s) => [s.name, s]));
    assert.equal(byName.get('forward')?.status?.code, 2, 'ERROR');
    assert.equal(byName.get('read-back')?.parentSpanId, byName.get('tools/call write')?.spanId);
    assert.equal(byName.get('tools/call write')?.parentSpanId, 'b'.repeat(16));
    assert.equal(spans.length, 3);
  });

  it("gives each step the child span's trace context to send upstream, the client's tracestate kept", async () => {
    spans.length = 0;
    const tracer = await createOtelTracer({ endpoint: url, serviceName: 't', version: '0' });
    const call = tracer.startCall({ traceparent: `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`, tracestate: 'vendor=1' }, 'write');
    assert.ok(call);
    const seen = await call.child('forward', async (trace) => trace);
    call.end('executed');
    await tracer.close();
    const forward = spans.find((s) => s.name === 'forward');
    assert.ok(forward);
    assert.deepEqual(seen, { traceparent: `00-${'c'.repeat(32)}-${forward.spanId}-01`, tracestate: 'vendor=1' });
  });

  it("sends upstream only a client tracestate's valid members, at most 32, whatever the client sent", async () => {
    spans.length = 0;
    const tracer = await createOtelTracer({ endpoint: url, serviceName: 't', version: '0' });
    const traceparent = `00-${'e'.repeat(32)}-${'f'.repeat(16)}-01`;
    const states = ['a=1,'.repeat(100_000), 'bad key=1,ok=2,x=\n\r', Array.from({ length: 40 }, (_, i) => `k${i}=v`).join(',')];
    const seen = [];
    for (const tracestate of states) {
      const call = tracer.startCall({ traceparent, tracestate }, 'write');
      assert.ok(call);
      seen.push(await call.child('forward', async (trace) => trace?.tracestate));
      call.end('executed');
    }
    await tracer.close();
    assert.equal(seen[0], 'a=1');
    assert.equal(seen[1], 'ok=2');
    assert.equal(seen[2]?.split(',').length, 32);
  });

  it('is off by default: no span, nothing loaded', async () => {
    assert.equal(noTracer.enabled, false);
    assert.equal(noTracer.startCall({ traceparent: 'x' }, 'echo'), undefined);
    await noTracer.close();
  });
});
