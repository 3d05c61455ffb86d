/**
 * Request state for in-client approval on the 2026-07-28 protocol (multi round-trip requests,
 * spec basic/patterns/mrtr): a held call answers `input_required` with the approval question and a
 * `requestState`; the client re-sends the call with its answer and that state. The state round-trips
 * through the client, so it is attacker-controlled input on the way back: it is sealed with HMAC-SHA256
 * (the SDK's `createRequestStateCodec`), binds the session, the tool, the arguments' SHA-256 and the call
 * id, expires with the approval deadline, and is single-use.
 *
 * Several gate replicas share one store (src/store): the HMAC key is the store's (`secret` /
 * `request-state-key`, the first replica to start writes it and every replica reads the winner), and each
 * issued nonce is a store record that lives until the state's expiry; redeeming consumes it
 * (`consumeOnce`), so of any number of replicas exactly one redeem wins. Fails closed: a store that
 * cannot be read or written mints nothing and redeems nothing. Signed, not encrypted: the payload holds
 * nothing secret.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequestStateCodec, type RequestStateCodec } from '@modelcontextprotocol/server';
import { type Clock, systemClock } from '../clock.js';
import { createMemoryStore } from '../store/memory/memory.js';
import { type Store, StoreError } from '../store/store.js';

/** What a request state binds. Short keys: the client carries it back on every answer. */
export interface ApprovalState {
  /** Session key (never a token: see `sessionKey` in gateway/modern.ts). */
  s: string;
  /** Exposed tool name. */
  t: string;
  /** SHA-256 (hex) of the canonical arguments. */
  h: string;
  /** The gate's call id, so that the answer continues the logged call. */
  c: string;
  /** Nonce: the state is honoured once. */
  n: string;
  /** Expiry (ms since the epoch): the approval deadline, which may be sooner than the codec's TTL. */
  x: number;
}

/** Why an echoed state is refused; every case executes nothing. */
export type StateRefusal = 'malformed' | 'tampered' | 'expired' | 'foreign' | 'replayed' | 'unavailable';

/** What the call the state came back with must match. */
export interface StateExpectation {
  session: string;
  tool: string;
  argsSha256: string;
}

/** Store kind and key of the shared HMAC key (base64 of 32 random bytes). */
export const STATE_KEY = { kind: 'secret', key: 'request-state-key' } as const;
/** Store kind of issued nonces (key: the nonce; value: `{ s }`, the session; TTL: the state's expiry). */
export const NONCE_KIND = 'nonce';

/** Most open states per session in one process; a session that opens more loses its own oldest (fail closed). */
const MAX_PER_SESSION = 64;
/** Most nonces one process tracks for the per-session cap (beyond it the oldest are withdrawn early). */
const MAX_ISSUED = 100_000;
/** How long past its deadline a nonce stays in the store (ms): expiry is decided by the sealed deadline, never by the store. */
const NONCE_GRACE_MS = 1_000;

/** Options of {@link RequestStates}. */
export interface RequestStatesOptions {
  /** Expiry decisions; default systemClock. */
  clock?: Clock;
  /** Where the key and the nonces live; default a fresh in-memory store (one process). */
  store?: Store;
}

/** Mints and checks approval request states, shared by every gate replica on one store. */
export class RequestStates {
  readonly #ttlSeconds: number;
  readonly #clock: Clock;
  readonly #store: Store;
  #codec: Promise<RequestStateCodec<ApprovalState>> | undefined;
  /** Nonces this process issued and has not seen used, with expiry (ms) and session. Insertion order is issue order. */
  readonly #issued = new Map<string, { x: number; s: string }>();
  /** Open nonces per session, oldest first: one session's flood cannot close another's questions. */
  readonly #bySession = new Map<string, string[]>();

  /** @param ttlMs upper bound of a state's life (the confirmation timeout), in ms. */
  constructor(ttlMs: number, opts: RequestStatesOptions = {}) {
    this.#ttlSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
    this.#clock = opts.clock ?? systemClock;
    this.#store = opts.store ?? createMemoryStore({ clock: this.#clock });
  }

  /**
   * Loads (or, first of all replicas, creates) the shared HMAC key. Optional: `mint` and `redeem` do it
   * on first use; call it at start to fail there rather than on the first question.
   * @throws StoreError when the store cannot be read or written, or holds a key that is not 32+ bytes.
   */
  ready(): Promise<void> {
    return this.#codecOf().then(() => undefined);
  }

