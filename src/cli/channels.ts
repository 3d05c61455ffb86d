/**
 * Builds the out-of-band confirmation channels from the config: the web page, the webhook (with its
 * decision endpoint) and the terminal, and prints at start what each one means for trust. Order of the
 * warnings follows the issue that defines them: a person reading the gate's start-up lines learns which
 * approvals can be trusted how far.
 */

import { readFileSync, statSync } from 'node:fs';
import { type Clock, systemClock } from '../clock.js';
import type { Config } from '../config/load.js';
import { LOOPBACK } from '../config/schema.js';
import type { OutOfBandChannel } from '../confirm/channel.js';
import { createTerminalChannel, openControllingTerminal, type TerminalPort } from '../confirm/channels/terminal.js';
import { createWebChannel } from '../confirm/channels/web.js';
import { createWebhookChannel, loadWebhookSecret } from '../confirm/channels/webhook.js';
import type { PendingApprovals } from '../confirm/pending.js';
import { maskUrl } from '../core/mask-url.js';
import { LookfirstError } from '../errors.js';
import type { Store } from '../store/store.js';
import { isAccessKey, MIN_ACCESS_KEY_CHARS, MIN_ACCESS_KEY_DISTINCT, startWebApp, type WebApp } from '../web/app.js';
import { startWebhookEndpoint, type WebhookEndpoint } from '../web/webhook-endpoint.js';
import { type Devices, startDevices } from './devices-start.js';

/** Channels and what must be closed at the end. */
export interface Channels {
  outOfBand: OutOfBandChannel[];
  close: () => Promise<void>;
}

/** What channel setup needs from the command. */
export interface ChannelDeps {
  config: Config;
  pending: PendingApprovals;
  /** The gate's store: paired devices, cards and nonces live there (confirm.device). */
  store?: Store;
  clock?: Clock;
  log: (line: string) => void;
  /** A refused request to the page or the decision endpoint (a security event). */
  refused: (what: string) => void;
  /** Opens the page in the browser; undefined when `LOOKFIRST_NO_OPEN=1`. */
  openBrowser?: (url: string) => void;
  /** What to say instead of the usual warning when no channel is enabled (promote --yes: the usual one alarms). */
  noChannel?: string;
  /** The terminal to ask on (tests); default: /dev/tty. */
  terminal?: () => TerminalPort | undefined;
}

/**
 * Starts the channels the config enables.
 * @throws LookfirstError `WEB_UNAVAILABLE` (address taken), `WEBHOOK_SECRET`, `WEBHOOK_CA`.
 */
