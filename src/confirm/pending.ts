/**
 * Pending approvals: the one place a held call waits while it is shown outside the client (web page,
 * webhook, terminal). The first decision through any channel settles it; a timeout, the client's
 * cancellation, or every channel failing to show it settles it as not approved. A decision must name
 * both the call id and the args_sha256 that was shown: a decision about other arguments is refused, so an
 * approval can never be moved onto another call. Also keeps a short history of recent decisions and
 * their outcome, for the page.
 *
 * Shared through the store (store/, kinds `pending` and `history`), so that gate replicas on one
 * PostgreSQL show every replica's questions: a call held on replica A is listed on replica B's page, and
 * a decision made there (compare-and-set: the first decision anywhere wins) reaches the call waiting on A
 * through the store's change notification. The audit log, not the store, is the record of a decision:
 * the replica that runs the call logs its approval.
 *
 * Over 400 lines: the queue's local entries and their shared store records are one state machine (hold,
 * decide, end, take-over, withdrawal); split, each half would reach into the other's maps.
 */
import { type Clock, systemClock } from '../clock.js';
import { createMemoryStore } from '../store/memory/memory.js';
import { MAX_KEY_LENGTH, type Store, type StoreRecord } from '../store/store.js';
import type { Decider } from '../types.js';
import type { ApprovalRequest, ChannelAnswer } from './channel.js';
import { answerOf, isWellFormed, type PendingRecord } from './pending-record.js';
import { CONFIRM_TIMEOUT, type DecideResult, type EndedHow, type HistoryItem, type PendingListener, type PendingView, TIMED_OUT } from './pending-types.js';

export type { DecideResult, EndedHow, HistoryItem, PendingListener, PendingView } from './pending-types.js';
export { CONFIRM_TIMEOUT } from './pending-types.js';

interface Entry {
  view: PendingView;
  settle: (answer: ChannelAnswer) => void;
}

const PENDING = 'pending';
const HISTORY = 'history';
const HISTORY_SIZE = 50;
/** How many ended calls are remembered, so that a late decision about them is told (and logged) why. */
const ENDED_SIZE = 1000;
/** How long a question's record outlives its deadline, so a late decision is told how it ended (ms). */
const ENDED_TTL_MS = 10 * 60_000;
/** How long a history item is kept in the store (ms). */
const HISTORY_TTL_MS = 60 * 60_000;

/** Options of the queue. */
export interface PendingOptions {
  /** Where questions and history are shared (default: a memory store of this process only). */
  store?: Store;
  /** This replica's id, recorded with a decision taken here (the audit log says which page decided). */
  replica?: string;
}

/** The queue of calls waiting for an out-of-band decision, shared by the replicas on one store. */
export class PendingApprovals {
  /** Questions this replica's broker holds (it settles them). */
  private readonly items = new Map<string, Entry>();
  /** The store's questions, every replica's, as last read. */
  private readonly shared = new Map<string, StoreRecord<PendingRecord>>();
  private past: HistoryItem[] = [];
  private readonly listeners = new Set<PendingListener>();
  private readonly endedHow = new Map<string, EndedHow>();
  /** Each held question's first store write, awaited before a decision reads the store. */
  private readonly written = new Map<string, Promise<unknown>>();
  private readonly waiters = new Map<string, Set<(r: PendingRecord) => void>>();
  private readonly store: Store;
  private readonly replica?: string;
  private readonly unwatch: (() => void)[];
  /** Settles once the store's questions and history are loaded. */
  readonly ready: Promise<void>;

  /** @param clock the time source for `sinceMs` and `atMs` (tests inject one). */
  constructor(
    private readonly clock: Clock = systemClock,
    opts: PendingOptions = {},
  ) {
    const store = opts.store ?? createMemoryStore({ clock });
    this.store = store;
    this.replica = opts.replica;
    this.unwatch = [
      this.store.watch(PENDING, (key) => void this.refresh(key).catch(() => {})),
      this.store.watch(HISTORY, () => void this.refreshHistory().catch(() => {})),
    ];
    this.ready = (async () => {
      for (const r of await store.list<PendingRecord>(PENDING)) if (isWellFormed(r)) this.shared.set(r.key, r);
      await this.refreshHistory();
    })();
    this.ready.catch(() => {});
  }

  /** Calls waiting now on any replica, oldest first. */
  list(): PendingView[] {
    const out = new Map<string, PendingView>();
    const now = this.clock.nowMs();
    // Another replica's question past its deadline: that replica stopped before it could end it.
    for (const r of this.shared.values()) if (r.value.state === 'waiting' && r.value.view.deadlineMs > now) out.set(r.key, r.value.view);
    for (const e of this.items.values()) out.set(e.view.callId, e.view);
    return [...out.values()].sort((a, b) => a.sinceMs - b.sinceMs);
  }

