import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noMetrics, toDecisionChannel } from './metrics.js';
import { createPromMetrics } from './metrics-prom.js';

/** A monotonic clock the test moves by hand. */
function manualMono() {
  let now = 1000;
  return { monoMs: () => now, advance: (ms: number) => (now += ms) };
}

/** The value of one sample line of the exposition text, or undefined when absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('the Prometheus metrics', () => {
  it('counts calls by outcome and upstream, and an unknown tool under an empty upstream', async () => {
    const m = createPromMetrics();
    m.callEnded('read', 'files');
    m.callEnded('read', 'files');
    m.callEnded('denied', 'files');
    m.callEnded('error', undefined);
    const text = await m.scrape();
    assert.equal(sample(text, 'lookfirst_tool_calls_total{outcome="read",upstream="files"}'), 2);
    assert.equal(sample(text, 'lookfirst_tool_calls_total{outcome="denied",upstream="files"}'), 1);
    assert.equal(sample(text, 'lookfirst_tool_calls_total{outcome="error",upstream=""}'), 1);
  });

  it('times an upstream request once, in seconds, by upstream, method and outcome', async () => {
    const mono = manualMono();
    const m = createPromMetrics({ mono });
    const done = m.upstreamStarted('files', 'tools/call');
    mono.advance(30);
    done(true);
    done(false); // a second report of the same request is ignored
    const text = await m.scrape();
    const labels = 'upstream="files",method="tools/call",outcome="ok"';
    assert.equal(sample(text, `lookfirst_upstream_request_seconds_count{${labels}}`), 1);
    assert.equal(sample(text, `lookfirst_upstream_request_seconds_sum{${labels}}`), 0.03);
    assert.equal(sample(text, `lookfirst_upstream_request_seconds_bucket{le="0.025",${labels}}`), 0);
    assert.equal(sample(text, `lookfirst_upstream_request_seconds_bucket{le="0.05",${labels}}`), 1);
    assert.equal(sample(text, 'lookfirst_upstream_request_seconds_count{upstream="files",method="tools/call",outcome="error"}'), undefined);
  });

  it('labels any method but tools/call as other, so the label cannot grow', async () => {
    const m = createPromMetrics({ mono: manualMono() });
    m.upstreamStarted('files', 'resources/read')(true);
    assert.match(await m.scrape(), /lookfirst_upstream_request_seconds_count\{upstream="files",method="other",outcome="ok"\} 1/);
  });

  it('counts decisions by channel and times only those somebody waited for', async () => {
    const m = createPromMetrics();
    m.decided('web', 'approved', 12_000);
    m.decided('rule', 'denied');
    m.decided('a channel nobody knows', 'denied', 500);
    const text = await m.scrape();
    assert.equal(sample(text, 'lookfirst_decisions_total{channel="web",decision="approved"}'), 1);
    assert.equal(sample(text, 'lookfirst_decisions_total{channel="rule",decision="denied"}'), 1);
    assert.equal(sample(text, 'lookfirst_decisions_total{channel="other",decision="denied"}'), 1);
    assert.equal(sample(text, 'lookfirst_decision_seconds_sum{channel="web",decision="approved"}'), 12);
    assert.equal(sample(text, 'lookfirst_decision_seconds_count{channel="rule",decision="denied"}'), undefined);
  });

  it('reads the held calls when scraped, not before', async () => {
    const m = createPromMetrics();
    let held = 0;
    m.heldFrom(() => held);
    assert.equal(sample(await m.scrape(), 'lookfirst_held_calls'), 0);
    held = 3;
    assert.equal(sample(await m.scrape(), 'lookfirst_held_calls'), 3);
  });

  it('times audit appends by whether they were written', async () => {
    const m = createPromMetrics();
    m.auditAppended(2, true);
    m.auditAppended(400, false);
    const text = await m.scrape();
    assert.equal(sample(text, 'lookfirst_audit_append_seconds_count{outcome="ok"}'), 1);
    assert.equal(sample(text, 'lookfirst_audit_append_seconds_sum{outcome="failed"}'), 0.4);
  });

  it('adds the process metrics only when asked, with the gate prefix', async () => {
    const bare = createPromMetrics();
    assert.doesNotMatch(await bare.scrape(), /process_cpu/);
    const full = createPromMetrics({ process: true });
    assert.match(await full.scrape(), /^lookfirst_process_cpu_seconds_total /m);
    full.close();
  });

  it('keeps two gates in one process apart (own registries, none global)', async () => {
    const a = createPromMetrics();
    const b = createPromMetrics();
    a.callEnded('read', 'x');
    assert.equal(sample(await b.scrape(), 'lookfirst_tool_calls_total{outcome="read",upstream="x"}'), undefined);
    const { register } = await import('prom-client');
    assert.equal((await register.getMetricsAsJSON()).filter((x) => x.name.startsWith('lookfirst_')).length, 0);
  });
});

describe('the no-op metrics', () => {
  it('does nothing and says it is off', () => {
    assert.equal(noMetrics.enabled, false);
    noMetrics.callEnded('read', 'files');
    noMetrics.upstreamStarted('files', 'tools/call')(true);
    noMetrics.decided('web', 'approved', 1);
    noMetrics.auditAppended(1, true);
    noMetrics.heldFrom(() => 1);
  });

  it('maps channels onto a fixed list', () => {
    assert.equal(toDecisionChannel('device'), 'device');
    assert.equal(toDecisionChannel('web:alice'), 'other');
  });
});
