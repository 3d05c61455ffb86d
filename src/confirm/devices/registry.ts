/**
 * Paired devices (decision 0018, "Users and devices"): store kind `device`, key = device id (`dev_` + 16
 * hex), one record per phone, holding the HMAC key it registered when it paired. A revoked device keeps
 * its record, marked with `revokedAtMs`, so that it is listed as revoked and its requests are refused with
 * "revoked" on every replica: every signed request reads the record from the store (signature.ts), so no
 * replica's cache can keep a revoked device alive.
 *
 * Security posture: a record that does not have the expected shape is treated as absent (its requests are
 * refused). The key never leaves this module in a message or a listing meant for people (`toPublicDevice`).
 */
import { randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '../../clock.js';
import type { Store, StoreRecord } from '../../store/store.js';

/** Store kind of the device records. */
export const DEVICE_KIND = 'device';

/** A paired phone (or third-party app), as the store keeps it. */
export interface DeviceRecord {
  /** `dev_` + 16 lowercase hex. */
  id: string;
  /** The user whose calls this device shows and decides. */
  user: string;
  /** What the person called it (printable, at most 64 characters). */
  name: string;
  /** The HMAC-SHA256 key, base64url of exactly 32 bytes. Secret: never printed or logged. */
  key: string;
  /** When it paired (ms since the Unix epoch). */
  pairedAtMs: number;
  /** When it was revoked (ms since the Unix epoch); absent = active. */
  revokedAtMs?: number;
}

/** A device as people and listings see it: everything but the key. */
export type PublicDevice = Omit<DeviceRecord, 'key'>;

const DEVICE_ID = /^dev_[0-9a-f]{16}$/;

/** Whether `id` has the form of a device id (`dev_` + 16 lowercase hex). */
export function isDeviceId(id: unknown): id is string {
  return typeof id === 'string' && DEVICE_ID.test(id);
}

/** The record without its key, for listings and answers. */
export function toPublicDevice(d: DeviceRecord): PublicDevice {
  const { key: _key, ...rest } = d;
  return rest;
}

/** Whether a stored value is a device record of the expected shape (anything else counts as absent). */
function isDeviceRecord(r: StoreRecord<unknown>): r is StoreRecord<DeviceRecord> {
  const v = r.value as Partial<DeviceRecord> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.id === r.key &&
    isDeviceId(v.id) &&
    typeof v.user === 'string' &&
    v.user.length > 0 &&
    typeof v.name === 'string' &&
    typeof v.key === 'string' &&
    typeof v.pairedAtMs === 'number' &&
    (v.revokedAtMs === undefined || typeof v.revokedAtMs === 'number')
  );
}

/** The paired devices of every user, kept in the shared store. */
export class DeviceRegistry {
  private readonly store: Store;
  private readonly clock: Clock;

  /** @param opts `store` shared by every replica; `clock` for `pairedAtMs` and `revokedAtMs` (default systemClock). */
  constructor(opts: { store: Store; clock?: Clock }) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
  }

  /**
   * Records a newly paired device under a fresh id. The caller (pairing.ts) has checked the key's form
   * and cleaned the name.
   * @throws StoreError when the store cannot be written.
   */
  async register(d: { user: string; name: string; key: string }): Promise<DeviceRecord> {
    for (;;) {
      const id = `dev_${randomBytes(8).toString('hex')}`;
      const record: DeviceRecord = { id, user: d.user, name: d.name, key: d.key, pairedAtMs: this.clock.nowMs() };
      // 64 random bits make a collision unlikely; putIfAbsent makes one harmless.
      if (await this.store.putIfAbsent(DEVICE_KIND, id, record)) return record;
    }
  }

  /**
   * The device with this id, revoked or not; undefined for an id of the wrong form, an unknown id, or a
   * record of the wrong shape. @throws StoreError when the store cannot be read.
   */
  async get(id: string): Promise<DeviceRecord | undefined> {
    if (!isDeviceId(id)) return undefined;
    const r = await this.store.get<unknown>(DEVICE_KIND, id);
    return r && isDeviceRecord(r) ? r.value : undefined;
  }

  /** Every device (of `user` when given), revoked ones included, oldest pairing first. @throws StoreError. */
  async list(user?: string): Promise<DeviceRecord[]> {
    const all = (await this.store.list<unknown>(DEVICE_KIND)).filter(isDeviceRecord).map((r) => r.value);
    return all.filter((d) => user === undefined || d.user === user).sort((a, b) => a.pairedAtMs - b.pairedAtMs || a.id.localeCompare(b.id));
  }

  /** The user's devices that are not revoked. @throws StoreError. */
  async activeFor(user: string): Promise<DeviceRecord[]> {
    return (await this.list(user)).filter((d) => d.revokedAtMs === undefined);
  }

  /**
   * Revokes a device: it stays listed (as revoked) and its next request is refused on every replica.
   * Revoking a revoked device changes nothing and returns it.
   * @returns the revoked record, or undefined when no device has this id.
   * @throws StoreError when the store cannot be read or written.
   */
  async revoke(id: string): Promise<DeviceRecord | undefined> {
    if (!isDeviceId(id)) return undefined;
    for (;;) {
      const r = await this.store.get<unknown>(DEVICE_KIND, id);
      if (!r || !isDeviceRecord(r)) return undefined;
      if (r.value.revokedAtMs !== undefined) return r.value;
      const next: DeviceRecord = { ...r.value, revokedAtMs: this.clock.nowMs() };
      // Compare-and-set: a concurrent write (another revoke) makes this one re-read, never overwrite.
      if (await this.store.compareAndSet(DEVICE_KIND, id, r.version, next)) return next;
    }
  }
}
