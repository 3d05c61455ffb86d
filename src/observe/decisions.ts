/**
 * From audit entries to decisions: one record per tool call once the gate is done with it (it ran and
 * was checked, or it was denied, lapsed, recorded in a dry run, cancelled, refused), and one per read.
 * Pure: entries in, records out, in log order, so that `tail` (live) and `stats` (a window) read the log
 * the same way. The entries are taken as written and not verified: a tampered log yields tampered
 * records (`lookfirst verify-log` is the check). Unknown events and lines that are not entries are
 * skipped, so a newer gate's log still reads.
 * @see ../audit/events.ts for every event and its fields.
 */

import { asLogEntry, type LogEntry, parseEntryLine } from '../audit/timeline.js';

/**
 * What became of a call, as shown:
 * - `executed ok`: it ran, the upstream answered, and read-back (if any) agreed;
 * - `executed unclear`: it ran, and read-back could not tell whether it took effect;
 * - `executed failed`: it ran, and the upstream answered with an error or read-back disagreed;
 * - `unknown`: it was sent, and how it ended is not known (timeout, crash, cut off by a restart);
 * - `denied`: a rule or a person said no, or the gate did because nobody could be asked; nothing ran;
 * - `lapsed`: approved, but the client never came back for it; nothing ran;
 * - `timed out`: nobody decided before the confirmation deadline (`confirm.timeout_seconds`); nothing ran;
 * - `dry-run`: recorded by a dry-run gate, not run (`lookfirst promote` replays it);
 * - `cancelled`: withdrawn before it ran (the client cancelled it or went away, or the gate stopped),
 *   while it waited for a person included: nobody decided it;
 * - `refused`: refused before anyone was asked (an answer in the client refused, unknown placeholders);
 * - `read ok` / `read failed`: a read the gate let through, and whether the upstream answered it.
 */
export type DecisionOutcome =
  | 'executed ok'
  | 'executed unclear'
  | 'executed failed'
  | 'unknown'
  | 'denied'
  | 'lapsed'
  | 'timed out'
  | 'dry-run'
  | 'cancelled'
  | 'refused'
  | 'read ok'
  | 'read failed';

/** Every outcome, in the order stats lists them. */
export const DECISION_OUTCOMES: readonly DecisionOutcome[] = [
  'executed ok',
  'executed unclear',
  'executed failed',
  'unknown',
  'denied',
  'lapsed',
  'timed out',
  'dry-run',
  'cancelled',
  'refused',
  'read ok',
  'read failed',
];

/** One decision: a call the gate is done with, or a read it let through. */
export interface DecisionRecord {
  /** When it concluded: the `ts` (ms since the epoch) of the entry that settled it. */
  ts: number;
  /** `seq` of that entry in its log. */
  seq: number;
  tool: string;
  /** The call's id; absent for reads, which the log does not give one. */
  callId?: string;
  outcome: DecisionOutcome;
  /** The channel a person decided on (`elicitation`, `web`, `terminal`, …); absent when nobody was asked. */
  channel?: string;
  /** Who decided, as logged (`web:alice`; the channel when it names nobody); absent when nobody was asked. */
  approver?: string;
  /** The rule that decided, when a rule did (`rules.tools`). */
  rule?: string;
  /** Why, for outcomes that are not a clean run: the entry's reason or read-back detail, as logged. */
  detail?: string;
  /**
   * Time to decision in ms: from the call's hold (its `decision` entry asking for confirmation; else its
   * `call_received`) to the last person's answer (`approval`). Absent when no person answered (a call
   * cancelled or timed out while it waited has none: see {@link unattendedOutcome}).
   */
  decisionMs?: number;
}

/** A call held for a person with no decision yet (at the end of what was read). */
export interface OpenCall {
  callId: string;
  tool: string;
  /** When it began to wait (ms since the epoch). */
  heldTs: number;
}

/** Feeds entries in log order; hands back the decisions they settle. */
export interface DecisionTracker {
  /**
   * Takes one entry (a parsed line) and returns the decisions it settles: none, or one.
   * Entries that are not objects with a numeric `seq`, a `ts` a Date can hold (within ±8.64e15 ms of
   * the epoch) and a string `event` are ignored.
   */
  push(entry: Record<string, unknown>): DecisionRecord[];
  /** Calls waiting for a person: held (`decision` confirm) with no answer or end yet. */
  open(): OpenCall[];
}

