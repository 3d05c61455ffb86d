/**
 * `lookfirst stats [--config F] [--since 24h] [--json]`: what the gate decided in a window, from the
 * audit log (audit.log in the config): counts by outcome, tool, channel and who decided, the median time
 * from a call's hold to a person's answer, and the denied, lapsed and waiting calls. The summing is
 * observe/stats.ts. It does not verify the log: `lookfirst verify-log` is the check.
 */
import { systemClock } from '../../clock.js';
import { loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { createDecisionTracker, type DecisionRecord, parseEntryLine } from '../../observe/decisions.js';
import { createLineSplitter } from '../../observe/lines.js';
import { parseSince } from '../../observe/since.js';
import { computeStats, renderStats, statsJson } from '../../observe/stats.js';
import { readLogLines } from '../log-file.js';
import { cliName, jsonLine, logLine, paint } from '../output.js';

/** Options of the command. */
export interface StatsOptions {
  config: string;
  /** A duration back from now (`30m`, `24h`, `7d`) or an ISO time; default 24h. */
  since?: string;
  json?: boolean;
}

/**
 * Runs the command; returns the exit code (0).
 * @throws LookfirstError `USAGE` for a bad `--since`, `AUDIT_LOG_UNREADABLE` when the log cannot be read
 *   or is not a regular file (a FIFO, a directory, a device);
 *   ConfigError for a bad config.
 */
export function statsCommand(opts: StatsOptions): number {
  const nowMs = systemClock.nowMs();
  const since = parseSince(opts.since ?? '24h', nowMs);
  if (!since.ok) throw new LookfirstError('USAGE', since.reason);
  const config = loadConfig(opts.config);
  const path = config.audit.logPath;
  // Read in chunks, keeping only the decisions in the window: a log of gigabytes takes no more memory
  // than its window's decisions and one line. The part after the last newline is still being written.
  const tracker = createDecisionTracker();
  const records: DecisionRecord[] = [];
  let skipped = 0;
  try {
    readLogLines(path, 0, createLineSplitter(), (line) => {
      if (line === '') return;
      const entry = parseEntryLine(line);
      if (!entry) skipped++;
      else for (const r of tracker.push(entry)) if (r.ts >= since.sinceMs && r.ts <= nowMs) records.push(r);
    });
  } catch (err) {
    if (err instanceof LookfirstError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new LookfirstError(
      'AUDIT_LOG_UNREADABLE',
      code === 'ENOENT'
        ? `no audit log at ${path} yet: the gate creates it when it first runs (${cliName()} serve --config ${config.file})`
        : `cannot read the audit log ${path}: ${code ?? err}`,
    );
  }
  if (skipped > 0) logLine(`${skipped} line${skipped === 1 ? '' : 's'} of ${path} are not entries and were skipped (${cliName()} verify-log checks the log)`);
  const stats = computeStats(records, tracker.open(), { sinceMs: since.sinceMs, untilMs: nowMs });
  if (opts.json) process.stdout.write(jsonLine(statsJson(stats, path)));
  else process.stdout.write(renderStats(stats, (c, t) => paint(process.stdout, c, t)));
  return 0;
}
