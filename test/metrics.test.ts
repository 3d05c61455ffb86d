/**
 * The Prometheus endpoint of a real gate (dist/, `lookfirst serve` on stdio) in front of the real
 * filesystem server: a read, a write a person approves and a write a person denies move the counters and
 * histograms a scrape shows, a call waiting for its person shows in `lookfirst_held_calls`, and with
 * `metrics` off nothing listens.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Agent, FS_SERVER, NODE, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { serveHttp } from './http-gate.js';

/** The value of one sample line, or undefined when the series is absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return res.text();
}

function filesConfig(dir: string, data: string, extra: string): string {
  return writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 20\n${extra}`,
  );
}

describe('metrics: the gate serves GET /metrics', () => {
  it('counts a read, an approved write and a denied write, with their decisions and latencies', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'hello.txt'), 'hello');
    const config = filesConfig(dir, data, 'metrics:\n  enabled: true\n  port: 0\n');
    let url = '';
    let heldWhileAsked: number | undefined;
    // The stand-in person: approves yes.txt, declines anything else; scrapes while the call waits for them.
    const agent: Agent = await startAgent(config, async (message) => {
      heldWhileAsked = sample(await scrape(url), 'lookfirst_held_calls');
      return /yes\.txt/.test(message) ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
    });
    try {
      const printed = /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(agent.stderr());
      assert.ok(printed, `the address is printed on stderr: ${agent.stderr()}`);
      url = printed[1]!;
      const before = await scrape(url);
      assert.equal(sample(before, 'lookfirst_held_calls'), 0);
      assert.equal(sample(before, 'lookfirst_tool_calls_total{outcome="read",upstream="files"}'), undefined);

      const read = await agent.call('read_text_file', { path: join(data, 'hello.txt') });
      assert.equal(read.isError, undefined);
      const yes = verdictOf(await agent.call('write_file', { path: join(data, 'yes.txt'), content: 'approved' }));
      assert.equal(yes?.outcome, 'executed');
      assert.equal(heldWhileAsked, 1, 'the write waiting for its person is one held call');
      const no = verdictOf(await agent.call('write_file', { path: join(data, 'no.txt'), content: 'denied' }));
      assert.equal(no?.outcome, 'denied');
      assert.equal(readFileSync(join(data, 'yes.txt'), 'utf8'), 'approved');

      const after = await scrape(url);
      assert.equal(sample(after, 'lookfirst_tool_calls_total{outcome="read",upstream="files"}'), 1);
      assert.equal(sample(after, 'lookfirst_tool_calls_total{outcome="executed",upstream="files"}'), 1);
      assert.equal(sample(after, 'lookfirst_tool_calls_total{outcome="denied",upstream="files"}'), 1);
      assert.equal(sample(after, 'lookfirst_decisions_total{channel="elicitation",decision="approved"}'), 1);
      assert.equal(sample(after, 'lookfirst_decisions_total{channel="elicitation",decision="denied"}'), 1);
      assert.equal(sample(after, 'lookfirst_decision_seconds_count{channel="elicitation",decision="approved"}'), 1);
      assert.ok((sample(after, 'lookfirst_decision_seconds_sum{channel="elicitation",decision="approved"}') ?? -1) >= 0);
      // The read (fast path) and the approved write reached the upstream; the denied one never did.
      assert.equal(sample(after, 'lookfirst_upstream_request_seconds_count{upstream="files",method="tools/call",outcome="ok"}'), 2);
      assert.ok((sample(after, 'lookfirst_audit_append_seconds_count{outcome="ok"}') ?? 0) >= 6, 'every durable entry of both writes was timed');
      assert.equal(sample(after, 'lookfirst_held_calls'), 0);
      assert.match(after, /^lookfirst_process_resident_memory_bytes \d+/m);
      // No argument, path or content ever becomes a label.
      assert.doesNotMatch(after, /hello\.txt|yes\.txt|no\.txt|write_file/);
    } finally {
      await agent.close();
    }
    // The endpoint stops with the gate.
    await assert.rejects(fetch(url));
  });

  it('serves the same endpoint beside serve --transport http', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'hello.txt'), 'hello');
    const served = await serveHttp(filesConfig(dir, data, 'metrics:\n  enabled: true\n  port: 0\n  process: false\n'));
    const client = new Client({ name: 'http-agent', version: '1' });
    try {
      const url = /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(served.stderr())?.[1];
      assert.ok(url, served.stderr());
      await client.connect(new StreamableHTTPClientTransport(served.url));
      await client.callTool({ name: 'read_text_file', arguments: { path: join(data, 'hello.txt') } });
      const text = await scrape(url);
      assert.equal(sample(text, 'lookfirst_tool_calls_total{outcome="read",upstream="files"}'), 1);
      assert.doesNotMatch(text, /lookfirst_process_/, 'process: false leaves the process metrics out');
    } finally {
      await client.close();
      await served.kill();
    }
  });

  it('with metrics off (the default), prints no address and nothing listens on the default port', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    const agent = await startAgent(filesConfig(dir, data, ''));
    try {
      await agent.call('list_allowed_directories', {});
      assert.doesNotMatch(agent.stderr(), /metrics at/);
      const refused = await new Promise<boolean>((resolve) => {
        const s = connect(9464, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.once('error', () => resolve(true));
      });
      assert.ok(refused, 'nothing listens on 127.0.0.1:9464');
    } finally {
      await agent.close();
    }
  });

  it('refuses to start when the metrics port is taken, naming metrics.port', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    const { createServer } = await import('node:net');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      const config = filesConfig(dir, data, `metrics:\n  enabled: true\n  port: ${port}\n`);
      await assert.rejects(startAgent(config));
      const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
      assert.match(log, /"event":"gate_stopped".*metrics\.port/);
    } finally {
      busy.close();
    }
  });
});
