/**
 * `lookfirst stats`: what the gate decided in a window, summed. Pure: decisions in (observe/decisions.ts),
 * counts out, and their rendering as small aligned tables.
 */
import { oneLine } from '../confirm/visible.js';
import { cutToWidth, displayWidth, padEndToWidth, padStartToWidth } from '../core/text-width.js';
import { DECISION_OUTCOMES, type DecisionRecord, type OpenCall } from './decisions.js';
import { byOf, durationOf, noPaint, OUTCOME_COLOUR, type Paint, SHORT_ID, TOOL_MAX, timeOf } from './format.js';

/** Longest detail shown in a call list, in cells. */
const DETAIL_MAX = 80;

/** A name and how many decisions had it, most first. */
export interface Count {
  name: string;
  count: number;
}

/** The summary of a window. */
export interface Stats {
  /** The window: decisions settled at or after `sinceMs` and at or before `untilMs` (ms since the epoch). */
  sinceMs: number;
  untilMs: number;
  /** Calls the gate was done with in the window: `reads` let through plus `decisions` on the others. */
  total: number;
  /** Reads the gate let through (`read ok`, `read failed`): nobody decided on them. */
  reads: number;
  /** Calls the gate decided on (ran, denied, lapsed, dry-run, …): `total` less `reads`. */
  decisions: number;
  byTool: Count[];
  /** Every outcome that occurred, in DECISION_OUTCOMES order. */
  byOutcome: Count[];
  /** The channel a person answered on; `none` where no person decided (a rule, a read, a cancellation, a timeout). */
  byChannel: Count[];
  /** Who decided: the approver, `rule <name>`, or `none` (the classifier, or nobody: cancelled, timed out). */
  byApprover: Count[];
  /**
   * Time to decision over the calls a person answered in the window (ms): from the hold to the answer.
   * A call cancelled or timed out while it waited was answered by nobody and is not counted.
   * `medianMs` and `maxMs` are absent when no person answered.
   */
  decision: { count: number; medianMs?: number; maxMs?: number };
  /** The denied, lapsed and timed-out calls, oldest first. */
  denied: DecisionRecord[];
  lapsed: DecisionRecord[];
  timedOut: DecisionRecord[];
  /** Calls held for a person since the window began, with no answer yet. */
  waiting: OpenCall[];
}

