/**
 * Approvals that outlast the client's patience (confirm.hold_seconds): a request that has waited that
 * long answers "pending" and the question stays open; an identical retry re-attaches and, once
 * approved, exactly one retry runs it, once. An approval nobody comes back for lapses and runs nothing;
 * a cancelled call is withdrawn from every channel; other arguments make a new call.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type Agent, auditEntries, FAKE_UPSTREAM, linesIn, NODE, ResultSchema, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { decide, http, type PageAddress, pageAddress, pendingCall } from './web-page.js';

function gate(confirm: string) {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects, '--events', join(dir, 'events.jsonl')])}\nconfirm:\n  elicitation: false\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\n${confirm}`,
  );
  const executed = () => linesIn(effects);
  const events = () => auditEntries(dir);
  return { dir, config, executed, events };
}

const outcome = (r: Record<string, unknown>) => verdictOf(r)?.outcome;

/** The call answers pending (nobody decided within hold_seconds), then a person approves it on the page. */
async function pendThenApprove(agent: Agent, page: PageAddress, args: Record<string, unknown>, who: string): Promise<void> {
  assert.equal(outcome(await agent.call('write_note', args)), 'pending');
  assert.equal(await decide(page, await pendingCall(page), 'approve', who), 200);
}

describe('holds and retries', () => {
  it('a client with a 5 s timeout retries until a person approves at second 8: it runs exactly once', async () => {
    const g = gate('  timeout_seconds: 60\n  hold_seconds: 3\n');
    const agent = await startAgent(g.config);
    const page = await pageAddress(agent.stderr);
    const started = Date.now();
    const approver = (async () => {
      const card = await pendingCall(page);
      await new Promise((r) => setTimeout(r, Math.max(0, 8000 - (Date.now() - started))));
      assert.equal(await decide(page, card, 'approve', 'erin'), 200);
    })();
    const answers: Record<string, unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await agent.call('write_note', { note: 'late approval' }, { timeout: 5000 });
      answers.push(r);
      if (outcome(r) !== 'pending') break;
      assert.equal(r.isError, true);
      assert.match(JSON.stringify(r.content), /NOT been executed yet.*approval web page.*Call write_note again with exactly the same arguments/);
    }
    await approver;
    const last = answers.at(-1)!;
    assert.equal(outcome(last), 'executed', JSON.stringify(last));
    assert.equal(verdictOf(last)?.approved_by, 'web:erin');
    assert.ok(answers.length >= 3, `answers: ${answers.map(outcome).join(', ')}`);
    assert.ok(
      answers.slice(0, -1).every((a) => verdictOf(a)?.call_id === verdictOf(last)?.call_id),
      'every retry is the same call',
    );
    await agent.close();
    assert.equal(g.executed(), 1, 'the upstream executed exactly once');
    const events = g.events().map((e) => e.event);
    assert.equal(events.filter((e) => e === 'call_received').length, 1);
    assert.ok(events.filter((e) => e === 'call_retried').length >= 2);
    assert.equal(events.filter((e) => e === 'executed').length, 1);
  });

  it('an approval with no request waiting is kept for one retry; two identical retries run it once', async () => {
    const g = gate('  timeout_seconds: 30\n  hold_seconds: 1\n');
    const agent = await startAgent(g.config);
    const page = await pageAddress(agent.stderr);
    await pendThenApprove(agent, page, { note: 'kept' }, 'fran');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(g.executed(), 0, 'nothing runs while no request waits');
    const [a, b] = await Promise.all([agent.call('write_note', { note: 'kept' }), agent.call('write_note', { note: 'kept' })]);
    assert.deepEqual([outcome(a), outcome(b)].sort(), ['executed', 'pending']);
    assert.equal(g.executed(), 1);
    await agent.close();
    assert.equal(g.executed(), 1);
  });

  it('sends upstream only the approved name and arguments: a retry\u2019s own _meta and extra params stay behind', async () => {
    const g = gate('  timeout_seconds: 30\n  hold_seconds: 1\n');
    const agent = await startAgent(g.config);
    const page = await pageAddress(agent.stderr);
    await pendThenApprove(agent, page, { note: 'exact' }, 'kim');
    const retry = (await agent.client.request(
      { method: 'tools/call', params: { name: 'write_note', arguments: { note: 'exact' }, _meta: { injected: true }, extraTop: { evil: true } } } as never,
      ResultSchema,
    )) as Record<string, unknown>;
    assert.equal(outcome(retry), 'executed');
    await agent.close();
    const sent = readFileSync(join(g.dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> })
      .filter((e) => e.method === 'tools/call');
    assert.equal(sent.length, 1);
    assert.deepEqual(
      Object.keys(sent[0]!.params!).filter((k) => k !== '_meta'),
      ['name', 'arguments'],
    );
    assert.equal(JSON.stringify(sent[0]!.params!._meta ?? {}).includes('injected'), false);
  });

  it('an approval nobody comes back for lapses: nothing runs, and the log says so', async () => {
    const g = gate('  timeout_seconds: 3\n  hold_seconds: 1\n');
    const agent = await startAgent(g.config);
    const page = await pageAddress(agent.stderr);
    await pendThenApprove(agent, page, { note: 'lapse' }, 'gus');
    assert.ok(await waitFor(() => g.events().some((e) => e.event === 'approval_lapsed'), 5000), 'lapse logged');
    const retry = await agent.call('write_note', { note: 'lapse' });
    assert.equal(outcome(retry), 'pending', 'after the lapse, the same call asks again');
    await agent.close();
    assert.equal(g.executed(), 0);
    const lapsed = g.events().find((e) => e.event === 'approval_lapsed')!;
    assert.equal(lapsed.actor, 'web:gus');
    assert.match(String(lapsed.reason), /no request from the client was waiting/);
  });

  it('a denial reaches the retry; other arguments make a new call', async () => {
    const g = gate('  timeout_seconds: 30\n  hold_seconds: 1\n');
    const agent = await startAgent(g.config);
    const page = await pageAddress(agent.stderr);
    const p1 = verdictOf(await agent.call('write_note', { note: 'one' }));
    const p2 = verdictOf(await agent.call('write_note', { note: 'two' }));
    assert.notEqual(p1?.call_id, p2?.call_id);
    const state = JSON.parse((await http(page.port, 'GET', `/state.json?k=${page.key}`)).body) as { pending: unknown[] };
    assert.equal(state.pending.length, 2, 'two calls wait on the page');
    assert.equal(await decide(page, await pendingCall(page, /one/), 'deny', 'hal'), 200);
    const retry = verdictOf(await agent.call('write_note', { note: 'one' }));
    assert.equal(retry?.outcome, 'denied');
    assert.equal(retry?.denied_by, 'web:hal');
    await agent.close();
    assert.equal(g.executed(), 0);
  });

  it('a cancelled call is withdrawn everywhere: a late page decision is refused, a late webhook one gets 409', async () => {
    const previews: { decision_url: string; token: string; args_sha256: string }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        previews.push(JSON.parse(body));
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    const g = gate(
      `  timeout_seconds: 30\n  hold_seconds: 20\n  webhook:\n    url: http://127.0.0.1:${port}/hook\n    allow_insecure_loopback: true\n    secret_file: secret.txt\n    listen_port: 0\n`,
    );
    writeFileSync(join(g.dir, 'secret.txt'), 'x'.repeat(40));
    const agent = await startAgent(g.config);
    const page = await pageAddress(agent.stderr);
    const cancel = new AbortController();
    const call = agent.call('write_note', { note: 'withdrawn' }, { signal: cancel.signal }).catch((e: Error) => e);
    const card = await pendingCall(page);
    assert.ok(await waitFor(() => previews.length === 1, 5000));
    cancel.abort();
    assert.ok((await call) instanceof Error);
    assert.ok(await waitFor(() => g.events().some((e) => e.event === 'cancelled'), 5000));
    assert.equal(await decide(page, card, 'approve', 'late'), 403);
    const p = previews[0]!;
    const hook = await fetch(p.decision_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', actor: 'late', args_sha256: p.args_sha256, token: p.token }),
    });
    assert.equal(hook.status, 409);
    const history = JSON.parse((await http(page.port, 'GET', `/state.json?k=${page.key}`)).body).history as { decision: string }[];
    assert.equal(history[0]?.decision, 'withdrawn');
    await agent.close();
    receiver.close();
    assert.equal(g.executed(), 0);
  });
});
