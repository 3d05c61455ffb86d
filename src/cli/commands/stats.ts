/**
 * `lookfirst stats [--config F] [--since 24h] [--json]`: what the gate decided in a window, from the
 * audit log (audit.log in the config): counts by outcome, tool, channel and who decided, the median time
 * from a call's hold to a person's answer, and the denied, lapsed and waiting calls. The summing is
 * observe/stats.ts. It does not verify the log: `lookfirst verify-log` is the check.
 */
import { readFileSync } from 'node:fs';
import { systemClock } from '../../clock.js';
import { loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { decisionsOf } from '../../observe/decisions.js';
import { parseSince } from '../../observe/since.js';
import { computeStats, renderStats, statsJson } from '../../observe/stats.js';
import { cliName, logLine, paint } from '../output.js';

/** Options of the command. */
export interface StatsOptions {
  config: string;
  /** A duration back from now (`30m`, `24h`, `7d`) or an ISO time; default 24h. */
  since?: string;
  json?: boolean;
}

/**
 * Runs the command; returns the exit code (0).
 * @throws LookfirstError `USAGE` for a bad `--since`, `AUDIT_LOG_UNREADABLE` when the log cannot be read;
 *   ConfigError for a bad config.
 */
export function statsCommand(opts: StatsOptions): number {
  const nowMs = systemClock.nowMs();
  const since = parseSince(opts.since ?? '24h', nowMs);
  if (!since.ok) throw new LookfirstError('USAGE', since.reason);
  const config = loadConfig(opts.config);
  const path = config.audit.logPath;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LookfirstError(
      'AUDIT_LOG_UNREADABLE',
      code === 'ENOENT'
        ? `no audit log at ${path} yet: the gate creates it when it first runs (${cliName()} serve --config ${config.file})`
        : `cannot read the audit log ${path}: ${code ?? err}`,
    );
  }
  const { records, open, skipped } = decisionsOf(text);
  if (skipped > 0) logLine(`${skipped} line${skipped === 1 ? '' : 's'} of ${path} are not entries and were skipped (${cliName()} verify-log checks the log)`);
  const stats = computeStats(records, open, { sinceMs: since.sinceMs, untilMs: nowMs });
  if (opts.json) process.stdout.write(`${JSON.stringify(statsJson(stats, path))}\n`);
  else process.stdout.write(renderStats(stats, (c, t) => paint(process.stdout, c, t)));
  return 0;
}
