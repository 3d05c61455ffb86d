/**
 * The execution interlock: one execution at a time per tool, across every client session and every gate
 * replica sharing the store, and a tool whose last execution cannot be known to have done what it should
 * stays blocked, on every replica, until a person has looked and unlocked it. A blocked tool answers every
 * call by asking, through the confirmation channels, to unlock it; unlocking never runs the call that
 * asked.
 *
 * Two scopes (docs/decisions/0007-interlock-scope.md): the wait for a person is serialized per session
 * (`exclusive`: a session's calls of one tool are asked one after another), while the execution itself
 * is serialized for the whole gate (`executing`: its outcome, read-back included, is known before the
 * next execution of the same tool starts, and the block is checked again under it). So one client's
 * unanswered question never holds up another client's call of the same tool.
 *
 * State lives in the store (store/): blocks (kind `block`, one record per tool: blocked, or cleared by
 * whom and when) and execution leases (kind `exec`). The audit log stays the evidence: at start, every
 * block the log's replay finds is put in the store unless the store knows of a later state of that tool.
 * A lease whose replica stopped (its heartbeat expired: gateway/replicas.ts) while it executed means an
 * outcome nobody knows: the tool is blocked before anyone executes it again.
 */
import { systemClock } from '../clock.js';
import { createMemoryStore } from '../store/memory/memory.js';
import type { Store, StoreRecord } from '../store/store.js';
import type { Replicas } from './replicas.js';

/** Why a tool is blocked. */
export interface BlockInfo {
  /** When it was blocked (ms since epoch). */
  sinceMs: number;
  reason: string;
  callId: string;
}

/** A tool's record in the store: blocked, or cleared (which block, when). */
type BlockRecord = { state: 'blocked'; info: BlockInfo } | { state: 'clear'; clearedCallId?: string; atMs: number };
/** A tool's execution lease: held by a replica since when and until when at most, or free. */
type Lease = { state: 'held'; replica: string; sinceMs: number; untilMs: number } | { state: 'free' };
/** A lease this replica holds: its record's version, and how many executions in a row it has served. */
interface HeldLease {
  version: number;
  handovers: number;
}
/** Most executions of one tool in a row that one replica serves under one lease before handing it back. */
const KEEP_LEASE_MAX = 16;

const BLOCK = 'block';
const EXEC = 'exec';
/** How often a waiting execution looks again at a lease held elsewhere, besides change notifications (ms). */
const LEASE_POLL_MS = 1000;
/** Longest a lease is honoured when `leaseMs` is not given (ms): past it, its execution counts as cut off. */
const DEFAULT_LEASE_MS = 10 * 60_000;

/** What every session's view shares: the store, the block cache and the local executions in progress. */
interface Shared {
  store: Store;
  replicas?: Replicas;
  leaseMs: number;
  blocked: Map<string, BlockInfo>;
  executions: Map<string, Promise<unknown>>;
  /** Executions waiting here, per tool. */
  queued: Map<string, number>;
  /** Leases kept for the next execution of the tool here. */
  kept: Map<string, HeldLease>;
  unwatch?: () => void;
}

/** Options of the gate-wide interlock. */
export interface InterlockOptions {
  /** Where blocks and leases live (default: a memory store of this process only). */
  store?: Store;
  /** Replica liveness: a lease of a stopped replica blocks its tool. */
  replicas?: Replicas;
  /**
   * Longest one execution may hold its tool's lease (ms): the execution timeout, the read-back and the
   * log writes. A lease held longer (its replica lost the store while it executed, or hangs) counts as an
   * execution cut off: the tool is blocked and the lease taken over.
   */
  leaseMs?: number;
}

/** Blocked tools, per-tool serialization of executions (gate-wide) and of questions (per session). */
export class Interlock {
  private readonly shared: Shared;
  /** This view's (session's) calls in progress per tool, question included. */
  private readonly questions = new Map<string, Promise<unknown>>();

  /**
   * @param initial tools blocked when the gate starts, for an interlock used without `open` (tests).
   * @param shared internal: the state of the gate-wide interlock a session view belongs to.
   */
  constructor(initial: Iterable<[string, BlockInfo]> = [], shared?: Shared, opts: InterlockOptions = {}) {
    this.shared = shared ?? {
      store: opts.store ?? createMemoryStore(),
      replicas: opts.replicas,
      leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
      blocked: new Map(),
      executions: new Map(),
      queued: new Map(),
      kept: new Map(),
    };
    for (const [tool, info] of initial) this.shared.blocked.set(tool, info);
  }