  /** Recent decisions, newest first (at most 50). */
  history(): HistoryItem[] {
    return [...this.past];
  }

  /** The pending call with this id, if any (on any replica). */
  get(callId: string): PendingView | undefined {
    const r = this.shared.get(callId);
    return this.items.get(callId)?.view ?? (r?.value.state === 'waiting' ? r.value.view : undefined);
  }

  /** How a call that is no longer pending ended, when it ended recently. */
  ended(callId: string): EndedHow | undefined {
    const local = this.endedHow.get(callId);
    if (local) return local;
    const r = this.shared.get(callId)?.value;
    if (r?.state === 'decided' && r.decision) return { kind: 'decided', by: r.decision.who.actor, approved: r.decision.approve };
    return r?.state === 'ended' ? r.how : undefined;
  }

  private remember(callId: string, how: EndedHow): void {
    this.endedHow.delete(callId);
    this.endedHow.set(callId, how);
    if (this.endedHow.size > ENDED_SIZE) this.endedHow.delete(this.endedHow.keys().next().value as string);
  }

  /** Calls `fn` after every change (arrival, decision, withdrawal, outcome); returns an unsubscribe. */
  subscribe(fn: PendingListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Records a person's decision, on whichever replica holds the call: the first decision anywhere wins.
   * @returns `ok: false` with `status: 'gone'` when the call is not pending (decided, timed out,
   *   withdrawn, unknown), `'mismatch'` when the args_sha256 is not the one held.
   */
  async decide(callId: string, argsSha256: string, approve: boolean, who: Decider): Promise<DecideResult> {
    const gone: DecideResult = { ok: false, status: 'gone', reason: 'this call is no longer waiting (decided, timed out, or withdrawn by the client)' };
    // No call named (or not one a store key can be): nothing waits under it; the store is not to blame.
    if (callId.length === 0 || callId.length > MAX_KEY_LENGTH || callId.includes('\u0000'))
      return { ...gone, reason: 'the decision names no call (call_id missing or malformed); reload the page and decide again' };
    await this.written.get(callId)?.catch(() => {});
    let r: StoreRecord<PendingRecord> | undefined;
    try {
      r = await this.store.get<PendingRecord>(PENDING, callId);
    } catch {
      return { ...gone, reason: 'the shared state store cannot be read: nothing was decided; try again once it is back' };
    }
    if (!r || !isWellFormed(r) || r.value.state !== 'waiting') return gone;
    if (r.value.view.argsSha256 !== argsSha256)
      return { ok: false, status: 'mismatch', reason: 'the arguments named are not the arguments held; reload and look again' };
    const decided = withGenericChecks(who, r.value.view, this.clock.nowMs());
    const next: PendingRecord = { ...r.value, state: 'decided', decision: { approve, who: this.replica ? { ...decided, replica: this.replica } : decided } };
    const won = await this.store.compareAndSet(PENDING, callId, r.version, next, { ttlMs: this.ttlOf(r.value.view) }).catch(() => undefined);
    if (!won) return gone;
    this.apply(won);
    return { ok: true };
  }

  /**
   * Waits for the question of `callId`, held by any replica, to be decided or to end (a replica that
   * took over a held call whose own replica stopped: gateway/hold.ts).
   * @returns the answer, or a denial when `signal` aborts first.
   */
  async awaitDecision(callId: string, signal: AbortSignal): Promise<ChannelAnswer> {
    return new Promise<ChannelAnswer>((resolve) => {
      const done = (r: PendingRecord) => {
        set.delete(done);
        signal.removeEventListener('abort', onAbort);
        resolve(answerOf(r));
      };
      const onAbort = () => {
        set.delete(done);
        resolve({ kind: 'denied', channel: 'store', reason: signal.reason === CONFIRM_TIMEOUT ? TIMED_OUT : 'withdrawn: the client cancelled the call' });
      };
      const set = this.waiters.get(callId) ?? new Set();
      this.waiters.set(callId, set);
      set.add(done);
      signal.addEventListener('abort', onAbort, { once: true });
      void this.refresh(callId).catch(() => {});
    });
  }

  /**
   * Withdraws a question whichever replica holds it (a call taken over from a replica was cancelled):
   * it ends as withdrawn there, and a decision after this is refused.
   */
  async withdrawShared(callId: string, reason: string): Promise<void> {
    for (let tries = 0; tries < 5; tries++) {
      const r = await this.store.get<PendingRecord>(PENDING, callId);
      if (r?.value.state !== 'waiting') return;
      const answer: ChannelAnswer = { kind: 'denied', channel: 'store', reason: `withdrawn: ${reason}` };
      const ended = await this.store.compareAndSet<PendingRecord>(
        PENDING,
        callId,
        r.version,
        { ...r.value, state: 'ended', how: { kind: 'withdrawn', reason }, answer },
        { ttlMs: ENDED_TTL_MS },
      );
      if (ended) {
        this.apply(ended);
        return;
      }
    }
  }

  /**
   * Puts a call in the queue (and the store) until a decision, `signal` (timeout or client cancellation),
   * or `withdraw`. Never settles as approved except through `decide`; a question the store cannot record
   * is withdrawn (no replica could decide it).
   */
  hold(req: ApprovalRequest, channels: string[], signal: AbortSignal): { answer: Promise<ChannelAnswer>; withdraw: (reason: string) => void } {
    const { call } = req;
    let settleRef: (a: ChannelAnswer) => void = () => {};
    const answer = new Promise<ChannelAnswer>((resolve) => {
      settleRef = resolve;
    });
    const end = (a: ChannelAnswer, how: EndedHow) => void this.end(call.callId, settle, a, how);
    const onAbort = () =>
      signal.reason === CONFIRM_TIMEOUT
        ? end({ kind: 'denied', channel: channels.join('+'), reason: TIMED_OUT }, { kind: 'timed out' })
        : end(
            { kind: 'denied', channel: channels.join('+'), reason: 'withdrawn: the client cancelled the call' },
            { kind: 'withdrawn', reason: 'the client cancelled the call or went away' },
          );
    const settle = (a: ChannelAnswer) => {
      signal.removeEventListener('abort', onAbort);
      settleRef(a);
      this.emit();
    };
    const view: PendingView = {
      callId: call.callId,
      tool: call.tool,
      upstream: call.upstream,
      purpose: req.purpose ?? 'execute',
      summary: req.summary,
      argsCanonical: call.argsCanonical,
      argsSha256: call.argsSha256,
      client: req.client ?? 'client',
      user: req.user,
      risk: req.risk ?? 'medium',
      riskReason: req.riskReason ?? '',
      lookalikes: req.lookalikes ?? [],
      diff: req.diff,
      channels,
      sinceMs: this.clock.nowMs(),
      deadlineMs: req.deadlineMs,
    };
    this.items.set(call.callId, { view, settle });
    const write = this.store.putIfAbsent<PendingRecord>(PENDING, call.callId, { view, state: 'waiting' }, { ttlMs: this.ttlOf(view) }).then((r) => {
      if (!r) throw new Error('a question with this call id is already recorded');
      this.shared.set(r.key, r);
    });
    this.written.set(call.callId, write);
    write.then(
      () => this.written.delete(call.callId),
      (err: Error) => {
        this.written.delete(call.callId);
        end(
          { kind: 'unavailable', reason: `the question could not be recorded in the shared state store (${err.message})` },
          { kind: 'withdrawn', reason: 'not recorded' },
        );
      },
    );
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      this.emit();
    }
    return { answer, withdraw: (reason) => end({ kind: 'unavailable', reason }, { kind: 'withdrawn', reason }) };
  }

