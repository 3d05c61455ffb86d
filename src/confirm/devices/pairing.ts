/**
 * Pairing a phone (decision 0018, "Pairing"): a 6-digit code, valid 10 minutes, works once, locked after
 * 5 wrong tries. Store kind `pairing`, key = pairing id (`pr_` + 16 hex), value `PairingRecord`; the code
 * itself is never stored, only its SHA-256.
 *
 * Security posture: every attempt first claims a try by compare-and-set on the record (only while fewer
 * than 5 were claimed) and only then compares the code, so that any number of concurrent guesses, from
 * any number of replicas, compare at most 5 codes. A right code consumes the pairing (`consumeOnce`: of
 * two concurrent right answers one registers a device). Anything unexpected (store unreadable, record of
 * the wrong shape) refuses the pairing.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from '../../clock.js';
import type { Store, StoreRecord } from '../../store/store.js';
import type { DeviceRecord, DeviceRegistry } from './registry.js';

/** Store kind of open pairings. */
export const PAIRING_KIND = 'pairing';
/** How long a pairing code is valid (ms). */
export const PAIRING_TTL_MS = 10 * 60_000;
/** Wrong tries after which a pairing is locked. */
export const PAIRING_MAX_TRIES = 5;
/** Longest device name kept (characters). */
export const DEVICE_NAME_MAX = 64;

/** An open pairing as the store keeps it. */
export interface PairingRecord {
  user: string;
  /** SHA-256 (hex) of the 6-digit code. */
  codeSha256: string;
  /** Tries claimed so far (right or wrong); at PAIRING_MAX_TRIES the pairing is locked. */
  tries: number;
  expiresAtMs: number;
  /** The device name the operator gave (`lookfirst pair --name`); it wins over the phone's own. */
  name?: string;
}

/** A started pairing: what the person types or scans. `code` exists only here, never in the store. */
export interface StartedPairing {
  /** `pr_` + 16 hex. */
  pairingId: string;
  /** 6 decimal digits. */
  code: string;
  expiresAtMs: number;
}

/** What the phone posts to pair (`POST /device/api/pair`). */
export interface RedeemRequest {
  /** Absent: the most recent open pairing is meant. */
  pairingId?: string;
  code: string;
  /** The device key: base64url of exactly 32 bytes, made on the phone. */
  key: string;
  name?: string;
}

/**
 * The answer to a pairing attempt, with its HTTP status: 201 paired; 400 a malformed key; 403 a wrong
 * code (`triesLeft` said); 410 no such open pairing (unknown, expired, used, or locked).
 */
export type RedeemResult =
  | { ok: true; status: 201; deviceId: string; user: string; device: DeviceRecord }
  | { ok: false; status: 400 | 403 | 410; error: string; triesLeft?: number };

const PAIRING_ID = /^pr_[0-9a-f]{16}$/;
const CODE = /^[0-9]{6}$/;
const B64URL = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Fewest distinct byte values a device key may hold. 32 random bytes hold about 30; fewer than 8 happens
 * by chance with probability under 1e-37, but is what a zeroed, constant or short-pattern key (a third-party
 * app's bug, or a key chosen to be guessed) looks like.
 */
export const MIN_DISTINCT_KEY_BYTES = 8;

/** Whether `key` is base64url (no padding) of exactly 32 bytes, in its one canonical spelling. */
export function isDeviceKey(key: unknown): key is string {
  if (typeof key !== 'string' || !B64URL.test(key)) return false;
  const bytes = Buffer.from(key, 'base64url');
  return bytes.length === 32 && bytes.toString('base64url') === key;
}

/** Whether a well-formed device key looks random: at least MIN_DISTINCT_KEY_BYTES distinct byte values. */
export function isRandomLookingKey(key: string): boolean {
  return new Set(Buffer.from(key, 'base64url')).size >= MIN_DISTINCT_KEY_BYTES;
}

/**
 * A device name fit to show and log: control, format (bidi, zero-width), private-use and unassigned
 * characters removed, runs of spaces made one, at most 2 combining marks in a row, trimmed, at most 64
 * characters (code points).
 * @returns the cleaned name; empty when nothing printable was left.
 */
export function cleanDeviceName(name: unknown): string {
  if (typeof name !== 'string') return '';
  const printable = name
    .replace(/\p{C}/gu, '')
    .replace(/[\s\p{Z}]+/gu, ' ')
    // Stacked combining marks draw over the lines around the name (in a listing, in the audit log).
    .replace(/(\p{M}{2})\p{M}+/gu, '$1')
    .trim();
  return [...printable].slice(0, DEVICE_NAME_MAX).join('').trim();
}

/**
 * The address a phone opens to pair: `<base>/device/#pair=<pairing id>` (the id in the fragment never
 * reaches a server log).
 * @param base the device address without a trailing slash (`confirm.device.public_url`, else http(s)://host:port).
 */
export function pairingUrl(base: string, pairingId: string): string {
  return `${base.replace(/\/+$/, '')}/device/#pair=${encodeURIComponent(pairingId)}`;
}

function isPairingRecord(v: unknown): v is PairingRecord {
  const p = v as Partial<PairingRecord> | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.user === 'string' &&
    typeof p.codeSha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(p.codeSha256) &&
    typeof p.tries === 'number' &&
    typeof p.expiresAtMs === 'number'
  );
}

