/**
 * `lookfirst check [--config F] [--timeout S] [--json]`: a pre-flight check of a config, one line per
 * check (OK, WARN or ERROR, with what to do next). It starts no gate: no listener is bound, nothing is
 * written to the log, no tool is called; each upstream is started, listed and closed once.
 * Exit 0 with no ERROR (warnings allowed), 2 with at least one, 1 for a usage error or a config file
 * that cannot be read. A config that is invalid is ERROR lines, one per problem (exit 2).
 *
 * `--json`: `{ config, checks: [{ id, level, message }], summary: { ok, warn, error } }`.
 */
import { runChecks, summarise } from '../../check/checks.js';
import type { CheckResult } from '../../check/facts.js';
import { loadConfig } from '../../config/load.js';
import { oneLine } from '../../confirm/visible.js';
import { ConfigError, LookfirstError } from '../../errors.js';
import { gatherFacts } from '../check-gather.js';
import { jsonLine, paint } from '../output.js';

/** Options of the command. */
export interface CheckOptions {
  config: string;
  /** Seconds allowed per upstream (connect, and each page of tools/list); a string as commander gives it. */
  timeout?: string;
  json?: boolean;
}

/**
 * Parses `--timeout` (seconds, positive, at most an hour).
 * @throws LookfirstError `USAGE` for anything else.
 */
export function parseTimeoutSeconds(value: string | undefined, fallback = 10): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 3600)
    throw new LookfirstError('USAGE', `--timeout takes seconds, more than 0 and at most 3600 (got "${value.slice(0, 20)}")`);
  return n;
}

/** Prints results as lines (coloured on a terminal unless NO_COLOR; hidden characters shown) or as one JSON object. */
function print(file: string, results: CheckResult[], json: boolean | undefined): 0 | 2 {
  const summary = summarise(results);
  const out = process.stdout;
  if (json) {
    const { exitCode: _, ...counts } = summary;
    out.write(jsonLine({ config: file, checks: results, summary: counts }));
    return summary.exitCode;
  }
  const colour = { OK: 'green', WARN: 'yellow', ERROR: 'red' } as const;
  // A message can quote an upstream (its error, its last words on stderr, its tool names) or a file: shown
  // on one line with hidden characters made visible, so none can move the cursor or forge a line.
  for (const r of results) out.write(`${paint(out, colour[r.level], r.level.padEnd(5))} ${oneLine(r.message)}\n`);
  const total = `${summary.ok} OK, ${summary.warn} WARN, ${summary.error} ERROR`;
  out.write(
    `${summary.error > 0 ? paint(out, 'red', `${total}: fix the ERROR lines before serving`) : paint(out, 'green', `${total}: ready to serve${summary.warn > 0 ? ' (read the warnings)' : ''}`)}\n`,
  );
  return summary.exitCode;
}

/** Runs the command; returns the exit code. @throws ConfigError `CONFIG_UNREADABLE` (no config: exit 1), LookfirstError `USAGE`. */
export async function checkCommand(opts: CheckOptions): Promise<number> {
  const timeoutS = parseTimeoutSeconds(opts.timeout);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(opts.config);
  } catch (err) {
    if (!(err instanceof ConfigError) || err.code !== 'CONFIG_INVALID') throw err;
    const results = err.problems.map((p) => ({
      id: 'config',
      level: 'ERROR' as const,
      message: `${err.file}${p.line ? ` line ${p.line}` : ''}: ${p.path ? `${p.path}: ` : ''}${p.message}`,
    }));
    return print(err.file, results, opts.json);
  }
  const facts = await gatherFacts(config, timeoutS * 1000);
  return print(config.file, runChecks(facts), opts.json);
}
