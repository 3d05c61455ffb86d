/**
 * The phone page in real headless Chromium with a phone's viewport (390×844, touch), as the person uses
 * it: pair by typing the code, see the cards (numbered, with risk, diff and countdown), tap Approve, give
 * a high-risk call its second yes, and see a revoked phone told so. Against a real device endpoint on
 * loopback, a real SQLite store and the real registry, pairing, pending queue and cards. Screenshots go
 * to a temp folder, and to docs/screenshots when UPDATE_SCREENSHOTS=1. And the approval page's "Pair a
 * phone" button: its code and QR image (under the page's CSP), used by a phone to pair. And a voice
 * answer: Chromium's fake microphone plays an espeak-ng "yes", the page records and uploads it, and the
 * real recogniser (pocketsphinx) hears it.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { decodeRecording, encodeWav16k } from '../src/confirm/voice/audio.js';
import { startWebApp, type WebApp } from '../src/web/app.js';
import { CHROMIUM, launchChromium } from './browser.js';
import { call, type DeviceRig, startDeviceRig } from './device-rig.js';
import { ROOT } from './helpers.js';
import { removeTemp, tempDir } from './temp.js';

const DIFF = '--- a/notes/plan.md\n+++ b/notes/plan.md\n@@ -1,3 +1,3 @@\n # Plan\n-ship on Friday\n+ship on Monday\n owner: dana\n';

describe('device page in Chromium (phone viewport)', () => {
  let browser: Browser;
  let rig: DeviceRig;
  let context: BrowserContext;
  let tab: Page;
  const out = mkdtempSync(join(tmpdir(), 'lf-device-shots-'));
  // What the phone's screen shows (not the full page: the voice bar stays at the bottom of the screen).
  const shot = async (name: string) => {
    await tab.screenshot({ path: join(out, name) });
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync(join(ROOT, 'docs/screenshots'), { recursive: true });
      copyFileSync(join(out, name), join(ROOT, 'docs/screenshots', name));
    }
  };

  before(async () => {
    browser = await launchChromium();
    rig = await startDeviceRig();
    context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    tab = await context.newPage();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await rig?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('pairs by the typed code: the key is made on the phone and the gate records the device', async () => {
    const started = await rig.pairing.start('owner');
    await tab.goto(`${rig.endpoint.url}/device/#pair=${started.pairingId}`);
    await tab.locator('#pairing').waitFor();
    assert.equal(await tab.locator('#status').innerText(), 'ready to pair');
    // A wrong code first: refused, tries left said, nothing paired.
    await tab.locator('#pair-code').fill(started.code === '000000' ? '111111' : '000000');
    await tab.locator('#pair-submit').tap();
    await tab.locator('#pair-msg', { hasText: 'tries left' }).waitFor();
    assert.equal((await rig.registry.list()).length, 0);
    await tab.locator('#pair-code').fill(started.code);
    assert.equal(await tab.locator('#pair-msg').innerText(), '', 'typing again clears the refusal');
    await tab.locator('#pair-name').fill('Dana’s phone');
    await tab.locator('#pair-name').blur();
    await shot('device-pairing.png');
    await tab.locator('#pair-submit').tap();
    await tab.locator('#device').waitFor();
    await tab.locator('#status.ok').waitFor();
    const [device] = await rig.registry.list();
    assert.equal(device?.name, 'Dana’s phone');
    assert.equal(device?.user, 'owner');
    const stored = await tab.evaluate(() => JSON.parse(localStorage.getItem('lookfirst.device') ?? '{}'));
    assert.equal(stored.id, device?.id);
    assert.equal(stored.key, device?.key, 'the phone holds the key it registered');
    assert.equal(await tab.evaluate(() => location.hash), '', 'the pairing id is dropped from the address');
    assert.match(await tab.locator('#empty').innerText(), /Nothing is waiting/);
  });

  it('numbers two cards, shows risk, diff and countdown, and a tap on Approve decides the call with the device key', async () => {
    const a = rig.hold('write_file', { path: 'notes/plan.md', content: '# Plan\nship on Monday\nowner: dana\n' }, { diff: DIFF, riskReason: 'changes a file' });
    const b = rig.hold('send_email', { to: 'team@example.com', subject: 'Moved to Monday' }, { risk: 'low', riskReason: 'sends one e-mail' });
    const cards = tab.locator('.card');
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 2, undefined, { timeout: 10_000 });
    assert.equal(await cards.nth(0).locator('.position').innerText(), '1');
    assert.equal(await cards.nth(1).locator('.position').innerText(), '2');
    const first = tab.locator(`.card[data-call-id="${a.callId}"]`);
    assert.match(await first.locator('.tool').innerText(), /write_file/);
    assert.match(await first.locator('.risk').innerText(), /medium risk/);
    assert.match(await first.locator('.risk-reason').innerText(), /changes a file/);
    assert.equal(await first.locator('pre.diff .del').innerText(), '-ship on Friday\n');
    assert.equal(await first.locator('pre.diff .add').innerText(), '+ship on Monday\n');
    assert.match(await first.locator('.countdown').innerText(), /\d:\d\d left/);
    // Large touch targets: the buttons are at least 44 px tall.
    const box = await first.locator('button.approve').boundingBox();
    assert.ok(box && box.height >= 44, `approve button is ${box?.height}px tall`);
    await shot('device-cards.png');
    await first.locator('button.approve').tap();
    const answer = await a.answer;
    assert.equal(answer.kind, 'approved');
    if (answer.kind === 'approved') {
      assert.equal(answer.trust, 'device-key');
      assert.equal(answer.actor, 'device:owner/Dana’s phone');
      assert.equal(answer.evidence?.method, 'tap');
      assert.ok(answer.evidence?.checks.length && answer.evidence.checks.every((c) => c.ok), JSON.stringify(answer.evidence?.checks));
    }
    await tab.locator('#result', { hasText: 'Approved: executes now' }).waitFor();
    // The set closed with that decision: the other card is now card 1 of a fresh set.
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 1, undefined, { timeout: 10_000 });
    const rest = tab.locator(`.card[data-call-id="${b.callId}"]`);
    assert.equal(await rest.locator('.position').innerText(), '1');
    await rest.locator('button.deny').tap();
    assert.equal((await b.answer).kind, 'denied');
    await tab.locator('#result', { hasText: 'Denied' }).waitFor();
  });

  it('hides "Hold to speak" on a gate without voice, and says so when a new pairing link would replace this phone', async () => {
    const held = rig.hold('write_file', { path: 'v.txt' });
    await tab.locator(`.card[data-call-id="${held.callId}"]`).waitFor({ timeout: 10_000 });
    assert.equal(await tab.locator('#voice-bar').isHidden(), true, 'no recogniser: no voice button');
    const started = await rig.pairing.start('owner');
    await tab.goto(`${rig.endpoint.url}/device/#pair=${started.pairingId}`);
    await tab.locator('#pairing').waitFor();
    const note = await tab.locator('#pair-note').innerText();
    assert.match(note, /This phone is paired as Dana’s phone \(dev_[0-9a-f]{16}\) for user owner; pairing again replaces it\./);
    await tab.locator('#pair-keep').tap();
    await tab.locator(`.card[data-call-id="${held.callId}"]`).waitFor({ timeout: 10_000 });
    assert.equal(new URL(tab.url()).hash, '', 'the link is put away');
    await tab.locator(`.card[data-call-id="${held.callId}"] button.deny`).tap();
    assert.equal((await held.answer).kind, 'denied');
  });

  it('is installable (manifest and service worker) and its cache holds only the page, never an API answer', async () => {
    await tab.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    const cdp = await context.newCDPSession(tab);
    const manifest = await cdp.send('Page.getAppManifest');
    assert.deepEqual(manifest.errors, []);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    // A test browser context is incognito, which alone stops installing: nothing else may.
    assert.deepEqual(
      installabilityErrors.map((e) => e.errorId).filter((id) => id !== 'in-incognito'),
      [],
    );
    await new Promise((r) => setTimeout(r, 2_500)); // at least one more poll through the worker
    const cached = await tab.evaluate(async () => {
      const out: string[] = [];
      for (const k of await caches.keys()) for (const r of await (await caches.open(k)).keys()) out.push(new URL(r.url).pathname);
      return out;
    });
    assert.ok(cached.includes('/device/app.js'), JSON.stringify(cached));
    assert.deepEqual(
      cached.filter((p) => p.startsWith('/device/api/')),
      [],
    );
  });

  it('shows hostile tool names, arguments, reasons and diffs as text: no element, no script', async () => {
    const payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const h = rig.hold(`del${payload}`, { path: payload }, { riskReason: payload, diff: `--- a\n+++ b\n@@ -1 +1 @@\n-${payload}\n+${payload}\n` });
    const card = tab.locator(`.card[data-call-id="${h.callId}"]`);
    await card.waitFor({ timeout: 10_000 });
    assert.match(await card.locator('.tool').innerText(), /<img src=x onerror=/);
    assert.match(await card.locator('.summary').innerText(), /<script>/);
    assert.equal(await card.locator('img, script, iframe, svg').count(), 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await tab.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await card.locator('button.deny').tap();
    assert.equal((await h.answer).kind, 'denied');
  });

  it('asks a high-risk call a second time before it decides', async () => {
    const h = rig.hold('delete_file', { path: 'reports/2026.xlsx' }, { risk: 'high', riskReason: 'deletes a file' });
    const card = tab.locator(`.card[data-call-id="${h.callId}"]`);
    await card.waitFor({ timeout: 10_000 });
    assert.equal(await card.locator('button.approve').innerText(), 'Approve');
    await card.locator('button.approve').tap();
    const again = tab.locator(`.card.second[data-call-id="${h.callId}"]`);
    await again.waitFor({ timeout: 10_000 });
    assert.equal(await again.locator('button.approve').innerText(), 'Confirm again');
    assert.match(await again.locator('.second-note').innerText(), /second yes/);
    assert.ok(rig.pending.get(h.callId), 'the first yes decides nothing');
    // A double tap on Approve lands on "Confirm again": it takes no tap at first (force skips the wait).
    await again.locator('button.approve').tap({ force: true });
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(rig.pending.get(h.callId), 'a tap at once on Confirm again decides nothing');
    await shot('device-second-yes.png');
    await again.locator('button.approve').tap();
    const answer = await h.answer;
    assert.equal(answer.kind, 'approved');
    if (answer.kind === 'approved') assert.equal(answer.trust, 'device-key');
  });

  it('tells a revoked phone it was revoked and stops showing cards', async () => {
    const [device] = await rig.registry.list();
    await rig.registry.revoke(device!.id);
    rig.hold('write_file', { path: 'after.txt', content: 'x' });
    await tab.locator('#revoked').waitFor({ timeout: 10_000 });
    assert.match(await tab.locator('#revoked-why').innerText(), /revoked/);
    assert.equal(await tab.locator('#device').isHidden(), true);
    assert.equal(await tab.locator('#status').innerText(), 'revoked');
  });
});

describe('"Pair a phone" on the approval page, then the phone', () => {
  let browser: Browser;
  let rig: DeviceRig;
  let page: WebApp;
  before(async () => {
    browser = await launchChromium();
    rig = await startDeviceRig();
    page = await startWebApp({
      host: '127.0.0.1',
      port: 0,
      pending: rig.pending,
      pairing: { pairing: rig.pairing, user: 'owner', deviceUrl: rig.endpoint.url },
    });
  });
  after(async () => {
    await page?.close();
    await browser?.close();
    await rig?.close();
  });

  it('shows a code and a QR image of the pairing address; the phone pairs at that address with that code', async () => {
    const desk = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const cspErrors: string[] = [];
    desk.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    await desk.goto(page.url);
    await desk.locator('#pair-phone').click();
    const code = (await desk.locator('#pair-code').innerText()).trim();
    assert.match(code, /^\d{6}$/);
    const url = await desk.locator('#pair-url').innerText();
    assert.match(url, new RegExp(`^${rig.endpoint.url}/device/#pair=pr_[0-9a-f]{16}$`));
    await desk.waitForFunction(() => ((document.getElementById('pair-qr') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
    assert.ok(await desk.locator('#pair-qr').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the QR image loads under the CSP');
    assert.deepEqual(cspErrors, []);
    if (process.env.UPDATE_SCREENSHOTS === '1') await desk.locator('header').screenshot({ path: join(ROOT, 'docs/screenshots/page-pair-phone.png') });
    await desk.close();

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const tab = await phone.newPage();
    await tab.goto(url);
    await tab.locator('#pair-code').fill(code);
    await tab.locator('#pair-submit').tap();
    await tab.locator('#status.ok').waitFor({ timeout: 10_000 });
    const [device] = await rig.registry.list('owner');
    assert.equal(device?.name, 'My phone');
    await phone.close();
  });

  it('refuses POST /pair without the CSRF token or from another site, and opens no pairing', async () => {
    const port = page.port;
    const k = new URL(page.url).searchParams.get('k')!;
    const before = (await rig.store.list('pairing')).length;
    const noToken = await call(port, 'POST', `/pair?k=${k}`, { 'content-type': 'application/json' }, '{}');
    assert.equal(noToken.status, 403);
    const crossSite = await call(port, 'POST', `/pair?k=${k}`, { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }, '{}');
    assert.equal(crossSite.status, 403);
    const noKey = await call(port, 'POST', '/pair', { 'content-type': 'application/json' }, '{}');
    assert.equal(noKey.status, 403);
    assert.equal((await rig.store.list('pairing')).length, before);
  });
});

describe('answering by voice in Chromium (a recorded "yes" from espeak-ng, heard by pocketsphinx)', () => {
  it('keeps the cards on screen as they were while a recording is made (a card decided elsewhere does not shift "the second one")', async (t) => {
    // Removed after the browser and the rig that read it (hooks run in the order given), and at exit at the latest.
    const dir = tempDir('lf-device-freeze-');
    writeFileSync(join(dir, 'mic.wav'), encodeWav16k(new Int16Array(16_000 * 6)));
    // A recogniser that hears nothing: voice is on (the button shows), and silence decides nothing.
    const rig = await startDeviceRig({ recogniserArgv: [process.execPath, '-e', '', '{file}'] });
    t.after(() => rig.close());
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${join(dir, 'mic.wav')}`,
      ],
    });
    t.after(() => browser.close());
    t.after(() => removeTemp(dir));
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await context.grantPermissions(['microphone']);
    const tab = await context.newPage();
    const started = await rig.pairing.start('owner');
    await tab.goto(`${rig.endpoint.url}/device/#pair=${started.pairingId}`);
    await tab.locator('#pair-code').fill(started.code);
    await tab.locator('#pair-submit').tap();
    await tab.locator('#status.ok').waitFor({ timeout: 10_000 });
    const a = rig.hold('write_file', { path: 'a.txt' });
    const b = rig.hold('write_file', { path: 'b.txt' });
    const c = rig.hold('write_file', { path: 'c.txt' });
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 3, undefined, { timeout: 10_000 });
    const shown = () => tab.locator('.card').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-position')}:${e.getAttribute('data-call-id')}`));
    const before = await shown();
    assert.equal(await tab.locator('#voice-hint').innerText(), 'Say a number ("two"), "yes" for the last, or "no".');
    const voice = tab.locator('#voice');
    const box = (await voice.boundingBox())!;
    await tab.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await tab.mouse.down();
    await tab.locator('#voice.recording').waitFor();
    const decided = await rig.pending.decide(a.callId, a.argsSha256, false, { channel: 'web', actor: 'web:test', trust: 'authenticated' });
    assert.ok(decided.ok);
    await new Promise((r) => setTimeout(r, 4_500));
    assert.deepEqual(await shown(), before, 'the cards did not move while the person spoke');
    await tab.mouse.up();
    await tab.locator('#result:not([hidden])').waitFor({ timeout: 10_000 });
    await tab.waitForFunction(() => document.querySelectorAll('.card').length === 2, undefined, { timeout: 10_000 });
    assert.deepEqual(await shown(), [`1:${b.callId}`, `2:${c.callId}`], 'after the recording, the new set');
    assert.ok(rig.pending.get(b.callId) && rig.pending.get(c.callId), 'nothing was decided by the recording (silence)');
  });

  it('records while the button is held, sends a 16 kHz WAV, and the words "yes" approve the final card', async (t) => {
    const missing = ['espeak-ng', 'pocketsphinx_continuous'].filter((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0);
    if (missing.length) {
      t.skip(`${missing.join(' and ')} not installed (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us)`);
      return;
    }
    // Removed after the browser and the rig that read it (hooks run in the order given), and at exit at the latest.
    const dir = tempDir('lf-device-voice-');
    // Chromium's fake microphone plays this file in a loop: the word, then silence longer than the hold.
    execFileSync('espeak-ng', ['-v', 'en-us+f2', '-s', '120', '-w', join(dir, 'word.wav'), 'yes']);
    const word = decodeRecording(readFileSync(join(dir, 'word.wav')), 10_000).samples;
    const padded = new Int16Array(16_000 * 6);
    padded.set(word, 8_000);
    writeFileSync(join(dir, 'mic.wav'), encodeWav16k(padded));
    const rig = await startDeviceRig({ recogniserArgv: ['pocketsphinx_continuous', '-infile', '{file}', '-logfn', '/dev/null'] });
    t.after(() => rig.close());
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${join(dir, 'mic.wav')}`,
      ],
    });
    t.after(() => browser.close());
    t.after(() => removeTemp(dir));
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await context.grantPermissions(['microphone']);
    const tab = await context.newPage();
    const started = await rig.pairing.start('owner');
    await tab.goto(`${rig.endpoint.url}/device/#pair=${started.pairingId}`);
    await tab.locator('#pair-code').fill(started.code);
    await tab.locator('#pair-submit').tap();
    await tab.locator('#status.ok').waitFor({ timeout: 10_000 });
    const held = rig.hold('write_file', { path: 'spoken.txt', content: 'by voice' });
    await tab.locator(`.card[data-call-id="${held.callId}"]`).waitFor({ timeout: 10_000 });
    const voice = tab.locator('#voice');
    const box = (await voice.boundingBox())!;
    await tab.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await tab.mouse.down();
    await tab.locator('#voice.recording').waitFor();
    await new Promise((r) => setTimeout(r, 2_500));
    await tab.mouse.up();
    await tab.locator('#result:not([hidden])').waitFor({ timeout: 30_000 });
    const heard = await tab.locator('#voice-msg').innerText();
    const result = await tab.locator('#result').innerText();
    assert.match(heard, /^Heard "/, "the gate decoded and transcribed the page's WAV");
    assert.equal(result, 'Approved: executes now', `heard: ${heard}`);
    const answer = await held.answer;
    assert.equal(answer.kind, 'approved');
    if (answer.kind === 'approved') {
      assert.equal(answer.evidence?.method, 'voice');
      assert.match(String(answer.evidence?.transcript), /\byes\b/);
      assert.match(String(answer.evidence?.audioSha256), /^[0-9a-f]{64}$/);
    }
  });
});
