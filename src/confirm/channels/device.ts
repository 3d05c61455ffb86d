/**
 * Paired devices as a confirmation channel (decision 0018). A held call of a user with at least one
 * active paired device is shown as a card on those devices: they poll for their cards
 * (confirm/devices/cards.ts) and the decision comes back through the pending queue, so `present` has
 * nothing to send and resolves at once.
 *
 * `availability` must not block, so it reads a cached set of the users that have an active device,
 * refreshed from the store on every change of kind `device` (by any replica: a device paired or revoked
 * elsewhere changes it here too). Until the first read is done the set is empty: a call is then not
 * shown on devices (fail closed) but on the other channels. This file reads the store's `device` records
 * itself rather than importing confirm/devices/ (sibling folders do not import each other, see
 * test/layering.test.ts); the shape it reads is DeviceRecord's `user` and `revokedAtMs`.
 */
import type { Store } from '../../store/store.js';
import type { OutOfBandChannel } from '../channel.js';

/** What the device channel needs. */
export interface DeviceChannelOptions {
  /** The shared store the device registry lives in. */
  store: Store;
  /** The user of a held call that names none (`confirm.device.default_user`). */
  defaultUser: string;
  /** The config file, named in the sentence saying how to pair a phone. */
  configFile: string;
}

/** The device channel, with its cache's first load and a way to stop following the store. */
export interface DeviceChannel extends OutOfBandChannel {
  /** Settles once the users with devices have been read the first time (rejects when the store cannot be read). */
  readonly ready: Promise<void>;
  /** Stops following the store. */
  close(): void;
}

/** Creates the `device` channel. */
export function createDeviceChannel(opts: DeviceChannelOptions): DeviceChannel {
  let users = new Set<string>();
  let reading: Promise<void> | undefined;
  let again = false;
  const refresh = async (): Promise<void> => {
    const next = new Set<string>();
    for (const r of await opts.store.list<{ user?: unknown; revokedAtMs?: unknown }>('device')) {
      const v = r.value;
      if (v && typeof v.user === 'string' && v.revokedAtMs === undefined) next.add(v.user);
    }
    users = next;
  };
  // One read at a time; changes during a read cause one more read, so the last change is never missed.
  const schedule = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = refresh().finally(() => {
      reading = undefined;
      if (again) {
        again = false;
        void schedule().catch(() => {});
      }
    });
    return reading;
  };
  const unwatch = opts.store.watch('device', () => void schedule().catch(() => {}));
  const ready = schedule();
  ready.catch(() => {});
  return {
    name: 'device',
    ready,
    availability(req) {
      const user = req.user ?? opts.defaultUser;
      return users.has(user) ? true : `no paired device for user "${user}": pair a phone with lookfirst pair --config ${opts.configFile}`;
    },
    async present() {
      return true;
    },
    close: unwatch,
  };
}
