/**
 * The approval page in real headless Chromium, as the person who keeps it open sees it: calls arrive
 * live, approve and deny (with a comment) decide them, the name is asked once and remembered, the
 * countdown runs out into a denial; after a keyboard decision focus goes on to the next waiting card; an
 * address without the key shows a page with the sentence, not JSON. And as a hostile site sees it: a
 * cross-site form post or fetch, and a DNS-rebinding address, decide nothing. Screenshots with one and
 * three pending calls (the README's) are written to a temp folder, and to docs/screenshots when
 * UPDATE_SCREENSHOTS=1.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { FS_SERVER, NODE, ROOT, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { pageAddress, pendingCall } from './web-page.js';

async function gate(timeoutSeconds = 60) {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: ${timeoutSeconds}\n  elicitation: false\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\n`,
  );
  const agent = await startAgent(config);
  const page = await pageAddress(agent.stderr);
  return { dir, data, agent, page, url: `http://127.0.0.1:${page.port}/?k=${page.key}` };
}

const auditLines = (dir: string) => readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n');

describe('approval page in Chromium', () => {
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  async function open(url: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(url);
    await page.locator('#status.ok').waitFor({ timeout: 10_000 });
    return page;
  }

  it('shows a call live, asks the name once, approves with a comment, and lists the outcome', async () => {
    const g = await gate();
    const tab = await open(g.url);
    assert.equal(await tab.locator('.card').count(), 0);
    const path = join(g.data, 'report.txt');
    const result = g.agent.call('write_file', { path, content: 'quarterly numbers' });
    const card = tab.locator('.card');
    await card.waitFor({ timeout: 10_000 });
    assert.match(await card.locator('h3').innerText(), /write_file/);
    assert.match(await card.locator('pre.args').innerText(), /quarterly numbers/);
    assert.match(await card.locator('.meta').innerText(), /asked by test-agent/);
    assert.match(await card.locator('.countdown').innerText(), /\d:\d\d left to decide/);
    assert.match(await tab.title(), /\(1\) lookfirst/);
    // No name yet: Approve does nothing but ask for it.
    await card.locator('button.approve').click();
    assert.match(await card.locator('.msg').innerText(), /Type your name/);
    assert.equal(existsSync(path), false);
    await tab.locator('#approver').fill('Alice Example');
    await card.locator('textarea').fill('checked with finance');
    await card.locator('button.approve').click();
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'executed');
    assert.equal(v?.approved_by, 'web:Alice Example');
    assert.equal(readFileSync(path, 'utf8'), 'quarterly numbers');
    await tab.locator('#history li', { hasText: 'executed' }).waitFor({ timeout: 5000 });
    assert.match(await tab.locator('#history li').first().innerText(), /approved by web:Alice Example → executed[\s\S]*checked with finance/);
    // Reloading keeps the name: it is asked once.
    await tab.reload();
    await tab.locator('#status.ok').waitFor();
    assert.equal(await tab.locator('#approver').inputValue(), 'Alice Example');
    await tab.close();
    await g.agent.close();
    const approval = auditLines(g.dir).find((l) => l.includes('"event":"approval"'))!;
    assert.match(approval, /"actor":"web:Alice Example"/);
    assert.match(approval, /"trust":"self-declared"/);
    assert.match(approval, /"comment":"checked with finance"/);
  });

  it('renders the diff of a file write: removed and added lines marked', async () => {
    const g = await gate();
    const path = join(g.data, 'settings.ini');
    writeFileSync(path, 'mode = safe\nlevel = 1\n');
    const tab = await open(g.url);
    const result = g.agent.call('write_file', { path, content: 'mode = fast\nlevel = 1\n' });
    const card = tab.locator('.card');
    await card.waitFor({ timeout: 10_000 });
    assert.match(await card.locator('.summary').innerText(), /write_file: writes 22 bytes to/);
    assert.equal(await card.locator('pre.diff .del').first().innerText(), '-mode = safe\n');
    assert.equal(await card.locator('pre.diff .add').first().innerText(), '+mode = fast\n');
    assert.match(await card.locator('pre.diff .hunk').first().innerText(), /^@@ /);
    // Text nodes only: the diff cannot inject markup into the page.
    assert.equal(await card.locator('pre.diff script').count(), 0);
    await tab.locator('#approver').fill('Dana');
    await card.locator('button.deny').click();
    assert.equal(verdictOf(await result)?.outcome, 'denied');
    assert.equal(readFileSync(path, 'utf8'), 'mode = safe\nlevel = 1\n');
    await tab.close();
    await g.agent.close();
  });

  it('denies by keyboard alone, and a reload or a closed tab decides nothing', async () => {
    const g = await gate();
    const path = join(g.data, 'keys.txt');
    const result = g.agent.call('write_file', { path, content: 'x' });
    const first = await open(g.url);
    await first.locator('.card').waitFor();
    await first.reload();
    await first.close();
    await new Promise((r) => setTimeout(r, 300));
    assert.ok((await pendingCall(g.page)).callId, 'still pending after a reload and a closed tab');
    const tab = await open(g.url);
    await tab.locator('#approver').fill('Bob');
    await tab.locator('#approver').press('Tab');
    await tab.locator('.card').focus();
    await tab.keyboard.press('d');
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'denied');
    assert.equal(v?.denied_by, 'web:Bob');
    assert.equal(existsSync(path), false);
    await tab.close();
    await g.agent.close();
  });

  it('after a keyboard decision, moves focus to the next waiting card, then to the list heading', async () => {
    const g = await gate();
    const tab = await open(g.url);
    await tab.locator('#approver').fill('Erin');
    const one = g.agent.call('write_file', { path: join(g.data, 'one.txt'), content: '1' });
    await tab.locator('.card').waitFor();
    // Another tool: one client's calls of one tool wait for a person one at a time (the interlock).
    const two = g.agent.call('create_directory', { path: join(g.data, 'two') });
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 2, undefined, { timeout: 10_000 });
    const [first, second] = await tab.$$eval('.card', (cards) => cards.map((c) => (c as HTMLElement).dataset.callId));
    const focusedCard = () =>
      tab.evaluate(() => (document.activeElement?.closest('.card') as HTMLElement | null)?.dataset.callId ?? document.activeElement?.id);
    await tab.locator(`.card[data-call-id="${first}"]`).focus();
    await tab.keyboard.press('a');
    assert.equal(verdictOf(await one)?.outcome, 'executed');
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 1, undefined, { timeout: 5000 });
    assert.equal(await focusedCard(), second, 'focus is in the second card');
    // A second press at once (a double press) lands on a card the person has not read: it decides nothing.
    await tab.keyboard.press('a');
    await tab
      .locator(`.card[data-call-id="${second}"] .msg`)
      .filter({ hasText: /just moved to: read it/ })
      .waitFor({ timeout: 5000 });
    assert.equal(await tab.locator('.card').count(), 1);
    assert.equal(existsSync(join(g.data, 'two')), false);
    // The keyboard goes on from there: after a moment, the next key decides the card now focused.
    await new Promise((r) => setTimeout(r, 1100));
    await tab.keyboard.press('d');
    assert.equal(verdictOf(await two)?.outcome, 'denied');
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 0, undefined, { timeout: 5000 });
    assert.equal(await focusedCard(), 'pending-h', 'none left: focus is on the list heading');
    assert.equal(readFileSync(join(g.data, 'one.txt'), 'utf8'), '1');
    assert.equal(existsSync(join(g.data, 'two')), false);
    await tab.close();
    await g.agent.close();
  });

  it('sends focus to the heading, not to another card, when the focused card times out', async () => {
    const g = await gate(3);
    const tab = await open(g.url);
    const early = g.agent.call('write_file', { path: join(g.data, 'early.txt'), content: 'x' });
    await tab.locator('.card').waitFor();
    await new Promise((r) => setTimeout(r, 1500));
    const late = g.agent.call('create_directory', { path: join(g.data, 'late') });
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 2, undefined, { timeout: 10_000 });
    await tab.locator('.card').first().focus();
    assert.equal(verdictOf(await early)?.outcome, 'denied');
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 1, undefined, { timeout: 5000 });
    assert.equal(await tab.evaluate(() => document.activeElement?.id), 'pending-h', 'a key pressed now decides nothing it was not aimed at');
    assert.equal(verdictOf(await late)?.outcome, 'denied');
    await tab.close();
    await g.agent.close();
  });

  it('shows a page with the sentence, not JSON, for an address without the key or with a wrong one', async () => {
    const g = await gate();
    const tab = await browser.newPage();
    const cspErrors: string[] = [];
    tab.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    for (const [path, sentence] of [
      ['/', /refused: missing access key: open the address the gate printed at start/],
      ['/?k=wrong', /refused: wrong access key \(the gate restarted with a new key, or the address was cut short\)/],
    ] as const) {
      const res = await tab.goto(`http://127.0.0.1:${g.page.port}${path}`);
      assert.equal(res?.status(), 403);
      assert.match(res?.headers()['content-type'] ?? '', /^text\/html/);
      assert.match(await tab.locator('#error').innerText(), sentence);
      assert.equal(await tab.title(), 'lookfirst: refused');
      // The page's own style sheet applies under the error page's CSP.
      assert.notEqual(await tab.evaluate(() => getComputedStyle(document.body).maxWidth), 'none');
    }
    assert.deepEqual(cspErrors, []);
    await tab.close();
    await g.agent.close();
  });

  it('counts down and shows the timeout as a denial', async () => {
    const g = await gate(3);
    const tab = await open(g.url);
    const result = g.agent.call('write_file', { path: join(g.data, 'late.txt'), content: 'x' });
    await tab.locator('.card').waitFor();
    assert.match(await tab.locator('.countdown').innerText(), /0:0[1-3] left/);
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'denied');
    assert.match(String(v?.reason), /timeout/);
    await tab.locator('#history li', { hasText: 'timed out' }).waitFor({ timeout: 5000 });
    assert.equal(await tab.locator('.card').count(), 0);
    await tab.close();
    await g.agent.close();
  });

  it('refuses a cross-site form post and fetch, and a rebinding Host, even with the access key', async () => {
    const g = await gate();
    const path = join(g.data, 'attack.txt');
    const result = g.agent.call('write_file', { path, content: 'pwned' });
    const p = await pendingCall(g.page);
    const target = `http://127.0.0.1:${g.page.port}/decision?k=${g.page.key}`;
    const body = JSON.stringify({ call_id: p.callId, args_sha256: p.argsSha256, decision: 'approve', approver: 'mallory' });
    // The worst case: the attacker knows the address and the pending call, and only lacks the browser's trust.
    const evil = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><form id=f method=post action="${target}" enctype="text/plain"><input name='${body.slice(0, -1)},"x":"' value='"}'></form>
<script>
fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)} }).finally(() => {
  fetch(${JSON.stringify(target)}, { method: 'POST', headers: { 'content-type': 'application/json', 'x-lookfirst-csrf': 'guess' }, body: ${JSON.stringify(body)} })
    .catch(() => {}).finally(() => { document.title = 'fetched'; document.getElementById('f').submit(); });
});
</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilPort = (evil.address() as AddressInfo).port;
    const tab = await browser.newPage();
    await tab.goto(`http://attacker.test:${evilPort}/`);
    await tab.waitForURL(/decision/, { timeout: 10_000 }).catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
    assert.match((await tab.content()) + (await tab.title()), /refused|fetched/);
    // A page on a name that resolves to loopback (DNS rebinding) is not served.
    const rebound = await tab.goto(`http://evil.test:${g.page.port}/?k=${g.page.key}`);
    assert.equal(rebound?.status(), 403);
    assert.match(await tab.content(), /is not this server's own address/);
    await tab.close();
    await new Promise<void>((r) => (evil as Server).close(() => r()));
    const still = await pendingCall(g.page);
    assert.equal(still.callId, p.callId, 'the call is still waiting: nothing decided it');
    assert.equal(existsSync(path), false);
    const owner = await open(g.url);
    await owner.locator('#approver').fill('owner');
    await owner.locator('button.deny').click();
    assert.equal(verdictOf(await result)?.outcome, 'denied');
    await owner.close();
    await g.agent.close();
    const refused = auditLines(g.dir).filter((l) => l.includes('"event":"web_refused"'));
    assert.ok(refused.length >= 1, 'refusals are in the audit log');
    assert.equal(existsSync(path), false);
  });

  it('renders one and three pending calls (screenshots), with look-alikes flagged', async () => {
    const g = await gate();
    const tab = await open(g.url);
    await tab.locator('#approver').fill('Alice');
    const out = tmp('lf-shots-');
    const calls: Promise<unknown>[] = [];
    calls.push(g.agent.call('write_file', { path: join(g.data, 'config.toml'), content: '[server]\nport = 8080\nlog_level = "debug"\n' }).catch(() => {}));
    await tab.locator('.card').waitFor();
    await tab.screenshot({ path: join(out, 'page-one-pending.png'), fullPage: true });
    calls.push(g.agent.call('move_file', { source: join(g.data, 'config.toml'), destination: join(g.data, 'config.old') }).catch(() => {}));
    calls.push(g.agent.call('create_directory', { path: join(g.data, 'p\u0430yroll') }).catch(() => {}));
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 3, undefined, { timeout: 10_000 });
    const warning = tab.locator('.card', { hasText: 'create_directory' }).locator('.warnings');
    assert.match(await warning.innerText(), /look-alike in path: .*p\\u0430yroll.* mixes Latin and Cyrillic/);
    await tab.screenshot({ path: join(out, 'page-three-pending.png'), fullPage: true });
    for (const f of ['page-one-pending.png', 'page-three-pending.png']) {
      const png = readFileSync(join(out, f));
      assert.equal(png.subarray(1, 4).toString(), 'PNG');
      if (process.env.UPDATE_SCREENSHOTS === '1') {
        mkdirSync(join(ROOT, 'docs/screenshots'), { recursive: true });
        copyFileSync(join(out, f), join(ROOT, 'docs/screenshots', f));
      }
    }
    await tab.close();
    await g.agent.close();
    await Promise.all(calls);
  });
});