  /**
   * The gate-wide interlock on a store: puts the blocks the audit log's replay found there (unless the
   * store knows a later state of the tool), loads every block, and follows other replicas' changes.
   * @param fromLog blocks rebuilt from this replica's audit log at open.
   * @throws StoreError when the store cannot be read or written (the gate must not start blind).
   */
  static async open(fromLog: Iterable<[string, BlockInfo]>, opts: InterlockOptions & { store: Store }): Promise<Interlock> {
    const lock = new Interlock([], undefined, opts);
    const { store } = opts;
    for (const [tool, info] of fromLog) {
      const now = await store.get<BlockRecord>(BLOCK, tool);
      // The store knows a later state when it holds this block, a later one, or a clear after it.
      const later =
        now &&
        (now.value.state === 'blocked' ? now.value.info.sinceMs >= info.sinceMs : now.value.clearedCallId === info.callId || now.value.atMs >= info.sinceMs);
      if (!later) await store.put<BlockRecord>(BLOCK, tool, { state: 'blocked', info });
    }
    lock.shared.unwatch = store.watch(BLOCK, (tool) => void lock.sync(tool).catch(() => {}));
    await store.watching();
    for (const r of await store.list<BlockRecord>(BLOCK)) if (r.value.state === 'blocked') lock.shared.blocked.set(r.key, r.value.info);
    return lock;
  }

  /**
   * A view for one client session: the same blocks and the same gate-wide execution order, with its
   * own serialization of questions (`exclusive`).
   */
  forSession(): Interlock {
    return new Interlock([], this.shared);
  }

  /** The block on a tool, if any, as this replica last saw it (kept fresh by change notifications). */
  blockOf(tool: string): BlockInfo | undefined {
    return this.shared.blocked.get(tool);
  }

  /** Reads a tool's block from the store (a fresh view before a decision that depends on it). */
  async sync(tool: string): Promise<BlockInfo | undefined> {
    const r = await this.shared.store.get<BlockRecord>(BLOCK, tool);
    if (r?.value.state === 'blocked') this.shared.blocked.set(tool, r.value.info);
    else this.shared.blocked.delete(tool);
    return this.shared.blocked.get(tool);
  }

  /**
   * Blocks a tool until a person unlocks it, on every replica.
   * @throws StoreError when the block cannot be stored (it still holds on this replica).
   */
  async block(tool: string, info: BlockInfo): Promise<void> {
    this.shared.blocked.set(tool, info);
    await this.shared.store.put<BlockRecord>(BLOCK, tool, { state: 'blocked', info });
  }

  /**
   * Lifts a tool's block. With `callId`, only the block that call caused: an unlock a person approved for
   * an earlier block never lifts a newer one (checked against the store, so a newer block set on another
   * replica is not lifted either).
   * @returns true when the tool is not blocked afterwards.
   */
  async unblock(tool: string, callId: string | undefined, atMs: number): Promise<boolean> {
    const { store } = this.shared;
    for (;;) {
      const current = await store.get<BlockRecord>(BLOCK, tool);
      if (current?.value.state === 'blocked' && callId !== undefined && current.value.info.callId !== callId) {
        this.shared.blocked.set(tool, current.value.info);
        return false;
      }
      const clear: BlockRecord = { state: 'clear', clearedCallId: callId, atMs };
      const done = current ? await store.compareAndSet(BLOCK, tool, current.version, clear) : await store.putIfAbsent(BLOCK, tool, clear);
      if (done) {
        this.shared.blocked.delete(tool);
        return true;
      }
    }
  }

  /** Tools blocked now, for messages at start. */
  list(): [string, BlockInfo][] {
    return [...this.shared.blocked.entries()];
  }

  /**
   * Runs `work` after this session's earlier calls of the same tool have finished (their question and
   * execution included). Other sessions, and other tools, are not held up.
   */
  exclusive<T>(tool: string, work: () => Promise<T>): Promise<T> {
    return serialize(this.questions, tool, work);
  }

  /**
   * Runs `work` (one execution: sending the call, reading it back, blocking the tool when its outcome is
   * unclear) after every earlier execution of the same tool on any replica has finished, holding the
   * tool's lease in the store meanwhile; the tool's block is read fresh from the store before `work`.
   * @throws StoreError when the lease cannot be taken or the block read (nothing runs).
   */
  executing<T>(tool: string, work: () => Promise<T>): Promise<T> {
    const { queued, kept } = this.shared;
    queued.set(tool, (queued.get(tool) ?? 0) + 1);
    return serialize(this.shared.executions, tool, async () => {
      queued.set(tool, (queued.get(tool) ?? 1) - 1);
      // The lease this replica kept for its next execution of the tool is renewed (one store write);
      // else (or when the renewal fails) it is taken as usual.
      const carried = kept.get(tool);
      kept.delete(tool);
      let lease: HeldLease;
      try {
        lease = (carried && (await this.renew(tool, carried))) || (await this.lease(tool));
      } catch (err) {
        // The store failed at a handover: the lease kept for this execution is handed back, not orphaned.
        if (carried) void release(this.shared.store, tool, carried.version);
        throw err;
      }
      try {
        await this.sync(tool);
        return await work();
      } finally {
        // Another execution of the tool is waiting here: it takes the lease over without a round of
        // release and acquire; at most KEEP_LEASE_MAX times in a row, so other replicas get their turn.
        if ((queued.get(tool) ?? 0) > 0 && lease.handovers < KEEP_LEASE_MAX) kept.set(tool, { ...lease, handovers: lease.handovers + 1 });
        else void release(this.shared.store, tool, lease.version);
      }
    });
  }

