/**
 * The local approval page over real HTTP: approve and deny work; a POST with a foreign Origin, a wrong Host,
 * a cross-site Sec-Fetch-Site, or a missing or wrong CSRF token is refused and executes nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type Agent, FS_SERVER, NODE, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { decide, decisionForm, FORM, http, pageAddress, pendingCall } from './web-page.js';

async function gateWithWeb(human?: 'declared-but-unhandled') {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 20\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\n`,
  );
  // The client has no elicitation: the web page is the only channel.
  const agent = await startAgent(config, human);
  const page = await pageAddress(agent.stderr);
  return { dir, data, config, agent, page, port: page.port, key: page.key };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('web approval page', () => {
  it('approves over HTTP: the call executes and the verdict names the approver', async () => {
    const g = await gateWithWeb();
    const path = join(g.data, 'web.txt');
    const result = g.agent.call('write_file', { path, content: 'via web' });
    const p = await pendingCall(g.page);
    assert.match(p.page, /write_file/);
    assert.match(p.page, /via web/);
    assert.equal(await decide(g.page, p, 'approve', 'alice', { origin: `http://127.0.0.1:${g.port}`, 'sec-fetch-site': 'same-origin' }), 303);
    const v = verdictOf(await result);
    await g.agent.close();
    assert.equal(v?.outcome, 'executed');
    assert.equal(v?.approved_by, 'web:alice');
    assert.equal(readFileSync(path, 'utf8'), 'via web');
  });

  it('takes the call when the client declared elicitation but cannot answer it (-32601)', async () => {
    const g = await gateWithWeb('declared-but-unhandled');
    const path = join(g.data, 'fallback.txt');
    const result = g.agent.call('write_file', { path, content: 'fell back' });
    const p = await pendingCall(g.page);
    await http(g.port, 'POST', `/decide?k=${g.key}`, FORM, decisionForm(p, 'approve', 'carol'));
    const v = verdictOf(await result);
    await g.agent.close();
    assert.equal(v?.approved_by, 'web:carol');
    assert.equal(readFileSync(path, 'utf8'), 'fell back');
  });

  it('denies over HTTP: nothing is written', async () => {
    const g = await gateWithWeb();
    const path = join(g.data, 'denied.txt');
    const result = g.agent.call('write_file', { path, content: 'no' });
    const p = await pendingCall(g.page);
    assert.equal(await decide(g.page, p, 'deny', 'bob'), 303);
    const v = verdictOf(await result);
    await g.agent.close();
    assert.equal(v?.outcome, 'denied');
    assert.equal(existsSync(path), false);
  });

  it('withdraws a held call when the client disconnects: a late approval executes nothing', async () => {
    const g = await gateWithWeb();
    const path = join(g.data, 'orphan.txt');
    g.agent.call('write_file', { path, content: 'orphan' }).catch(() => {});
    const p = await pendingCall(g.page);
    const closing = g.agent.close();
    await new Promise((r) => setTimeout(r, 50));
    const late = await decide(g.page, p, 'approve', 'late').catch(() => 0);
    await closing;
    assert.notEqual(late, 303);
    assert.equal(existsSync(path), false);
    const log = readFileSync(join(g.dir, 'audit.jsonl'), 'utf8');
    assert.match(log, /"event":"cancelled"/);
    assert.match(log, /"event":"gate_stopped"/);
  });

  describe('when the request is hostile', () => {
    let g: Awaited<ReturnType<typeof gateWithWeb>>;
    let agent: Agent;

    it('refuses every forged approval and executes nothing', async () => {
      g = await gateWithWeb();
      agent = g.agent;
      const path = join(g.data, 'forged.txt');
      const result = agent.call('write_file', { path, content: 'forged' });
      const p = await pendingCall(g.page);
      const good = { csrf: p.csrf, call_id: p.callId, args_sha256: p.argsSha256, decision: 'approve', approver: 'mallory' };
      const attempts: [string, Promise<{ status: number }>][] = [
        ['foreign Origin', http(g.port, 'POST', `/decide?k=${g.key}`, { ...FORM, origin: 'https://attacker.example' }, form(good))],
        ['Origin null', http(g.port, 'POST', `/decide?k=${g.key}`, { ...FORM, origin: 'null' }, form(good))],
        ['wrong Host (DNS rebinding)', http(g.port, 'POST', `/decide?k=${g.key}`, { ...FORM, host: `attacker.example:${g.port}` }, form(good))],
        ['cross-site fetch', http(g.port, 'POST', `/decide?k=${g.key}`, { ...FORM, 'sec-fetch-site': 'cross-site' }, form(good))],
        ['missing CSRF token', http(g.port, 'POST', `/decide?k=${g.key}`, FORM, form({ ...good, csrf: '' }))],
        ['wrong CSRF token', http(g.port, 'POST', `/decide?k=${g.key}`, FORM, form({ ...good, csrf: 'x'.repeat(43) }))],
      ];
      for (const [what, attempt] of attempts) assert.equal((await attempt).status, 403, what);
      assert.equal((await http(g.port, 'GET', `/decide?k=${g.key}&decision=approve`)).status, 405, 'GET cannot approve');
      assert.equal((await http(g.port, 'GET', `/?k=${g.key}`, { host: 'evil.example' })).status, 403, 'the page is not served to a foreign Host');
      for (const path of ['/', '/pending.json', '/?k=wrong'])
        assert.equal((await http(g.port, 'GET', path)).status, 403, `${path}: without the access key nothing is shown`);
      assert.equal((await http(g.port, 'POST', '/decide', FORM, form(good))).status, 403, 'without the access key nothing is decided');
      const wrongHash = await http(g.port, 'POST', `/decide?k=${g.key}`, FORM, form({ ...good, args_sha256: '0'.repeat(64) }));
      assert.equal(wrongHash.status, 409, 'an approval bound to other arguments is refused');
      assert.equal(existsSync(path), false);
      // Still pending: the real person now denies it.
      const still = await pendingCall(g.page);
      assert.equal(still.callId, p.callId);
      await http(g.port, 'POST', `/decide?k=${g.key}`, FORM, form({ ...good, decision: 'deny', approver: 'owner' }));
      assert.equal(verdictOf(await result)?.outcome, 'denied');
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.match(readFileSync(join(g.dir, 'audit.jsonl'), 'utf8'), /"event":"web_refused"/);
    });
  });
});
