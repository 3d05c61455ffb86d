/**
 * The store interface: the few atomic operations lookfirst's state needs (pending approvals, holds,
 * interlock locks, one-time nonces, pins, taint memory, dry-run budgets), kept by kind and key.
 * Implementations live in the child folders (memory/, sqlite/, postgres/) and share one contract suite
 * (contract.ts).
 *
 * Security posture: the store is never the only record of a decision. The audit log is the evidence; the
 * store only holds what the gate needs to act on next (what is pending, what is locked, which nonces are
 * spent). Missing or unparseable state means deny: a read that fails throws, it never answers "absent"
 * for a record it could not read. Error messages name the kind and key, never the value.
 */
import type { Clock } from '../clock.js';
import { LookfirstError } from '../errors.js';

/** One stored record. `version` starts at 1 and grows by 1 with every write to the key. */
export interface StoreRecord<T = unknown> {
  kind: string;
  key: string;
  value: T;
  /** At least 1; +1 per write (an expired record's version continues while its row has not been swept). */
  version: number;
  /** When the record stops being visible (ms since the Unix epoch, by the store's clock); absent = never. */
  expiresAtMs?: number;
}

/** Options of a write. */
export interface PutOptions {
  /** Lifetime from now (ms, by the store's clock); absent = never expires. */
  ttlMs?: number;
}

/** Which backing a store uses. */
export type StoreKind = 'memory' | 'sqlite' | 'postgres';

/**
 * Atomic operations on JSON values, by kind and key. Every method that returns a record treats an
 * expired record as absent.
 */
export interface Store {
  readonly kind: StoreKind;
  /** The live record, or undefined. @throws StoreError `STORE_CORRUPT` when the stored value is not JSON. */
  get<T>(kind: string, key: string): Promise<StoreRecord<T> | undefined>;
  /** Creates the record unless a live one exists; undefined when one does. */
  putIfAbsent<T>(kind: string, key: string, value: T, opts?: PutOptions): Promise<StoreRecord<T> | undefined>;
  /** Unconditional upsert. */
  put<T>(kind: string, key: string, value: T, opts?: PutOptions): Promise<StoreRecord<T>>;
  /**
   * Writes only when the live version equals `expectedVersion` (0 = the record must be absent); undefined
   * when it does not.
   */
  compareAndSet<T>(kind: string, key: string, expectedVersion: number, value: T, opts?: PutOptions): Promise<StoreRecord<T> | undefined>;
  /** Deletes and returns the live record. Of N concurrent callers, in any process, exactly one gets it. */
  consumeOnce<T>(kind: string, key: string): Promise<StoreRecord<T> | undefined>;
  /** Deletes the record; true when a live one was there. */
  delete(kind: string, key: string): Promise<boolean>;
  /** The live records of one kind, ordered by key (UTF-16 code unit order in memory, byte order in SQL: equal for ASCII keys). */
  list<T>(kind: string): Promise<StoreRecord<T>[]>;
  /**
   * Change notification: `listener(key)` after any put, compare-and-set, consume, delete or swept expiry
   * of that kind, by this or any other process on the same store. Spurious calls are allowed; missed ones
   * are not. Returns the unsubscribe function.
   */
  watch(kind: string, listener: (key: string) => void): () => void;
  /**
   * Resolves once changes by other processes reach the current watchers (postgres: its LISTEN is up;
   * memory and sqlite: at once). Until then, this store's own writes still reach them, and other
   * processes' writes are delivered on connect as notifications for every live key (a delete by another
   * process in that window is the one change that can be missed).
   */
  watching(): Promise<void>;
  /** Removes expired records now and notifies their watchers; resolves to how many it removed. */
  sweep(): Promise<number>;
  /** Stops timers and closes connections. Further calls throw `STORE_UNAVAILABLE`. */
  close(): Promise<void>;
}

/** Options every implementation takes. */
export interface StoreOptions {
  /** Every expiry decision reads this clock; default systemClock. */
  clock?: Clock;
}

