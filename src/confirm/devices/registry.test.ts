import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DeviceRegistry, isDeviceId, toPublicDevice } from './registry.js';
import { newKey, storeKits, testClock } from './test-kit.js';

const kits = storeKits();
after(() => {
  for (const k of kits) k.cleanup();
});

for (const kit of kits) {
  describe(`device registry (${kit.name} store)`, () => {
    it('registers a device under a dev_ id and gets it back, key and all', async () => {
      const clock = testClock();
      const { store } = kit.open(clock);
      const registry = new DeviceRegistry({ store, clock });
      const d = await registry.register({ user: 'alice', name: 'Pixel', key: newKey() });
      assert.ok(isDeviceId(d.id));
      assert.equal(d.pairedAtMs, clock.nowMs());
      assert.deepEqual(await registry.get(d.id), d);
      assert.equal('key' in toPublicDevice(d), false);
      await store.close();
    });

    it('lists by user and leaves revoked devices out of activeFor, keeping their record', async () => {
      const clock = testClock();
      const { store } = kit.open(clock);
      const registry = new DeviceRegistry({ store, clock });
      const a1 = await registry.register({ user: 'alice', name: 'one', key: newKey() });
      clock.advance(1);
      const a2 = await registry.register({ user: 'alice', name: 'two', key: newKey() });
      await registry.register({ user: 'bob', name: 'bob', key: newKey() });
      assert.deepEqual(
        (await registry.list('alice')).map((d) => d.id),
        [a1.id, a2.id],
      );
      assert.equal((await registry.list()).length, 3);
      clock.advance(5);
      const revoked = await registry.revoke(a1.id);
      assert.equal(revoked?.revokedAtMs, clock.nowMs());
      assert.deepEqual(
        (await registry.activeFor('alice')).map((d) => d.id),
        [a2.id],
      );
      assert.equal((await registry.get(a1.id))?.revokedAtMs, clock.nowMs());
      // Revoking again changes nothing.
      clock.advance(5);
      assert.equal((await registry.revoke(a1.id))?.revokedAtMs, revoked?.revokedAtMs);
      await store.close();
    });

    it('knows no device for an unknown id, an id of the wrong form, or a record of the wrong shape', async () => {
      const clock = testClock();
      const { store } = kit.open(clock);
      const registry = new DeviceRegistry({ store, clock });
      assert.equal(await registry.get('dev_0000000000000000'), undefined);
      assert.equal(await registry.get('../../etc'), undefined);
      assert.equal(await registry.revoke('dev_0000000000000000'), undefined);
      await store.put('device', 'dev_1111111111111111', { id: 'dev_1111111111111111', user: 'alice' });
      assert.equal(await registry.get('dev_1111111111111111'), undefined);
      assert.deepEqual(await registry.list(), []);
      await store.close();
    });
  });
}
