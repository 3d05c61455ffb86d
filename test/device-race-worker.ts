/**
 * One racer of the device suites' cross-process races (src/confirm/devices/*.test.ts): opens the store
 * named in argv, prints `ready`, waits for a line on stdin (the start signal), then
 *   pair   <store json> <pairing id> <attempts>: redeems the pairing with wrong codes, `attempts` at once;
 *   decide <store json> <device json> <set id> <call id> <nonce>: decides that card yes once;
 * and prints the outcomes as JSON. Run: node --import tsx test/device-race-worker.ts <mode> …
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Cards } from '../src/confirm/devices/cards.js';
import { Pairing } from '../src/confirm/devices/pairing.js';
import { type DeviceRecord, DeviceRegistry } from '../src/confirm/devices/registry.js';
import { PendingApprovals } from '../src/confirm/pending.js';
import { openStore } from '../src/store/open.js';
import type { StoreConfig } from '../src/store/store.js';

const [mode, configJson, ...rest] = process.argv.slice(2);
const store = await openStore(JSON.parse(configJson!) as StoreConfig);
const registry = new DeviceRegistry({ store });
const lines = createInterface({ input: process.stdin });
let run: () => Promise<unknown>;
if (mode === 'pair') {
  const [pairingId, attempts] = rest;
  const pairing = new Pairing({ store, registry });
  run = () =>
    Promise.all(
      Array.from({ length: Number(attempts) }, (_, i) =>
        pairing.redeem({ pairingId, code: 'x'.repeat(i % 3), key: randomBytes(32).toString('base64url'), name: 'racer' }).then((r) => r.status),
      ),
    );
} else {
  const [deviceJson, setId, callId, nonce] = rest;
  const pending = new PendingApprovals(undefined, { store });
  await pending.ready;
  const cards = new Cards({ store, pending, registry, defaultUser: 'owner' });
  run = async () => {
    const d = await cards.decide(JSON.parse(deviceJson!) as DeviceRecord, {
      setId: setId!,
      callId: callId!,
      nonce: nonce!,
      approve: true,
      how: { method: 'tap' },
    });
    pending.close();
    return d.ok ? { ok: true, status: d.status } : { ok: false, failed: d.failed };
  };
}
process.stdout.write('ready\n');
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
const out = await run();
process.stdout.write(`${JSON.stringify(out)}\n`);
lines.close();
await store.close();
