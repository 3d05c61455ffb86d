/**
 * Over 400 lines: a hold's life (ask, re-attach, decide, lapse, take over from a replica) is one state machine, clearer read in one place than split across files.
 *
 * Approvals that outlast the request that asked for them. Many clients give up on a tool call after
 * about 60 s, while a person may need minutes. A held call is therefore a `Hold`: the question stays on
 * the channels until a decision or `confirm.timeout_seconds`, while the request that asked answers
 * "still pending" after `confirm.hold_seconds` (only once the question went out of band: a client that
 * shows the question itself is waited for). An identical retry from the same session (same tool, same
 * args_sha256) re-attaches to the hold. A decision executes only through a request that is waiting for
 * it: an approval that arrives while none waits is kept for a retry until the deadline, then lapses
 * (logged), and nothing runs. A cancelled waiting request withdraws the question everywhere.
 * One registry per client session. With a shared store (replicas), a hold is also recorded under its
 * principal, tool and args_sha256 (kind `hold`): the same principal's identical retry on another replica,
 * or after this replica stopped, takes the hold over there and waits for the same question's decision
 * (confirm/pending.ts `awaitDecision`). Whoever runs a decided call first claims it (kind `claim`,
 * put-if-absent: exactly one replica wins), so it runs once.
 * Over 400 lines: a hold's local life and its shared record (take-over, claim) are one state machine,
 * and split across files their invariants (one run, one owner) would no longer read in one place.
 */
import type { AuditLog } from '../audit/writer.js';
import { type Clock, systemClock } from '../clock.js';
import type { BrokerHooks } from '../confirm/broker.js';
import { CONFIRM_TIMEOUT, type PendingApprovals } from '../confirm/pending.js';
import type { Store } from '../store/store.js';
import type { Approval, ToolCall } from '../types.js';
import type { GateMetrics } from './metrics.js';
import { approvalEntry } from './pipeline/entries.js';

/** One approval being asked. */
export interface Hold {
  readonly key: string;
  /** The call as first received; its call_id is the one the approval and the execution are logged under. */
  readonly call: ToolCall;
  readonly deadlineMs: number;
  /**
   * When the call was first proposed (epoch ms): the first request's arrival, kept across retries,
   * lookfirst_confirm and replicas, so a receipt's `when.proposed` names it whoever runs the call.
   */
  readonly proposedAtMs: number;
  /** Settles with the decision once its `approval` entry is on disk (or as a denial when it cannot be). */
  readonly decided: Promise<Approval>;
  settled?: Approval;
  /** Out-of-band channels showing it; empty while the client itself is asked. */
  channels: string[];
  readonly abort: AbortController;
}

/** How a waiting request ended. */
export type WaitResult = 'decided' | 'pending' | 'cancelled';

/** What the registry needs from the gate. */
export interface HoldsOptions {
  /** Writes the `approval` entry; a throw turns the decision into a denial. */
  logApproval: (call: ToolCall, approval: Approval) => Promise<void>;
  /** Writes that an approval lapsed (approved, never claimed by a waiting request). */
  logLapse: (call: ToolCall, approval: Approval, reason: string) => Promise<void>;
  /** Where holds are shared with other replicas (absent: this session only). */
  shared?: SharedHolds;
  clock?: Clock;
  /** Told of each decision this session asked for (a hold taken over from another replica is counted there). */
  metrics?: GateMetrics;
}

/** What sharing holds across replicas needs. */
export interface SharedHolds {
  store: Store;
  /**
   * Whose held calls these are: the authenticated principal and the client's own name (gateway/session.ts
   * `holdsOwner`). Only the same owner's retry takes a hold over; read when a hold is opened or looked for.
   */
  owner: () => string;
  /** This replica's id (claims name it). */
  replica: string;
  pending: PendingApprovals;
}

/** A hold as the store keeps it. */
interface HoldRecord {
  call: ToolCall;
  deadlineMs: number;
  replica: string;
  /** When the call was first proposed (epoch ms); absent in records written before it was kept. */
  proposedAtMs?: number;
}

const HOLD = 'hold';

/** Whether a stored hold is well formed and about this tool and these arguments. */
function bindsCall(rec: HoldRecord, tool: string, argsSha256: string): boolean {
  const c = rec?.call as Partial<ToolCall> | undefined;
  return (
    typeof rec?.deadlineMs === 'number' &&
    typeof c?.callId === 'string' &&
    /^[0-9a-f-]{36}$/.test(c.callId) &&
    c.tool === tool &&
    c.argsSha256 === argsSha256 &&
    typeof c.upstream === 'string' &&
    typeof c.upstreamTool === 'string'
  );
}
const CLAIM = 'claim';
/** How long a claim is kept after its call ran (ms): longer than any confirmation timeout matters. */
const CLAIM_TTL_MS = 24 * 3600_000;