  /** Renews a lease this replica kept (a fresh time limit); undefined when it is no longer this one. */
  private async renew(tool: string, lease: HeldLease): Promise<HeldLease | undefined> {
    const { store, replicas, leaseMs } = this.shared;
    const now = (replicas?.clock ?? systemClock).nowMs();
    const mine: Lease = { state: 'held', replica: replicas?.id ?? 'local', sinceMs: now, untilMs: now + leaseMs };
    const r = await store.compareAndSet<Lease>(EXEC, tool, lease.version, mine).catch(() => undefined);
    return r ? { version: r.version, handovers: lease.handovers } : undefined;
  }

  /**
   * Takes the tool's execution lease, waiting for another replica's to end. A lease whose replica stopped,
   * or that is past its time, is an execution cut off: the tool is blocked before the lease is taken over
   * (a lease this replica left, when releasing it failed, is simply taken back: its outcome is known).
   * @returns the release, which hands the lease back only if it is still this one (retried a while when
   *   the store fails, so that a blip does not leave the tool held).
   */
  private async lease(tool: string): Promise<HeldLease> {
    const { store, replicas, leaseMs } = this.shared;
    const me = replicas?.id ?? 'local';
    const clock = replicas?.clock ?? systemClock;
    const now = () => clock.nowMs();
    for (;;) {
      const mine: Lease = { state: 'held', replica: me, sinceMs: now(), untilMs: now() + leaseMs };
      const held = await store.get<Lease>(EXEC, tool);
      let taken: StoreRecord<Lease> | undefined;
      const v = held?.value;
      const valid = v?.state === 'free' || (v?.state === 'held' && typeof v.replica === 'string' && Number.isFinite(v.untilMs));
      if (!held) taken = await store.putIfAbsent<Lease>(EXEC, tool, mine);
      else if (v?.state === 'free' || (valid && v?.state === 'held' && v.replica === me))
        taken = await store.compareAndSet<Lease>(EXEC, tool, held.version, mine);
      else if (!valid || (v?.state === 'held' && (now() > v.untilMs || (replicas && !(await replicas.alive(v.replica)))))) {
        // A lease nobody can vouch for (malformed, past its time, or its replica stopped): fail closed.
        const who = v?.state === 'held' && typeof v.replica === 'string' ? v.replica : 'unknown';
        const why = !valid
          ? 'left an execution lease that cannot be read'
          : v?.state === 'held' && now() > v.untilMs
            ? 'held its execution lease past its time'
            : 'stopped';
        await this.block(tool, {
          sinceMs: now(),
          reason: `gate replica ${who} ${why} while it was executing ${tool}: the outcome is unknown`,
          callId: `lease:${who}:${v?.state === 'held' ? v.sinceMs : held.version}`,
        });
        taken = await store.compareAndSet<Lease>(EXEC, tool, held.version, mine);
      }
      if (taken) return { version: taken.version, handovers: 0 };
      if (held && !taken) await changeOf(store, EXEC, tool, LEASE_POLL_MS);
    }
  }

  /** Stops following other replicas' changes. */
  close(): void {
    this.shared.unwatch?.();
  }
}

/** Hands a lease back (free) if it is still the one taken; retries a store failure for about a minute. */
async function release(store: Store, tool: string, version: number): Promise<void> {
  for (let attempt = 0; attempt < 12; attempt++) {
    try {
      const now = await store.get<Lease>(EXEC, tool);
      if (now?.version === version) await store.compareAndSet<Lease>(EXEC, tool, version, { state: 'free' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, Math.min(10_000, 250 * 2 ** attempt)).unref?.());
    }
  }
}

/** Resolves at the next change of `kind/key` in the store, or after `ms`. */
function changeOf(store: Store, kind: string, key: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const stop = store.watch(kind, (k) => {
      if (k === key) done();
    });
    function done() {
      clearTimeout(timer);
      stop();
      resolve();
    }
  });
}

async function serialize<T>(tails: Map<string, Promise<unknown>>, key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.catch(() => {});
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
