/**
 * `lookfirst pair` and `lookfirst devices list | revoke` against a real SQLite store file, as a person
 * runs them: the code the CLI prints pairs a device once (through the Pairing class on the same file, as
 * the running gate would), the device is listed without its key, and once revoked its next signed request
 * is refused on this store.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pairHint } from '../src/cli/devices-start.js';
import { systemClock } from '../src/clock.js';
import { Pairing } from '../src/confirm/devices/pairing.js';
import { DeviceRegistry } from '../src/confirm/devices/registry.js';
import { signedHeaders, verifyDeviceRequest } from '../src/confirm/devices/signature.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite.js';
import { FAKE_UPSTREAM, MAIN, NODE, runCli, tmp, writeConfig } from './helpers.js';

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
    // Not a terminal (a pipe): the address alone, no QR code and no colour codes.
    assert.doesNotMatch(shown.stdout, /[▀▄█]/, 'no QR code in a pipe');
    assert.ok(!shown.stdout.includes('\u001b['), 'no ANSI codes in a pipe');
    assert.doesNotMatch(shown.stdout, /this machine only/, 'a public_url needs no note');
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
    assert.match(r2.stderr, /memory.*sqlite or postgres/s);
    assert.doesNotMatch(r2.stderr, /Pair a phone/, 'no page button to name when confirm.web is off');
    const memWeb = setup('confirm:\n  web: { enabled: true }\n  device:\n    enabled: true\nstore:\n  kind: memory\n');
    const r3 = runCli(['pair', '--config', memWeb.config]);
    assert.equal(r3.status, 1);
    assert.match(r3.stderr, /memory.*sqlite or postgres.*"Pair a phone" button/s);
  });

  it('says plainly when the address is this machine only, and refuses port 0 (exit 1)', () => {
    const local = setup('confirm:\n  device:\n    enabled: true\nstore:\n  kind: sqlite\n  path: state.db\n');
    const r = runCli(['pair', '--config', local.config]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /open on the phone: http:\/\/127\.0\.0\.1:8473\/device\/#pair=/);
    assert.match(r.stdout, /127\.0\.0\.1 is this machine only: open the address on this machine, or set confirm\.device\.public_url/);
    const zero = setup('confirm:\n  device:\n    enabled: true\n    port: 0\nstore:\n  kind: sqlite\n  path: state.db\n');
    const z = runCli(['pair', '--config', zero.config]);
    assert.equal(z.status, 1);
    assert.equal(z.stdout, '', 'no dead address printed');
    assert.match(z.stderr, /confirm\.device\.port is 0 .*no phone can know the address.*fixed port/);
    // A program asking for JSON gets the pairing (it may know the real port), and the warning with it.
    const zj = runCli(['pair', '--config', zero.config, '--json']);
    assert.equal(zj.status, 0, zj.stderr);
    assert.match(String((JSON.parse(zj.stdout) as { warnings?: string[] }).warnings), /port is 0/);
  });

  it('warns when no call can belong to the user paired for', () => {
    const { config } = setup();
    const r = runCli(['pair', '--config', config, '--user', 'alice']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /no call belongs to alice: confirm\.device\.users maps none to alice and default_user is owner; this phone will see no cards/);
    assert.doesNotMatch(runCli(['pair', '--config', config]).stdout, /no call belongs/, 'default_user has calls');
    const mapped = setup(
      'confirm:\n  device:\n    enabled: true\n    public_url: https://phone.example.com\n    users:\n      p1: alice\nstore:\n  kind: sqlite\n  path: state.db\n',
    );
    assert.doesNotMatch(runCli(['pair', '--config', mapped.config, '--user', 'alice']).stdout, /no call belongs/);
  });

  it('draws the QR code on a terminal, and not under NO_COLOR', { skip: !existsSync('/usr/bin/script') && 'needs script(1) for a terminal' }, () => {
    const { config } = setup();
    const inTty = (noColor: boolean) =>
      spawnSync('/usr/bin/script', ['-qec', [NODE, MAIN, 'pair', '--config', config].map((a) => `'${a}'`).join(' '), '/dev/null'], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: noColor ? '1' : '', LOOKFIRST_NO_OPEN: '1' },
        timeout: 30_000,
      });
    const tty = inTty(false);
    assert.equal(tty.status, 0, tty.stderr);
    assert.match(tty.stdout, /[▀▄█]/, 'a terminal QR code');
    const plain = inTty(true);
    assert.equal(plain.status, 0, plain.stderr);
    assert.doesNotMatch(plain.stdout, /[▀▄█]/, 'NO_COLOR: the address alone');
    assert.match(plain.stdout, /open on the phone: https:\/\/phone\.example\.com/);
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
      assert.match(revoke.stdout, /^revoked /);
      const again = runCli(['devices', 'revoke', device.id, '--config', config]);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, new RegExp(`${device.id} .* was already revoked on \\d{4}-\\d{2}-\\d{2}T`));

      const refused = await verifyDeviceRequest(deps, request());
      assert.equal(refused.ok ? 0 : refused.status, 403);
      const after = JSON.parse(runCli(['devices', 'list', '--config', config, '--json']).stdout) as { status: string }[];
      assert.equal(after[0]?.status, 'revoked');
    } finally {
      await store.close();
    }
  });
});

describe('how serve says to pair', () => {
  it('names lookfirst pair on a shared store, and the page button or sqlite on a memory store', () => {
    assert.match(pairHint('sqlite', false, 'g.yaml'), /lookfirst pair --config g\.yaml/);
    assert.match(pairHint('memory', true, 'g.yaml'), /"Pair a phone" button/);
    assert.doesNotMatch(pairHint('memory', true, 'g.yaml'), /lookfirst pair --config/);
    assert.match(pairHint('memory', false, 'g.yaml'), /set store to sqlite.*confirm\.web/);
  });
});
