/**
 * Starts paired-device confirmation (confirm.device): the device registry, pairing, cards and (with
 * confirm.device.voice) voice answers, all on the gate's store so that every replica shows the same
 * cards and refuses a revoked device; the device endpoint that phones reach (web/device-endpoint.ts);
 * and the `device` channel that puts a held call on its user's phones. It lives in cli/ beside the
 * other channels because it starts a listener (web/).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { DeviceConfig } from '../config/load.js';
import { LOOPBACK } from '../config/schema.js';
import { createDeviceChannel, type DeviceChannel } from '../confirm/channels/device.js';
import { Cards } from '../confirm/devices/cards.js';
import { Pairing } from '../confirm/devices/pairing.js';
import { DeviceRegistry } from '../confirm/devices/registry.js';
import type { PendingApprovals } from '../confirm/pending.js';
import { POCKETSPHINX_EN_GRAMMAR, pocketsphinxArgv } from '../confirm/voice/pocketsphinx.js';
import { createRecogniser } from '../confirm/voice/recogniser.js';
import { LookfirstError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { PagePairing } from '../web/app.js';
import { startDeviceEndpoint } from '../web/device-endpoint.js';
import { createDeviceVoice } from '../web/device-voice.js';

/** What the device parts need from the gate. */
export interface DevicesDeps {
  device: DeviceConfig;
  /** The config file, named in the sentences that say how to pair. */
  configFile: string;
  store: Store;
  pending: PendingApprovals;
  clock: Clock;
  log: (line: string) => void;
  /** A refused device request (a security event). */
  refused: (what: string) => void;
  /**
   * `confirm.mode`: in `pending` an approved call runs only when the agent collects it, and the phone must
   * not say "executes now". Absent means `wait`.
   */
  mode?: 'wait' | 'pending';
  /** Whether the approval page (confirm.web) runs, so its "Pair a phone" button can be named. */
  web?: boolean;
}

/** The running device parts. */
export interface Devices {
  channel: DeviceChannel;
  /** What the approval page's "Pair a phone" button needs. */
  pagePairing: PagePairing;
  /** The device page's address (`…/device/`). */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the device endpoint and channel.
 * @throws LookfirstError `DEVICE_TLS` when the certificate or key cannot be read; `WEB_UNAVAILABLE` when
 *   the address is taken; StoreError when the store cannot be read.
 */
export async function startDevices(deps: DevicesDeps): Promise<Devices> {
  const { device: d, store, clock, pending } = deps;
  const registry = new DeviceRegistry({ store, clock });
  const pairing = new Pairing({ store, registry, clock });
  const cards = new Cards({ store, pending, registry, defaultUser: d.defaultUser, clock });
  // pocketsphinx: true runs Debian's recogniser with lookfirst's grammar, written to a private folder.
  let grammarDir: string | undefined;
  const recogniserOf = (r: NonNullable<DeviceConfig['voice']>['recogniser']) => {
    if (r.kind !== 'pocketsphinx') return r;
    grammarDir = mkdtempSync(join(tmpdir(), 'lookfirst-voice-'));
    const file = join(grammarDir, 'consent.gram');
    writeFileSync(file, POCKETSPHINX_EN_GRAMMAR, { mode: 0o600 });
    return { kind: 'command' as const, argv: pocketsphinxArgv(file) };
  };
  const removeGrammar = () => grammarDir && rmSync(grammarDir, { recursive: true, force: true });
  const voice =
    d.voice &&
    createDeviceVoice({
      cards,
      hear: {
        recogniser: createRecogniser({ recogniser: recogniserOf(d.voice.recogniser), timeoutMs: d.voice.timeoutMs }),
        store,
        languages: d.voice.languages,
        maxMs: d.voice.maxMs,
      },
    });
  const channel = createDeviceChannel({ store, defaultUser: d.defaultUser, configFile: deps.configFile });
  try {
    await channel.ready;
    const endpoint = await startDeviceEndpoint({
      host: d.host,
      port: d.port,
      tls: d.tls && { cert: readPem(d.tls.certFile, 'cert_file'), key: readPem(d.tls.keyFile, 'key_file') },
      publicUrl: d.publicUrl,
      pairing,
      registry,
      cards,
      voice,
      store,
      clock,
      pendingMode: deps.mode === 'pending',
      // The gate's log line reads "refused <what>": "refused POST on the device endpoint: <reason>".
      onRefused: (reason, req) => deps.refused(`${req.method ?? 'a request'} on the device endpoint: ${reason}`),
    });
    const url = `${endpoint.url}/device/`;
    deps.log(`device page at ${url} (${pairHint(store.kind, deps.web === true, deps.configFile)}${voice ? '; voice answers on' : ''})`);
    if (!LOOPBACK.has(d.host) && !d.tls)
      deps.log(`warning: the device endpoint listens on ${d.host} over plain HTTP: only the TLS proxy at ${d.publicUrl} may reach it (firewall it).`);
    return {
      channel,
      pagePairing: { pairing, user: d.defaultUser, deviceUrl: endpoint.url },
      url,
      close: async () => {
        channel.close();
        await endpoint.close();
        removeGrammar();
      },
    };
  } catch (err) {
    channel.close();
    removeGrammar();
    throw err;
  }
}

/**
 * How to pair a phone with this gate. `lookfirst pair` refuses a memory store (no other process sees it),
 * so with one the way is the approval page's button, or a shared store.
 */
export function pairHint(storeKind: Store['kind'], web: boolean, configFile: string): string {
  if (storeKind !== 'memory') return `pair a phone with: lookfirst pair --config ${configFile}`;
  return web
    ? `pair a phone with the approval page's "Pair a phone" button (lookfirst pair cannot reach a memory store; set store to sqlite to use it)`
    : 'to pair a phone, set store to sqlite (lookfirst pair cannot reach a memory store) or turn on confirm.web and use its "Pair a phone" button';
}

function readPem(file: string, key: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new LookfirstError(
      'DEVICE_TLS',
      `cannot read confirm.device.tls.${key} ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}): give a PEM file the gate can read`,
    );
  }
}
