/**
 * How a decision is shown: one line for `lookfirst tail`, one JSON object for `--json`, a duration for
 * people. Text from the log is shown with hidden characters made visible and on one line
 * (confirm/visible.ts): a tool name or reason from a hostile upstream cannot move the cursor or forge a
 * second line. Colour is the caller's (a `Paint` that does nothing when colour is off).
 */
import { oneLine } from '../confirm/visible.js';
import { cutToWidth, padEndToWidth } from '../core/text-width.js';
import type { DecisionOutcome, DecisionRecord } from './decisions.js';

/** Colours an outcome may be shown in. */
export type Colour = 'red' | 'green' | 'yellow' | 'bold' | 'dim';

/** Wraps text in a colour, or returns it as it is when colour is off (NO_COLOR, not a terminal). */
export type Paint = (colour: Colour, text: string) => string;

/** No colour. */
export const noPaint: Paint = (_colour, text) => text;

/** The colour of each outcome: green ran cleanly, yellow needs a look, red did not run or went wrong. */
export const OUTCOME_COLOUR: Record<DecisionOutcome, Colour> = {
  'executed ok': 'green',
  'executed unclear': 'yellow',
  'executed failed': 'red',
  unknown: 'red',
  denied: 'red',
  lapsed: 'yellow',
  'timed out': 'yellow',
  'dry-run': 'yellow',
  cancelled: 'yellow',
  refused: 'red',
  'read ok': 'dim',
  'read failed': 'yellow',
};

/** Characters of a call id shown (a UUID's first group: enough to find it with `timeline --call`). */
export const SHORT_ID = 8;

// Widths are terminal cells (core/text-width.ts): a CJK approver's name or an emoji tool name must not shift the columns.
const cut = cutToWidth;
const pad = padEndToWidth;

/** Who decided, for a person: the approver, else the rule, else `-` (the policy, nobody asked). */
export function byOf(r: DecisionRecord): string {
  return r.approver ?? (r.rule !== undefined ? `rule ${r.rule}` : '-');
}

/** A time as `2026-12-02T04:39:35Z` (UTC, whole seconds). */
export function timeOf(ts: number): string {
  return `${new Date(ts).toISOString().slice(0, 19)}Z`;
}

/** Widths of the fixed columns of a `tail` line; text longer than its column is cut with `…`. */
const WIDTH = { outcome: 16, channel: 11, who: 22 } as const;

/** Longest tool name shown in full on a line or in a `stats` table, in cells (the whole name is in `--json`). */
export const TOOL_MAX = 64;

/**
 * One decision as a line (no newline): time, outcome, channel, who, short call id, then the tool, and why
 * when it is not a clean run. Every column before the tool has a fixed width and longer text is cut to it,
 * so lines that arrive one by one align whatever their content; the tool comes last because its width
 * cannot be known in advance (with several upstreams names are `<upstream>__<tool>`, often past 20).
 */
export function toLine(r: DecisionRecord, paint: Paint = noPaint): string {
  const fields = [
    paint('dim', timeOf(r.ts)),
    paint(OUTCOME_COLOUR[r.outcome], pad(r.outcome, WIDTH.outcome)),
    pad(cut(oneLine(r.channel ?? '-'), WIDTH.channel), WIDTH.channel),
    pad(cut(oneLine(byOf(r)), WIDTH.who), WIDTH.who),
    pad(r.callId !== undefined ? oneLine(r.callId.slice(0, SHORT_ID)) : '-', SHORT_ID),
    cut(oneLine(r.tool), TOOL_MAX),
  ];
  if (r.detail !== undefined) fields.push(paint('dim', cut(oneLine(r.detail), 100)));
  return fields.join('  ').trimEnd();
}

/**
 * One decision as a JSON object, for `--json` (snake_case, as the log). `time` is `ts` in ISO 8601;
 * absent fields are left out.
 */
export function toJsonRecord(r: DecisionRecord): Record<string, unknown> {
  return {
    time: new Date(r.ts).toISOString(),
    ts: r.ts,
    seq: r.seq,
    tool: r.tool,
    outcome: r.outcome,
    channel: r.channel,
    approver: r.approver,
    rule: r.rule,
    call_id: r.callId,
    decision_ms: r.decisionMs,
    detail: r.detail,
  };
}

/** A duration for people: `850 ms`, `4.2 s`, `3.5 min`, `2.0 h`. */
export function durationOf(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
