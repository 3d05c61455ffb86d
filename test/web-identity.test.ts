/**
 * The approval page behind an authenticating proxy (identity_header: the proxy names the person, logged
 * with trust `authenticated`; a request without the header is refused), and the page opening in the
 * browser on the first held call only (through the system's browser launcher, here a $BROWSER script),
 * by way of a file only the user can read: the access key is on no command line and in no environment.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FS_SERVER, NODE, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';
import { decide, http, pageAddress, pendingCall } from './web-page.js';

function config(dir: string, web: string) {
  const data = join(dir, 'data');
  mkdirSync(data);
  const path = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 20\n  elicitation: false\n  web: ${web}\n`,
  );
  return { data, path };
}

describe('approval page identity and opening', () => {
  it('takes the name from the proxy header, refuses requests without it, and warns at start', async () => {
    const dir = tmp();
    const { data, path } = config(dir, '{ enabled: true, host: 127.0.0.1, port: 0, identity_header: X-Forwarded-User }');
    const agent = await startAgent(path);
    assert.match(agent.stderr(), /trusts the X-Forwarded-User header unchecked/);
    const page = await pageAddress(agent.stderr);
    assert.equal((await http(page.port, 'GET', `/?k=${page.key}`)).status, 403, 'no header: not served');
    const target = join(data, 'sso.txt');
    const result = agent.call('write_file', { path: target, content: 'sso' });
    // pendingCall reads through the proxy's header like a browser behind it would.
    const shell = await http(page.port, 'GET', `/?k=${page.key}`, { 'x-forwarded-user': 'alice@example.com' });
    assert.equal(shell.status, 200);
    assert.match(shell.body, /name="lookfirst-identity" content="alice@example.com"/);
    const csrf = /name="lookfirst-csrf" content="([^"]+)"/.exec(shell.body)![1]!;
    let card: { callId: string; argsSha256: string } | undefined;
    for (let i = 0; i < 100 && !card; i++) {
      const state = JSON.parse((await http(page.port, 'GET', `/state.json?k=${page.key}`, { 'x-forwarded-user': 'alice@example.com' })).body);
      card = state.pending[0];
      if (!card) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(card);
    const p = { ...card, csrf, card: {} as never };
    // The typed name is ignored: the proxy's name is the actor.
    assert.equal(await decide(page, p, 'deny', 'someone-else', {}, {}), 403, 'a decision without the header is refused');
    assert.equal(await decide(page, p, 'approve', 'someone-else', { 'x-forwarded-user': 'alice@example.com' }), 200);
    const v = verdictOf(await result);
    await agent.close();
    assert.equal(v?.approved_by, 'web:alice@example.com');
    const approval = readFileSync(join(dir, 'audit.jsonl'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"event":"approval"'))!;
    assert.match(approval, /"trust":"authenticated"/);
  });

  it('refuses to listen off loopback without an authenticating proxy', async () => {
    const dir = tmp();
    const { path } = config(dir, '{ enabled: true, host: 0.0.0.0, port: 0 }');
    const { runCli } = await import('./helpers.js');
    const r = runCli(['serve', '--config', path]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /web\.host must be a loopback address .* unless an authenticating reverse proxy is in front/);
  });

  it('opens the page in the browser on the first held call only, through a private file: the key is on no command line', async () => {
    const dir = tmp();
    const { data, path } = config(dir, '{ enabled: true, host: 127.0.0.1, port: 0 }');
    const opened = join(dir, 'opened.txt');
    const seen = join(dir, 'seen.txt');
    const browser = join(dir, 'browser.sh');
    // The launcher records its arguments, its environment and the file it was given, as a browser would read it.
    writeFileSync(
      browser,
      `#!/bin/sh\nf="$1"; f="\${f#file://}"\n{ echo "ARGS $*"; env; stat -c 'MODE %a' "$f" "$(dirname "$f")"; cat "$f"; } >> ${JSON.stringify(seen)}\necho "$1" >> ${JSON.stringify(opened)}\n`,
    );
    chmodSync(browser, 0o755);
    // No DISPLAY in the environment: xdg-open falls back to $BROWSER, which records what it was asked to open.
    const agent = await startAgent(path, undefined, { LOOKFIRST_NO_OPEN: '0', BROWSER: browser });
    const page = await pageAddress(agent.stderr);
    assert.equal(existsSync(opened), false, 'nothing opens before a call is held');
    const first = agent.call('write_file', { path: join(data, 'a.txt'), content: 'a' });
    const p1 = await pendingCall(page);
    assert.ok(await waitFor(() => existsSync(opened), 5000), `the browser was not opened: ${agent.stderr()}`);
    const launched = readFileSync(opened, 'utf8').trim();
    const record = readFileSync(seen, 'utf8');
    const [args, ...rest] = record.split(/^MODE /m);
    assert.ok(!args!.includes(page.key), 'the access key is neither in the launcher\u2019s arguments nor in its environment');
    assert.match(launched, /lookfirst-[^/]+\/open-approval-page\.html$/);
    assert.deepEqual(
      rest.map((r) => r.split('\n')[0]),
      ['600', '700'],
      'the file is readable by this user only, in a private directory',
    );
    assert.ok(record.includes(`url=http://127.0.0.1:${page.port}/?k=${page.key}`), 'the file forwards to the keyed address');
    await decide(page, p1, 'deny', 'x');
    await first;
    const second = agent.call('write_file', { path: join(data, 'b.txt'), content: 'b' });
    await decide(page, await pendingCall(page), 'deny', 'x');
    await second;
    await agent.close();
    assert.equal(readFileSync(opened, 'utf8').trim().split('\n').length, 1, 'opened once per process');
    assert.equal(existsSync(launched.replace(/^file:\/\//, '')), false, 'the file is removed when the gate stops');
  });
});
