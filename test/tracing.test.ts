/**
 * OpenTelemetry traces of a real gate (dist/, stdio) in front of the real filesystem server, sent to a
 * real OTLP/HTTP receiver: a small HTTP server in this test that takes the exporter's JSON POSTs to
 * /v1/traces. A call whose `_meta` carries a W3C `traceparent` gets a span in the client's trace whose
 * parent is the client's span, with the steps (classify, hold, forward, read-back) as its children; a
 * call without one starts a trace of its own; no argument reaches a span.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { ResultSchema } from '@modelcontextprotocol/core';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { FAKE_UPSTREAM, filesystemGate, MAIN, NODE, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

/** OTLP/JSON carries ids as hex (the spec); a base64 id from an older encoder is turned into hex too. */
function hexId(id: unknown): string {
  if (typeof id !== 'string' || id === '') return '';
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

/** A receiver of OTLP/HTTP JSON trace exports: every span it was sent, and the resources they came with. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: Span[]; resources: unknown[]; contentTypes: string[] }> {
  const spans: Span[] = [];
  const resources: unknown[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const doc = JSON.parse(body) as { resourceSpans: { resource: unknown; scopeSpans: { spans: Span[] }[] }[] };
      for (const rs of doc.resourceSpans) {
        resources.push(rs.resource);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) spans.push({ ...s, traceId: hexId(s.traceId), spanId: hexId(s.spanId), parentSpanId: hexId(s.parentSpanId) || undefined });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://127.0.0.1:${port}/v1/traces`, spans, resources, contentTypes };
}

describe('tracing: spans of each tools/call to an OTLP/HTTP receiver', async () => {
  const receiver = await startReceiver();
  after(() => new Promise<void>((r) => receiver.server.close(() => r())));

  it("makes the gate's span a child of the client's traceparent, with the steps as its children", async () => {
    const { data, config } = filesystemGate(
      `confirm:\n  timeout_seconds: 20\ntracing:\n  enabled: true\n  otlp_endpoint: ${receiver.url}\n  service_name: gate-under-test\n`,
      { 'hello.txt': 'hello' },
    );
    const agent = await startAgent(config, () => ({ action: 'accept', content: { approve: true } }));
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const readTrace = randomBytes(16).toString('hex');
    const readSpan = randomBytes(8).toString('hex');
    try {
      assert.match(agent.stderr(), /tracing: spans of each tools\/call go to http:\/\/127\.0\.0\.1:\d+\/v1\/traces/);
      const write = await agent.client.request(
        {
          method: 'tools/call',
          params: {
            name: 'write_file',
            arguments: { path: join(data, 'traced.txt'), content: 'secret-content-42' },
            _meta: { traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=abc' },
          },
        },
        CallToolResultSchema,
      );
      assert.equal(verdictOf(write as Record<string, unknown>)?.outcome, 'executed');
      // A read with a trace context leaves the fast path for the SDK path, where its span is made.
      await agent.client.request(
        {
          method: 'tools/call',
          params: { name: 'read_text_file', arguments: { path: join(data, 'hello.txt') }, _meta: { traceparent: `00-${readTrace}-${readSpan}-01` } },
        },
        CallToolResultSchema,
      );
      // No trace context: a trace of its own.
      await agent.client.request({ method: 'tools/call', params: { name: 'list_allowed_directories', arguments: {} } }, CallToolResultSchema);
    } finally {
      // Stopping the gate sends what is still buffered.
      await agent.close();
    }
    const stderrText = agent.stderr();
    assert.ok(
      await waitFor(() => receiver.spans.filter((s) => s.name.startsWith('tools/call')).length >= 3, 10_000),
      `three call spans arrive: ${JSON.stringify(receiver.spans.map((s) => s.name))} ${stderrText}`,
    );
    assert.match(receiver.contentTypes[0] ?? '', /^application\/json/);

    const call = receiver.spans.find((s) => s.name === 'tools/call write_file');
    assert.ok(call, JSON.stringify(receiver.spans.map((s) => s.name)));
    assert.equal(call.traceId, traceId, 'the trace is the client one');
    assert.equal(call.parentSpanId, clientSpan, 'the parent is the client span');
    assert.equal(call.kind, 2, 'SERVER');
    const attr = (s: Span, key: string) => s.attributes?.find((a) => a.key === key)?.value;
    assert.deepEqual(attr(call, 'gen_ai.tool.name'), { stringValue: 'write_file' });
    assert.deepEqual(attr(call, 'lookfirst.outcome'), { stringValue: 'executed' });
    assert.deepEqual(attr(call, 'lookfirst.upstream'), { stringValue: 'files' });
    const children = receiver.spans.filter((s) => s.parentSpanId === call.spanId);
    assert.deepEqual(children.map((s) => s.name).sort(), ['classify', 'forward', 'hold', 'read-back']);
    for (const c of children) assert.equal(c.traceId, traceId);

    const read = receiver.spans.find((s) => s.name === 'tools/call read_text_file');
    assert.ok(read);
    assert.equal(read.traceId, readTrace);
    assert.equal(read.parentSpanId, readSpan);
    assert.deepEqual(attr(read, 'lookfirst.outcome'), { stringValue: 'read' });
    assert.deepEqual(
      receiver.spans
        .filter((s) => s.parentSpanId === read.spanId)
        .map((s) => s.name)
        .sort(),
      ['classify', 'forward'],
    );

    const own = receiver.spans.find((s) => s.name === 'tools/call list_allowed_directories');
    assert.ok(own);
    assert.equal(own.parentSpanId, undefined, 'no trace context: a root span');
    assert.ok(own.traceId !== traceId && own.traceId !== readTrace && /^[0-9a-f]{32}$/.test(own.traceId));

    assert.match(JSON.stringify(receiver.resources), /"service\.name","value":\{"stringValue":"gate-under-test"\}/);
    assert.doesNotMatch(JSON.stringify(receiver.spans), /secret-content-42|traced\.txt/, 'no argument reaches a span');
  });

  it("sends the gate's forward span upstream in _meta, so the upstream's spans join the client's trace under it", async () => {
    const dir = tmp();
    const events = join(dir, 'events.jsonl');
    const config = writeConfig(
      dir,
      `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--events', events, '--side-effects', join(dir, 'notes.jsonl')])}\nconfirm:\n  timeout_seconds: 20\ntracing:\n  enabled: true\n  otlp_endpoint: ${receiver.url}\n`,
    );
    const agent = await startAgent(config, () => ({ action: 'accept', content: { approve: true } }));
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const meta = { traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=abc', 'vendor.example/x': 1 };
    try {
      await agent.client.request({ method: 'tools/call', params: { name: 'echo', arguments: { a: 1 }, _meta: meta } }, CallToolResultSchema);
      await agent.client.request({ method: 'tools/call', params: { name: 'write_note', arguments: { text: 'n' }, _meta: meta } }, CallToolResultSchema);
    } finally {
      await agent.close();
    }
    assert.ok(
      await waitFor(() => receiver.spans.filter((s) => s.traceId === traceId && s.name === 'forward').length >= 2, 10_000),
      'both forward spans arrive',
    );
    const calls = readFileSync(events, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { method: string; params?: { name?: string; _meta?: Record<string, unknown> } })
      .filter((e) => e.method === 'tools/call' && (e.params?.name === 'echo' || e.params?.name === 'write_note'));
    assert.deepEqual(
      calls.map((c) => c.params?.name),
      ['echo', 'write_note'],
    );
    for (const c of calls) {
      const name = c.params?.name;
      const sent = c.params?._meta ?? {};
      const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(sent.traceparent));
      assert.ok(m, `${name}: ${JSON.stringify(sent)}`);
      assert.equal(m[1], traceId, `${name}: the client's trace`);
      const forward = receiver.spans.find((s) => s.spanId === m[2]);
      assert.equal(forward?.name, 'forward', `${name}: the parent named upstream is the gate's forward span`);
      const callSpan = receiver.spans.find((s) => s.spanId === forward?.parentSpanId);
      assert.equal(callSpan?.name, `tools/call ${name}`);
      assert.equal(callSpan?.parentSpanId, clientSpan);
      assert.equal(sent.tracestate, 'vendor=abc', `${name}: the client's tracestate travels on`);
    }
    // A read goes with the client's params (its other _meta keys too); a write goes with its name and arguments only.
    assert.equal(calls[0]?.params?._meta?.['vendor.example/x'], 1);
  });

  it('follows the trace context a 2026-07-28 client sends in its request _meta', async () => {
    const { data, config } = filesystemGate(`tracing:\n  enabled: true\n  otlp_endpoint: ${receiver.url}\n`, { 'modern.txt': 'hello' });
    const client = new ModernClient({ name: 'modern-agent', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernStdio({ command: NODE, args: [MAIN, 'serve', '--config', config], stderr: 'ignore' }));
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    try {
      await client.request(
        {
          method: 'tools/call',
          params: { name: 'read_text_file', arguments: { path: join(data, 'modern.txt') }, _meta: { traceparent: `00-${traceId}-${parent}-01` } },
        },
        ResultSchema,
      );
    } finally {
      await client.close();
    }
    assert.ok(await waitFor(() => receiver.spans.some((s) => s.traceId === traceId && s.name.startsWith('tools/call')), 10_000), 'the call span arrives');
    const call = receiver.spans.find((s) => s.traceId === traceId && s.name.startsWith('tools/call'));
    assert.equal(call?.name, 'tools/call read_text_file');
    assert.equal(call?.parentSpanId, parent);
  });
});
