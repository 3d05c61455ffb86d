/**
 * The local approval page over real HTTP: approve and deny work and the log names who and how far to
 * trust it; a POST with a foreign Origin, a wrong Host, a cross-site Sec-Fetch-Site, a form body, a
 * missing or wrong CSRF token, or a hash or call id that is not pending is refused (403) and executes
 * nothing. (The same page in real Chromium: web-page-browser.test.ts.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type Agent, FS_SERVER, NODE, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { decide, decisionBody, http, jsonHeaders, pageAddress, pendingCall } from './web-page.js';

async function gateWithWeb(human?: 'declared-but-unhandled', extra = '') {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 20\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\n${extra}`,
  );
  // The client has no elicitation: the web page is the only channel.
  const agent = await startAgent(config, human);
  const page = await pageAddress(agent.stderr);
  return { dir, data, config, agent, page, port: page.port, key: page.key };
}

describe('web approval page', () => {
  it('approves over HTTP: the call executes and the verdict names the approver', async () => {
    const g = await gateWithWeb();
    const path = join(g.data, 'web.txt');
    const result = g.agent.call('write_file', { path, content: 'via web' });
    const p = await pendingCall(g.page);
    assert.equal(p.card.tool, 'write_file');
    assert.match(p.card.args, /via web/);
    assert.deepEqual(p.card.channels, ['web']);
    assert.equal(await decide(g.page, p, 'approve', 'alice', {}, { comment: 'looks right' }), 200);
    const v = verdictOf(await result);
    await g.agent.close();
    assert.equal(v?.outcome, 'executed');
    assert.equal(v?.approved_by, 'web:alice');
    assert.equal(readFileSync(path, 'utf8'), 'via web');
    const approval = readFileSync(join(g.dir, 'audit.jsonl'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"event":"approval"'))!;
    assert.match(approval, /"actor":"web:alice"/);
    assert.match(approval, /"trust":"self-declared"/);
    assert.match(approval, /"comment":"looks right"/);
  });

  it('takes the call when the client declared elicitation but cannot answer it (-32601)', async () => {
    const g = await gateWithWeb('declared-but-unhandled');
    const path = join(g.data, 'fallback.txt');
    const result = g.agent.call('write_file', { path, content: 'fell back' });
    const p = await pendingCall(g.page);
    assert.equal(await decide(g.page, p, 'approve', 'carol'), 200);
    const v = verdictOf(await result);
    await g.agent.close();
    assert.equal(v?.approved_by, 'web:carol');
    assert.equal(readFileSync(path, 'utf8'), 'fell back');
  });

  it('sends progress while the call waits for a person, so clients that reset their timeout keep waiting', async () => {
    const g = await gateWithWeb(undefined, '  progress_seconds: 0.3\n');
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result = g.agent.call('write_file', { path: join(g.data, 'slow.txt'), content: 'x' }, { onprogress: (p) => progress.push(p as never) });
    const p = await pendingCall(g.page);
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(await decide(g.page, p, 'approve', 'dana'), 200);
    assert.equal(verdictOf(await result)?.outcome, 'executed');
    await g.agent.close();
    assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
    assert.ok(
      progress.every((x, i) => i === 0 || x.progress > progress[i - 1]!.progress),
      JSON.stringify(progress),
    );
    assert.equal(progress[0]?.total, 20);
    assert.match(String(progress[0]?.message), /waiting for a person to approve write_file/);
  });

  it('does not warn of self-approval when the client cannot elicit (test/self-approval-warning.test.ts)', async () => {
    const g = await gateWithWeb();
    await g.agent.close();
    assert.doesNotMatch(g.agent.stderr(), /self-approval/);
  });

  it('denies over HTTP: nothing is written', async () => {
    const g = await gateWithWeb();
    const path = join(g.data, 'denied.txt');
    const result = g.agent.call('write_file', { path, content: 'no' });
    const p = await pendingCall(g.page);
    assert.equal(await decide(g.page, p, 'deny', 'bob'), 200);
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
    assert.notEqual(late, 200);
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
      const body = decisionBody(p, 'approve', 'mallory');
      const json = jsonHeaders(p, g.port);
      const post = (headers: Record<string, string>, b = body, path = `/decision?k=${g.key}`) => http(g.port, 'POST', path, headers, b);
      const attempts: [string, Promise<{ status: number }>][] = [
        ['foreign Origin', post({ ...json, origin: 'https://attacker.example' })],
        ['Origin null', post({ ...json, origin: 'null' })],
        ['wrong Host (DNS rebinding)', post({ ...json, host: `attacker.example:${g.port}` })],
        ['cross-site fetch', post({ ...json, 'sec-fetch-site': 'cross-site' })],
        ['same-site fetch (another port on this host)', post({ ...json, 'sec-fetch-site': 'same-site' })],
        ['missing CSRF token', post({ ...json, 'x-lookfirst-csrf': '' })],
        ['wrong CSRF token', post({ ...json, 'x-lookfirst-csrf': 'x'.repeat(43) })],
        ['a form post', post({ ...json, 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams(JSON.parse(body)).toString())],
        ['text/plain carrying JSON', post({ ...json, 'content-type': 'text/plain' })],
        ['other arguments (hash)', post(json, decisionBody(p, 'approve', 'mallory', { args_sha256: '0'.repeat(64) }))],
        ['another call id', post(json, decisionBody(p, 'approve', 'mallory', { call_id: 'not-a-call' }))],
      ];
      for (const [what, attempt] of attempts) assert.equal((await attempt).status, 403, what);
      assert.equal((await http(g.port, 'GET', `/decision?k=${g.key}&decision=approve`)).status, 405, 'GET cannot approve');
      assert.equal((await http(g.port, 'GET', `/?k=${g.key}`, { host: 'evil.example' })).status, 403, 'the page is not served to a foreign Host');
      for (const path of ['/', '/state.json', '/events', '/?k=wrong'])
        assert.equal((await http(g.port, 'GET', path)).status, 403, `${path}: without the access key nothing is shown`);
      assert.equal((await post(json, body, '/decision')).status, 403, 'without the access key nothing is decided');
      for (const bad of ['{', '[]', JSON.stringify({ call_id: p.callId, args_sha256: p.argsSha256, decision: 'yes', approver: 'x' })])
        assert.equal((await post(json, bad)).status, 400, `malformed body ${bad}`);
      assert.equal((await post(json, decisionBody(p, 'approve', ''))).status, 400, 'a decision without a name is not taken');
      assert.equal((await http(g.port, 'GET', '/favicon.ico')).status, 204, 'the browser asks for an icon without the key: no refusal');
      const page = await http(g.port, 'GET', `/?k=${g.key}`);
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.equal(page.headers['access-control-allow-origin'], undefined);
      assert.equal(existsSync(path), false);
      // Still pending after every attempt: the real person now denies it.
      const still = await pendingCall(g.page);
      assert.equal(still.callId, p.callId);
      assert.equal(await decide(g.page, still, 'deny', 'owner'), 200);
      assert.equal(verdictOf(await result)?.outcome, 'denied');
      await agent.close();
      assert.equal(existsSync(path), false);
      assert.match(readFileSync(join(g.dir, 'audit.jsonl'), 'utf8'), /"event":"web_refused"/);
    });
  });
});
