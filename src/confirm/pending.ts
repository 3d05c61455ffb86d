/**
 * Pending approvals: the one place a held call waits while it is shown outside the client (web page,
 * webhook, terminal). The first decision through any channel settles it; a timeout, the client's
 * cancellation, or every channel failing to show it settles it as not approved. A decision must name
 * both the call id and the args_sha256 that was shown: a decision about other arguments is refused, so an
 * approval can never be moved onto another call. Also keeps a short history of recent decisions and
 * their outcome, for the page.
 * In memory for now; the planned store interface will hold it so several gate replicas can share it.
 */
import { type Clock, systemClock } from '../clock.js';
import type { Decider, Risk } from '../types.js';
import type { ApprovalRequest, ChannelAnswer } from './channel.js';
import type { Lookalike } from './lookalike.js';

/** What an approver sees of a pending call. */
export interface PendingView {
  callId: string;
  tool: string;
  upstream: string;
  purpose: 'execute' | 'unlock' | 'definition';
  summary: string;
  argsCanonical: string;
  argsSha256: string;
  client: string;
  risk: Risk;
  riskReason: string;
  lookalikes: Lookalike[];
  /** Unified diff of a file write or edit, when one could be made. */
  diff?: string;
  /** Channels showing it now, e.g. `["web", "webhook"]`. */
  channels: string[];
  /** When the call started waiting (ms since epoch). */
  sinceMs: number;
  deadlineMs: number;
}

/** A decided (or lapsed) call, newest first in `history()`. */
export interface HistoryItem {
  callId: string;
  tool: string;
  summary: string;
  purpose: 'execute' | 'unlock' | 'definition';
  /** `approved`, `denied`, `timed out`, `withdrawn` (client cancelled), `not shown` (no channel could). */
  decision: string;
  actor?: string;
  comment?: string;
  atMs: number;
  /** Filled in after execution: `executed`, `denied`, …, and the read-back outcome. */
  outcome?: string;
  readback?: string;
}

/** Outcome of a decision attempt: `ok`, or why it was refused and whether the call exists at all. */
export type DecideResult = { ok: true } | { ok: false; reason: string; status: 'gone' | 'mismatch' };

/**
 * How a call that no longer waits ended, as a late decision is told: `decided` (a replayed or second
 * decision), `timed out` (nobody decided in time), `withdrawn` (the client cancelled or went away, or no
 * channel could show it).
 */
export type EndedHow = { kind: 'decided'; by: string; approved: boolean } | { kind: 'timed out' } | { kind: 'withdrawn'; reason: string };

/** The abort reason the broker gives when the confirmation timeout passes (tells a timeout from a cancel). */
export const CONFIRM_TIMEOUT = 'confirm.timeout_seconds';

/** A change the page streams: the full state is cheap to resend and never goes out of order. */
export type PendingListener = () => void;

interface Entry {
  view: PendingView;
  settle: (answer: ChannelAnswer) => void;
}

const HISTORY_SIZE = 50;
/** How many ended calls are remembered, so that a late decision about them is told (and logged) why. */
const ENDED_SIZE = 1000;

/** The queue of calls waiting for an out-of-band decision. */
export class PendingApprovals {
  private readonly items = new Map<string, Entry>();
  private readonly past: HistoryItem[] = [];
  private readonly listeners = new Set<PendingListener>();
  private readonly endedHow = new Map<string, EndedHow>();

  /** @param clock the time source for `sinceMs` and `atMs` (tests inject one). */
  constructor(private readonly clock: Clock = systemClock) {}

  /** Calls waiting now, oldest first. */
  list(): PendingView[] {
    return [...this.items.values()].map((e) => e.view);
  }

  /** Recent decisions, newest first (at most 50). */
  history(): HistoryItem[] {
    return [...this.past];
  }

  /** The pending call with this id, if any. */
  get(callId: string): PendingView | undefined {
    return this.items.get(callId)?.view;
  }

