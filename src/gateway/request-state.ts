/**
 * Request state for in-client approval on the 2026-07-28 protocol (multi round-trip requests,
 * spec basic/patterns/mrtr): a held call answers `input_required` with the approval question and a
 * `requestState`; the client re-sends the call with its answer and that state. The state round-trips
 * through the client, so it is attacker-controlled input on the way back: it is sealed with HMAC-SHA256
 * under a per-process key (the SDK's `createRequestStateCodec`), binds the session, the tool, the
 * arguments' SHA-256 and the call id, expires with the approval deadline, and is single-use (a consumed
 * set of nonces). Signed, not encrypted: the payload holds nothing secret.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequestStateCodec, type RequestStateCodec } from '@modelcontextprotocol/server';

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
export type StateRefusal = 'malformed' | 'tampered' | 'expired' | 'foreign' | 'replayed';

/** What the call the state came back with must match. */
export interface StateExpectation {
  session: string;
  tool: string;
  argsSha256: string;
}

/** Most open states per session; a session that opens more loses its own oldest (fail closed). */
const MAX_PER_SESSION = 64;
/** Most nonces remembered at once across sessions (fail closed beyond it: the oldest expire early). */
const MAX_ISSUED = 100_000;

/** Mints and checks approval request states for one gate process. */
export class RequestStates {
  private readonly codec: RequestStateCodec<ApprovalState>;
  /** Issued and not yet used nonces, with their expiry (ms) and session. Insertion order is issue order. */
  private readonly issued = new Map<string, { x: number; s: string }>();
  /** Open nonces per session, oldest first: one session's flood cannot close another's questions. */
  private readonly bySession = new Map<string, string[]>();

  /** @param ttlMs upper bound of a state's life (the confirmation timeout), in ms. */
  constructor(
    ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.codec = createRequestStateCodec<ApprovalState>({ key: randomBytes(32), ttlSeconds: Math.max(1, Math.ceil(ttlMs / 1000)) });
  }

  /** Seals a new single-use state for one held call. */
  async mint(p: { session: string; tool: string; argsSha256: string; callId: string; expiresMs: number }): Promise<string> {
    this.prune();
    const n = randomUUID();
    const mine = this.bySession.get(p.session) ?? [];
    while (mine.length >= MAX_PER_SESSION) this.issued.delete(mine.shift() as string);
    mine.push(n);
    this.bySession.set(p.session, mine);
    this.issued.set(n, { x: p.expiresMs, s: p.session });
    return this.codec.mint({ s: p.session, t: p.tool, h: p.argsSha256, c: p.callId, n, x: p.expiresMs });
  }

  /**
   * Verifies an echoed state against the call it came back with and consumes it.
   * @returns the call id it continues, or why it is refused (a refused state is consumed too when it was genuine).
   */
  async redeem(raw: unknown, want: StateExpectation): Promise<{ ok: true; callId: string } | { ok: false; why: StateRefusal }> {
    if (typeof raw !== 'string' || raw.length > 4096) return { ok: false, why: 'malformed' };
    let p: ApprovalState;
    try {
      // The codec needs no server context: no `bind` is configured; the binding is checked below instead.
      p = await this.codec.verify(raw, undefined as never);
    } catch (err) {
      const code = (err as Error).message;
      return { ok: false, why: code === 'expired' ? 'expired' : code === 'malformed' ? 'malformed' : 'tampered' };
    }
    if (typeof p?.n !== 'string' || typeof p.x !== 'number') return { ok: false, why: 'malformed' };
    const open = this.issued.get(p.n);
    if (open === undefined) return { ok: false, why: 'replayed' };
    this.forget(p.n, open.s);
    if (this.now() > p.x) return { ok: false, why: 'expired' };
    if (p.s !== want.session || p.t !== want.tool || p.h !== want.argsSha256) return { ok: false, why: 'foreign' };
    return { ok: true, callId: p.c };
  }

  private forget(n: string, session: string): void {
    this.issued.delete(n);
    const mine = this.bySession.get(session);
    if (!mine) return;
    const i = mine.indexOf(n);
    if (i >= 0) mine.splice(i, 1);
    if (mine.length === 0) this.bySession.delete(session);
  }

  private prune(): void {
    const now = this.now();
    for (const [n, open] of this.issued) if (open.x < now) this.forget(n, open.s);
    while (this.issued.size >= MAX_ISSUED) {
      const oldest = this.issued.entries().next().value;
      if (oldest === undefined) break;
      this.forget(oldest[0], oldest[1].s);
    }
  }
}

/** Words for a refusal, as the client and the log read them. */
export const REFUSAL_WORDS: Record<StateRefusal, string> = {
  malformed: 'the request state is not one this gate issued',
  tampered: 'the request state failed its integrity check (altered, or issued by another gate process)',
  expired: 'the request state has expired: the approval question is closed',
  foreign: 'the request state belongs to another session, tool or set of arguments',
  replayed: 'the request state was already used or is unknown to this gate process',
};
