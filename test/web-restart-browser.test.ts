/**
 * An approval page left open in real headless Chromium while its gate goes away. When a new gate answers
 * at the same address with the same access key (a key that outlives the process), the tab shows it lost
 * the gate, then the new gate's waiting calls, and a decision from it counts: no reload. With a new key,
 * the tab's key is refused and the tab says plainly that the gate restarted and to open the new address,
 * and stops retrying. When nothing answers, it says so after the give-up time, and still comes back if
 * the gate returns with the same key. The pages run in this process with short reconnect times.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ConfirmBroker } from '../src/confirm/broker.js';
import type { ApprovalRequest, ChannelAnswer, OutOfBandChannel } from '../src/confirm/channel.js';
import { PendingApprovals } from '../src/confirm/pending.js';
import { startWebApp, type WebApp } from '../src/web/app.js';
import { launchChromium } from './browser.js';
import { FS_SERVER, NODE, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { pageAddress } from './web-page.js';

const RECONNECT = { retryMs: 100, giveUpMs: 1_000 };
/** A key that outlives the gate process, as a key file would give it. */
const KEY = 'k'.repeat(8) + '0123456789abcdef0123456789abcdef';
/** SHA-256 of `{}`, the arguments every call here holds. */
const EMPTY_SHA = '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a';
const web: OutOfBandChannel = { name: 'web', availability: () => true, present: async () => true };

/** Holds one call named `tool` in `pending`, as the gate does: the person's answer, and a way to withdraw it. */
function hold(pending: PendingApprovals, callId: string, tool: string): { answer: Promise<ChannelAnswer>; withdraw: () => void } {
  const req: ApprovalRequest = {
    call: { callId, tool, upstream: 'files', upstreamTool: tool, args: {}, argsCanonical: '{}', argsSha256: EMPTY_SHA },
    summary: tool,
    deadlineMs: Date.now() + 60_000,
  };
  const controller = new AbortController();
  return { answer: new ConfirmBroker({ inClient: [], outOfBand: [web], pending }).confirm(req, controller.signal), withdraw: () => controller.abort() };
}

