/**
 * A real device endpoint for tests: a SQLite store in a temp dir, the real device registry, pairing,
 * pending queue and cards on it, and the endpoint on loopback over plain HTTP. `hold` puts a call on
 * channel `device` as the broker does; `pairDevice` pairs a key the way the phone page does. With
 * `recogniserArgv` the endpoint answers voice with that local recogniser command (pocketsphinx).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChannelAnswer } from '../src/confirm/channel.js';
import { Cards } from '../src/confirm/devices/cards.js';
import { Pairing } from '../src/confirm/devices/pairing.js';
import { DeviceRegistry } from '../src/confirm/devices/registry.js';
import { PendingApprovals } from '../src/confirm/pending.js';
import { createRecogniser } from '../src/confirm/voice/recogniser.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite.js';
import type { Store } from '../src/store/store.js';
import type { Risk } from '../src/types.js';
import { type DeviceEndpoint, startDeviceEndpoint } from '../src/web/device-endpoint.js';
import { createDeviceVoice } from '../src/web/device-voice.js';

/** A running rig; `close` stops the endpoint, withdraws held calls, closes the store and removes the dir. */
export interface DeviceRig {
  dir: string;
  store: Store;
  registry: DeviceRegistry;
  pairing: Pairing;
  pending: PendingApprovals;
  cards: Cards;
  endpoint: DeviceEndpoint;
  refused: string[];
  hold(tool: string, args: Record<string, unknown>, opts?: { risk?: Risk; riskReason?: string; diff?: string; user?: string }): Held;
  close(): Promise<void>;
}

/** A held call: its id, its args hash, and the answer it gets. */
export interface Held {
  callId: string;
  argsSha256: string;
  answer: Promise<ChannelAnswer>;
}

/** Starts the rig. */
export async function startDeviceRig(opts: { tls?: { cert: string; key: string }; recogniserArgv?: string[]; pendingMode?: boolean } = {}): Promise<DeviceRig> {
  const dir = mkdtempSync(join(tmpdir(), 'lookfirst-device-'));
  const store = createSqliteStore(join(dir, 'state.db'));
  const registry = new DeviceRegistry({ store });
  const pairing = new Pairing({ store, registry });
  const pending = new PendingApprovals(undefined, { store });
  await pending.ready;
  const cards = new Cards({ store, pending, registry, defaultUser: 'owner' });
  const refused: string[] = [];
  const endpoint = await startDeviceEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: opts.tls,
    pendingMode: opts.pendingMode,
    pairing,
    registry,
    cards,
    store,
    voice: opts.recogniserArgv
      ? createDeviceVoice({
          cards,
          hear: {
            recogniser: createRecogniser({ recogniser: { kind: 'command', argv: opts.recogniserArgv }, timeoutMs: 30_000 }),
            store,
            languages: ['en'],
            maxMs: 15_000,
          },
        })
      : undefined,
    onRefused: (r) => refused.push(r),
  });
  const aborts: AbortController[] = [];
  return {
    dir,
    store,
    registry,
    pairing,
    pending,
    cards,
    endpoint,
    refused,
    hold(tool, args, o = {}) {
      const argsCanonical = JSON.stringify(args);
      const argsSha256 = createHash('sha256').update(argsCanonical).digest('hex');
      const callId = randomUUID();
      const ac = new AbortController();
      aborts.push(ac);
      const summary = `${tool} ${Object.entries(args)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(' ')}`;
      const { answer } = pending.hold(
        {
          call: { callId, tool, upstream: 'files', upstreamTool: tool, args, argsCanonical, argsSha256 },
          summary,
          deadlineMs: Date.now() + 300_000,
          client: 'test-agent',
          user: o.user ?? 'owner',
          risk: o.risk ?? 'medium',
          riskReason: o.riskReason ?? 'writes a file',
          diff: o.diff,
        },
        ['device'],
        ac.signal,
      );
      return { callId, argsSha256, answer };
    },
    async close() {
      for (const ac of aborts) ac.abort('test over');
      await endpoint.close();
      await new Promise((r) => setTimeout(r, 50));
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A raw HTTP request to the endpoint (Host is the endpoint's own address unless given). */
export function call(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<{ status: number; json: Record<string, unknown>; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {}
        resolve({ status: res.statusCode ?? 0, json, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Pairs a fresh key for `user` through the API, as the phone page does; returns the device id and key. */
export async function pairDevice(rig: DeviceRig, user = 'owner', name = 'test phone'): Promise<{ id: string; key: string }> {
  const started = await rig.pairing.start(user);
  const key = randomBytes(32).toString('base64url');
  const body = JSON.stringify({ pairing_id: started.pairingId, code: started.code, key, name });
  const r = await call(rig.endpoint.port, 'POST', '/device/api/pair', { 'content-type': 'application/json' }, body);
  if (r.status !== 201) throw new Error(`pairing failed: ${r.status} ${JSON.stringify(r.json)}`);
  return { id: String(r.json.device_id), key };
}
