/**
 * An approval page left open in real headless Chromium while its gate goes away. When a new gate answers
 * at the same address, the tab's key is refused and the tab says plainly that the gate restarted and
 * where the new address is printed, and stops retrying. When nothing answers, it says so after the
 * give-up time instead of retrying forever. The pages run in this process with short reconnect times.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { PendingApprovals } from '../src/confirm/pending.js';
import { startWebApp, type WebApp } from '../src/web/app.js';
import { launchChromium } from './browser.js';

const RECONNECT = { retryMs: 100, giveUpMs: 1_000 };

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

  it('says the gate restarted and where the new address is printed, and stops retrying', async () => {
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
    assert.match(status ?? '', /The gate restarted/);
    assert.match(status ?? '', /standard error .*approval page at/);
    const seen = refused;
    await new Promise((r) => setTimeout(r, 5 * RECONNECT.retryMs));
    assert.equal(refused, seen, 'the tab no longer knocks on the new gate');
    await tab.close();
  });

  it('says the gate stopped or moved when nothing answers, instead of retrying forever', async () => {
    const app = await startWebApp({ host: '127.0.0.1', port: 0, pending: new PendingApprovals(), reconnect: RECONNECT });
    apps.push(app);
    const tab = await openTab(app);
    await app.close();
    await tab.waitForFunction(() => document.getElementById('status')?.className.includes('ended'), undefined, { timeout: 10_000 });
    assert.match((await tab.textContent('#status')) ?? '', /not answering at this address: it stopped, or it restarted on another port/);
    await tab.close();
  });
});
