/**
 * The interlock's scope with two clients of `serve --transport http` (official SDK clients): the wait for
 * a person is per session, so one client's unanswered question does not hold up another client's call
 * of the same tool; the execution is gate-wide, so a call approved while another client's execution of
 * the same tool is still running waits for its outcome, and does not run when that outcome blocked the
 * tool (docs/decisions/0007-interlock-scope.md).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { FAKE_UPSTREAM, MAIN, NODE, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { decide, pageAddress, pendingCall } from './web-page.js';

const TOKEN = 'interlock-'.repeat(5);
const procs: ChildProcess[] = [];
after(() => {
  for (const p of procs) p.kill('SIGTERM');
});

/** The lines of a side-effects file (none yet: empty). */
function readLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The gate over HTTP, questions on the web page only, held long enough that a request waits for its person. */
async function gate(executionSeconds: number) {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  writeFileSync(join(dir, 'token.txt'), `${TOKEN}\n`);
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nconfirm:\n  elicitation: false\n  timeout_seconds: 60\n  hold_seconds: 55\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\nexecution:\n  timeout_seconds: ${executionSeconds}\nhttp:\n  token_file: token.txt\n`,
  );
  const proc = spawn(NODE, [MAIN, 'serve', '--config', config, '--transport', 'http', '--port', '0'], {
    env: { ...process.env, LOOKFIRST_NO_OPEN: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  procs.push(proc);
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  assert.ok(await waitFor(() => /MCP endpoint at/.test(err), 10_000), err);
  const url = new URL(/MCP endpoint at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)![1]!);
  return { url, page: await pageAddress(() => err), executed: () => readLines(effects), stderr: () => err };
}

/** An SDK client of the gate. */
async function client(url: URL, name: string) {
  const c = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  const call = (tool: string, args: Record<string, unknown>) =>
    c.request({ method: 'tools/call', params: { name: tool, arguments: args } }, ResultSchema, { timeout: 60_000 }) as Promise<Record<string, unknown>>;
  return { close: () => c.close(), call };
}

describe('the interlock with two HTTP clients', () => {
  it("one client's unanswered question does not hold up another client's call of the same tool", async () => {
    const g = await gate(10);
    const a = await client(g.url, 'agent-a');
    const b = await client(g.url, 'agent-b');
    try {
      const fromA = a.call('write_note', { note: 'from-a' });
      const cardA = await pendingCall(g.page, /from-a/);
      // A's question is open and nobody answers it; B's call of the same tool is asked at once.
      const fromB = b.call('write_note', { note: 'from-b' });
      const cardB = await pendingCall(g.page, /from-b/);
      assert.equal(await decide(g.page, cardB, 'approve', 'ops'), 200);
      assert.equal(verdictOf(await fromB)?.outcome, 'executed');
      assert.deepEqual(g.executed(), ['{"note":"from-b"}']);
      // A is still waiting for its person, and then gets its own answer.
      assert.equal(await decide(g.page, cardA, 'deny', 'ops'), 200);
      assert.equal(verdictOf(await fromA)?.outcome, 'denied');
      assert.deepEqual(g.executed(), ['{"note":"from-b"}'], 'the denied call never ran');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a call approved during another client's execution of the tool waits for its outcome, and a block stops it", async () => {
    const g = await gate(5);
    const a = await client(g.url, 'agent-a');
    const b = await client(g.url, 'agent-b');
    try {
      // A's write takes effect and then never answers: its outcome stays unknown until the execution timeout.
      const fromA = a.call('hang_write', { n: 'hang-a' });
      assert.equal(await decide(g.page, await pendingCall(g.page, /hang-a/), 'approve', 'ops'), 200);
      assert.ok(await waitFor(() => g.executed().length === 1, 5000), 'A is executing');
      // B is asked and approved while A's execution runs; B waits for A's outcome, which blocks the tool.
      const fromB = b.call('hang_write', { n: 'hang-b' });
      assert.equal(await decide(g.page, await pendingCall(g.page, /hang-b/), 'approve', 'ops'), 200);
      const va = verdictOf(await fromA);
      assert.deepEqual([va?.outcome, va?.blocked], ['executed', true]);
      const vb = verdictOf(await fromB);
      assert.deepEqual([vb?.outcome, vb?.blocked], ['denied', true], JSON.stringify(vb));
      assert.match(String(vb?.reason), /was blocked while this call waited/);
      assert.deepEqual(g.executed(), ['{"n":"hang-a"}'], "B never ran: A's outcome was not known");
    } finally {
      await a.close();
      await b.close();
    }
  });
});
