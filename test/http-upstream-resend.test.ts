/**
 * What the gate sends again when an HTTP upstream's session seems to end: a write never, a read once.
 * The upstream is a real process (test/fixtures/session-trap-upstream.mjs) that RUNS the first tools/call
 * it gets and then answers it as a session ending would be (404 or 400 naming the session, id-less), or
 * with an error that carries the request's id and mentions a "session" (the attack that once made the
 * gate pay twice). It records every call it runs.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { approve, NODE, ROOT, runCli, startAgent, textOf, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

const SERVER = join(ROOT, 'test/fixtures/session-trap-upstream.mjs');
const running = new Set<ChildProcess>();
after(() => {
  for (const p of running) p.kill('SIGKILL');
});

type Trap = '404' | '400-session' | '404-id' | '400-id';

/** Starts the upstream with its trap; returns the gate config, and what the upstream ran. */
async function setUp(trap: Trap, rules: string): Promise<{ config: string; ran: () => { name: string; session: string }[] }> {
  const dir = tmp();
  const effects = join(dir, 'effects.jsonl');
  const proc = spawn(NODE, [SERVER, '--effects', effects, '--trap', trap], { stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  assert.ok(await waitFor(() => /listening/.test(out), 10_000), out);
  const url = /listening (\S+)/.exec(out)![1];
  const config = writeConfig(dir, `upstreams:\n  bank:\n    url: ${url}\n${rules}`);
  const ran = () =>
    existsSync(effects)
      ? readFileSync(effects, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { name: string; session: string })
      : [];
  return { config, ran };
}

const RULE_ALLOWS_PAY = 'rules:\n  tools:\n    pay: { action: allow }\n';
const PAYMENT = { to: 'DE89370400440532013000', amount: 100 };

for (const trap of ['400-id', '404-id', '404', '400-session'] as const) {
  const status = trap.slice(0, 3);
  const carriesId = trap.endsWith('-id');
  describe(`when an HTTP upstream runs a write and then answers ${status} ${carriesId ? 'with the request id' : 'as if the session ended'}`, () => {
    it('runs it once, reports its outcome as unknown, never resends it, and keeps serving reads', async () => {
      const { config, ran } = await setUp(trap, RULE_ALLOWS_PAY);
      const agent = await startAgent(config, approve);
      try {
        const paid = await agent.call('pay', PAYMENT);
        const verdict = verdictOf(paid);
        assert.equal(verdict?.outcome, 'executed', JSON.stringify(paid));
        assert.equal(verdict?.readback, 'unclear', 'not reported as a clean success');
        assert.equal(verdict?.retry_safe, false);
        assert.equal(paid.isError, true);
        assert.match(textOf(paid), /may or may not have taken effect/);
        assert.deepEqual(
          ran().map((r) => r.name),
          ['pay'],
          'the payment ran once',
        );

        assert.match(textOf(await agent.call('balance', {})), /^balance done/, 'a read after it is answered');
        assert.equal(ran().filter((r) => r.name === 'pay').length, 1, 'still one payment');
        const stderr = agent.stderr();
        assert.doesNotMatch(stderr, /sent once more/);
        if (carriesId) {
          // The request's own answer: the session was not ended, and nothing says so.
          assert.doesNotMatch(stderr, /ended the gate's session/);
          assert.equal(new Set(ran().map((r) => r.session)).size, 1, 'one session throughout');
        } else {
          assert.match(stderr, new RegExp(`the server ended the gate's session \\(it answered HTTP ${status}`));
          assert.match(stderr, new RegExp(`tools/call is NOT sent again \\(the upstream answered HTTP ${status}`));
          assert.equal(new Set(ran().map((r) => r.session)).size, 2, 'the read went on a new session');
        }
      } finally {
        await agent.close();
      }
      assert.equal(runCli(['verify-log', '--config', config]).status, 0);
    });
  });
}

describe('when an approved write meets a 404 after the upstream ran it', () => {
  it('is not sent again, and its tool is blocked until a person unlocks it', async () => {
    const { config, ran } = await setUp('404', '');
    const agent = await startAgent(config, approve);
    try {
      const paid = await agent.call('pay', PAYMENT);
      assert.equal(agent.asked.length, 1, 'a person approved it');
      const verdict = verdictOf(paid);
      assert.deepEqual([verdict?.outcome, verdict?.readback, verdict?.blocked], ['executed', 'unclear', true], JSON.stringify(paid));
      assert.equal(ran().length, 1, 'the payment ran once');
    } finally {
      await agent.close();
    }
  });
});

// A read asking for progress takes the SDK path (gateway/read.ts); one that does not, the raw fast path.
for (const [trap, path] of [
  ['404', 'fast'],
  ['404', 'sdk'],
  ['400-session', 'fast'],
] as const) {
  describe(`when a read on the ${path} path meets ${trap === '404' ? 'a 404' : 'a 400 naming the session'} with no answer to it`, () => {
    it('is sent once more on one new session and answered transparently; stderr names the status', async () => {
      const { config, ran } = await setUp(trap, '');
      const agent = await startAgent(config, approve);
      try {
        const read = await agent.call('balance', {}, path === 'sdk' ? { onprogress: () => {} } : {});
        assert.equal(textOf(read), 'balance done (2 calls)');
        const sessions = ran().map((r) => r.session);
        assert.equal(sessions.length, 2);
        assert.notEqual(sessions[0], sessions[1], 'the second went on a new session');
        assert.match(agent.stderr(), new RegExp(`tools/call is sent once more, on the new session \\(the upstream answered HTTP ${trap.slice(0, 3)}`));
      } finally {
        await agent.close();
      }
    });
  });
}