/** How many of its own call ids a session remembers (for lookfirst_confirm's answers). */
const OWN_IDS = 1000;

const keyOf = (tool: string, sha: string) => `${tool}\u0000${sha}`;

/** The holds of one client session. */
export class Holds {
  private readonly holds = new Map<string, Hold & { outOfBand: (() => void)[]; expiry?: NodeJS.Timeout }>();
  /** The call ids this session asked about, newest last (at most OWN_IDS): only its own calls' fates are told. */
  private readonly own = new Set<string>();
  private stopping = false;

  constructor(private readonly opts: HoldsOptions) {}

  private now(): number {
    return (this.opts.clock ?? systemClock).nowMs();
  }

  private sharedKey(tool: string, argsSha256: string): string {
    // JSON, not a separator character: PostgreSQL text holds no NUL, and a tool name may hold anything else.
    return JSON.stringify([this.opts.shared?.owner(), tool, argsSha256]);
  }

  /**
   * The open hold for this tool and these exact arguments: this session's, else (replicas) the same
   * principal's, held on another replica or left by one that stopped, taken over here.
   * @returns undefined when there is none, or it was already claimed or is past its deadline.
   */
  async findShared(tool: string, argsSha256: string): Promise<Hold | undefined> {
    const local = this.find(tool, argsSha256);
    const shared = this.opts.shared;
    if (!shared) return local;
    if (local) {
      // Claimed and run by another replica: this copy is spent; the same call again is a new call.
      if (!(await shared.store.get(CLAIM, local.call.callId).catch(() => undefined))) return local;
      const h = this.holds.get(local.key);
      if (h === local) {
        clearTimeout(h.expiry);
        this.holds.delete(local.key);
      }
      return undefined;
    }
    const rec = await shared.store.get<HoldRecord>(HOLD, this.sharedKey(tool, argsSha256)).catch(() => undefined);
    if (!rec || rec.value.deadlineMs <= this.now()) return undefined;
    // The record must be about this very call: a record that names another tool, other arguments or a
    // malformed call is not taken over (the arguments that run are always the retry's own: pipeline/steps/retry.ts).
    if (!bindsCall(rec.value, tool, argsSha256)) return undefined;
    if (await shared.store.get(CLAIM, rec.value.call.callId).catch(() => 'unknown')) return undefined;
    const { call, deadlineMs } = rec.value;
    const proposedAtMs = typeof rec.value.proposedAtMs === 'number' ? rec.value.proposedAtMs : shared.pending.get(call.callId)?.sinceMs;
    const hold = this.open(
      call,
      deadlineMs,
      (signal) =>
        new Promise<Approval>((resolve) => {
          // The question's own replica may have stopped: the deadline is kept here too.
          const lapse = new AbortController();
          const timer = setTimeout(() => lapse.abort(CONFIRM_TIMEOUT), Math.max(0, deadlineMs - this.now()));
          timer.unref();
          signal.addEventListener('abort', () => lapse.abort(signal.reason), { once: true });
          void shared.pending.awaitDecision(call.callId, lapse.signal).then((a) => {
            clearTimeout(timer);
            resolve(a.kind === 'unavailable' ? { kind: 'denied', channel: 'store', reason: a.reason } : a);
          });
        }),
      { adopted: true, proposedAtMs },
    );
    hold.channels = shared.pending.get(call.callId)?.channels ?? ['another gate replica'];
    return hold;
  }

  /** How many questions of this session are open (decided but unclaimed ones included). */
  get count(): number {
    return this.holds.size;
  }

  /** How many of this session's questions still wait for a person (open and not decided). */
  get waiting(): number {
    let n = 0;
    for (const h of this.holds.values()) if (!h.settled) n++;
    return n;
  }

  /**
   * The open hold of call `callId` (lookfirst_confirm's pending_id): this session's, else (replicas, or
   * after a restart) the same owner's, found through the shared question's tool and arguments while it is
   * open, or through the owner's hold records once it was decided. Never another owner's.
   */
  async findByCallId(callId: string): Promise<Hold | undefined> {
    for (const h of this.holds.values()) if (h.call.callId === callId) return h;
    const shared = this.opts.shared;
    if (!shared) return undefined;
    // A question still open names its tool and arguments. One already decided (the person said yes, then
    // the gate restarted, or the call was held on another replica) is no longer listed as open: its hold
    // record is then found by call id among this owner's own (the key is recomputed from the record, so
    // another owner's record never matches), and taken over as the same call again would take it.
    const view = shared.pending.get(callId);
    let at: { tool: string; argsSha256: string } | undefined = view;
    if (!at) {
      const records = await shared.store.list<HoldRecord>(HOLD).catch(() => []);
      const rec = records.find((r) => r.value?.call?.callId === callId && r.key === this.sharedKey(r.value.call.tool, r.value.call.argsSha256));
      if (rec && bindsCall(rec.value, rec.value.call.tool, rec.value.call.argsSha256)) at = rec.value.call;
    }
    if (!at) return undefined;
    const found = await this.findShared(at.tool, at.argsSha256);
    return found?.call.callId === callId ? found : undefined;
  }