  /**
   * Ends a question this replica holds: the store's state wins (a decision made anywhere before this
   * end is the answer), else it is marked ended there and answered with `a`.
   */
  private async end(callId: string, settle: (a: ChannelAnswer) => void, a: ChannelAnswer, how: EndedHow): Promise<void> {
    if (this.items.get(callId)?.settle !== settle) return;
    await this.written.get(callId)?.catch(() => {});
    for (let tries = 0; tries < 5; tries++) {
      const r = await this.store.get<PendingRecord>(PENDING, callId).catch(() => undefined);
      if (r && r.value.state !== 'waiting') {
        this.apply(r);
        return;
      }
      if (!r) break;
      const ended = await this.store
        .compareAndSet<PendingRecord>(PENDING, callId, r.version, { ...r.value, state: 'ended', how, answer: a }, { ttlMs: ENDED_TTL_MS })
        .catch(() => undefined);
      if (ended) {
        this.shared.set(callId, ended);
        break;
      }
    }
    if (this.items.get(callId)?.settle !== settle) return;
    this.items.delete(callId);
    this.remember(callId, how);
    settle(a);
    this.notifyWaiters(callId);
  }

  /** Takes a store record in: mirrors it and, once decided or ended, answers whoever waits for it. */
  private apply(r: StoreRecord<PendingRecord>): void {
    // A question whose shown arguments do not hash to the arguments it names is not shown or decided here.
    if (!isWellFormed(r)) {
      if (this.shared.delete(r.key)) this.emit();
      return;
    }
    this.shared.set(r.key, r);
    if (r.value.state === 'waiting') {
      this.emit();
      return;
    }
    const how: EndedHow =
      r.value.state === 'decided' && r.value.decision
        ? { kind: 'decided', by: r.value.decision.who.actor, approved: r.value.decision.approve }
        : (r.value.how ?? { kind: 'withdrawn', reason: 'ended' });
    const local = this.items.get(r.key);
    if (local) {
      this.items.delete(r.key);
      this.remember(r.key, how);
      local.settle(answerOf(r.value));
    }
    this.notifyWaiters(r.key);
    this.emit();
  }

