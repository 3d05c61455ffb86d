/**
 * `lookfirst devices list [--json]` and `lookfirst devices revoke ID`: the paired devices of the config's
 * store. A revoked device keeps its record (listed as revoked) and its next signed request is refused on
 * every replica, since each request reads the record from the store. Never prints a device key.
 * Exit codes: 0 ok, 2 no device with that id, 1 an error (config, store).
 */
import { loadConfig } from '../../config/load.js';
import { type DeviceRecord, DeviceRegistry, toPublicDevice } from '../../confirm/devices/registry.js';
import { openStore } from '../../store/open.js';
import type { Store } from '../../store/store.js';
import { requireSharedStore } from './pair.js';

async function withRegistry<T>(configFile: string, what: string, f: (r: DeviceRegistry) => Promise<T>): Promise<T> {
  const config = loadConfig(configFile);
  requireSharedStore(config, what);
  const store: Store = await openStore(config.store);
  try {
    return await f(new DeviceRegistry({ store }));
  } finally {
    await store.close();
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
const toJson = (d: DeviceRecord) => {
  const p = toPublicDevice(d);
  return {
    id: p.id,
    user: p.user,
    name: p.name,
    paired_at: iso(p.pairedAtMs),
    revoked_at: iso(p.revokedAtMs),
    status: p.revokedAtMs === undefined ? 'active' : 'revoked',
  };
};

/** Runs `devices list`; returns 0. @throws ConfigError, LookfirstError `USAGE` (memory store), StoreError. */
export async function devicesListCommand(opts: { config: string; user?: string; json?: boolean }): Promise<number> {
  const devices = await withRegistry(opts.config, 'listing devices', (r) => r.list(opts.user));
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(devices.map(toJson))}\n`);
    return 0;
  }
  if (devices.length === 0) {
    process.stdout.write('no paired devices: pair a phone with lookfirst pair --config <file>\n');
    return 0;
  }
  for (const d of devices.map(toJson))
    process.stdout.write(
      `${d.id}  ${d.status.padEnd(7)}  ${d.user}  ${JSON.stringify(d.name)}  paired ${d.paired_at}${d.revoked_at ? `  revoked ${d.revoked_at}` : ''}\n`,
    );
  return 0;
}

/** Runs `devices revoke ID`; returns 0 (revoked, or already revoked) or 2 (no such device). @throws as list. */
export async function devicesRevokeCommand(id: string, opts: { config: string; json?: boolean }): Promise<number> {
  // Read first: a device revoked before is said to be so, with its date, not revoked "now" once more.
  const { before, revoked } = await withRegistry(opts.config, 'revoking a device', async (r) => ({
    before: (await r.get(id))?.revokedAtMs,
    revoked: await r.revoke(id),
  }));
  if (!revoked) {
    if (opts.json) process.stdout.write(`${JSON.stringify({ error: { code: 'DEVICE_UNKNOWN', message: `no device with id ${JSON.stringify(id)}` } })}\n`);
    process.stderr.write(`lookfirst: no device with id ${JSON.stringify(id)}: see lookfirst devices list for the ids\n`);
    return 2;
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(toJson(revoked))}\n`);
  else if (before !== undefined)
    process.stdout.write(
      `${revoked.id} (${revoked.user}, ${JSON.stringify(revoked.name)}) was already revoked on ${iso(before)}: nothing changed; its requests are refused on every replica\n`,
    );
  else process.stdout.write(`revoked ${revoked.id} (${revoked.user}, ${JSON.stringify(revoked.name)}): its next request is refused on every replica\n`);
  return 0;
}