/** Where a store lives: what `openStore` takes and what the config's `store` key resolves to. */
export type StoreConfig = { kind: 'memory' } | { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** What went wrong with the store, and the sentence saying what to do. Never carries a stored value. */
export class StoreError extends LookfirstError {
  /**
   * @param code `STORE_UNAVAILABLE` (cannot reach or open it), `STORE_CORRUPT` (it holds what it cannot
   *   read), `STORE_INVALID` (the caller passed a bad kind, key or value).
   * @param message a sentence for a person, saying what to do next.
   */
  constructor(code: 'STORE_UNAVAILABLE' | 'STORE_CORRUPT' | 'STORE_INVALID', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** Longest key accepted (characters): keeps a Postgres NOTIFY payload under its 8000-byte limit. */
export const MAX_KEY_LENGTH = 1024;

const KIND = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/**
 * Checks a kind and key before any I/O.
 * @throws StoreError `STORE_INVALID` for a kind outside `[A-Za-z][A-Za-z0-9_.-]{0,63}` or a key that is empty or too long.
 */
export function verifyKindKey(kind: string, key?: string): void {
  if (typeof kind !== 'string' || !KIND.test(kind))
    throw new StoreError('STORE_INVALID', 'a store kind is a letter then up to 63 letters, digits, _ . or -: fix the caller that passed it');
  if (key === undefined) return;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH)
    throw new StoreError('STORE_INVALID', `a store key for kind "${kind}" must be 1 to ${MAX_KEY_LENGTH} characters: fix the caller that passed it`);
  // PostgreSQL text cannot hold NUL: refused in every store, so that a key that works in one works in all.
  if (key.includes('\u0000')) throw new StoreError('STORE_INVALID', `a store key for kind "${kind}" must not contain NUL: fix the caller that passed it`);
}

/** A short, safe rendering of a key for messages (keys are ids and nonces, never secrets or arguments). */
export function showKey(key: string): string {
  return JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
}

/**
 * Encodes a value as JSON text.
 * @throws StoreError `STORE_INVALID` naming the kind and key when the value is not JSON (BigInt, a cycle,
 *   undefined, a function).
 */
export function toJsonText(kind: string, key: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StoreError('STORE_INVALID', `the value for ${kind}/${showKey(key)} is not JSON (a BigInt or a cycle?): store plain JSON data`, { cause: err });
  }
  if (text === undefined)
    throw new StoreError('STORE_INVALID', `the value for ${kind}/${showKey(key)} is not JSON (undefined or a function): store plain JSON data`);
  return text;
}

/**
 * Decodes stored JSON text.
 * @throws StoreError `STORE_CORRUPT` naming the kind and key when the text is not JSON.
 */
export function fromJsonText<T>(kind: string, key: string, text: string, where: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new StoreError(
      'STORE_CORRUPT',
      `the stored value of ${kind}/${showKey(key)} in ${where} is not JSON: delete that record (or restore the store from a backup) and retry`,
      {
        cause: err,
      },
    );
  }
}

/**
 * The expiry instant of a write.
 * @throws StoreError `STORE_INVALID` when `ttlMs` is not a positive finite number.
 */
export function expiryOf(nowMs: number, opts?: PutOptions): number | undefined {
  if (opts?.ttlMs === undefined) return undefined;
  if (!Number.isFinite(opts.ttlMs) || opts.ttlMs <= 0)
    throw new StoreError('STORE_INVALID', 'ttlMs must be a positive number of milliseconds: fix the caller that passed it');
  return Math.floor(nowMs + opts.ttlMs);
}

/** Builds a record, leaving `expiresAtMs` out when it never expires. */
export function toRecord<T>(kind: string, key: string, value: T, version: number, expiresAtMs: number | null | undefined): StoreRecord<T> {
  return expiresAtMs === null || expiresAtMs === undefined ? { kind, key, value, version } : { kind, key, value, version, expiresAtMs };
}