  /** Whether this session asked about call `callId` (recently): what became of it may be told to it, and to nobody else. */
  asked(callId: string): boolean {
    return this.own.has(callId);
  }

  /** The open hold for this tool and these exact arguments, if any. */
  find(tool: string, argsSha256: string): Hold | undefined {
    return this.holds.get(keyOf(tool, argsSha256));
  }

  /**
   * Starts asking. `ask` gets the hold's own signal (aborted on withdrawal) and hooks; the answer is
   * logged before `decided` settles.
   */
  open(
    call: ToolCall,
    deadlineMs: number,
    ask: (signal: AbortSignal, hooks: BrokerHooks) => Promise<Approval>,
    opts: { adopted?: boolean; proposedAtMs?: number } = {},
  ): Hold {
    const key = keyOf(call.tool, call.argsSha256);
    this.own.add(call.callId);
    if (this.own.size > OWN_IDS) this.own.delete(this.own.values().next().value as string);
    const abort = new AbortController();
    const outOfBand: (() => void)[] = [];
    const askedAtMs = this.now();
    const hold: Hold & { outOfBand: (() => void)[]; expiry?: NodeJS.Timeout; decided: Promise<Approval> } = {
      key,
      call,
      deadlineMs,
      proposedAtMs: opts.proposedAtMs ?? this.now(),
      channels: [],
      abort,
      outOfBand,
      decided: Promise.resolve(undefined as never),
    };
    hold.decided = ask(abort.signal, {
      outOfBand: (channels) => {
        hold.channels = channels;
        for (const f of outOfBand.splice(0)) f();
      },
    }).then(async (approval) => {
      let final = approval;
      try {
        await this.opts.logApproval(call, approval);
      } catch (err) {
        final = { kind: 'denied', channel: approval.channel, reason: `the audit log cannot be written (${(err as Error).message})` };
      }
      hold.settled = final;
      // A denial with no actor is nobody's answer (the client cancelled, the deadline passed, no channel could
      // show it: confirm/broker.ts): counted, but not timed as a time to decision.
      const answered = final.kind === 'approved' || final.actor !== undefined;
      if (!opts.adopted) this.opts.metrics?.decided(final.channel, final.kind, answered ? this.now() - askedAtMs : undefined);
      // Kept for a retry until the deadline, then dropped; an unclaimed approval is logged as lapsed.
      if (this.holds.get(key) === hold) {
        hold.expiry = setTimeout(
          () => void this.expire(hold, 'no request from the client was waiting for it before confirm.timeout_seconds'),
          Math.max(0, deadlineMs - this.now()),
        );
        hold.expiry.unref();
      }
      return final;
    });
    this.holds.set(key, hold);
    const shared = this.opts.shared;
    if (shared && !opts.adopted)
      void shared.store
        .putIfAbsent<HoldRecord>(
          HOLD,
          this.sharedKey(call.tool, call.argsSha256),
          { call, deadlineMs, replica: shared.replica, proposedAtMs: hold.proposedAtMs },
          {
            ttlMs: Math.max(1, deadlineMs - this.now()),
          },
        )
        .catch(() => undefined);
    return hold;
  }

