/**
 * `lookfirst_confirm` under attack, end to end (real gate over Streamable HTTP, two bearer tokens, the
 * fake upstream counting its side effects, the approval page as the person): another principal's
 * pending_id, odd JSON types, and a flood of parallel confirmations and retries of one decision. Whatever
 * the agent does, a decided call runs once, and only for the principal whose call it is.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FAKE_UPSTREAM, linesIn, NODE, ResultSchema, tmp, verdictOf, writeConfig } from './helpers.js';
import { serveHttp } from './http-gate.js';
import { decide, http, pageAddress, pendingCall } from './web-page.js';

const TOKEN_A = 'a-token-'.repeat(5);
const TOKEN_B = 'b-token-'.repeat(5);
const dirs: string[] = [];
const stops: (() => Promise<void>)[] = [];
const clients: Client[] = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of stops) await s().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function connect(url: URL, token: string, name: string) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return (tool: string, args: unknown) =>
    client.request({ method: 'tools/call', params: { name: tool, arguments: args as Record<string, unknown> } }, ResultSchema, { timeout: 20_000 }) as Promise<
      Record<string, unknown>
    >;
}

async function gate(mode: 'pending' | 'wait' = 'pending', extra = '') {
  const dir = tmp('lf-pc-attack-');
  dirs.push(dir);
  const effects = join(dir, 'effects.txt');
  writeFileSync(join(dir, 'token.txt'), `${TOKEN_A}\n${TOKEN_B}\n`);
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nconfirm:\n  mode: ${mode}\n  elicitation: false\n  timeout_seconds: 30\n  hold_seconds: 1\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\nhttp:\n  token_file: token.txt\n${extra}`,
  );
  const served = await serveHttp(config);
  stops.push(() => served.kill('SIGTERM'));
  const page = await pageAddress(served.stderr);
  return { url: served.url, page, executed: () => linesIn(effects), dir, config, served };
}

const pendingIdOf = (r: Record<string, unknown>) => ((r._meta as Record<string, unknown>).lookfirst_answer as { pending_id: string }).pending_id;

describe('lookfirst_confirm under attack', () => {
  for (const [store, extra] of [
    ['memory', ''],
    ['sqlite', 'store:\n  kind: sqlite\n  path: state.db\n'],
  ] as const)
    it(`another principal cannot run a principal's pending call (${store} store)`, async () => {
      const g = await gate('pending', extra);
      const a = await connect(g.url, TOKEN_A, 'agent-a');
      const b = await connect(g.url, TOKEN_B, 'agent-b');
      const first = await a('write_note', { text: 'from a' });
      const id = pendingIdOf(first);
      const early = await b('lookfirst_confirm', { pending_id: id });
      assert.equal(early.isError, true);
      assert.equal(g.executed(), 0);
      const card = await pendingCall(g.page, /from a/);
      assert.equal(await decide(g.page, card, 'approve', 'alice'), 200);
      const foreign = await b('lookfirst_confirm', { pending_id: id });
      assert.equal(foreign.isError, true, JSON.stringify(foreign));
      assert.notEqual(verdictOf(foreign)?.outcome, 'executed');
      assert.match(JSON.stringify(foreign), /no such call is waiting for this client/, 'B learns nothing of what became of A’s call');
      assert.doesNotMatch(JSON.stringify(foreign), /approved/);
      assert.equal(g.executed(), 0, 'B ran nothing of A');
      // B retrying A's very call (same tool, same arguments) is B's own new question, not A's decision.
      const retried = await b('write_note', { text: 'from a' });
      assert.equal(retried.isError, true);
      assert.notEqual(pendingIdOf(retried), id);
      assert.equal(g.executed(), 0);
      const ran = await a('lookfirst_confirm', { pending_id: id });
      assert.equal(verdictOf(ran)?.outcome, 'executed', JSON.stringify(ran));
      assert.equal(g.executed(), 1);
    });

  it('a flood of parallel confirmations and retries of one decision runs it once', async () => {
    const g = await gate();
    const a = await connect(g.url, TOKEN_A, 'agent-a');
    const id = pendingIdOf(await a('write_note', { text: 'once' }));
    const card = await pendingCall(g.page, /once/);
    assert.equal(await decide(g.page, card, 'approve', 'alice'), 200);
    const all = await Promise.all([
      ...Array.from({ length: 6 }, () => a('lookfirst_confirm', { pending_id: id })),
      a('write_note', { text: 'once' }),
      a('write_note', { text: 'once' }),
    ]);
    const executed = all.filter((r) => verdictOf(r)?.outcome === 'executed');
    assert.equal(executed.length, 1, JSON.stringify(all.map((r) => verdictOf(r)?.outcome)));
    assert.equal(g.executed(), 1);
  });

  it('odd JSON types and Unicode in its arguments are refused by name, and nothing runs', async () => {
    const g = await gate();
    const a = await connect(g.url, TOKEN_A, 'agent-a');
    const id = pendingIdOf(await a('write_note', { text: 'odd' }));
    const card = await pendingCall(g.page, /odd/);
    assert.equal(await decide(g.page, card, 'approve', 'alice'), 200);
    const odd: unknown[] = [
      { pending_id: 7 },
      { pending_id: [id] },
      { pending_id: { id } },
      { pending_id: null },
      { pending_id: `${id}\u0000` },
      { pending_id: id.toUpperCase() },
      { pending_id: `\u202e${id}` },
      { pending_id: id, evidence_ref: 5 },
      { pending_id: id, evidence_ref: null },
      { pending_id: id, evidence_ref: '' },
      { pending_id: id, evidence_ref: ['ev_0123456789abcdef'] },
      { pending_id: id, evidence_ref: 'ev_０１２３４５６７８９abcdef' },
      { pending_id: id, evidence_ref: 'x'.repeat(100_000) },
      [id],
      'pending',
    ];
    for (const args of odd) {
      const r = await a('lookfirst_confirm', args);
      assert.equal(r.isError, true, JSON.stringify(args).slice(0, 80));
      assert.notEqual(verdictOf(r)?.outcome, 'executed', JSON.stringify(args).slice(0, 80));
      assert.match(JSON.stringify(r), /evidence_exists|card_set_open|evidence_for_card_set/, JSON.stringify(args).slice(0, 80));
    }
    assert.equal(g.executed(), 0, 'nothing ran, and the decision was not spent');
    const ran = await a('lookfirst_confirm', { pending_id: id });
    assert.equal(verdictOf(ran)?.outcome, 'executed', JSON.stringify(ran));
    assert.equal(g.executed(), 1);
  });

  it('a yes given before a gate restart (SQLite store) is run by lookfirst_confirm after it, once', async () => {
    const g = await gate('pending', 'store:\n  kind: sqlite\n  path: state.db\n');
    const a = await connect(g.url, TOKEN_A, 'agent-a');
    const id = pendingIdOf(await a('write_note', { text: 'across a restart' }));
    const card = await pendingCall(g.page, /across a restart/);
    assert.equal(await decide(g.page, card, 'approve', 'alice'), 200);
    await g.served.kill('SIGTERM');
    await clients
      .at(-1)!
      .close()
      .catch(() => {});
    const again = await serveHttp(g.config);
    stops.push(() => again.kill('SIGTERM'));
    const b = await connect(again.url, TOKEN_A, 'agent-a');
    const ran = await b('lookfirst_confirm', { pending_id: id });
    assert.equal(verdictOf(ran)?.outcome, 'executed', JSON.stringify(ran));
    assert.equal(g.executed(), 1);
    const twice = await b('lookfirst_confirm', { pending_id: id });
    assert.notEqual(verdictOf(twice)?.outcome, 'executed');
    assert.equal(g.executed(), 1);
  });

  it("an idle lookfirst_confirm does not rewrite the page's history of the call", async () => {
    const g = await gate();
    const a = await connect(g.url, TOKEN_A, 'agent-a');
    const id = pendingIdOf(await a('write_note', { text: 'history' }));
    const card = await pendingCall(g.page, /history/);
    assert.equal(await decide(g.page, card, 'approve', 'alice'), 200);
    assert.equal(verdictOf(await a('lookfirst_confirm', { pending_id: id }))?.outcome, 'executed');
    for (let i = 0; i < 3; i++) assert.equal((await a('lookfirst_confirm', { pending_id: id })).isError, true);
    const state = JSON.parse((await http(g.page.port, 'GET', `/state.json?k=${g.page.key}`)).body) as { history: { callId: string; outcome?: string }[] };
    assert.equal(state.history.find((h) => h.callId === id)?.outcome, 'executed');
  });

  it('in wait mode there is no lookfirst_confirm to call', async () => {
    const g = await gate('wait');
    const a = await connect(g.url, TOKEN_A, 'agent-a');
    const clientTools = (await clients.at(-1)!.listTools()).tools.map((t) => t.name);
    assert.ok(!clientTools.includes('lookfirst_confirm'));
    await assert.rejects(a('lookfirst_confirm', { pending_id: '00000000-0000-4000-8000-000000000000' }), /unknown tool|not found|lookfirst_confirm/i);
    assert.equal(g.executed(), 0);
  });
});
