/**
 * Real headless Chromium (Debian's `chromium` package) driven by playwright-core, for tests of the
 * approval page as a person and as a hostile site see it. `evil.test` and `attacker.test` resolve to
 * 127.0.0.1 inside this browser only, which is how a DNS-rebinding attack looks to the page.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian puts Chromium; `.ci/run` installs it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Starts headless Chromium with the flags this machine needs (no sandbox as root, no network chatter). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP evil.test 127.0.0.1, MAP attacker.test 127.0.0.1',
    ],
  });
}
