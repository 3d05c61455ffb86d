/**
 * Clients on the 2026-07-28 protocol (no handshake, envelope in each request's `_meta`), driven by the
 * official SDK v2 client pinned to that revision, over stdio and over HTTP. In-client approval is an
 * `input_required` round trip: the write executes once, and only for an answer that comes back with a
 * request state this gate issued for this session, tool and arguments, before it expires, the first time.
 * Pre-answered, replayed, tampered, foreign and expired states execute nothing. A claimed identity that
 * changes is logged; a client that cannot elicit is asked out of band like a 2025 client.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ResultSchema } from '@modelcontextprotocol/core';
import { auditEntries, FAKE_UPSTREAM, linesIn, MAIN, NODE, textOf, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { httpGate, TOKEN } from './http-gate.js';
import { decide, pendingCall } from './web-page.js';

type Answer = { action: string; content?: Record<string, unknown> };
const MODERN = { mode: { pin: '2026-07-28' } } as const;
const APPROVE: Answer = { action: 'accept', content: { approve: true } };
const YES = { approve: APPROVE };

/** A v2 client; `human` answers the approval question (auto mode), `manual` returns input_required raw. */
function modernClient(name: string, opts: { human?: () => Answer; manual?: boolean; elicitation?: boolean } = {}) {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      capabilities: opts.elicitation === false ? {} : { elicitation: { form: {} } },
      versionNegotiation: MODERN,
      inputRequired: { autoFulfill: !opts.manual },
    },
  );
  const asked: string[] = [];
  if (opts.human) {
    const human = opts.human;
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(String((req.params as { message?: unknown }).message));
      return human() as never;
    });
  }
  /** A raw tools/call: extra params (inputResponses, requestState, _meta) go as given. */
  const call = (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    client.request({ method: 'tools/call', params: { name: tool, arguments: args, ...extra } }, ResultSchema, {
      allowInputRequired: true,
      timeout: 20_000,
    }) as Promise<Record<string, unknown>>;
  return { client, asked, call };
}