  private notifyWaiters(callId: string): void {
    const r = this.shared.get(callId)?.value;
    if (!r || r.state === 'waiting') return;
    for (const w of [...(this.waiters.get(callId) ?? [])]) w(r);
    this.waiters.delete(callId);
  }

  private async refresh(callId: string): Promise<void> {
    const r = await this.store.get<PendingRecord>(PENDING, callId);
    if (r) this.apply(r);
    else if (this.shared.delete(callId)) this.emit();
  }

  private async refreshHistory(): Promise<void> {
    const all = await this.store.list<HistoryItem>(HISTORY);
    this.past = all
      .map((r) => r.value)
      .sort((a, b) => b.atMs - a.atMs)
      .slice(0, HISTORY_SIZE);
    this.emit();
  }

  private ttlOf(view: PendingView): number {
    return Math.max(1, view.deadlineMs - this.clock.nowMs()) + ENDED_TTL_MS;
  }

  /** Removes a channel from a pending call's list (it could not show the call). */
  dropChannel(callId: string, channel: string): void {
    const entry = this.items.get(callId);
    if (!entry) return;
    entry.view.channels = entry.view.channels.filter((c) => c !== channel);
    this.emit();
  }

  /** Adds a decision to the history (any channel, elicitation included), on every replica. */
  recordDecision(item: Omit<HistoryItem, 'atMs'>): void {
    const full = { ...item, atMs: this.clock.nowMs() };
    this.past = [full, ...this.past.filter((h) => h.callId !== item.callId)].slice(0, HISTORY_SIZE);
    this.emit();
    void this.store.put(HISTORY, item.callId, full, { ttlMs: HISTORY_TTL_MS }).catch(() => {});
  }

  /** Adds what happened after the decision (executed, read-back) to its history item. */
  recordOutcome(callId: string, outcome: string, readback?: string): void {
    const item = this.past.find((h) => h.callId === callId);
    if (!item) return;
    item.outcome = outcome;
    item.readback = readback;
    this.emit();
    void this.store.put(HISTORY, callId, item, { ttlMs: HISTORY_TTL_MS }).catch(() => {});
  }

  /** Stops following the store. */
  close(): void {
    for (const u of this.unwatch) u();
  }

  private emit(): void {
    for (const fn of this.listeners) {
      try {
        fn();
      } catch {
        // A broken listener (a closed page stream) must not stop a decision.
      }
    }
  }
}

/**
 * The decider with the checks every channel's decision passed here added to its evidence (for the
 * receipt): `call_open` (the call was still waiting) and `action_unchanged` (the args_sha256 named is the
 * held call's), each once, after the channel's own; and the card text and time shown, when the channel
 * did not say. `decidedAtMs` 0 means "when it is taken here" (channels without a clock of their own).
 * A decider without evidence is left as it is: a receipt never claims a channel's checks.
 */
function withGenericChecks(who: Decider, view: PendingView, nowMs: number): Decider {
  const ev = who.evidence;
  if (!ev) return who;
  const has = new Set(ev.checks.map((c) => c.name));
  const checks = [...ev.checks];
  if (!has.has('call_open')) checks.push({ name: 'call_open', ok: true, detail: `waiting until ${new Date(view.deadlineMs).toISOString()}` });
  if (!has.has('action_unchanged')) checks.push({ name: 'action_unchanged', ok: true, detail: `args_sha256 ${view.argsSha256.slice(0, 12)}…` });
  return {
    ...who,
    evidence: { ...ev, cardText: ev.cardText ?? view.summary, shownAtMs: ev.shownAtMs ?? view.sinceMs, decidedAtMs: ev.decidedAtMs || nowMs, checks },
  };
}
