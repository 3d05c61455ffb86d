/**
 * `lookfirst pair` and `lookfirst devices list | revoke` against a real SQLite store file, as a person
 * runs them: the code the CLI prints pairs a device once (through the Pairing class on the same file, as
 * the running gate would), the device is listed without its key, and once revoked its next signed request
 * is refused on this store.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { systemClock } from '../src/clock.js';
import { Pairing } from '../src/confirm/devices/pairing.js';
import { DeviceRegistry } from '../src/confirm/devices/registry.js';
import { signedHeaders, verifyDeviceRequest } from '../src/confirm/devices/signature.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite.js';
import { FAKE_UPSTREAM, NODE, runCli, tmp, writeConfig } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const UPSTREAM = `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\n`;

function setup(extra = 'confirm:\n  device:\n    enabled: true\n    public_url: https://phone.example.com\nstore:\n  kind: sqlite\n  path: state.db\n') {
  const dir = tmp('lf-device-cli-');
  dirs.push(dir);
  return { dir, config: writeConfig(dir, UPSTREAM + extra, { keygen: false }), db: join(dir, 'state.db') };
}

describe('lookfirst pair', () => {
  it('prints a code that pairs once, the pairing address, and a QR code', async () => {
    const { config, db } = setup();
    const shown = runCli(['pair', '--config', config, '--user', 'alice']);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /code: \d{3} \d{3}/);
    assert.match(shown.stdout, /open on the phone: https:\/\/phone\.example\.com\/device\/#pair=pr_[0-9a-f]{16}/);
    assert.match(shown.stdout, /[▀▄█]/, 'a terminal QR code');
    const json = runCli(['pair', '--config', config, '--user', 'alice', '--name', 'Work phone', '--json']);
    assert.equal(json.status, 0, json.stderr);
    const p = JSON.parse(json.stdout) as { pairing_id: string; code: string; url: string; expires_at: string };
    assert.match(p.code, /^\d{6}$/);
    assert.equal(p.url, `https://phone.example.com/device/#pair=${p.pairing_id}`);
    const store = createSqliteStore(db);
    try {
      const registry = new DeviceRegistry({ store });
      const pairing = new Pairing({ store, registry });
      const key = randomBytes(32).toString('base64url');
      const r = await pairing.redeem({ pairingId: p.pairing_id, code: p.code, key, name: 'ignored: the operator named it' });
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.user, 'alice');
      assert.equal(r.device.name, 'Work phone');
      assert.equal((await pairing.redeem({ pairingId: p.pairing_id, code: p.code, key })).status, 410, 'works once');
    } finally {
      await store.close();
    }
  });

  it('refuses when confirm.device is off, or the store is memory, saying what to do', () => {
    const off = setup('store:\n  kind: sqlite\n  path: state.db\n');
    const r1 = runCli(['pair', '--config', off.config]);
    assert.equal(r1.status, 1);
    assert.match(r1.stderr, /confirm\.device\.enabled: true/);
    const mem = setup('confirm:\n  device:\n    enabled: true\nstore:\n  kind: memory\n');
    const r2 = runCli(['pair', '--config', mem.config]);
    assert.equal(r2.status, 1);
    assert.match(r2.stderr, /memory.*sqlite or postgres.*Pair a phone/s);
  });
});

describe('lookfirst devices', () => {
  it('lists devices without keys, revokes one (exit 0), refuses an unknown id (exit 2), and the revoked device is refused', async () => {
    const { config, db } = setup();
    const store = createSqliteStore(db);
    try {
      const registry = new DeviceRegistry({ store });
      const key = Buffer.alloc(32, 3).toString('base64url');
      const device = await registry.register({ user: 'owner', name: 'Pixel', key });
      const list = runCli(['devices', 'list', '--config', config, '--json']);
      assert.equal(list.status, 0, list.stderr);
      const listed = JSON.parse(list.stdout) as { id: string; status: string }[];
      assert.deepEqual(
        listed.map((d) => [d.id, d.status]),
        [[device.id, 'active']],
      );
      assert.ok(!list.stdout.includes(key));
      const human = runCli(['devices', 'list', '--config', config]);
      assert.match(human.stdout, new RegExp(`${device.id}\\s+active\\s+owner`));
      assert.ok(!human.stdout.includes(key));

      const deps = { registry, store, clock: systemClock };
      const request = () => {
        const now = systemClock.nowMs();
        return { method: 'GET', path: '/device/api/cards', headers: signedHeaders(device, 'GET', '/device/api/cards', now, ''), body: '' };
      };
      assert.equal((await verifyDeviceRequest(deps, request())).ok, true);

      assert.equal(runCli(['devices', 'revoke', 'dev_0000000000000000', '--config', config]).status, 2);
      assert.equal(runCli(['devices', 'revoke', 'nonsense', '--config', config]).status, 2);
      const revoke = runCli(['devices', 'revoke', device.id, '--config', config]);
      assert.equal(revoke.status, 0, revoke.stderr);
      assert.ok(!revoke.stdout.includes(key));

      const refused = await verifyDeviceRequest(deps, request());
      assert.equal(refused.ok ? 0 : refused.status, 403);
      const after = JSON.parse(runCli(['devices', 'list', '--config', config, '--json']).stdout) as { status: string }[];
      assert.equal(after[0]?.status, 'revoked');
    } finally {
      await store.close();
    }
  });
});
