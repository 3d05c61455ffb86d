/**
 * Several gates, one truth: two replicas of `serve --transport http` share their state through a real
 * PostgreSQL (started here from Debian's package, stopped at the end). Each replica has its own audit
 * log and key; both front the same kind of upstream, whose side effects land in one shared file, so the
 * upstream counts executions across replicas. A call held on one replica is approved on the other's
 * page and runs once, where it waits; a retry that lands on the other replica collects the approval
 * there; a replica killed while a call waits leaves the call to the other; a tool blocked on one is
 * blocked on both.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { auditEntries, FAKE_UPSTREAM, linesIn, NODE, ResultSchema, tmp, verdictOf, writeConfig } from './helpers.js';
import { serveHttp } from './http-gate.js';
import { type PostgresServer, postgresMissing, startPostgres } from './postgres.js';
import { decide, type PageAddress, pageAddress, pendingCall } from './web-page.js';

const TOKEN = 'replica-t0ken-'.repeat(4);
const skip = postgresMissing();

interface Replica {
  name: string;
  dir: string;
  proc: ChildProcess;
  url: URL;
  page: PageAddress;
  stderr: () => string;
  kill: (signal?: NodeJS.Signals) => Promise<void>;
}

describe('gate replicas sharing PostgreSQL', { skip }, () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    server?.stop();
  });

  /** A fresh deployment: a shared effects file and token, and a database of its own. */
  async function deployment(confirm = '  timeout_seconds: 60\n  hold_seconds: 2\n', extra = '') {
    const root = tmp('lf-replicas-');
    const effects = join(root, 'effects.txt');
    const db = `d${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    const url = server.url.replace(/\/postgres$/, `/${db}`);
    const start = async (name: string): Promise<Replica> => {
      const dir = join(root, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'token.txt'), `${TOKEN}\n`);
      const config = writeConfig(
        dir,
        `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nconfirm:\n  elicitation: false\n${confirm}  web: { enabled: true, host: 127.0.0.1, port: 0 }\nhttp:\n  token_file: token.txt\nstore:\n  kind: postgres\n  url: ${JSON.stringify(url)}\n${extra}`,
      );
      const served = await serveHttp(config);
      return { name, dir, proc: served.proc, url: served.url, page: await pageAddress(served.stderr), stderr: served.stderr, kill: served.kill };
    };
    return { root, start, executed: () => linesIn(effects) };
  }

  async function client(r: Replica): Promise<Client> {
    const c = new Client({ name: 'replica-agent', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(r.url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    return c;
  }

  const call = async (c: Client, args: Record<string, unknown>, timeout = 30_000) =>
    (await c.request({ method: 'tools/call', params: { name: 'write_note', arguments: args } }, ResultSchema, { timeout })) as Record<string, unknown>;
  const outcome = (r: Record<string, unknown>) => verdictOf(r)?.outcome;

  it("a call held on replica A is listed on replica B's page, approved there, and runs once on A", async () => {
    const d = await deployment('  timeout_seconds: 60\n  hold_seconds: 30\n');
    const [a, b] = [await d.start('a'), await d.start('b')];
    const agent = await client(a);
    const answer = call(agent, { note: 'held on A' });
    const card = await pendingCall(b.page, /held on A/);
    assert.equal(await decide(b.page, card, 'approve', 'bob'), 200);
    const r = await answer;
    assert.equal(outcome(r), 'executed', JSON.stringify(r));
    assert.equal(verdictOf(r)?.approved_by, 'web:bob');
    assert.equal(d.executed(), 1);
    assert.equal(auditEntries(a.dir).filter((e) => e.event === 'executed').length, 1, 'it ran on A, where it waited');
    assert.equal(auditEntries(b.dir).filter((e) => e.event === 'executed').length, 0);
    assert.equal(await decide(b.page, card, 'approve', 'bob'), 403, 'a second decision is refused');
    await agent.close();
    await Promise.all([a.kill(), b.kill()]);
  });

  it('a retry that lands on replica B after a pending answer collects the approval there, and the call runs once', async () => {
    const d = await deployment();
    const [a, b] = [await d.start('a'), await d.start('b')];
    const onA = await client(a);
    const first = await call(onA, { note: 'retry elsewhere' });
    assert.equal(outcome(first), 'pending', JSON.stringify(first));
    const card = await pendingCall(a.page, /retry elsewhere/);
    assert.equal(await decide(a.page, card, 'approve', 'alice'), 200);
    const onB = await client(b);
    const retried = await call(onB, { note: 'retry elsewhere' });
    assert.equal(outcome(retried), 'executed', JSON.stringify(auditEntries(b.dir).map((e) => [e.event, e.call_id])) + JSON.stringify(retried));
    assert.equal(verdictOf(retried)?.call_id, verdictOf(first)?.call_id, 'the same call');
    assert.equal(d.executed(), 1);
    // A second identical retry, on A this time, is a new call: the approval was used.
    const again = await call(onA, { note: 'retry elsewhere' });
    assert.equal(outcome(again), 'pending');
    assert.notEqual(verdictOf(again)?.call_id, verdictOf(first)?.call_id);
    assert.equal(d.executed(), 1);
    await Promise.all([onA.close(), onB.close()]);
    await Promise.all([a.kill(), b.kill()]);
  });

  it("when replica A is killed while a call waits there, the client's retry on B completes exactly once after approval", async () => {
    const d = await deployment('  timeout_seconds: 60\n  hold_seconds: 30\n');
    const [a, b] = [await d.start('a'), await d.start('b')];
    const onA = await client(a);
    const lost = call(onA, { note: 'failover' }).then(
      () => 'answered',
      () => 'lost',
    );
    await pendingCall(b.page, /failover/);
    await a.kill('SIGKILL');
    assert.equal(await lost, 'lost');
    const onB = await client(b);
    const retry = call(onB, { note: 'failover' });
    const card = await pendingCall(b.page, /failover/);
    assert.equal(await decide(b.page, card, 'approve', 'carol'), 200);
    const r = await retry;
    assert.equal(outcome(r), 'executed', JSON.stringify(r));
    assert.equal(d.executed(), 1, 'exactly once');
    const bLog = auditEntries(b.dir);
    assert.ok(
      bLog.some((e) => e.event === 'call_retried' && e.call_id === verdictOf(r)?.call_id),
      'B continued the call A received',
    );
    await onB.close();
    await b.kill();
  });

  it('a tool blocked on one replica is blocked on every replica', async () => {
    const d = await deployment('  timeout_seconds: 60\n  hold_seconds: 30\n', 'execution:\n  timeout_seconds: 2\n');
    const [a, b] = [await d.start('a'), await d.start('b')];
    const onA = await client(a);
    // hang_write appends its note and never answers: past execution.timeout_seconds its outcome is
    // unknown, and the tool is blocked until a person looks.
    const wrote = (async () => {
      const answer = onA.request({ method: 'tools/call', params: { name: 'hang_write', arguments: { note: 'never answers' } } }, ResultSchema, {
        timeout: 60_000,
      });
      const card = await pendingCall(a.page, /hang_write/);
      assert.equal(await decide(a.page, card, 'approve', 'dan'), 200);
      return answer.then(
        (r) => r as Record<string, unknown>,
        () => undefined,
      );
    })();
    const r0 = await wrote;
    assert.equal(verdictOf(r0 ?? {})?.blocked, true, JSON.stringify(r0));
    await onA.close();
    const onB = await client(b);
    const blocked = onB.request({ method: 'tools/call', params: { name: 'hang_write', arguments: { note: 'on B' } } }, ResultSchema, { timeout: 30_000 });
    const unlock = await pendingCall(b.page, /UNLOCK hang_write/);
    assert.equal(await decide(b.page, unlock, 'deny', 'erin'), 200);
    const r = (await blocked) as Record<string, unknown>;
    assert.equal(outcome(r), 'denied');
    assert.equal(verdictOf(r)?.blocked, true);
    await onB.close();
    await Promise.all([a.kill(), b.kill()]);
  });

  // Last: it stops the shared PostgreSQL.
  it('when PostgreSQL is gone, a write a rule allows is denied and not run, and reads go on', async () => {
    const d = await deployment(undefined, 'rules:\n  tools:\n    write_note: { action: allow }\n');
    const a = await d.start('a');
    const onA = await client(a);
    assert.equal(outcome(await call(onA, { note: 'store up' })), 'executed');
    server.stop();
    const r = await call(onA, { note: 'store down' });
    assert.equal(outcome(r), 'denied', JSON.stringify(r));
    assert.match(String(verdictOf(r)?.reason), /state store cannot be reached/);
    assert.equal(d.executed(), 1, 'only the call made while the store was up ran');
    const read = (await onA.request({ method: 'tools/call', params: { name: 'echo', arguments: { x: 1 } } }, ResultSchema)) as Record<string, unknown>;
    assert.equal(read.isError, undefined, 'a read needs no shared state');
    await onA.close();
    await a.kill();
  });
});