  #codecOf(): Promise<RequestStateCodec<ApprovalState>> {
    this.#codec ??= this.#loadCodec().catch((err: unknown) => {
      this.#codec = undefined; // a later call retries: a store that was down may be back
      throw err;
    });
    return this.#codec;
  }

  async #loadCodec(): Promise<RequestStateCodec<ApprovalState>> {
    await this.#store.putIfAbsent(STATE_KEY.kind, STATE_KEY.key, randomBytes(32).toString('base64'));
    const rec = await this.#store.get<unknown>(STATE_KEY.kind, STATE_KEY.key);
    const key = typeof rec?.value === 'string' ? Buffer.from(rec.value, 'base64') : undefined;
    if (!key || key.length < 32)
      throw new StoreError(
        'STORE_CORRUPT',
        `the store's ${STATE_KEY.kind}/${STATE_KEY.key} is not 32 bytes of base64: delete that record (every replica then agrees on a new one at its next start) and restart the gates`,
      );
    return createRequestStateCodec<ApprovalState>({ key, ttlSeconds: this.#ttlSeconds });
  }

  /**
   * Seals a new single-use state for one held call.
   * @throws StoreError when the store cannot record the nonce (nothing is minted).
   */
  async mint(p: { session: string; tool: string; argsSha256: string; callId: string; expiresMs: number }): Promise<string> {
    const codec = await this.#codecOf();
    await this.#prune();
    const n = randomUUID();
    for (let oldest = this.#bySession.get(p.session); oldest && oldest.length >= MAX_PER_SESSION; oldest = this.#bySession.get(p.session))
      await this.#withdraw(oldest[0] as string, p.session);
    // The store drops the nonce a little after the deadline; the deadline itself is judged from the sealed `x`.
    const ttlMs = Math.max(1, p.expiresMs - this.#clock.nowMs()) + NONCE_GRACE_MS;
    await this.#store.put(NONCE_KIND, n, { s: p.session }, { ttlMs });
    const mine = this.#bySession.get(p.session) ?? [];
    mine.push(n);
    this.#bySession.set(p.session, mine);
    this.#issued.set(n, { x: p.expiresMs, s: p.session });
    return codec.mint({ s: p.session, t: p.tool, h: p.argsSha256, c: p.callId, n, x: p.expiresMs });
  }

  /**
   * Verifies an echoed state against the call it came back with and consumes it, on whichever replica
   * minted it.
   * @returns the call id it continues, or why it is refused (a refused state is consumed too when it was
   *   genuine; `unavailable` when the store could not be asked, so nothing runs).
   */
  async redeem(raw: unknown, want: StateExpectation): Promise<{ ok: true; callId: string } | { ok: false; why: StateRefusal }> {
    if (typeof raw !== 'string' || raw.length > 4096) return { ok: false, why: 'malformed' };
    let codec: RequestStateCodec<ApprovalState>;
    try {
      codec = await this.#codecOf();
    } catch {
      return { ok: false, why: 'unavailable' };
    }
    let p: ApprovalState;
    try {
      // The codec needs no server context: no `bind` is configured; the binding is checked below instead.
      p = await codec.verify(raw, undefined as never);
    } catch (err) {
      const code = (err as Error).message;
      return { ok: false, why: code === 'expired' ? 'expired' : code === 'malformed' ? 'malformed' : 'tampered' };
    }
    if (typeof p?.n !== 'string' || typeof p.x !== 'number' || typeof p.s !== 'string' || p.n.length === 0 || p.n.length > 64)
      return { ok: false, why: 'malformed' };
    if (this.#clock.nowMs() > p.x) {
      this.#forget(p.n, p.s); // the store's copy expires on its own
      return { ok: false, why: 'expired' };
    }
    let spent: unknown;
    try {
      spent = await this.#store.consumeOnce(NONCE_KIND, p.n);
    } catch {
      return { ok: false, why: 'unavailable' };
    }
    this.#forget(p.n, p.s);
    if (spent === undefined) return { ok: false, why: 'replayed' };
    if (p.s !== want.session || p.t !== want.tool || p.h !== want.argsSha256) return { ok: false, why: 'foreign' };
    return { ok: true, callId: p.c };
  }

  /** Withdraws a nonce this process issued: deleted from the store first, so a failure leaves it tracked. */
  async #withdraw(n: string, session: string): Promise<void> {
    await this.#store.delete(NONCE_KIND, n);
    this.#forget(n, session);
  }

  #forget(n: string, session: string): void {
    this.#issued.delete(n);
    const mine = this.#bySession.get(session);
    if (!mine) return;
    const i = mine.indexOf(n);
    if (i >= 0) mine.splice(i, 1);
    if (mine.length === 0) this.#bySession.delete(session);
  }

  async #prune(): Promise<void> {
    const now = this.#clock.nowMs();
    // Expired ones are gone from the store by its TTL: only the local tracking goes.
    for (const [n, open] of this.#issued) if (open.x < now) this.#forget(n, open.s);
    while (this.#issued.size >= MAX_ISSUED) {
      const oldest = this.#issued.entries().next().value;
      if (oldest === undefined) break;
      await this.#withdraw(oldest[0], oldest[1].s);
    }
  }
}

/** Words for a refusal, as the client and the log read them. */
export const REFUSAL_WORDS: Record<StateRefusal, string> = {
  malformed: 'the request state is not one this gate issued',
  tampered: 'the request state failed its integrity check (altered, or issued by a gate with another key)',
  expired: 'the request state has expired: the approval question is closed',
  foreign: 'the request state belongs to another session, tool or set of arguments',
  replayed: 'the request state was already used or is unknown to this gate',
  unavailable: "the gate's state store could not be reached to check the request state: nothing ran; call again to be asked again",
};