const GONE = 'no open pairing with this id: it expired (10 minutes), was used, or was locked after 5 wrong tries; start a new one with lookfirst pair';

/** Starts and redeems pairings on the shared store. */
export class Pairing {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly registry: DeviceRegistry;

  /** @param opts the shared `store`, the `registry` a redeemed pairing registers in, `clock` (default systemClock). */
  constructor(opts: { store: Store; registry: DeviceRegistry; clock?: Clock }) {
    this.store = opts.store;
    this.registry = opts.registry;
    this.clock = opts.clock ?? systemClock;
  }

  /**
   * Opens a pairing for `user`, valid PAIRING_TTL_MS.
   * @param name the device name to give the phone that redeems it (the operator's label; optional).
   * @throws StoreError when the store cannot be written.
   */
  async start(user: string, name?: string): Promise<StartedPairing> {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const expiresAtMs = this.clock.nowMs() + PAIRING_TTL_MS;
    const label = cleanDeviceName(name);
    const value: PairingRecord = { user, codeSha256: sha256(code), tries: 0, expiresAtMs, ...(label ? { name: label } : {}) };
    for (;;) {
      const pairingId = `pr_${randomBytes(8).toString('hex')}`;
      if (await this.store.putIfAbsent(PAIRING_KIND, pairingId, value, { ttlMs: PAIRING_TTL_MS })) return { pairingId, code, expiresAtMs };
    }
  }

  /**
   * Redeems a pairing: claims a try, compares the code, and on a right code consumes the pairing and
   * registers the device. Never throws for a bad request; a store failure refuses (410).
   */
  async redeem(req: RedeemRequest): Promise<RedeemResult> {
    if (!isDeviceKey(req.key)) return { ok: false, status: 400, error: 'the device key must be base64url (no padding) of exactly 32 random bytes' };
    if (!isRandomLookingKey(req.key))
      return { ok: false, status: 400, error: 'the device key is not random (a few byte values repeated): make it with crypto.getRandomValues, 32 bytes' };
    try {
      return await this.attempt(req);
    } catch {
      return { ok: false, status: 410, error: 'the shared state store cannot be read or written: nothing was paired; try again once it is back' };
    }
  }

  private async attempt(req: RedeemRequest): Promise<RedeemResult> {
    const id = req.pairingId === undefined || req.pairingId === '' ? await this.latestOpen() : req.pairingId;
    if (id === undefined) return { ok: false, status: 410, error: 'no open pairing: start one with lookfirst pair or the page\'s "Pair a phone" button' };
    if (!PAIRING_ID.test(id)) return { ok: false, status: 410, error: GONE };
    // Claim a try first: the code is compared only by an attempt that won its try.
    let claimed: StoreRecord<PairingRecord> | undefined;
    for (let round = 0; round < 1000 && !claimed; round++) {
      const r = await this.store.get<unknown>(PAIRING_KIND, id);
      if (!r || !isPairingRecord(r.value)) return { ok: false, status: 410, error: GONE };
      if (r.value.tries >= PAIRING_MAX_TRIES)
        return { ok: false, status: 410, error: 'this pairing is locked after 5 wrong tries: start a new one with lookfirst pair' };
      const ttlMs = r.value.expiresAtMs - this.clock.nowMs();
      if (ttlMs <= 0) return { ok: false, status: 410, error: GONE };
      claimed = await this.store.compareAndSet<PairingRecord>(PAIRING_KIND, id, r.version, { ...r.value, tries: r.value.tries + 1 }, { ttlMs });
    }
    if (!claimed) return { ok: false, status: 410, error: 'too many attempts at once on this pairing: start a new one with lookfirst pair' };
    const given = typeof req.code === 'string' && CODE.test(req.code) ? sha256(req.code) : sha256(`not a code: ${String(req.code)}`);
    const right = timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(claimed.value.codeSha256, 'hex'));
    if (!right) {
      const triesLeft = PAIRING_MAX_TRIES - claimed.value.tries;
      return triesLeft > 0
        ? { ok: false, status: 403, error: `wrong code: ${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left`, triesLeft }
        : { ok: false, status: 410, error: 'wrong code; this pairing is now locked after 5 wrong tries: start a new one with lookfirst pair', triesLeft: 0 };
    }
    const used = await this.store.consumeOnce<unknown>(PAIRING_KIND, id);
    if (!used || !isPairingRecord(used.value) || used.value.codeSha256 !== claimed.value.codeSha256) return { ok: false, status: 410, error: GONE };
    const name = used.value.name ?? (cleanDeviceName(req.name) || 'phone');
    const device = await this.registry.register({ user: used.value.user, name, key: req.key });
    return { ok: true, status: 201, deviceId: device.id, user: device.user, device };
  }

  /** The open pairing started last (latest expiry: every pairing lives the same TTL), if any. */
  private async latestOpen(): Promise<string | undefined> {
    const open = (await this.store.list<unknown>(PAIRING_KIND)).filter(
      (r): r is StoreRecord<PairingRecord> => isPairingRecord(r.value) && r.value.tries < PAIRING_MAX_TRIES,
    );
    return open.sort((a, b) => b.value.expiresAtMs - a.value.expiresAtMs)[0]?.key;
  }
}