function stdioGate(timeoutSeconds = 30, holdSeconds = 1, web = false) {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nconfirm:\n  timeout_seconds: ${timeoutSeconds}\n  hold_seconds: ${holdSeconds}\n${web ? '  web: { enabled: true, host: 127.0.0.1, port: 0 }\n' : ''}`,
  );
  let err = '';
  const transport = () => {
    const t = new StdioClientTransport({
      command: NODE,
      args: [MAIN, 'serve', '--config', config],
      stderr: 'pipe',
      env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1' },
    });
    t.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    return t;
  };
  const executed = () => linesIn(effects);
  const log = () => auditEntries(dir);
  return { dir, transport, executed, log, stderr: () => err };
}

/** Whether the log shows a call waiting for a person (its decision written, not yet decided). */
function held(log: Record<string, unknown>[]): boolean {
  return log.some((e) => e.event === 'decision' && e.action === 'confirm');
}

describe('2026-07-28 clients', () => {
  it('approve in their own UI through input_required over stdio: the write runs once, logged under one call id', async () => {
    const g = stdioGate();
    const a = modernClient('modern-agent', { human: () => APPROVE });
    await a.client.connect(g.transport());
    assert.equal(a.client.getNegotiatedProtocolVersion(), '2026-07-28');
    const tools = await a.client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'write_note'));
    assert.equal(textOf(await a.call('echo', { hi: 1 })), '{"hi":1}');
    const result = await a.client.callTool({ name: 'write_note', arguments: { note: 'from 2026' } });
    const v = verdictOf(result as Record<string, unknown>);
    assert.equal(v?.outcome, 'executed');
    assert.equal(v?.approved_by, 'elicitation:modern-agent');
    assert.equal(a.asked.length, 1);
    assert.match(a.asked[0] ?? '', /holds a call to write_note/);
    await a.client.close();
    await waitFor(() => /gate_stopped/.test(readFileSync(join(g.dir, 'audit.jsonl'), 'utf8')), 5000);
    assert.equal(g.executed(), 1);
    const events = g
      .log()
      .filter((e) => e.call_id === v?.call_id)
      .map((e) => e.event);
    assert.deepEqual(events, [
      'call_received',
      'decision',
      'input_required',
      'input_answered',
      'approval',
      'execution_started',
      'executed',
      'readback',
      'execution_resolved',
      'receipt_issued',
    ]);
  });

  it('declined in the client: nothing runs', async () => {
    const g = stdioGate();
    const a = modernClient('modern-agent', { human: () => ({ action: 'decline' }) });
    await a.client.connect(g.transport());
    const v = verdictOf((await a.client.callTool({ name: 'write_note', arguments: { note: 'no' } })) as Record<string, unknown>);
    assert.equal(v?.outcome, 'denied');
    assert.match(String(v?.reason), /not approved in the client \(decline\)/);
    await a.client.close();
    assert.equal(g.executed(), 0);
  });

  it('pre-answered, replayed, tampered, foreign and expired request states execute nothing', async () => {
    const g = stdioGate();
    const a = modernClient('manual-agent', { manual: true });
    await a.client.connect(g.transport());
    const args = { note: 'state' };
    // A client must not be able to answer its own question before it is asked.
    const pre = verdictOf(await a.call('write_note', args, { inputResponses: YES }));
    assert.equal(pre?.outcome, 'denied');
    assert.match(String(pre?.reason), /no request state this gate issued/);

    const first = await a.call('write_note', args);
    assert.equal(first.resultType, 'input_required');
    const state = String(first.requestState);
    assert.ok((first.inputRequests as Record<string, unknown>).approve);

    // Altered in the middle of its signed body: refused, and the genuine state stays usable.
    const mid = Math.floor(state.length / 2);
    const tampered = state.slice(0, mid) + (state[mid] === 'A' ? 'B' : 'A') + state.slice(mid + 1);
    assert.match(String(verdictOf(await a.call('write_note', args, { inputResponses: YES, requestState: tampered }))?.reason), /integrity/);
    assert.match(String(verdictOf(await a.call('write_note', args, { inputResponses: YES, requestState: 'v1.bm90.c2ln' }))?.outcome), /denied/);

    // The right state with other arguments (or another tool) is foreign, and used up.
    const foreign = await a.call('write_note', { note: 'other' }, { inputResponses: YES, requestState: state });
    assert.match(String(verdictOf(foreign)?.reason), /another session, tool or set of arguments/);
    assert.match(String(verdictOf(await a.call('write_note', args, { inputResponses: YES, requestState: state }))?.reason), /already used/);

    // A fresh state works once; the same answer sent again is a replay.
    const second = await a.call('write_note', args);
    const ok = verdictOf(await a.call('write_note', args, { inputResponses: YES, requestState: second.requestState }));
    assert.equal(ok?.outcome, 'executed');
    const replay = verdictOf(await a.call('write_note', args, { inputResponses: YES, requestState: second.requestState }));
    assert.equal(replay?.outcome, 'denied');
    assert.match(String(replay?.reason), /already used/);
    await a.client.close();
    assert.equal(g.executed(), 1);
    const refused = g.log().filter((e) => e.event === 'input_refused');
    assert.equal(refused.length, 6);
  });

  it('a request state expires with the approval deadline', async () => {
    const g = stdioGate(1);
    const a = modernClient('slow-agent', { manual: true });
    await a.client.connect(g.transport());
    const first = await a.call('write_note', { note: 'late' });
    await new Promise((r) => setTimeout(r, 1500));
    const late = verdictOf(await a.call('write_note', { note: 'late' }, { inputResponses: YES, requestState: first.requestState }));
    assert.equal(late?.outcome, 'denied');
    assert.match(String(late?.reason), /expired/);
    await a.client.close();
    assert.equal(g.executed(), 0);
  });

  it('on stdio a request id in progress cannot be reused, so a cancel still withdraws the held write', async () => {
    // A long hold: the write must still be waiting when the same id comes again.
    const g = stdioGate(60, 45, true);
    const config = join(g.dir, 'lookfirst.yaml');
    const proc = spawn(NODE, [MAIN, 'serve', '--config', config], { env: { ...process.env, LOOKFIRST_NO_OPEN: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: Record<string, unknown>[] = [];
    let buf = '';
    proc.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        lines.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
        buf = buf.slice(i + 1);
      }
    });
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const send = (m: Record<string, unknown>) => proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
    // Ready first (a slow machine may take seconds to start the gate and its upstream).
    send({ id: 'ready', method: 'tools/list', params: { _meta: envelope } });
    assert.ok(await waitFor(() => lines.some((l) => l.id === 'ready'), 20_000), 'the gate answered tools/list');
    // Held on the page (no elicitation declared), then the same id again, then a cancel.
    send({ id: 'X', method: 'tools/call', params: { name: 'write_note', arguments: { note: 'dup' }, _meta: envelope } });
    assert.ok(await waitFor(() => held(g.log()), 10_000), 'the write is held');
    send({ id: 'X', method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: envelope } });
    assert.ok(await waitFor(() => lines.some((l) => l.id === 'X'), 15_000));
    assert.equal((lines.find((l) => l.id === 'X')?.error as { code?: number } | undefined)?.code, -32600);
    send({ method: 'notifications/cancelled', params: { requestId: 'X', reason: 'gave up', _meta: envelope } });
    await new Promise((r) => setTimeout(r, 500));
    // The id is free again once the cancelled call has ended.
    send({ id: 'X', method: 'tools/call', params: { name: 'echo', arguments: { again: true }, _meta: envelope } });
    assert.ok(await waitFor(() => lines.filter((l) => l.id === 'X').length === 2, 15_000));
    assert.ok(lines.filter((l) => l.id === 'X')[1]?.result);
    proc.stdin.end();
    await new Promise((r) => proc.once('exit', r));
    assert.equal(g.executed(), 0);
    assert.ok(g.log().some((e) => e.event === 'cancelled'));
  });

  it('a claimed identity that changes mid-session is logged and warned about', async () => {
    const g = stdioGate();
    const a = modernClient('first-name', { manual: true });
    await a.client.connect(g.transport());
    await a.call('echo', { x: 1 });
    await a.call('echo', { x: 2 }, { _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'second-name', version: '9' } } });
    await a.client.close();
    assert.match(g.stderr(), /now claims to be "second-name 9" \(was "first-name 1\.0\.0"\)/);
    const changed = g.log().find((e) => e.event === 'client_identity_changed');
    assert.equal(changed?.to, 'second-name 9');
  });

  it('over HTTP: the token is required, in-client approval runs once, and another client cannot use the state', async () => {
    const g = await httpGate('', true, true);
    const noToken = modernClient('anon');
    await assert.rejects(noToken.client.connect(new StreamableHTTPClientTransport(g.url)), /401|Unauthorized|bearer/i);
    const auth = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };
    const alice = modernClient('alice-agent', { manual: true });
    await alice.client.connect(new StreamableHTTPClientTransport(g.url, auth));
    assert.equal(alice.client.getNegotiatedProtocolVersion(), '2026-07-28');
    const asked = await alice.call('write_note', { note: 'alice' });
    assert.equal(asked.resultType, 'input_required');
    // Bob (another session: another client name) replays Alice's answer: refused, nothing runs.
    const bob = modernClient('bob-agent', { manual: true });
    await bob.client.connect(new StreamableHTTPClientTransport(g.url, auth));
    const stolen = verdictOf(await bob.call('write_note', { note: 'alice' }, { inputResponses: YES, requestState: asked.requestState }));
    assert.equal(stolen?.outcome, 'denied');
    assert.match(String(stolen?.reason), /another session/);
    const auto = modernClient('carol-agent', { human: () => APPROVE });
    await auto.client.connect(new StreamableHTTPClientTransport(g.url, auth));
    const v = verdictOf((await auto.client.callTool({ name: 'write_note', arguments: { note: 'carol' } })) as Record<string, unknown>);
    assert.equal(v?.outcome, 'executed');
    for (const c of [alice, bob, auto]) await c.client.close();
    await g.stop();
    assert.equal(g.executed(), 1);
  });

  it('a client that cannot elicit is asked out of band; its identical retry after the pending answer runs once', async () => {
    const g = await httpGate();
    const auth = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };
    const a = modernClient('no-elicit', { elicitation: false });
    await a.client.connect(new StreamableHTTPClientTransport(g.url, auth));
    const first = verdictOf(await a.call('write_note', { note: 'out of band' }));
    assert.equal(first?.outcome, 'pending');
    assert.equal(await decide(g.page, await pendingCall(g.page), 'approve', 'ivy'), 200);
    const retry = verdictOf(await a.call('write_note', { note: 'out of band' }));
    assert.equal(retry?.outcome, 'executed');
    assert.equal(retry?.call_id, first?.call_id);
    assert.equal(retry?.approved_by, 'web:ivy');
    await a.client.close();
    await g.stop();
    assert.equal(g.executed(), 1);
  });
});
