import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { cleanDeviceName, isDeviceKey, isRandomLookingKey, PAIRING_TTL_MS, Pairing, pairingUrl } from './pairing.js';
import { DeviceRegistry } from './registry.js';
import { newKey, raceWorkers, storeKits, testClock } from './test-kit.js';

const kits = storeKits();
after(() => {
  for (const k of kits) k.cleanup();
});

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

for (const kit of kits) {
  describe(`pairing (${kit.name} store)`, () => {
    const setup = () => {
      const clock = testClock();
      const { store, config } = kit.open(clock);
      const registry = new DeviceRegistry({ store, clock });
      return { clock, store, config, registry, pairing: new Pairing({ store, registry, clock }) };
    };

    it('starts a 6-digit code valid 10 minutes, stored only as its SHA-256', async () => {
      const { store, pairing, clock } = setup();
      const p = await pairing.start('alice');
      assert.match(p.code, /^[0-9]{6}$/);
      assert.match(p.pairingId, /^pr_[0-9a-f]{16}$/);
      assert.equal(p.expiresAtMs, clock.nowMs() + PAIRING_TTL_MS);
      const stored = JSON.stringify((await store.get('pairing', p.pairingId))?.value);
      assert.ok(!stored.includes(p.code));
      await store.close();
    });

    it('pairs once with the right code and registers the device for the pairing user', async () => {
      const { store, pairing, registry } = setup();
      const p = await pairing.start('alice');
      const key = newKey();
      const r = await pairing.redeem({ pairingId: p.pairingId, code: p.code, key, name: '  My\u202ePhone\u0000 ' });
      assert.equal(r.ok, true);
      assert.equal(r.status, 201);
      if (!r.ok) return;
      assert.equal(r.user, 'alice');
      const d = await registry.get(r.deviceId);
      assert.equal(d?.key, key);
      assert.equal(d?.name, 'MyPhone');
      const again = await pairing.redeem({ pairingId: p.pairingId, code: p.code, key: newKey(), name: 'x' });
      assert.equal(again.status, 410);
      await store.close();
    });

    it('without a pairing id, means the most recent open pairing', async () => {
      const { store, pairing, clock } = setup();
      await pairing.start('bob');
      clock.advance(1000);
      const p = await pairing.start('alice');
      const r = await pairing.redeem({ code: p.code, key: newKey(), name: 'n' });
      assert.equal(r.ok && r.user, 'alice');
      await store.close();
    });

    it('costs a try per wrong code and locks after 5 (410), even for the right code after', async () => {
      const { store, pairing } = setup();
      const p = await pairing.start('alice');
      const left: (number | undefined)[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await pairing.redeem({ pairingId: p.pairingId, code: wrong(p.code), key: newKey() });
        assert.equal(r.ok, false);
        left.push(r.ok ? -1 : r.triesLeft);
        assert.equal(r.status, i < 4 ? 403 : 410);
      }
      assert.deepEqual(left, [4, 3, 2, 1, 0]);
      const late = await pairing.redeem({ pairingId: p.pairingId, code: p.code, key: newKey() });
      assert.equal(late.status, 410);
      assert.match(late.ok ? '' : late.error, /locked/);
      await store.close();
    });

    it('refuses after 10 minutes (410)', async () => {
      const { store, pairing, clock } = setup();
      const p = await pairing.start('alice');
      clock.advance(PAIRING_TTL_MS + 1);
      assert.equal((await pairing.redeem({ pairingId: p.pairingId, code: p.code, key: newKey() })).status, 410);
      await store.close();
    });

    it('refuses a key that is not base64url of exactly 32 bytes (400), without costing a try', async () => {
      const { store, pairing } = setup();
      const p = await pairing.start('alice');
      for (const key of [
        '',
        'short',
        Buffer.alloc(31).toString('base64url'),
        Buffer.alloc(33).toString('base64url'),
        `${newKey()}=`,
        Buffer.alloc(32).toString('base64'),
        // Well-formed but not random: zeroed, constant, a short repeated pattern.
        Buffer.alloc(32).toString('base64url'),
        Buffer.alloc(32, 7).toString('base64url'),
        Buffer.from(Array.from({ length: 32 }, (_, i) => i % 7)).toString('base64url'),
      ])
        assert.equal((await pairing.redeem({ pairingId: p.pairingId, code: p.code, key })).status, 400);
      assert.equal((await pairing.redeem({ pairingId: p.pairingId, code: p.code, key: newKey() })).status, 201);
      await store.close();
    });

    it('lets 40 concurrent wrong guesses count exactly 5 tries', async () => {
      const { store, pairing } = setup();
      const p = await pairing.start('alice');
      const results = await Promise.all(Array.from({ length: 40 }, () => pairing.redeem({ pairingId: p.pairingId, code: wrong(p.code), key: newKey() })));
      assert.equal(results.filter((r) => r.status === 403).length, 4);
      assert.equal(results.filter((r) => r.status === 410).length, 36);
      assert.equal((await store.get<{ tries: number }>('pairing', p.pairingId))?.value.tries, 5);
      await store.close();
    });

    if (kit.name === 'sqlite')
      it('lets wrong guesses from 4 processes at once count exactly 5 tries', async () => {
        const { store, pairing, config } = setup();
        const p = await pairing.start('alice');
        const out = (await raceWorkers(Array.from({ length: 4 }, () => ['pair', JSON.stringify(config), p.pairingId, '6']))) as number[][];
        const statuses = out.flat();
        assert.equal(statuses.filter((s) => s === 403).length, 4);
        assert.equal(statuses.filter((s) => s === 410).length, 20);
        assert.equal((await store.get<{ tries: number }>('pairing', p.pairingId))?.value.tries, 5);
        await store.close();
      });
  });
}

describe('pairing helpers', () => {
  it('builds the pairing address with the id in the fragment', () => {
    assert.equal(pairingUrl('https://phone.example.com/', 'pr_0123456789abcdef'), 'https://phone.example.com/device/#pair=pr_0123456789abcdef');
  });

  it('accepts only canonical base64url keys of 32 bytes', () => {
    assert.ok(isDeviceKey(newKey()));
    assert.ok(!isDeviceKey(42));
  });

  it('keeps at most 2 combining marks in a row in a name', () => {
    assert.equal(cleanDeviceName(`A${'\u0301'.repeat(500)}b`), 'A\u0301\u0301b');
    assert.equal(cleanDeviceName('Zoë’s phone'), 'Zoë’s phone');
  });

  it('takes a random key and refuses one with fewer than 8 distinct bytes', () => {
    assert.ok(isRandomLookingKey(newKey()));
    assert.ok(isRandomLookingKey(Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('base64url')));
    assert.ok(!isRandomLookingKey(Buffer.from(Array.from({ length: 32 }, (_, i) => i % 7)).toString('base64url')));
  });

  it('cleans any name to at most 64 printable characters with no control, format or bidi character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        const n = cleanDeviceName(s);
        assert.ok([...n].length <= 64);
        assert.ok(!/\p{C}/u.test(n));
        assert.equal(n, n.trim());
      }),
    );
  });
});
