/**
 * `lookfirst timeline DIR [--call ID] [--include-unverified] [--json]`: one story out of the audit logs of
 * several replicas (decision 0015). Every log in DIR is verified first, exactly as `verify-log --dir`
 * does; a log that does not verify (tampered, or no verdict) is named on stderr and left out, unless
 * `--include-unverified`, which prints its entries too, marked. The merge itself is audit/timeline.ts.
 * Exit code: the worst verdict, as verify-log's (0 all intact, 1 no verdict, 2 tampered), whether or not
 * unverified entries were printed. Text from the logs is shown with hidden characters made visible
 * (confirm/visible.ts): a value from a hostile upstream cannot move the cursor or reorder the line.
 */
import { basename } from 'node:path';
import { keyFieldsOf, mergeTimeline, type TimelineLog } from '../../audit/timeline.js';
import { oneLine } from '../../confirm/visible.js';
import { displayWidth, padEndToWidth } from '../../core/text-width.js';
import { cliName, logLine, paint } from '../output.js';
import { VERIFY_EXIT } from './verify-log.js';
import { LOG_EXTENSION, summaryOf, verifyFolder } from './verify-log-dir.js';

/** Options of the command. */
export interface TimelineOptions {
  config: string;
  call?: string;
  includeUnverified?: boolean;
  expectKey?: string;
  json?: boolean;
}

/** Runs the command; returns the exit code. */
export function timelineCommand(dir: string, opts: TimelineOptions): number {
  const folder = verifyFolder(dir, { configFile: opts.config, expectKey: opts.expectKey });
  if (folder.message) logLine(folder.message);
  const logs: (TimelineLog & { verified: boolean })[] = [];
  for (const l of folder.logs) {
    const text = folder.texts.get(l.log);
    const verified = l.verdict === 'intact';
    if (!verified) {
      const what = text !== undefined && opts.includeUnverified ? 'included, marked unverified' : 'left out';
      logLine(`${l.log}: ${summaryOf(l)}; ${what}. See ${cliName()} verify-log --dir ${dir}`);
    }
    if (text !== undefined && (verified || opts.includeUnverified)) logs.push({ log: nameOf(l.log), text, verified });
  }
  const { entries, skipped } = mergeTimeline(logs, { callId: opts.call });
  if (skipped > 0) logLine(`${skipped} line${skipped === 1 ? '' : 's'} of unverified logs are not entries and were skipped`);
  const unverified = new Set(logs.filter((l) => !l.verified).map((l) => l.log));
  if (opts.json) {
    const list = entries.map((e) => (unverified.has(e.log) ? { ...e, unverified: true } : e));
    const verdicts = folder.logs.map((l) => ({ log: l.log, verdict: l.verdict, included: logs.some((x) => x.log === nameOf(l.log)) }));
    process.stdout.write(`${JSON.stringify({ dir, verdict: folder.verdict, logs: verdicts, entries: list })}\n`);
    return VERIFY_EXIT[folder.verdict];
  }
  const out = process.stdout;
  // Widths of the text as shown (escapes made visible), in terminal cells.
  const width = Math.max(0, ...entries.map((e) => displayWidth(oneLine(e.log))));
  const eventWidth = Math.max(0, ...entries.map((e) => displayWidth(oneLine(e.event))));
  for (const e of entries) {
    const mark = unverified.has(e.log) ? paint(out, 'red', '? ') : '';
    const call = typeof e.call_id === 'string' ? e.call_id : '-';
    const tool = typeof e.tool === 'string' ? e.tool : '-';
    const fields = [
      paint(out, 'dim', new Date(e.ts).toISOString()),
      padEndToWidth(oneLine(e.log), width),
      paint(out, 'bold', padEndToWidth(oneLine(e.event), eventWidth)),
      oneLine(call),
      oneLine(tool),
      oneLine(keyFieldsOf(e)),
    ];
    out.write(`${mark}${fields.join('  ').trimEnd()}\n`);
  }
  if (entries.length === 0) logLine(opts.call !== undefined ? `no entries of call ${oneLine(opts.call)} in the logs shown` : 'no entries in the logs shown');
  return VERIFY_EXIT[folder.verdict];
}

/** A log's name in the timeline: its file name without `.jsonl`. */
function nameOf(file: string): string {
  const name = basename(file);
  return name.endsWith(LOG_EXTENSION) ? name.slice(0, -LOG_EXTENSION.length) : name;
}