  /**
   * Waits while a request waits: for the decision, for `holdMs` once the question is out of band
   * (`pending`), or for the request's cancellation (`cancelled`). Never aborts the hold itself.
   */
  wait(hold: Hold, signal: AbortSignal, holdMs: number): Promise<WaitResult> {
    const h = this.holds.get(hold.key);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const finish = (r: WaitResult) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const onAbort = () => finish('cancelled');
      const startHoldTimer = () => {
        if (!done) timer = setTimeout(() => finish('pending'), holdMs);
      };
      if (signal.aborted) return finish('cancelled');
      signal.addEventListener('abort', onAbort, { once: true });
      hold.decided.then(() => finish('decided'));
      if (hold.settled) return;
      if (hold.channels.length > 0 || !h) startHoldTimer();
      else h.outOfBand.push(startHoldTimer);
    });
  }

  /**
   * Claims a decided hold for the waiting request: no other request, on any replica, can take it after this.
   * @returns `taken` when this request may act on the decision; `lapsed` when the hold is no longer open
   *   (it lapsed, or the session closed); `elsewhere` when another replica claimed it first (it ran, or
   *   runs, there): either way its decision must not be acted on here.
   */
  async take(hold: Hold): Promise<'taken' | 'lapsed' | 'elsewhere'> {
    const h = this.holds.get(hold.key);
    if (h !== hold) return 'lapsed';
    if (this.now() >= hold.deadlineMs) {
      // Past the deadline the timer may just not have fired yet: the approval lapsed.
      await this.expire(h, 'the retry came after confirm.timeout_seconds');
      return 'lapsed';
    }
    clearTimeout(h.expiry);
    this.holds.delete(hold.key);
    const shared = this.opts.shared;
    if (!shared) return 'taken';
    // Exactly one replica runs it: the first claim wins; a store that cannot say runs nothing.
    let won: unknown;
    try {
      won = await shared.store.putIfAbsent(CLAIM, hold.call.callId, { replica: shared.replica }, { ttlMs: CLAIM_TTL_MS });
    } catch {
      return 'lapsed';
    }
    await shared.store.delete(HOLD, this.sharedKey(hold.call.tool, hold.call.argsSha256)).catch(() => false);
    return won ? 'taken' : 'elsewhere';
  }

  /** Withdraws the question from every channel (a waiting request was cancelled); nothing will run. */
  withdraw(hold: Hold): void {
    const h = this.holds.get(hold.key);
    if (h === hold) {
      clearTimeout(h.expiry);
      this.holds.delete(hold.key);
    }
    // The gate is stopping: a shared question stays open for a restart or another replica to collect.
    if (this.stopping && this.opts.shared) return;
    hold.abort.abort();
    const shared = this.opts.shared;
    if (shared) {
      void shared.store.delete(HOLD, this.sharedKey(hold.call.tool, hold.call.argsSha256)).catch(() => false);
      // Taken over from another replica: the question there is withdrawn too.
      void shared.pending.withdrawShared(hold.call.callId, 'the client cancelled the call').catch(() => {});
    }
  }

  /**
   * The gate is stopping: from now on, shared holds are let go here without being withdrawn, so that
   * their questions stay open in the store for the principal's retry after a restart or on another
   * replica. Holds that are not shared are withdrawn as before (nobody else could collect them).
   */
  stop(): void {
    this.stopping = true;
  }

  /** Whether the gate is stopping (a request that ends now was not cancelled by its client). */
  get isStopping(): boolean {
    return this.stopping;
  }

  /** Whether this session's questions stay open when the gate stops (its holds are shared). */
  get keepsQuestions(): boolean {
    return this.opts.shared !== undefined;
  }

  /** Withdraws every hold (the session ended); unclaimed approvals are logged as lapsed. */
  async closeAll(reason: string): Promise<void> {
    const all = [...this.holds.values()];
    if (this.stopping && this.opts.shared) {
      for (const h of all) clearTimeout(h.expiry);
      this.holds.clear();
      return;
    }
    for (const h of all) h.abort.abort();
    await Promise.all(all.map((h) => h.decided.then(() => this.expire(h, reason))));
  }

  private async expire(hold: Hold & { expiry?: NodeJS.Timeout }, reason: string): Promise<void> {
    if (this.holds.get(hold.key) !== hold) return;
    clearTimeout(hold.expiry);
    this.holds.delete(hold.key);
    // Claimed and run on another replica: it did not lapse.
    const elsewhere = this.opts.shared && (await this.opts.shared.store.get(CLAIM, hold.call.callId).catch(() => undefined));
    if (hold.settled?.kind === 'approved' && !elsewhere) await this.opts.logLapse(hold.call, hold.settled, reason).catch(() => {});
  }
}

/** A registry whose decisions and lapses go to the audit log (and lapses to the page's history). */
export function auditedHolds(audit: AuditLog, pending: PendingApprovals, shared?: SharedHolds, clock?: Clock, metrics?: GateMetrics): Holds {
  return new Holds({
    shared,
    clock,
    metrics,
    logApproval: async (call, a) => {
      await audit.appendDurable(approvalEntry({ call_id: call.callId, tool: call.tool }, a));
    },
    logLapse: async (call, a, reason) => {
      await audit.appendDurable({ event: 'approval_lapsed', call_id: call.callId, tool: call.tool, actor: a.actor, reason });
      pending.recordOutcome(call.callId, 'lapsed (approved, never claimed)');
    },
  });
}