/** A port that was free a moment ago (the gate needs a fixed one for its address to survive a restart). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const statusOf = (tab: Page) => tab.evaluate(() => document.getElementById('status')?.className ?? '');

describe('approval page after its gate went away', () => {
  let browser: Browser;
  const apps: WebApp[] = [];
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    for (const a of apps) await a.close().catch(() => {});
    await browser?.close();
  });

  async function openTab(app: WebApp) {
    const tab = await browser.newPage();
    await tab.goto(app.url);
    await tab.waitForFunction(() => document.getElementById('status')?.className === 'ok');
    return tab;
  }

  it("with the same key: shows the gate lost, then the new gate's waiting calls, and decides them, without a reload", async () => {
    const oldPending = new PendingApprovals();
    const oldCall = hold(oldPending, 'old-1', 'before_restart');
    const first = await startWebApp({ host: '127.0.0.1', port: 0, pending: oldPending, reconnect: RECONNECT, accessKey: KEY });
    apps.push(first);
    const tab = await openTab(first);
    await tab.locator('.card[data-call-id="old-1"]').waitFor({ timeout: 10_000 });
    await tab.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });
    await first.close();
    oldPending.close();
    await tab.waitForFunction(() => document.getElementById('status')?.className === 'down', undefined, { timeout: 10_000 });
    assert.match((await tab.textContent('#status')) ?? '', /connection to the gate lost; retrying/);

    const newPending = new PendingApprovals();
    const newCall = hold(newPending, 'new-1', 'after_restart');
    const second = await startWebApp({ host: '127.0.0.1', port: first.port, pending: newPending, reconnect: RECONNECT, accessKey: KEY });
    apps.push(second);
    const card = tab.locator('.card[data-call-id="new-1"]');
    await card.waitFor({ timeout: 10_000 });
    assert.equal(await statusOf(tab), 'ok');
    assert.equal(await tab.locator('.card[data-call-id="old-1"]').count(), 0, "the old gate's call is gone from the tab");
    assert.equal(await tab.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true, 'no reload');
    // The decision carries the new gate's CSRF token, which the tab took from the stream.
    await tab.locator('#approver').fill('Alice');
    await card.locator('button.approve').click();
    assert.equal((await newCall.answer).kind, 'approved');
    newPending.close();
    oldCall.withdraw();
    await oldCall.answer;
    await tab.close();
  });

  it('a real gate with confirm.web.key_file on a fixed port: the tab carries on with the next gate process', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(dir, 'web.key'), `${KEY}\n`, { mode: 0o600 });
    const port = await freePort();
    const config = writeConfig(
      dir,
      `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 60\n  elicitation: false\n  web: { enabled: true, host: 127.0.0.1, port: ${port}, key_file: web.key }\n`,
    );
    const first = await startAgent(config);
    assert.deepEqual(await pageAddress(first.stderr), { port, key: KEY }, 'the printed address carries the key from the file');
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}/?k=${KEY}`);
    await tab.waitForFunction(() => document.getElementById('status')?.className === 'ok', undefined, { timeout: 10_000 });
    await tab.locator('#approver').fill('Alice');
    await first.close();
    await tab.waitForFunction(() => document.getElementById('status')?.className.startsWith('down'), undefined, { timeout: 10_000 });
    const second = await startAgent(config);
    assert.deepEqual(await pageAddress(second.stderr), { port, key: KEY });
    const path = join(data, 'after-restart.txt');
    const result = second.call('write_file', { path, content: 'still here' });
    const card = tab.locator('.card');
    await card.waitFor({ timeout: 15_000 });
    await card.locator('button.approve').click();
    assert.equal(verdictOf(await result)?.outcome, 'executed');
    assert.equal(readFileSync(path, 'utf8'), 'still here');
    await tab.close();
    await second.close();
  });

  it('after giving up, still comes back when the gate returns with the same key', async () => {
    const first = await startWebApp({ host: '127.0.0.1', port: 0, pending: new PendingApprovals(), reconnect: RECONNECT, accessKey: KEY });
    apps.push(first);
    const tab = await openTab(first);
    await first.close();
    await tab.waitForFunction(() => document.getElementById('status')?.className === 'down gone', undefined, { timeout: 10_000 });
    assert.match((await tab.textContent('#status')) ?? '', /keeps checking and comes back by itself/);
    const pending = new PendingApprovals();
    const call = hold(pending, 'late-1', 'after_a_while');
    const second = await startWebApp({ host: '127.0.0.1', port: first.port, pending, reconnect: RECONNECT, accessKey: KEY });
    apps.push(second);
    await tab.locator('.card[data-call-id="late-1"]').waitFor({ timeout: 10_000 });
    assert.equal(await statusOf(tab), 'ok');
    call.withdraw();
    await call.answer;
    pending.close();
    await tab.close();
  });

  it('with a new key: says the gate restarted and to open the new address it printed, and stops retrying', async () => {
    const first = await startWebApp({ host: '127.0.0.1', port: 0, pending: new PendingApprovals(), reconnect: RECONNECT });
    apps.push(first);
    const tab = await openTab(first);
    let refused = 0;
    await first.close();
    const second = await startWebApp({
      host: '127.0.0.1',
      port: first.port,
      pending: new PendingApprovals(),
      reconnect: RECONNECT,
      onRefused: () => refused++,
    });
    apps.push(second);
    await tab.waitForFunction(() => document.getElementById('status')?.className.includes('ended'), undefined, { timeout: 10_000 });
    const status = await tab.textContent('#status');
    assert.match(status ?? '', /The gate restarted with a new access key/);
    assert.match(status ?? '', /Open the new address/);
    assert.match(status ?? '', /standard error .*approval page at/);
    const seen = refused;
    await new Promise((r) => setTimeout(r, 5 * RECONNECT.retryMs));
    assert.equal(refused, seen, 'the tab no longer knocks on the new gate');
    await tab.close();
  });

  it('says the gate stopped or moved when nothing answers, instead of retrying at full pace forever', async () => {
    const app = await startWebApp({ host: '127.0.0.1', port: 0, pending: new PendingApprovals(), reconnect: RECONNECT });
    apps.push(app);
    const tab = await openTab(app);
    await app.close();
    await tab.waitForFunction(() => document.getElementById('status')?.className.includes('gone'), undefined, { timeout: 10_000 });
    assert.match((await tab.textContent('#status')) ?? '', /not answering at this address: it stopped, or it restarted on another port/);
    await tab.close();
  });
});