export async function startChannels(deps: ChannelDeps): Promise<Channels> {
  const { config, pending, log } = deps;
  const c = config.confirm;
  const closers: (() => Promise<void>)[] = [];
  const outOfBand: OutOfBandChannel[] = [];
  try {
    // Devices first: the page's "Pair a phone" button needs the device page's address.
    let devices: Devices | undefined;
    if (c.device) {
      if (!deps.store) throw new LookfirstError('CONFIG_INVALID', "confirm.device needs the gate's store; this command runs without one");
      devices = await startDevices({
        device: c.device,
        configFile: config.file,
        store: deps.store,
        pending,
        clock: deps.clock ?? systemClock,
        log,
        refused: deps.refused,
        mode: c.mode,
        web: c.web.enabled,
      });
      closers.push(() => devices!.close());
      outOfBand.push(devices.channel);
    }
    let web: WebApp | undefined;
    if (c.web.enabled) {
      web = await startWebApp({
        pairing: devices?.pagePairing,
        host: c.web.host,
        port: c.web.port,
        pending,
        identityHeader: c.web.identityHeader,
        publicUrl: c.web.publicUrl,
        accessKey: c.web.keyFile === undefined ? undefined : loadPageKey(c.web.keyFile),
        onRefused: (reason, req) => deps.refused(`${req.method ?? ''} ${reason}`),
      });
      closers.push(() => web!.close());
      log(`approval page at ${web.url}`);
      if (c.web.identityHeader)
        log(
          `warning: confirm.web.identity_header is set: the page trusts the ${c.web.identityHeader} header unchecked. The page must be reachable only through the authenticating proxy that sets it${LOOPBACK.has(c.web.host) ? '' : ` (it listens on ${c.web.host}: firewall it)`}.`,
        );
    }
    outOfBand.push(createWebChannel({ enabled: c.web.enabled, url: () => web?.url, openBrowser: deps.openBrowser }));
    if (c.webhook) {
      const secret = loadWebhookSecret(c.webhook.secretFile);
      let ca: Buffer | undefined;
      if (c.webhook.caFile) {
        try {
          ca = readFileSync(c.webhook.caFile);
        } catch (err) {
          throw new LookfirstError(
            'WEBHOOK_CA',
            `cannot read confirm.webhook.ca_file ${c.webhook.caFile} (${(err as NodeJS.ErrnoException).code ?? 'error'}): give the PEM file of the CA that signed the receiver's certificate`,
          );
        }
      }
      const endpoint: WebhookEndpoint = await startWebhookEndpoint({
        host: c.webhook.listenHost,
        port: c.webhook.listenPort,
        secret,
        pending,
        onRefused: (reason) => deps.refused(reason),
      });
      closers.push(() => endpoint.close());
      const base = c.webhook.publicUrl ?? endpoint.url;
      log(`webhook: previews go to ${maskUrl(c.webhook.url, { path: true })}; decisions are taken at ${base}/decision/<call_id>`);
      if (!LOOPBACK.has(c.webhook.listenHost))
        log(
          `warning: the webhook decision endpoint listens on ${c.webhook.listenHost} over plain HTTP: put TLS in front of it, or tokens can be read on the way.`,
        );
      outOfBand.push(createWebhookChannel({ url: c.webhook.url, secret, ca, decisionBase: () => base, timeoutMs: c.webhook.timeoutMs }));
    }
    if (c.terminal) {
      const open = deps.terminal ?? openControllingTerminal;
      let port: TerminalPort | undefined | null = null;
      const terminal = () => {
        if (port === null) port = open();
        return port;
      };
      log(
        terminal()
          ? 'terminal: held calls are also asked on this terminal (y/yes approves; anything else is No)'
          : 'warning: confirm.terminal is on but this process has no controlling terminal: the terminal channel cannot ask',
      );
      outOfBand.push(createTerminalChannel({ enabled: true, pending, open: terminal }));
    }
    // Printed once everything started, so a failed start shows only what failed.
    if (c.mode === 'pending')
      log(
        `confirm.mode is pending: a held call answers at once pending_user_confirmation, and lookfirst_confirm runs it after a person's yes on ${[c.device && 'a paired device', c.web.enabled && 'the page', c.webhook && 'the webhook', c.terminal && 'the terminal'].filter(Boolean).join(', ') || 'no channel (enable one)'}; the client is never asked itself`,
      );
    // With elicitation on, its self-approval warning waits for a client that can elicit (gateway/self-approval.ts).
    else if (!c.elicitation && !c.web.enabled && !c.webhook && !c.terminal && !c.device)
      log(
        deps.noChannel ??
          'warning: no confirmation channel is enabled: every call that needs a person will be denied. Enable confirm.web, confirm.webhook, confirm.terminal or confirm.elicitation.',
      );
  } catch (err) {
    for (const close of closers) await close();
    throw err;
  }
  return {
    outOfBand,
    close: async () => {
      for (const close of closers) await close().catch(() => {});
    },
  };
}

/** Largest key file read (bytes): a key is one line of tens of characters. */
const MAX_PAGE_KEY_FILE_BYTES = 4096;

/**
 * Reads `confirm.web.key_file`: the page's access key, the same across restarts (surrounding whitespace
 * ignored).
 * @throws LookfirstError `WEB_UNAVAILABLE` when the file cannot be read, is not a small regular file (a FIFO
 *   would hang the start), or does not hold a usable key;
 *   the message says how to make one, and never shows the file's content.
 */
export function loadPageKey(path: string): string {
  const make = `e.g. openssl rand -hex 32 > ${path} && chmod 600 ${path}`;
  let text: string;
  try {
    // A FIFO or device (/dev/zero) would hang or fill memory at start, and a large file is not a key.
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_PAGE_KEY_FILE_BYTES)
      throw new LookfirstError(
        'WEB_UNAVAILABLE',
        `confirm.web.key_file ${path} must be a small regular file holding one key (${st.isFile() ? `this one has ${st.size} bytes` : 'this is not a regular file'}): ${make}`,
      );
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if (err instanceof LookfirstError) throw err;
    throw new LookfirstError(
      'WEB_UNAVAILABLE',
      `cannot read confirm.web.key_file ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}): create it with the page's access key, ${make}`,
    );
  }
  if (!isAccessKey(text))
    throw new LookfirstError(
      'WEB_UNAVAILABLE',
      `confirm.web.key_file ${path} must hold one random key of at least ${MIN_ACCESS_KEY_CHARS} characters of A-Z, a-z, 0-9, _ and -, at least ${MIN_ACCESS_KEY_DISTINCT} different (this one has ${text.length} characters, ${new Set(text).size} different, or others outside that set): ${make}`,
    );
  return text;
}
