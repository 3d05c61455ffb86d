/**
 * The merged timeline of several audit logs, one per gate replica (decision 0015): every entry of every
 * log in one order, by `ts`, then log name, then `seq`, so that a call received on one replica and retried
 * or executed on another reads as one story. Pure: takes the logs' verified text, returns entries; the
 * caller (cli/commands/timeline.ts) reads and verifies the files first. Clocks of different hosts are
 * not synchronized by lookfirst: entries of two replicas closer in time than their clocks' skew may be
 * shown in either order; within one log the order is always the log's own (`seq`).
 */
import type { AuditEvent } from './events.js';

/** One entry of the timeline: the entry as written, with the log it came from. */
export interface TimelineEntry extends Record<string, unknown> {
  /** The log's name (file name without `.jsonl`). */
  log: string;
  /** The replica that wrote it, from the last `gate_started` before it in its log, when that names one. */
  replica?: string;
  seq: number;
  ts: number;
  event: string;
}

/** A log to merge: its name and its text (JSONL, as verified). */
export interface TimelineLog {
  log: string;
  text: string;
}

/** Fields that say what happened in each event, shown after call id and tool (in this order). */
export const KEY_FIELDS: Record<AuditEvent, readonly string[]> = {
  gate_started: ['replica', 'pid', 'dry_run'],
  gate_stopped: ['reason'],
  read: ['outcome'],
  call_received: ['client', 'replay_of', 'dry_run'],
  decision: ['action', 'rule'],
  approval: ['approved', 'actor', 'channel', 'purpose'],
  approval_pending: ['channels', 'until'],
  approval_lapsed: ['reason', 'actor'],
  call_retried: [],
  input_required: ['until'],
  input_answered: [],
  input_refused: ['reason'],
  client_identity_changed: ['from', 'to'],
  upstream_request: ['outcome', 'method', 'upstream'],
  definition_changed: ['how', 'upstream'],
  definition_accepted: ['actor'],
  dry_run_recorded: ['upstream_tool'],
  executed: ['outcome'],
  execution_failed: ['outcome', 'reason'],
  readback: ['outcome', 'detail'],
  execution_started: [],
  execution_resolved: [],
  execution_blocked: ['reason'],
  execution_unblocked: ['blocked_call', 'actor'],
  cancelled: ['stage', 'reason'],
  web_refused: ['reason'],
  placeholder_refused: ['unknown', 'locked', 'reason'],
  placeholders_resolved: ['upstream', 'placeholders'],
  receipt_issued: ['receipt_sha256'],
  receipt_failed: ['reason'],
};

/**
 * Parses and merges logs into one timeline. Lines that are not entries (not a JSON object with a numeric
 * `seq` and `ts` and a string `event`) are skipped and counted: a verified log has none.
 * @param callId when given, only the entries of that call (`call_id`), across every log.
 */
export function mergeTimeline(logs: TimelineLog[], opts: { callId?: string } = {}): { entries: TimelineEntry[]; skipped: number } {
  const entries: TimelineEntry[] = [];
  let skipped = 0;
  for (const { log, text } of logs) {
    let replica: string | undefined;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const e = parseEntryLine(line);
      if (!e) {
        skipped++;
        continue;
      }
      if (e.event === 'gate_started') replica = typeof e.replica === 'string' ? e.replica : undefined;
      if (opts.callId !== undefined && e.call_id !== opts.callId) continue;
      entries.push(replica === undefined ? { ...e, log } : { ...e, log, replica });
    }
  }
  entries.sort((a, b) => a.ts - b.ts || (a.log < b.log ? -1 : a.log > b.log ? 1 : 0) || a.seq - b.seq);
  return { entries, skipped };
}

/** An audit entry as read back from a line, before any verification: the fields every entry has. */
export type LogEntry = Record<string, unknown> & { seq: number; ts: number; event: string };

/** The furthest a JavaScript Date reaches either side of the epoch (ms): a `ts` beyond it is no time. */
const MAX_DATE_MS = 8.64e15;

/**
 * `v` as an entry, or undefined when it lacks a finite numeric `seq`, a `ts` a Date can show, or a string
 * `event`. A `ts` no Date can show (1e300) is not an entry: showing it would throw, and one line of a log
 * read unverified must not stop `tail`, `stats` or `timeline --include-unverified`.
 */
export function asLogEntry(v: Record<string, unknown>): LogEntry | undefined {
  if (typeof v.seq !== 'number' || typeof v.ts !== 'number' || typeof v.event !== 'string') return undefined;
  if (!Number.isFinite(v.seq) || !(Math.abs(v.ts) <= MAX_DATE_MS)) return undefined;
  return v as LogEntry;
}

/**
 * Parses one line of a log into an entry, or undefined when it is not one (not a JSON object, or not an
 * entry by asLogEntry); the caller counts such lines.
 */
export function parseEntryLine(line: string): LogEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  return asLogEntry(v as Record<string, unknown>);
}

/**
 * What an entry says happened, as `field=value` pairs of its event's KEY_FIELDS (present ones only).
 * Values are shown as JSON when they are not plain strings, and cut at 80 characters.
 */
export function keyFieldsOf(entry: Record<string, unknown>): string {
  const names = KEY_FIELDS[entry.event as AuditEvent] ?? [];
  const parts: string[] = [];
  for (const name of names) {
    const v = entry[name];
    if (v === undefined) continue;
    const shown = typeof v === 'string' ? v : JSON.stringify(v);
    parts.push(`${name}=${shown.length > 80 ? `${shown.slice(0, 79)}\u2026` : shown}`);
  }
  return parts.join(' ');
}
