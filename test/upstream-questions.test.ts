/**
 * An upstream that asks the client something during a call (elicitation): the question is relayed to the
 * one client with a call in flight, labelled as the upstream's, and its answer goes back to the upstream
 * only. When two clients are busy, the gate cannot tell whose question it is and refuses it; a client that
 * did not declare elicitation is not asked. Each case is logged as `upstream_request`.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { FAKE_UPSTREAM, MAIN, NODE, ResultSchema, ROOT, textOf, tmp, waitFor, writeConfig } from './helpers.js';

const FIXTURE = join(ROOT, 'test/fixtures/conformance-server.mjs');
const procs: ChildProcess[] = [];
after(() => {
  for (const p of procs) p.kill('SIGTERM');
});

async function started(args: string[], ready: RegExp, stream: 'stdout' | 'stderr'): Promise<{ match: RegExpExecArray; proc: ChildProcess }> {
  const proc = spawn(NODE, args, { env: { ...process.env, LOOKFIRST_NO_OPEN: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(proc);
  let out = '';
  proc[stream]!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  assert.ok(await waitFor(() => ready.test(out), 15_000), out);
  return { match: ready.exec(out)!, proc };
}

async function client(url: URL, name: string, elicitation: boolean) {
  const c = new Client({ name, version: '1' }, { capabilities: elicitation ? { elicitation: { form: {} } } : {} });
  const asked: string[] = [];
  if (elicitation)
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { response: 'blue' } };
    });
  await c.connect(new StreamableHTTPClientTransport(url));
  return { c, asked };
}

describe("an upstream's questions during a call", () => {
  it('reach the one busy client, labelled; are refused when two clients are busy or the client cannot answer', async () => {
    const fixture = (await started([FIXTURE, '0'], /listening (http:\/\/\S+)/, 'stdout')).match[1]!;
    const dir = tmp();
    const config = writeConfig(
      dir,
      `upstreams:\n  fixture:\n    url: ${fixture}\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\nrules:\n  tools:\n    "fixture__test_*": { action: allow }\nconfirm:\n  elicitation: false\n`,
    );
    const gate = await started([MAIN, 'serve', '--config', config, '--transport', 'http', '--port', '0'], /MCP endpoint at (http:\/\/\S+)/, 'stderr');
    const url = new URL(gate.match[1]!);
    const ask = (c: Client) =>
      c.request({ method: 'tools/call', params: { name: 'fixture__test_elicitation', arguments: { message: 'Favourite colour?' } } }, ResultSchema, {
        timeout: 15_000,
      }) as Promise<Record<string, unknown>>;

    const alice = await client(url, 'alice', true);
    assert.equal(textOf(await ask(alice.c)), 'User response: action=accept, content={"response":"blue"}');
    assert.deepEqual(alice.asked, [
      '[asked by upstream "fixture", not a lookfirst approval] Favourite colour?\n[end of the question asked by upstream "fixture", not a lookfirst approval]',
    ]);

    const bob = await client(url, 'bob', false);
    assert.match(textOf(await ask(bob.c)), /Elicitation not supported or error: .*the client did not declare elicitation/);

    // Bob is busy with a call that waits until cancelled; Alice's question cannot be attributed.
    const cancel = new AbortController();
    const slow = bob.c
      .request({ method: 'tools/call', params: { name: 'fake__slow', arguments: {} } }, ResultSchema, { signal: cancel.signal, timeout: 15_000 })
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    assert.match(textOf(await ask(alice.c)), /cannot tell which client "fixture" is asking \(2 have calls in flight\)/);
    assert.equal(alice.asked.length, 1);
    cancel.abort();
    await slow;

    await alice.c.close();
    await bob.c.close();
    gate.proc.kill('SIGTERM');
    await new Promise((r) => gate.proc.once('exit', r));
    const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.event === 'upstream_request')
      .map((e) => e.outcome);
    assert.deepEqual(log, ['relayed', 'refused', 'refused']);
  });
});