/** Counts names, most first, then by name. */
function countBy(records: readonly DecisionRecord[], key: (r: DecisionRecord) => string): Count[] {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The median of numbers (the mean of the middle two for an even count); undefined for none. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A read the gate let through: no person, rule or hold decided on it. */
const isRead = (r: DecisionRecord) => r.outcome === 'read ok' || r.outcome === 'read failed';

/**
 * A person's answer, timed. The tracker times only those (observe/decisions.ts); the outcomes nobody
 * decided are left out here too, so that a record built elsewhere with a time cannot count as one.
 */
const answeredByPerson = (r: DecisionRecord): r is DecisionRecord & { decisionMs: number } =>
  r.decisionMs !== undefined && r.outcome !== 'cancelled' && r.outcome !== 'timed out';

/** `n thing` or `n things`. */
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The header's count, saying which calls were reads and which were decided on, e.g. `3 calls: 1 read, 2
 * decisions` (`0 calls` for none), so that reads are never counted as decisions.
 */
export function callsLine(s: Pick<Stats, 'total' | 'reads' | 'decisions'>): string {
  return s.total === 0 ? '0 calls' : `${plural(s.total, 'call')}: ${plural(s.reads, 'read')}, ${plural(s.decisions, 'decision')}`;
}

/**
 * Sums the decisions settled in a window.
 * @param records decisions in log order (any window; those outside it are left out here).
 * @param open calls still waiting for a person at the end of the log.
 * @param window `sinceMs` and `untilMs`, ms since the epoch.
 */
export function computeStats(records: readonly DecisionRecord[], open: readonly OpenCall[], window: { sinceMs: number; untilMs: number }): Stats {
  const inWindow = records.filter((r) => r.ts >= window.sinceMs && r.ts <= window.untilMs);
  const times = inWindow.filter(answeredByPerson).map((r) => r.decisionMs);
  const byOutcome = countBy(inWindow, (r) => r.outcome).sort((a, b) => DECISION_OUTCOMES.indexOf(a.name as never) - DECISION_OUTCOMES.indexOf(b.name as never));
  const decision: Stats['decision'] = { count: times.length };
  const reads = inWindow.filter((r) => isRead(r)).length;
  if (times.length > 0) {
    decision.medianMs = median(times);
    // A loop, not Math.max(...spread): a window of a few hundred thousand answers would overflow the stack.
    decision.maxMs = times.reduce((a, b) => Math.max(a, b), 0);
  }
  return {
    ...window,
    total: inWindow.length,
    reads,
    decisions: inWindow.length - reads,
    byTool: countBy(inWindow, (r) => r.tool),
    byOutcome,
    byChannel: countBy(inWindow, (r) => r.channel ?? 'none'),
    byApprover: countBy(inWindow, (r) => r.approver ?? (r.rule !== undefined ? `rule ${r.rule}` : 'none')),
    decision,
    denied: inWindow.filter((r) => r.outcome === 'denied'),
    lapsed: inWindow.filter((r) => r.outcome === 'lapsed'),
    timedOut: inWindow.filter((r) => r.outcome === 'timed out'),
    waiting: open.filter((c) => c.heldTs >= window.sinceMs && c.heldTs <= window.untilMs),
  };
}

/** Rows as aligned columns (widths in terminal cells), the first left-aligned, numbers right-aligned; two spaces between columns. */
export function table(rows: readonly (readonly string[])[], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell));
  const isNumber = (s: string) => /^\d+$/.test(s);
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (isNumber(cell) ? padStartToWidth(cell, widths[i] ?? 0) : padEndToWidth(cell, widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
  );
}

/** How many of the most frequent names each table shows (the rest are summed as `(N others)`). */
export const TABLE_ROWS = 15;

function countTable(title: string, counts: readonly Count[], paint: Paint, colour?: (name: string) => Parameters<Paint>[0]): string[] {
  if (counts.length === 0) return [];
  const shown = counts.slice(0, TABLE_ROWS);
  const rest = counts.slice(TABLE_ROWS).reduce((n, c) => n + c.count, 0);
  // Names cut to a column (a hostile upstream can name a tool with a megabyte); --json has them whole.
  const rows = shown.map((c) => [cutToWidth(oneLine(c.name), TOOL_MAX), String(c.count)]);
  if (rest > 0) rows.push([`(${counts.length - TABLE_ROWS} others)`, String(rest)]);
  const lines = table(rows);
  // Colour after aligning: escape codes would count as width.
  const painted = colour ? lines.map((l, i) => (i < shown.length ? l.replace(rows[i]?.[0] ?? '', (m) => paint(colour(shown[i]?.name ?? ''), m)) : l)) : lines;
  return [paint('bold', title), ...painted, ''];
}

function callList(title: string, records: readonly DecisionRecord[], paint: Paint): string[] {
  if (records.length === 0) return [];
  const shown = records.slice(-TABLE_ROWS);
  const rows = shown.map((r) => [
    timeOf(r.ts),
    cutToWidth(oneLine(r.tool), TOOL_MAX),
    oneLine(r.callId?.slice(0, SHORT_ID) ?? '-'),
    cutToWidth(oneLine(byOf(r)), TOOL_MAX),
    // Cut by cells, not code units: a slice can leave half a surrogate pair.
    cutToWidth(oneLine(r.detail ?? ''), DETAIL_MAX),
  ]);
  const more = records.length > shown.length ? [`  (${records.length - shown.length} earlier not shown; --json lists all)`] : [];
  return [paint('bold', `${title} (${records.length})`), ...more, ...table(rows), ''];
}

/**
 * The stats as text: a header line, then small tables (by outcome, tool, channel, who decided), time to
 * decision, and the denied, lapsed, timed-out and waiting calls. Names from the log are shown on one line with hidden
 * characters made visible.
 */
export function renderStats(s: Stats, paint: Paint = noPaint): string {
  const lines: string[] = [`${callsLine(s)} from ${timeOf(s.sinceMs)} to ${timeOf(s.untilMs)}`, ''];
  if (s.total === 0 && s.waiting.length === 0) return `${lines.join('\n')}\n`;
  lines.push(...countTable('By outcome', s.byOutcome, paint, (name) => OUTCOME_COLOUR[name as keyof typeof OUTCOME_COLOUR] ?? 'bold'));
  lines.push(...countTable('By tool', s.byTool, paint));
  lines.push(...countTable('By channel', s.byChannel, paint));
  lines.push(...countTable('By who decided', s.byApprover, paint));
  lines.push(paint('bold', 'Time to decision'));
  if (s.decision.medianMs === undefined) lines.push('  no call was answered by a person in this window', '');
  else
    lines.push(
      ...table([
        ['answered by a person', String(s.decision.count)],
        ['median', durationOf(s.decision.medianMs)],
        ['longest', durationOf(s.decision.maxMs ?? 0)],
      ]),
      '',
    );
  lines.push(...callList('Denied', s.denied, paint));
  lines.push(...callList('Lapsed', s.lapsed, paint));
  lines.push(...callList('Timed out', s.timedOut, paint));
  if (s.waiting.length > 0) {
    lines.push(paint('bold', `Waiting for a person now (${s.waiting.length})`));
    lines.push(...table(s.waiting.map((c) => [timeOf(c.heldTs), cutToWidth(oneLine(c.tool), TOOL_MAX), oneLine(c.callId.slice(0, SHORT_ID))])), '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The stats as one JSON object, for `--json` (snake_case; times in ms and ISO 8601). */
export function statsJson(s: Stats, log: string): Record<string, unknown> {
  const call = (r: DecisionRecord) => ({
    time: new Date(r.ts).toISOString(),
    tool: r.tool,
    call_id: r.callId,
    channel: r.channel,
    approver: r.approver,
    rule: r.rule,
    detail: r.detail,
  });
  const asObject = (counts: readonly Count[]) => Object.fromEntries(counts.map((c) => [c.name, c.count]));
  return {
    log,
    since: new Date(s.sinceMs).toISOString(),
    until: new Date(s.untilMs).toISOString(),
    total: s.total,
    reads: s.reads,
    decisions: s.decisions,
    by_outcome: asObject(s.byOutcome),
    by_tool: asObject(s.byTool),
    by_channel: asObject(s.byChannel),
    by_approver: asObject(s.byApprover),
    time_to_decision: { answered: s.decision.count, median_ms: s.decision.medianMs, max_ms: s.decision.maxMs },
    denied: s.denied.map(call),
    lapsed: s.lapsed.map(call),
    timed_out: s.timedOut.map(call),
    waiting: s.waiting.map((c) => ({ since: new Date(c.heldTs).toISOString(), tool: c.tool, call_id: c.callId })),
  };
}