interface CallState {
  tool: string;
  receivedTs?: number;
  heldTs?: number;
  answeredTs?: number;
  channel?: string;
  approver?: string;
  rule?: string;
  started?: boolean;
  executed?: string;
  readback?: string;
  readbackDetail?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** First words of the denial a client's cancellation leaves (`withdrawn: …` from a replica that took the call over). */
const CANCELLED_REASON = /^(cancelled by the client|withdrawn:)/;
/** First words of the denial a passed deadline leaves (`no decision before …` from the elicitation channel). */
const TIMED_OUT_REASON = /^(nobody decided before the confirmation timeout|no decision before the confirmation timeout)/;

/**
 * What an `approval` entry that no person made settles, or undefined when a person (or the operator)
 * made it. Every channel names who decided (`actor`), so an entry that approves nothing and names nobody
 * is the gate's own: the client cancelled or went away while the call waited (`cancelled`), its deadline
 * passed (`timed out`), or nobody could be asked or a channel failed (`denied`, by the gate). The test is
 * the structured fields (`approved`, `actor`); the reason's first words only tell which of the three, and
 * are matched as gates have always written them, so logs from before the gate wrote channel `none` for
 * these (they named the channel the question was shown on, e.g. `web`) read the same.
 * @param e an `approval` entry's fields, as logged.
 */
export function unattendedOutcome(e: Record<string, unknown>): DecisionOutcome | undefined {
  if (e.approved === true || str(e.actor) !== undefined) return undefined;
  const reason = str(e.reason) ?? '';
  if (CANCELLED_REASON.test(reason)) return 'cancelled';
  if (TIMED_OUT_REASON.test(reason)) return 'timed out';
  return 'denied';
}

/** How many calls settled by an unattended `approval` the tracker remembers, to drop the `cancelled` entry that may follow. */
const SETTLED_MEMORY = 1024;

/**
 * Creates a tracker. It keeps the state of calls not yet settled (a few fields each) and forgets a call
 * once settled, so a long `tail` holds only what is in flight.
 */
export function createDecisionTracker(): DecisionTracker {
  const calls = new Map<string, CallState>();
  // A request cancelled while its call waited logs the withdrawn question's `approval` and then its own
  // `cancelled`: one call, one record. Bounded (oldest forgotten first), so a long `tail` stays small.
  const unattended = new Set<string>();
  const remember = (id: string) => {
    unattended.add(id);
    if (unattended.size > SETTLED_MEMORY) unattended.delete(unattended.values().next().value as string);
  };

  const settle = (id: string, s: CallState, e: Entry, outcome: DecisionOutcome, detail?: string): DecisionRecord[] => {
    calls.delete(id);
    const record: DecisionRecord = { ts: e.ts, seq: e.seq, tool: s.tool, callId: id, outcome };
    if (s.channel !== undefined) record.channel = s.channel;
    if (s.approver !== undefined) record.approver = s.approver;
    if (s.rule !== undefined) record.rule = s.rule;
    if (detail !== undefined) record.detail = detail;
    const from = s.heldTs ?? s.receivedTs;
    if (s.answeredTs !== undefined && from !== undefined) record.decisionMs = Math.max(0, s.answeredTs - from);
    return [record];
  };

  /** A call that ran: its outcome from the upstream's answer and read-back. */
  const ran = (s: CallState): [DecisionOutcome, string | undefined] => {
    if (s.executed === 'upstream_error') return ['executed failed', 'the upstream answered with an error'];
    if (s.readback === 'failed') return ['executed failed', `read-back failed${s.readbackDetail ? `: ${s.readbackDetail}` : ''}`];
    if (s.readback === 'unclear') return ['executed unclear', s.readbackDetail ?? 'read-back unclear'];
    return ['executed ok', undefined];
  };

  return {
    push(raw) {
      const e = asLogEntry(raw);
      if (!e) return [];
      if (e.event === 'read') {
        const tool = str(e.tool) ?? '?';
        const ok = e.outcome === 'ok';
        const record: DecisionRecord = { ts: e.ts, seq: e.seq, tool, outcome: ok ? 'read ok' : 'read failed' };
        if (!ok) record.detail = str(e.error) ?? String(e.outcome);
        return [record];
      }
      const id = str(e.call_id);
      if (id === undefined) return [];
      let s = calls.get(id);
      if (e.event === 'call_received') {
        // A retry across a restart may log the call again: keep what is known, refresh the tool.
        s = { ...(s ?? {}), tool: str(e.tool) ?? s?.tool ?? '?', receivedTs: s?.receivedTs ?? e.ts };
        calls.set(id, s);
        return [];
      }
      if (!s) {
        // An entry of a call whose start is not in what was read (a log read from the middle): track it
        // from here, except entries that only close a call that was never seen to run.
        if (e.event === 'execution_resolved' || e.event === 'execution_blocked' || e.event === 'execution_unblocked') return [];
        if (e.event === 'cancelled' && unattended.delete(id)) return [];
        s = { tool: str(e.tool) ?? '?' };
        calls.set(id, s);
      }
      switch (e.event) {
        case 'decision': {
          s.rule = str(e.rule) ?? s.rule;
          if (e.action === 'confirm') s.heldTs ??= e.ts;
          if (e.action === 'deny') return settle(id, s, e, 'denied', str(e.reason));
          return [];
        }
        case 'approval': {
          const unattendedAs = unattendedOutcome(e);
          if (unattendedAs !== undefined) {
            // Nobody decided: no channel, approver or time to decision, whatever earlier entries said.
            delete s.channel;
            delete s.approver;
            delete s.answeredTs;
            remember(id);
            return settle(id, s, e, unattendedAs, str(e.reason));
          }
          s.channel = str(e.channel) ?? s.channel;
          s.approver = str(e.actor) ?? s.channel;
          s.answeredTs = e.ts;
          if (e.approved !== true) return settle(id, s, e, 'denied', str(e.reason));
          return [];
        }
        case 'approval_lapsed':
          return settle(id, s, e, 'lapsed', str(e.reason));
        case 'dry_run_recorded':
          return settle(id, s, e, 'dry-run');
        case 'cancelled':
          return settle(id, s, e, 'cancelled', str(e.reason) ?? str(e.stage));
        case 'input_refused':
        case 'placeholder_refused':
          return settle(id, s, e, 'refused', str(e.reason));
        case 'execution_started':
          s.started = true;
          return [];
        case 'executed':
          s.executed = str(e.outcome) ?? 'ok';
          return [];
        case 'readback':
          s.readback = str(e.outcome);
          s.readbackDetail = str(e.detail);
          return [];
        case 'execution_failed':
          return settle(id, s, e, 'unknown', str(e.reason));
        case 'execution_resolved':
        case 'execution_blocked': {
          if (s.executed !== undefined) {
            const [outcome, detail] = ran(s);
            return settle(id, s, e, outcome, detail);
          }
          // Blocked after it was sent and before any answer was logged: cut off (a restart's interlock).
          if (s.started && e.event === 'execution_blocked') return settle(id, s, e, 'unknown', str(e.reason));
          return [];
        }
        default:
          return [];
      }
    },
    open() {
      const out: OpenCall[] = [];
      for (const [callId, s] of calls)
        if (s.heldTs !== undefined && s.answeredTs === undefined && !s.started) out.push({ callId, tool: s.tool, heldTs: s.heldTs });
      return out;
    },
  };
}

type Entry = LogEntry;

/** Re-exported for the commands that read the log: one line read as an entry (audit/timeline.ts). */
export { parseEntryLine };

/** Every decision in a log's text (complete lines only), and how many lines were not entries. */
export function decisionsOf(text: string): { records: DecisionRecord[]; open: OpenCall[]; skipped: number } {
  const tracker = createDecisionTracker();
  const records: DecisionRecord[] = [];
  let skipped = 0;
  const lines = text.split('\n');
  // The part after the last newline is a line still being written: not read yet.
  lines.pop();
  for (const line of lines) {
    if (line === '') continue;
    const e = parseEntryLine(line);
    if (!e) skipped++;
    else records.push(...tracker.push(e));
  }
  return { records, open: tracker.open(), skipped };
}
