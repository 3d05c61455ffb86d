/**
 * Who holds the MCP endpoint's sessions, and who must give one up. A session belongs to the principal
 * that opened it (the bearer token it was opened with, or everyone on loopback when no token is set)
 * and remembers the remote address it came from. Caps count per principal and per remote address, under
 * a global cap. A newcomer over its principal's (or its address's) cap takes the place of its OWN oldest
 * idle session (no request in progress, least recently used), never anyone else's; when it has none
 * idle, it is refused. At the global cap nobody is evicted: the newcomer is refused. Loopback addresses
 * are not capped per address (every local process shares them; the principal tells them apart).
 * Pure: the clock is passed in.
 */

/** Session caps of the MCP endpoint. */
export interface SessionCaps {
  /** Most sessions at once, all principals together. */
  max: number;
  /** Most sessions of one principal. */
  perPrincipal: number;
  /** Most sessions from one remote address (loopback excepted). */
  perAddress: number;
  /** A session with no request for this long is closed (a client that left without DELETE), in ms. */
  idleMs: number;
}

/** The endpoint's caps: 256 sessions in all, a quarter of them per principal, 30 minutes of idleness. */
export const DEFAULT_SESSION_CAPS: Readonly<SessionCaps> = { max: 256, perPrincipal: 64, perAddress: 128, idleMs: 30 * 60_000 };

/** One session's record. */
export interface SessionRecord {
  id: string;
  principal: string;
  address: string;
  lastSeenMs: number;
  /** Requests of this session in progress (its standalone event stream not counted). */
  busy: number;
}

/** Outcome of admitting a new session: the ids to close first, or why not. */
export type Admission = { kind: 'admit'; evict: string[] } | { kind: 'refuse'; reason: string };

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** The endpoint's sessions, most recently used last. */
export class SessionTable {
  private readonly records = new Map<string, SessionRecord>();

  constructor(readonly caps: SessionCaps) {}

  /** Number of sessions. */
  get size(): number {
    return this.records.size;
  }

  /** The record of a session, when it exists and belongs to `principal`; another principal's is not shown. */
  get(id: string, principal: string): SessionRecord | undefined {
    const r = this.records.get(id);
    return r && r.principal === principal ? r : undefined;
  }

  /**
   * Decides whether `principal` at `address` may open one more session, and which of its own idle
   * sessions must be closed first (expired ones of anyone are closed too).
   */
  admit(principal: string, address: string, nowMs: number): Admission {
    const evict = this.expired(nowMs);
    const gone = new Set(evict);
    const live = [...this.records.values()].filter((r) => !gone.has(r.id));
    const mine = live.filter((r) => r.principal === principal);
    const capAddress = !isLoopbackAddress(address);
    const fromHere = capAddress ? live.filter((r) => r.address === address) : [];
    const overPrincipal = mine.length >= this.caps.perPrincipal;
    const overAddress = capAddress && fromHere.length >= this.caps.perAddress;
    let size = live.length;
    if (overPrincipal || overAddress) {
      // Oldest first: the Map is in order of last use.
      const victim = mine.find((r) => r.busy === 0 && (!overAddress || r.address === address));
      if (!victim) {
        const which = overPrincipal
          ? `this client's credentials already hold ${mine.length} sessions (the most one principal may)`
          : `your address already holds ${fromHere.length} sessions (the most one address may)`;
        return { kind: 'refuse', reason: `${which}, each with a request in progress: close some, then retry` };
      }
      evict.push(victim.id);
      size--;
    }
    if (size >= this.caps.max) return { kind: 'refuse', reason: `the gate holds ${size} MCP sessions, its limit: close clients you no longer use, then retry` };
    return { kind: 'admit', evict };
  }

  /** Records a new session. */
  add(id: string, principal: string, address: string, nowMs: number): void {
    this.records.set(id, { id, principal, address, lastSeenMs: nowMs, busy: 0 });
  }

  /** Marks a request of the session as started (counts as use); returns a function that marks it ended. */
  begin(id: string, nowMs: number, counts: boolean): () => void {
    const r = this.records.get(id);
    if (!r) return () => {};
    this.records.delete(id);
    r.lastSeenMs = nowMs;
    this.records.set(id, r);
    if (!counts) return () => {};
    r.busy++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      r.busy--;
    };
  }

  /** Forgets a session. */
  remove(id: string): void {
    this.records.delete(id);
  }

  /** Sessions idle (no request in progress) for longer than `idleMs`. */
  expired(nowMs: number): string[] {
    const cutoff = nowMs - this.caps.idleMs;
    return [...this.records.values()].filter((r) => r.busy === 0 && r.lastSeenMs < cutoff).map((r) => r.id);
  }
}
