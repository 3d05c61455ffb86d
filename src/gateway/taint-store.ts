/**
 * Where a principal's taint memory (gateway/taint.ts) lives when gate replicas share a store: what an
 * untrusted source returned, read through one replica, must be known to every other before a write
 * there is decided (the "taint that forgot results" finding must not come back across replicas).
 *
 * Exactly what the memory keeps, nothing more: kind `taint`, keys under the principal (URI-encoded, so it
 * holds no `/`; a NUL separator cannot be stored by PostgreSQL),
 * - `<principal>/t:<digest>`: a remembered token's digest (never the token), its class (for the
 *   per-class bound) and where it came from;
 * - `<principal>/l:<digest>`: a linked resource URI's digest and the tool that linked it;
 * - `<principal>/whole`: the principal is tainted as a whole, and why.
 * The memory never evicts; a record expires from the store after {@link TAINT_TTL_MS} (24 h), so that a
 * restart no longer clears taint at once but it does not last forever either (a process keeps what it
 * has seen until it stops). Writes are batched a few at a time; loads follow the store's change
 * notifications (gateway/store-feed.ts).
 */
import type { Store } from '../store/store.js';
import { StoreFeed } from './store-feed.js';
import type { TokenClass } from './taint-scan.js';

/** Store kind of taint records. */
export const TAINT_KIND = 'taint';

/** How long a taint record stays in the store after it was written (ms): 24 hours. */
export const TAINT_TTL_MS = 24 * 3600_000;

/** One thing a taint memory keeps, as it is shared. */
export type TaintEntry =
  | { kind: 'token'; digest: string; cls: TokenClass; tool: string; atMs: number }
  | { kind: 'linked'; digest: string; tool: string }
  | { kind: 'whole'; tool: string; atMs: number; why: string };

/** Writes in flight at once for one memory. */
const WRITE_BATCH = 32;

/** The shared part of one principal's taint memory. */
export class TaintShare {
  readonly #prefix: string;
  readonly #feed: StoreFeed<unknown>;

  /**
   * @param apply called with each entry another replica (or an earlier process) recorded, and again with
   *   this memory's own once they are read back; a record it cannot read comes as a `whole` entry.
   * @param failed a load that a notification started failed: the memory may miss an entry until `sync`.
   */
  constructor(
    private readonly store: Store,
    principal: string,
    apply: (e: TaintEntry) => void,
    failed: (err: unknown) => void,
  ) {
    this.#prefix = `${encodeURIComponent(principal)}/`;
    this.#feed = new StoreFeed<unknown>(store, TAINT_KIND, {
      accept: (key) => key.startsWith(this.#prefix),
      apply: (key, value) => {
        // A record gone from the store changes nothing: the memory never forgets.
        if (value !== undefined) apply(entryOf(key.slice(this.#prefix.length), value));
      },
      failed,
    });
  }

  /** Follows other replicas' additions and reads what the store holds for the principal. @throws StoreError */
  async start(): Promise<void> {
    this.#feed.follow();
    await this.#feed.loadAll();
  }

  /** Re-reads the principal's whole memory. @throws StoreError */
  sync(): Promise<void> {
    return this.#feed.loadAll();
  }

  /** Writes entries through. @throws StoreError when any of them could not be written. */
  async write(entries: readonly TaintEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += WRITE_BATCH)
      await Promise.all(
        entries.slice(i, i + WRITE_BATCH).map((e) => this.store.put(TAINT_KIND, this.#prefix + keyOf(e), storedValue(e), { ttlMs: TAINT_TTL_MS })),
      );
  }

  /** Stops following. */
  close(): void {
    this.#feed.close();
  }
}

function keyOf(e: TaintEntry): string {
  return e.kind === 'token' ? `t:${e.digest}` : e.kind === 'linked' ? `l:${e.digest}` : 'whole';
}

function storedValue(e: TaintEntry): Record<string, unknown> {
  switch (e.kind) {
    case 'token':
      return { c: e.cls, tool: e.tool, at: e.atMs };
    case 'linked':
      return { tool: e.tool };
    case 'whole':
      return { tool: e.tool, at: e.atMs, why: e.why };
  }
}

const CLASSES = new Set<string>(['url', 'email', 'host', 'path', 'windows-path', 'iban', 'ip', 'long']);

/** Reads a stored record back; a record this gate cannot read taints the principal as a whole (fail closed). */
function entryOf(suffix: string, value: unknown): TaintEntry {
  const v = (typeof value === 'object' && value !== null ? value : {}) as { c?: unknown; tool?: unknown; at?: unknown; why?: unknown };
  const tool = typeof v.tool === 'string' ? v.tool : undefined;
  const atMs = typeof v.at === 'number' ? v.at : 0;
  if (tool !== undefined) {
    if (suffix === 'whole') return { kind: 'whole', tool, atMs, why: typeof v.why === 'string' ? v.why : 'another gate replica tainted it as a whole' };
    if (suffix.startsWith('l:')) return { kind: 'linked', digest: suffix.slice(2), tool };
    if (suffix.startsWith('t:') && typeof v.c === 'string' && CLASSES.has(v.c))
      return { kind: 'token', digest: suffix.slice(2), cls: v.c as TokenClass, tool, atMs };
  }
  return { kind: 'whole', tool: "the gate's state store", atMs, why: 'the store holds a taint record of this principal that the gate cannot read' };
}
