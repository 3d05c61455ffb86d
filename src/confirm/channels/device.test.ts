import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../store/contract-race.js';
import { createSqliteStore } from '../../store/sqlite/sqlite.js';
import { DeviceRegistry } from '../devices/registry.js';
import { heldCall, newKey, storeKits, testClock } from '../devices/test-kit.js';
import { createDeviceChannel } from './device.js';

const kits = storeKits();
after(() => {
  for (const k of kits) k.cleanup();
});

for (const kit of kits) {
  describe(`the device channel (${kit.name} store)`, () => {
    it('is available for a call whose user has an active device, and says how to pair otherwise', async () => {
      const clock = testClock();
      const { store } = kit.open(clock);
      const registry = new DeviceRegistry({ store, clock });
      const channel = createDeviceChannel({ store, defaultUser: 'owner', configFile: 'lookfirst.yaml' });
      await channel.ready;
      const call = heldCall('c1', { user: 'alice', deadlineMs: clock.nowMs() + 1000 });
      assert.match(String(channel.availability(call)), /no paired device for user "alice": pair a phone with lookfirst pair --config lookfirst\.yaml/);
      const d = await registry.register({ user: 'alice', name: 'p', key: newKey() });
      await waitFor(() => channel.availability(call) === true, 'the new device');
      assert.notEqual(channel.availability({ ...call, user: undefined }), true, 'a call without user belongs to the default user');
      await registry.revoke(d.id);
      await waitFor(() => channel.availability(call) !== true, 'the revocation');
      assert.equal(await channel.present(call, new AbortController().signal), true);
      channel.close();
      await store.close();
    });

    if (kit.name === 'sqlite')
      it('sees a device paired through another connection to the store (another process, a CLI)', async () => {
        const clock = testClock();
        const { store, config } = kit.open(clock);
        const channel = createDeviceChannel({ store, defaultUser: 'owner', configFile: 'f' });
        await channel.ready;
        const other = createSqliteStore((config as { path: string }).path);
        await new DeviceRegistry({ store: other }).register({ user: 'owner', name: 'p', key: newKey() });
        await waitFor(() => channel.availability(heldCall('c', { deadlineMs: 0 })) === true, 'the device paired elsewhere');
        channel.close();
        await other.close();
        await store.close();
      });
  });
}
