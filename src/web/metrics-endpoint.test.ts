import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, it } from 'node:test';
import { createPromMetrics } from '../gateway/metrics-prom.js';
import { isLoopbackHost, startMetricsEndpoint } from './metrics-endpoint.js';

function get(port: number, path: string, opts: { method?: string; host?: string } = {}): Promise<{ status: number; type?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.host ? { host: opts.host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the metrics endpoint', async () => {
  const metrics = createPromMetrics();
  metrics.callEnded('executed', 'files');
  const endpoint = await startMetricsEndpoint({ host: '127.0.0.1', port: 0, source: metrics });
  after(() => endpoint.close());

  it('serves GET /metrics in the Prometheus text format at the address it gives', async () => {
    assert.equal(endpoint.url, `http://127.0.0.1:${endpoint.port}/metrics`);
    const res = await get(endpoint.port, '/metrics');
    assert.equal(res.status, 200);
    assert.match(String(res.type), /^text\/plain; version=0\.0\.4/);
    assert.match(res.body, /^lookfirst_tool_calls_total\{outcome="executed",upstream="files"\} 1$/m);
  });

  it('answers 404 elsewhere and 405 to a method other than GET', async () => {
    assert.equal((await get(endpoint.port, '/')).status, 404);
    assert.equal((await get(endpoint.port, '/metrics', { method: 'POST' })).status, 405);
  });

  it('refuses a Host that is not this machine (DNS rebinding) while bound to loopback', async () => {
    assert.equal((await get(endpoint.port, '/metrics', { host: `attacker.example:${endpoint.port}` })).status, 403);
    assert.equal((await get(endpoint.port, '/metrics', { host: `localhost:${endpoint.port}` })).status, 200);
  });

  it('says which setting to change when the port is taken', async () => {
    await assert.rejects(startMetricsEndpoint({ host: '127.0.0.1', port: endpoint.port, source: metrics }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'WEB_UNAVAILABLE');
      assert.match(err.message, /metrics\.port/);
      return true;
    });
  });
});

describe('isLoopbackHost', () => {
  it('takes a loopback name with at most a port, and nothing with more after it', () => {
    for (const ok of ['127.0.0.1', '127.0.0.1:9464', 'LOCALHOST:1', '[::1]', '[::1]:9464']) assert.equal(isLoopbackHost(ok), true, ok);
    for (const bad of [
      undefined,
      '',
      '[::1]anything',
      '[::1]:80:81',
      'localhost:80:81',
      'localhost.',
      'localhost:x',
      '127.0.0.1.evil.example',
      '[::1',
      'evil.example:9464',
    ])
      assert.equal(isLoopbackHost(bad), false, String(bad));
  });
});
