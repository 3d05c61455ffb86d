/**
 * `lookfirst tail [--config F] [-n N] [--json]`: the gate's decisions as they happen, one line each, read
 * from the audit log (audit.log in the config). Prints the last N decisions, then follows the file:
 * fs.watch wakes it at once where the platform supports it, and a poll every POLL_MS catches what watch
 * misses (network file systems, editors that replace the file). A line still being written waits for its
 * newline. A log that does not exist yet is waited for; one that shrinks or is replaced (truncation,
 * rotation) is said so on stderr and read again from its start. Ctrl-C (or SIGTERM) exits 0.
 * It does not verify the log: entries are shown as written. `lookfirst verify-log` is the check.
 */
import { type FSWatcher, type Stats, statSync, watch } from 'node:fs';
import { loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { createDecisionTracker, type DecisionRecord, parseEntryLine } from '../../observe/decisions.js';
import { type Paint, toJsonRecord, toLine } from '../../observe/format.js';
import { createLineSplitter } from '../../observe/lines.js';
import { assertRegularLog, readLogLines } from '../log-file.js';
import { cliName, jsonLine, logLine, paint } from '../output.js';

/** Options of the command. */
export interface TailOptions {
  config: string;
  /** How many past decisions to show first (a non-negative integer, as text from the command line). */
  lines?: string;
  json?: boolean;
}

/** How often the file is checked when fs.watch says nothing (ms). */
export const POLL_MS = 250;

/**
 * Runs the command until SIGINT or SIGTERM; resolves to the exit code (0).
 * @throws LookfirstError `USAGE` for a bad `-n`; ConfigError for a bad config.
 */
export async function tailCommand(opts: TailOptions): Promise<number> {
  // Digits only: Number() would read '' as 0, '0x10' as 16 and '1e3' as 1000.
  const text = (opts.lines ?? '10').trim();
  const n = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 0)
    throw new LookfirstError('USAGE', `-n ${JSON.stringify(opts.lines)}: give a whole number of past decisions to show (0 or more)`);
  const config = loadConfig(opts.config);
  const path = config.audit.logPath;
  const out = process.stdout;
  const colour: Paint = (c, text) => paint(out, c, text);
  const show = (r: DecisionRecord) => out.write(opts.json ? jsonLine(toJsonRecord(r)) : `${toLine(r, colour)}\n`);

  // One handler from the very start to the end: Ctrl-C before the follow loop runs ends with 0 too, and
  // removing the last listener to add another would drop a signal already caught but not yet dispatched.
  let signalled = false;
  let finish: ((code: number) => void) | undefined;
  const onSignal = () => {
    signalled = true;
    finish?.(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let tracker = createDecisionTracker();
  const splitter = createLineSplitter();
  let offset = 0;
  let identity: string | undefined;
  let skipped = 0;
  let waitingSaid = false;

  /** Reads what was appended since the last read; returns the decisions it settles. */
  const readMore = (keep = Number.POSITIVE_INFINITY): DecisionRecord[] => {
    let st: Stats;
    try {
      st = statSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the audit log ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
      if (identity !== undefined) {
        logLine(`the audit log ${path} is gone (rotated or removed); waiting for it to come back`);
        identity = undefined;
      } else if (!waitingSaid) logLine(`no audit log at ${path} yet: waiting for the gate to write one (${cliName()} serve --config ${config.file})`);
      waitingSaid = true;
      return [];
    }
    // A FIFO or a device would block or never end; a directory cannot be read: said, not waited on.
    assertRegularLog(path, st);
    const id = `${st.dev}:${st.ino}`;
    if (identity !== undefined && (id !== identity || st.size < offset)) {
      logLine(`the audit log ${path} was ${id !== identity ? 'replaced (rotated)' : 'truncated'}: reading it again from its start`);
      restart();
    }
    identity = id;
    if (st.size <= offset) return [];
    return readFrom(keep);
  };

  const restart = () => {
    tracker = createDecisionTracker();
    splitter.reset();
    offset = 0;
  };

  /** Reads to the end; keeps at most the last `keep` decisions it settles (the past: only N are shown). */
  const readFrom = (keep: number): DecisionRecord[] => {
    const records: DecisionRecord[] = [];
    try {
      offset = readLogLines(path, offset, splitter, (line) => {
        if (line === '') return;
        const entry = parseEntryLine(line);
        if (!entry) skipped++;
        else records.push(...tracker.push(entry));
        if (records.length > 2 * keep + 1024) records.splice(0, records.length - keep);
      });
    } catch (err) {
      // Removed between the stat and the open: the next look says it is gone.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return records;
  };

  const past = readMore(n);
  for (const r of n === 0 ? [] : past.slice(-n)) show(r);
  if (skipped > 0) logLine(`${skipped} line${skipped === 1 ? '' : 's'} of ${path} are not entries and were skipped (${cliName()} verify-log checks the log)`);
  if (!opts.json && past.length === 0 && identity !== undefined) logLine('no decisions in the log yet; waiting for new ones');

  return new Promise<number>((resolve) => {
    let watcher: FSWatcher | undefined;
    let watchedId: string | undefined;
    const tick = () => {
      try {
        const before = skipped;
        for (const r of readMore()) show(r);
        if (skipped > before) logLine(`a line of ${path} is not an entry and was skipped (${cliName()} verify-log checks the log)`);
        // Watch the file that is there now (a rotation makes a new one).
        if (identity !== watchedId) rewatch();
      } catch (err) {
        logLine((err as Error).message);
        finish?.(1);
      }
    };
    const rewatch = () => {
      watcher?.close();
      watcher = undefined;
      watchedId = identity;
      if (identity === undefined) return;
      try {
        watcher = watch(path, { persistent: false }, () => tick());
        watcher.on('error', () => {
          // The poll carries on alone.
          watcher?.close();
          watcher = undefined;
        });
      } catch {
        // No watch on this file system: the poll is enough.
      }
    };
    const timer = setInterval(tick, POLL_MS);
    finish = (code) => {
      finish = undefined;
      clearInterval(timer);
      watcher?.close();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(code);
    };
    if (signalled) finish(0);
    else rewatch();
  });
}