  /** How a call that is no longer pending ended, when it ended recently in this process. */
  ended(callId: string): EndedHow | undefined {
    return this.endedHow.get(callId);
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
   * Records a person's decision.
   * @returns `ok: false` with `status: 'gone'` when the call is not pending (decided, timed out,
   *   withdrawn, unknown), `'mismatch'` when the args_sha256 is not the one held.
   */
  decide(callId: string, argsSha256: string, approve: boolean, who: Decider): DecideResult {
    const entry = this.items.get(callId);
    if (!entry) return { ok: false, status: 'gone', reason: 'this call is no longer waiting (decided, timed out, or withdrawn by the client)' };
    if (entry.view.argsSha256 !== argsSha256)
      return { ok: false, status: 'mismatch', reason: 'the arguments named are not the arguments held; reload and look again' };
    this.items.delete(callId);
    this.remember(callId, { kind: 'decided', by: who.actor, approved: approve });
    entry.settle(
      approve
        ? { kind: 'approved', ...who }
        : { kind: 'denied', ...who, reason: `denied on the ${who.channel} channel by ${who.actor}${who.comment ? ` ("${who.comment}")` : ''}` },
    );
    return { ok: true };
  }

  /**
   * Puts a call in the queue until a decision, `signal` (timeout or client cancellation), or
   * `withdraw`. Never settles as approved except through `decide`.
   */
  hold(req: ApprovalRequest, channels: string[], signal: AbortSignal): { answer: Promise<ChannelAnswer>; withdraw: (reason: string) => void } {
    const { call } = req;
    let settleRef: (a: ChannelAnswer) => void = () => {};
    const answer = new Promise<ChannelAnswer>((resolve) => {
      settleRef = resolve;
    });
    const finish = (a: ChannelAnswer, how: EndedHow) => {
      if (this.items.get(call.callId)?.settle !== settle) return;
      this.items.delete(call.callId);
      this.remember(call.callId, how);
      settle(a);
    };
    const onAbort = () =>
      signal.reason === CONFIRM_TIMEOUT
        ? finish(
            { kind: 'denied', channel: channels.join('+'), reason: 'nobody decided before the confirmation timeout (confirm.timeout_seconds)' },
            { kind: 'timed out' },
          )
        : finish(
            { kind: 'denied', channel: channels.join('+'), reason: 'withdrawn: the client cancelled the call' },
            { kind: 'withdrawn', reason: 'the client cancelled the call or went away' },
          );
    const settle = (a: ChannelAnswer) => {
      signal.removeEventListener('abort', onAbort);
      settleRef(a);
      this.emit();
    };
    this.items.set(call.callId, {
      view: {
        callId: call.callId,
        tool: call.tool,
        upstream: call.upstream,
        purpose: req.purpose ?? 'execute',
        summary: req.summary,
        argsCanonical: call.argsCanonical,
        argsSha256: call.argsSha256,
        client: req.client ?? 'client',
        risk: req.risk ?? 'medium',
        riskReason: req.riskReason ?? '',
        lookalikes: req.lookalikes ?? [],
        diff: req.diff,
        channels,
        sinceMs: this.clock.nowMs(),
        deadlineMs: req.deadlineMs,
      },
      settle,
    });
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      this.emit();
    }
    return { answer, withdraw: (reason) => finish({ kind: 'unavailable', reason }, { kind: 'withdrawn', reason }) };
  }

  /** Removes a channel from a pending call's list (it could not show the call). */
  dropChannel(callId: string, channel: string): void {
    const entry = this.items.get(callId);
    if (!entry) return;
    entry.view.channels = entry.view.channels.filter((c) => c !== channel);
    this.emit();
  }

  /** Adds a decision to the history (any channel, elicitation included). */
  recordDecision(item: Omit<HistoryItem, 'atMs'>): void {
    this.past.unshift({ ...item, atMs: this.clock.nowMs() });
    this.past.length = Math.min(this.past.length, HISTORY_SIZE);
    this.emit();
  }

  /** Adds what happened after the decision (executed, read-back) to its history item. */
  recordOutcome(callId: string, outcome: string, readback?: string): void {
    const item = this.past.find((h) => h.callId === callId);
    if (!item) return;
    item.outcome = outcome;
    item.readback = readback;
    this.emit();
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
