/**
 * The webhook channel against a real HTTPS receiver whose certificate comes from a CA made in the test
 * (trusted through ca_file only). Approve and deny work; a wrong token, a token of another call, a wrong
 * hash are refused (403) and execute nothing; a used decision replayed, or a decision after the timeout,
 * gets 409 saying which, and is logged (rate-limited); a call nobody decided is told so; a receiver that is down or not trusted sends the call to the next channel, or denies it.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { WebhookPreview } from '../src/confirm/channels/webhook.js';
import { auditEntries, FS_SERVER, NODE, runCli, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { makePki, type TestPki } from './tls.js';
import { pageAddress, pendingCall, decide as webDecide } from './web-page.js';

const SECRET = 's3cret-'.repeat(6);

/** What the receiver gets: the gate's own preview type, so the test follows it. */
type Preview = WebhookPreview;

/** A real HTTPS receiver that records every preview. */
class Receiver {
  previews: Preview[] = [];
  server: Server;
  port = 0;
  constructor(pki: TestPki) {
    this.server = createHttpsServer({ key: pki.key, cert: pki.cert }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.previews.push(JSON.parse(body) as Preview);
        res.writeHead(202).end();
      });
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  async next(match: (p: Preview) => boolean = () => true): Promise<Preview> {
    assert.ok(await waitFor(() => this.previews.some(match), 10_000), 'no preview reached the receiver');
    return this.previews.find(match)!;
  }
  close(): Promise<void> {
    return new Promise((r) => {
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
  }
}

async function answer(p: Preview, body: Record<string, unknown>): Promise<{ status: number; body: string }> {
  const res = await fetch(p.decision_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.text() };
}

function gateConfig(dir: string, webhook: string, extra = '') {
  const data = join(dir, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(dir, 'webhook.secret'), `${SECRET}\n`);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 20\n  elicitation: false\n  webhook:\n${webhook}\n    secret_file: webhook.secret\n    listen_port: 0\n${extra}`,
  );
  return { data, config };
}

describe('webhook channel', () => {
  let pki: TestPki;
  let receiver: Receiver;
  before(async () => {
    pki = makePki(tmp('lf-pki-'));
    receiver = await new Receiver(pki).start();
  });
  after(() => receiver.close());

  const webhookYaml = () => `    url: https://localhost:${receiver.port}/hook\n    ca_file: ${JSON.stringify(pki.caFile)}`;

  it('sends a preview with display fields and a per-call token; an approval executes, logged as shared-secret', async () => {
    const dir = tmp();
    const { data, config } = gateConfig(dir, webhookYaml());
    const agent = await startAgent(config);
    const path = join(data, 'hook.txt');
    const result = agent.call('write_file', { path, content: 'from the hook\u202e!' });
    const p = await receiver.next((x) => x.arguments.path === path);
    assert.equal(p.token, createHmac('sha256', SECRET).update(p.call_id).digest('hex'));
    assert.equal(p.tool_display, 'write_file');
    assert.match(p.arguments_display, /from the hook\\u202e!/, 'the display field shows the bidi override as an escape');
    assert.doesNotMatch(p.arguments_display + p.summary, /\u202e/);
    assert.equal(p.arguments.content, 'from the hook\u202e!', 'the raw field is the raw value');
    assert.match(p.decision_url, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/decision/${p.call_id}$`));
    assert.ok(Date.parse(p.expires_at) > Date.now());
    const ok = await answer(p, { decision: 'approve', actor: 'oncall-bot', args_sha256: p.args_sha256, token: p.token });
    assert.equal(ok.status, 200, ok.body);
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'executed');
    assert.equal(v?.approved_by, 'webhook:oncall-bot');
    assert.equal(readFileSync(path, 'utf8'), 'from the hook\u202e!');
    // Replaying the used decision changes nothing, says so, and is logged beside its 409.
    const replayed = await answer(p, { decision: 'deny', actor: 'oncall-bot', args_sha256: p.args_sha256, token: p.token });
    assert.equal(replayed.status, 409);
    assert.match(replayed.body, /replayed: the call was already approved by webhook:oncall-bot/);
    await agent.close();
    const refused = auditEntries(dir).filter((e) => e.event === 'web_refused');
    assert.ok(
      refused.some((e) => String(e.reason).includes(p.call_id) && /replayed/.test(String(e.reason))),
      JSON.stringify(refused),
    );
    const approval = readFileSync(join(dir, 'audit.jsonl'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"event":"approval"'))!;
    assert.match(approval, /"actor":"webhook:oncall-bot"/);
    assert.match(approval, /"trust":"shared-secret"/);
    assert.doesNotMatch(readFileSync(join(dir, 'audit.jsonl'), 'utf8') + agent.stderr(), new RegExp(SECRET), 'the secret is never printed or logged');
  });

  it('refuses a missing or wrong token, another call\u2019s token, and a wrong hash; a deny then holds', async () => {
    const dir = tmp();
    const { data, config } = gateConfig(dir, webhookYaml());
    const agent = await startAgent(config);
    const a = join(data, 'a.txt');
    const b = join(data, 'b.txt');
    const ra = agent.call('write_file', { path: a, content: 'a' });
    const rb = agent.call('create_directory', { path: b });
    const pa = await receiver.next((x) => x.arguments.path === a);
    const pb = await receiver.next((x) => x.arguments.path === b);
    const good = { decision: 'approve', actor: 'mallory', args_sha256: pa.args_sha256 };
    for (const [what, body] of [
      ['no token', good],
      ['wrong token', { ...good, token: '0'.repeat(64) }],
      ["the other call's token (leaked)", { ...good, token: pb.token }],
      ['wrong hash', { ...good, token: pa.token, args_sha256: pb.args_sha256 }],
    ] as const) {
      assert.equal((await answer(pa, body)).status, 403, what);
    }
    assert.equal((await answer(pa, { decision: 'approve', args_sha256: pa.args_sha256, token: pa.token })).status, 400, 'no actor named');
    assert.equal(existsSync(a), false);
    assert.equal((await answer(pa, { decision: 'deny', actor: 'owner', args_sha256: pa.args_sha256, token: pa.token, comment: 'not today' })).status, 200);
    const va = verdictOf(await ra);
    assert.equal(va?.outcome, 'denied');
    assert.equal(va?.denied_by, 'webhook:owner');
    assert.equal(existsSync(a), false);
    assert.equal((await answer(pb, { decision: 'deny', actor: 'owner', args_sha256: pb.args_sha256, token: pb.token })).status, 200);
    assert.equal(verdictOf(await rb)?.outcome, 'denied');
    await agent.close();
    assert.match(readFileSync(join(dir, 'audit.jsonl'), 'utf8'), /"comment":"not today"/);
  });

  it('answers 409 to a decision after the timeout: nothing executes', async () => {
    const dir = tmp();
    const { data, config } = gateConfig(dir, webhookYaml());
    writeFileSync(config, readFileSync(config, 'utf8').replace('timeout_seconds: 20', 'timeout_seconds: 1'));
    const agent = await startAgent(config);
    const path = join(data, 'late.txt');
    const result = agent.call('write_file', { path, content: 'late' });
    const p = await receiver.next((x) => x.arguments.path === path);
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'denied');
    assert.match(String(v?.reason), /nobody decided before the confirmation timeout/, 'told what happened');
    assert.doesNotMatch(String(v?.reason), /lapsed/, 'nobody approved, so no approval lapsed');
    const late = await answer(p, { decision: 'approve', actor: 'slow', args_sha256: p.args_sha256, token: p.token });
    assert.equal(late.status, 409);
    assert.match(late.body, /too late: nobody decided before the confirmation timeout/);
    await agent.close();
    assert.equal(existsSync(path), false);
    const refused = auditEntries(dir).filter((e) => e.event === 'web_refused');
    assert.ok(
      refused.some((e) => String(e.reason).includes(p.call_id) && /too late/.test(String(e.reason))),
      JSON.stringify(refused),
    );
    assert.equal(auditEntries(dir).filter((e) => e.event === 'approval_lapsed').length, 0);
  });

  it('logs a flood of replayed decisions rate-limited: one entry, then the count left out', async () => {
    const dir = tmp();
    const { data, config } = gateConfig(dir, webhookYaml());
    const agent = await startAgent(config);
    const path = join(data, 'flood.txt');
    const result = agent.call('write_file', { path, content: 'once' });
    const p = await receiver.next((x) => x.arguments.path === path);
    const body = { decision: 'approve', actor: 'bot', args_sha256: p.args_sha256, token: p.token };
    assert.equal((await answer(p, body)).status, 200);
    assert.equal(verdictOf(await result)?.outcome, 'executed');
    const statuses = await Promise.all(Array.from({ length: 50 }, () => answer(p, body).then((r) => r.status)));
    assert.deepEqual(new Set(statuses), new Set([409]));
    await agent.close();
    const refused = auditEntries(dir).filter((e) => e.event === 'web_refused');
    assert.ok(refused.length >= 1 && refused.length < 50, `rate-limited: ${refused.length} entries for 50 replays`);
    const counted = refused.reduce((n, e) => n + (Number(e.suppressed) > 0 ? Number(e.suppressed) : 1), 0);
    assert.equal(counted, 50, 'every replay is counted');
    assert.equal(readFileSync(path, 'utf8'), 'once');
  });

  it('denies at once when the receiver is down and no other channel exists, saying why', async () => {
    const dir = tmp();
    const { data, config } = gateConfig(dir, `    url: https://127.0.0.1:9/hook\n    ca_file: ${JSON.stringify(pki.caFile)}`);
    const agent = await startAgent(config);
    const started = Date.now();
    const v = verdictOf(await agent.call('write_file', { path: join(data, 'x.txt'), content: 'x' }));
    assert.equal(v?.outcome, 'denied');
    assert.match(String(v?.reason), /webhook: the receiver cannot be reached \(ECONNREFUSED\)/);
    assert.ok(Date.now() - started < 15_000, 'denied without waiting for the confirmation timeout');
    await agent.close();
  });

  it('refuses a receiver whose certificate the CA did not sign; the web page still takes the call', async () => {
    const dir = tmp();
    // No ca_file: the test CA is not trusted, so TLS fails and the call stays on the page alone.
    const { data, config } = gateConfig(dir, `    url: https://localhost:${receiver.port}/hook`, '  web: { enabled: true, host: 127.0.0.1, port: 0 }\n');
    const agent = await startAgent(config);
    const page = await pageAddress(agent.stderr);
    const path = join(data, 'fallback.txt');
    const before = receiver.previews.length;
    const result = agent.call('write_file', { path, content: 'fell back' });
    const card = await pendingCall(page, /fallback/);
    assert.equal(await webDecide(page, card, 'approve', 'alice'), 200);
    const v = verdictOf(await result);
    assert.equal(v?.approved_by, 'web:alice');
    assert.equal(receiver.previews.length, before, 'nothing was delivered over an untrusted connection');
    await agent.close();
  });

  it('refuses to start with a short secret or a plain-http receiver, and never prints the secret', () => {
    const dir = tmp();
    const { config } = gateConfig(dir, webhookYaml());
    writeFileSync(join(dir, 'webhook.secret'), 'short-secret-value');
    const r = runCli(['serve', '--config', config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /holds 18 characters; at least 32 are needed/);
    assert.doesNotMatch(r.stderr, /short-secret-value/);
    const dir2 = tmp();
    const { config: c2 } = gateConfig(dir2, '    url: http://hooks.example.com/x');
    const r2 = runCli(['serve', '--config', c2]);
    assert.equal(r2.status, 1);
    assert.match(r2.stderr, /webhook\.url must be https:\/\//);
  });
});
