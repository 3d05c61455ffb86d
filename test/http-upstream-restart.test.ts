/**
 * A Streamable HTTP upstream that restarts: its sessions are gone, and it answers 404 for the old
 * session id (or 400 naming the session, as server-everything does). The gate opens one new session,
 * transparently: the read and the approved write after the restart just work, the write runs once, the
 * dead session id is never sent again after the answer that said so, and stderr says what happened.
 * A write that is itself the request meeting the 404 is never sent again (outcome unknown, tool blocked);
 * hostile servers that run a call and then answer so: test/http-upstream-resend.test.ts.
 * The upstream is a real SDK server process (test/fixtures/session-http-server.mjs), killed and started
 * again on the same port; it records every HTTP request it receives.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { approve, EVERYTHING_SERVER, NODE, ROOT, runCli, startAgent, textOf, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

const SERVER = join(ROOT, 'test/fixtures/session-http-server.mjs');
const running = new Set<ChildProcess>();
after(() => {
  for (const p of running) p.kill('SIGKILL');
});

interface Seen {
  http: string;
  session: string | null;
  method: string | null;
}

/** The requests the server recorded, in order. */
function requests(file: string): Seen[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Seen);
}

/** Starts the server on `port` (0: any); resolves with its port once it listens. */
async function startServer(port: number, events: string, unknown: '404' | '400'): Promise<{ port: number; stop: () => Promise<void> }> {
  const proc = spawn(NODE, [SERVER, String(port), '--events', events, '--unknown', unknown], { stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  assert.ok(await waitFor(() => /listening/.test(out), 10_000), out);
  const stop = async () => {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    running.delete(proc);
  };
  return { port: Number(/:(\d+)\/mcp/.exec(out)![1]), stop };
}

for (const unknown of ['404', '400'] as const) {
  describe(`an HTTP upstream that restarts and answers ${unknown} for the old session`, () => {
    it('gets one new session, transparently; the dead session id is never sent again; stderr says so', async () => {
      const dir = tmp();
      const before = join(dir, 'before.jsonl');
      const afterRestart = join(dir, 'after.jsonl');
      const again = join(dir, 'again.jsonl');
      let server = await startServer(0, before, unknown);
      const port = server.port;
      const config = writeConfig(dir, `upstreams:\n  notes:\n    url: http://127.0.0.1:${port}/mcp\n`);
      const agent = await startAgent(config, approve);
      try {
        assert.equal(textOf(await agent.call('echo', { n: 1 })), '{"n":1}');
        assert.equal(verdictOf(await agent.call('add_note', { n: 1 }))?.outcome, 'executed');
        const old = new Set(
          requests(before)
            .map((e) => e.session)
            .filter((s): s is string => s !== null),
        );
        assert.equal(old.size, 1, 'one session before the restart');
        const dead = [...old][0]!;

        await server.stop();
        server = await startServer(port, afterRestart, unknown);

        // The first request after the restart learns that the session ended; it and the write are answered.
        assert.equal(textOf(await agent.call('echo', { n: 2 })), '{"n":2}');
        const write = await agent.call('add_note', { n: 2 });
        assert.equal(verdictOf(write)?.outcome, 'executed', JSON.stringify(write));
        assert.equal(textOf(write), 'noted (1 since start)', 'the write ran once, on the restarted server');
        const seen = requests(afterRestart);
        assert.equal(seen.filter((e) => e.session === dead).length, 1, `the old id went out once, and never after its answer: ${JSON.stringify(seen)}`);
        assert.equal(seen[0]?.session, dead);
        assert.equal(seen.filter((e) => e.method === 'initialize').length, 1, 'one new session');
        assert.match(agent.stderr(), /the server ended the gate's session .*a new session is opened.*the old session id is never sent again/);

        // Restarted again with two reads in flight at once: both answered, still one new session.
        const second = requests(afterRestart).find((e) => e.session !== null && e.session !== dead)!.session!;
        await server.stop();
        server = await startServer(port, again, unknown);
        const [a, b] = await Promise.all([agent.call('echo', { n: 3 }), agent.call('echo', { n: 4 })]);
        assert.deepEqual([textOf(a), textOf(b)], ['{"n":3}', '{"n":4}']);
        const third = requests(again);
        const init = third.findIndex((e) => e.method === 'initialize');
        assert.equal(third.filter((e) => e.method === 'initialize').length, 1, `one new session for both: ${JSON.stringify(third)}`);
        assert.equal(third.slice(init).filter((e) => e.session === second).length, 0, 'the dead id is not sent once a new session is open');
      } finally {
        await agent.close();
        await server.stop();
      }
      assert.equal(runCli(['verify-log', '--config', config]).status, 0);
    });
  });
}

describe('an HTTP upstream that restarts, when the first request after it is a write', () => {
  it('does not send the write again: it is reported with its outcome unknown and its tool blocked; reads go on', async () => {
    const dir = tmp();
    const afterRestart = join(dir, 'after.jsonl');
    let server = await startServer(0, join(dir, 'before.jsonl'), '404');
    const config = writeConfig(dir, `upstreams:\n  notes:\n    url: http://127.0.0.1:${server.port}/mcp\n`);
    const agent = await startAgent(config, approve);
    try {
      assert.equal(textOf(await agent.call('echo', { n: 1 })), '{"n":1}');
      await server.stop();
      server = await startServer(server.port, afterRestart, '404');

      const write = await agent.call('add_note', { n: 1 });
      const verdict = verdictOf(write);
      assert.deepEqual([verdict?.outcome, verdict?.readback, verdict?.blocked], ['executed', 'unclear', true], JSON.stringify(write));
      assert.match(textOf(write), /answered HTTP 404 and no answer to the request.*never sent twice/);
      assert.equal(requests(afterRestart).filter((e) => e.method === 'tools/call').length, 1, 'the write went out once (and met the 404)');
      assert.match(agent.stderr(), /tools\/call is NOT sent again \(the upstream answered HTTP 404/);

      assert.equal(textOf(await agent.call('echo', { n: 2 })), '{"n":2}', 'a read after it is answered on a new session');
      assert.equal(requests(afterRestart).filter((e) => e.method === 'initialize').length, 1);
    } finally {
      await agent.close();
      await server.stop();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });
});

describe('server-everything over Streamable HTTP, restarted', () => {
  it('answers the next read after the restart without a gate restart', async () => {
    const dir = tmp();
    const port = await startServer(0, join(dir, 'probe.jsonl'), '404').then(async (s) => {
      await s.stop();
      return s.port;
    });
    const start = async () => {
      const proc = spawn(NODE, [EVERYTHING_SERVER, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      running.add(proc);
      let out = '';
      proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      assert.ok(await waitFor(() => new RegExp(String(port)).test(out), 10_000), out);
      return proc;
    };
    let proc = await start();
    const config = writeConfig(dir, `upstreams:\n  ev:\n    url: http://127.0.0.1:${port}/mcp\n`);
    const agent = await startAgent(config, approve);
    try {
      assert.equal(textOf(await agent.call('echo', { message: 'before' })), 'Echo: before');
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      proc = await start();
      assert.equal(textOf(await agent.call('echo', { message: 'after' })), 'Echo: after');
      assert.match(agent.stderr(), /the server ended the gate's session/);
    } finally {
      await agent.close();
      proc.kill('SIGTERM');
    }
  });
});
