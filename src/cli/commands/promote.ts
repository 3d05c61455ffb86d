/**
 * `lookfirst promote LOG [--config F] [--session N] [--dry-run] [--yes] [--json]`: replays, for real, the
 * calls a dry-run session recorded in LOG, through the gate's normal policy and confirmation
 * (gateway/replay.ts). LOG must verify first (signatures, hash chain, signed head: audit/verify); a log
 * that does not is refused. Calls are replayed in the order they were recorded, each once: one already
 * sent by an earlier promote is skipped, and the replay stops at the first call that does not complete
 * cleanly, since later calls may depend on it. Exit 0 when every call to replay ran and read back clean,
 * 2 when one was refused, failed or is unclear (or LOG is tampered), 1 when no replay could start.
 */
import { closeSync, openSync, realpathSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { loadSigner } from '../../audit/keys.js';
import { type DryRunSession, dryRunSessions, type Promotion, promotions, type RecordedCall } from '../../audit/ledger.js';
import { createRefusalLog } from '../../audit/throttle.js';
import { AuditLog } from '../../audit/writer.js';
import { systemClock } from '../../clock.js';
import { type Config, loadConfig } from '../../config/load.js';
import { PendingApprovals } from '../../confirm/pending.js';
import { LookfirstError } from '../../errors.js';
import { Gateway } from '../../gateway/gateway.js';
import { replayRecorded } from '../../gateway/replay.js';
import { startChannels } from '../channels.js';
import { cliName, logLine } from '../output.js';
import { VERSION } from '../version.js';
import { describeRecorded, type PromoteLine, type PromoteReport, printPromote } from './promote-view.js';
import { verifyLogFile } from './verify-log.js';

/** Options of `lookfirst promote`. */
export interface PromoteOptions {
  config?: string;
  /** `seq` of the session's `gate_started` entry (default: the latest session that recorded calls). */
  session?: string;
  dryRun?: boolean;
  yes?: boolean;
  json?: boolean;
}

/** Parsed entries of a verified log's text. */
function entriesOf(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Whether a log file has any entry yet (a missing or empty file has none). */
function hasEntries(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

const samePath = (a: string, b: string): boolean => {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
};

function chooseSession(sessions: DryRunSession[], wanted: string | undefined, log: string): DryRunSession | undefined {
  if (wanted === undefined) return sessions.at(-1);
  const seq = Number(wanted);
  const found = Number.isInteger(seq) ? sessions.find((s) => s.startSeq === seq) : undefined;
  if (!found)
    throw new LookfirstError(
      'USAGE',
      `no dry-run session starts at entry ${wanted} of ${log}${sessions.length > 0 ? `; sessions that recorded calls start at entries ${sessions.map((s) => s.startSeq).join(', ')}` : ''}`,
    );
  return found;
}

/** Whether this process can ask on its controlling terminal. */
function hasTerminal(): boolean {
  try {
    closeSync(openSync('/dev/tty', 'r+'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the command; returns the exit code.
 * @throws ConfigError for a bad config; LookfirstError `AUDIT_LOCKED` when a gate is writing the config's
 *   log, `AUDIT_LOG_UNREADABLE`, `USAGE` (unknown session, nobody to approve).
 */
export async function promoteCommand(logArg: string, opts: PromoteOptions): Promise<number> {
  const loaded = loadConfig(opts.config ?? 'lookfirst.yaml');
  const terminal = !opts.yes && hasTerminal();
  // A promote replays for real (never as a dry run) and asks on this terminal when it has one.
  const config: Config = { ...loaded, dryRun: false, confirm: { ...loaded.confirm, elicitation: false, terminal: loaded.confirm.terminal || terminal } };
  const logPath = resolve(logArg);
  const target = config.audit.logPath;
  if (!opts.dryRun && !opts.yes && !config.confirm.terminal && !config.confirm.web.enabled && !config.confirm.webhook)
    throw new LookfirstError(
      'USAGE',
      `nobody could approve the replayed calls: run promote in a terminal, enable confirm.web or confirm.webhook in ${config.file}, or pass --yes to approve every call that no deny rule refuses`,
    );
  const verify = (path: string) => verifyLogFile(path, config.audit.pubPath, undefined, config.file);
  const refuse = (report: ReturnType<typeof verify>['report']): number => {
    const why = [...report.problems.map((p) => (p.line > 0 ? `line ${p.line}: ${p.message}` : p.message)), ...report.warnings];
    logLine(
      `refusing to replay ${logPath}: it does not verify (${report.verdict}). ${why.slice(0, 5).join('; ')}. Check it with: ${cliName()} verify-log --config ${config.file}`,
    );
    return report.verdict === 'tampered' ? 2 : 1;
  };
  // Verified before anything opens it for writing (which would refuse a broken chain less clearly) ...
  const first = verify(logPath);
  if (first.report.verdict !== 'intact') return refuse(first.report);
  // ... and again under the lock, which no gate or other promote can write past meanwhile.
  const audit = opts.dryRun
    ? undefined
    : await AuditLog.open({
        logPath: target,
        signer: loadSigner(config.audit.keyPath, `${cliName()} keygen --config ${config.file}`),
        clock: systemClock,
        warn: logLine,
      });
  try {
    const { report, text } = audit ? verify(logPath) : first;
    if (report.verdict !== 'intact') return refuse(report);
    const entries = entriesOf(text);
    const sessions = dryRunSessions(entries);
    const session = chooseSession(sessions, opts.session, logPath);
    // Earlier replays are found in both logs; the config's log must verify too, or a cut could hide one.
    const separate = !samePath(logPath, target) && hasEntries(target);
    const own = separate ? verify(target) : undefined;
    if (own && own.report.verdict !== 'intact') {
      logLine(`the config's own audit log ${target} does not verify (${own.report.verdict}), so earlier replays recorded in it cannot be trusted`);
      return refuse(own.report);
    }
    if (!samePath(logPath, target))
      logLine(
        `note: replays are recorded in ${target} (this config's log), and promote skips only the calls it finds replayed there or in ${logPath}. Promote one recording through one config, or a copy could be replayed twice.`,
      );
    const done = promotions(own ? [...entries, ...entriesOf(own.text)] : entries);
    const base: PromoteReport = {
      log: logPath,
      entries: report.entries,
      session: session ? { start_seq: session.startSeq, started_at: new Date(session.startedAt).toISOString() } : undefined,
      sessions: sessions.map((s) => s.startSeq),
      dry_run: opts.dryRun === true,
      lines: [],
    };
    if (session && session.problems.length > 0) {
      for (const p of session.problems) logLine(`entry ${p.seq}: ${p.message}`);
      logLine(`refusing to replay the session at entry ${session.startSeq}: ${session.problems.length} recording(s) cannot be trusted (see above)`);
      return 2;
    }
    const lines = (session?.calls ?? []).map((rec) => plannedLine(rec, done.get(rec.callId), config, opts.yes === true));
    if (opts.dryRun || !audit || lines.every((l) => !toSend(l))) {
      printPromote({ ...base, lines }, opts.json === true);
      return 0;
    }
    return await replay(config, audit, { ...base, lines }, session?.calls ?? [], opts);
  } finally {
    await audit?.close().catch(() => {});
  }
}

/** A line the replay goes through: a call to send, or one a deny rule refuses (the refusal is logged, and stops the replay). */
const toSend = (l: PromoteLine): boolean => l.status === 'would_replay' || l.status === 'would_refuse';

function plannedLine(rec: RecordedCall, done: Promotion | undefined, config: Config, yes: boolean): PromoteLine {
  const line = describeRecorded(rec, config, yes);
  if (done?.started) return { ...line, status: 'already_replayed', replay_call_id: done.callId, reason: 'an earlier promote sent it; it is never sent twice' };
  return line;
}

async function replay(config: Config, audit: AuditLog, report: PromoteReport, calls: RecordedCall[], opts: PromoteOptions): Promise<number> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await audit.appendDurable({
    event: 'gate_started',
    version: VERSION,
    pid: process.pid,
    upstreams: config.upstreams.map((u) => u.name).join(','),
    promote: report.log,
    session: report.session?.start_seq,
  });
  const pending = new PendingApprovals();
  const refusals = createRefusalLog((reason, suppressed) => {
    logLine(`refused ${reason}${suppressed ? ` (and ${suppressed} more in the last second)` : ''}`);
    audit.appendLater({ event: 'web_refused', reason: reason.slice(0, 200), suppressed });
  });
  const channels = await startChannels({ config, pending, log: logLine, refused: (what) => refusals.record(what) });
  const gateway = new Gateway({ config, audit, clock: systemClock, pending, outOfBand: channels.outOfBand, log: logLine, version: VERSION });
  let stopReason = 'promote finished';
  try {
    await gateway.start();
    // One request per call, waiting for its person up to confirm.timeout_seconds (no "pending" answer).
    const deps = { ...gateway.pipelineDeps([], () => 'lookfirst promote'), holdMs: config.confirm.timeoutMs + 1000 };
    const yes = opts.yes
      ? { channel: 'promote', actor: `promote:${userInfo().username}`, trust: 'local-terminal' as const, comment: 'promote --yes' }
      : undefined;
    const todo = report.lines.filter(toSend).length;
    let n = 0;
    let stopped = false;
    for (const [i, rec] of calls.entries()) {
      const line = report.lines[i] as PromoteLine;
      if (!toSend(line)) continue;
      if (stopped || abort.signal.aborted) {
        line.status = 'not_replayed';
        line.reason = abort.signal.aborted ? 'promote was interrupted' : 'an earlier call did not complete, and this one may depend on it';
        continue;
      }
      n++;
      if (!opts.json) process.stderr.write(`lookfirst: [${n}/${todo}] ${line.preview}${yes && !rec.taint ? '' : ' (waiting for a person)'}\n`);
      const { verdict, text } = await replayRecorded(deps, rec, { yes }, { signal: abort.signal });
      line.replay_call_id = verdict.call_id;
      const clean = verdict.outcome === 'executed' && !verdict.blocked && (verdict.readback === 'ok' || verdict.readback === 'none');
      line.status = verdict.outcome === 'executed' ? (clean ? 'executed' : 'unclear') : 'refused';
      line.readback = verdict.readback;
      line.reason = verdict.outcome === 'executed' ? verdict.reason : text || verdict.reason;
      if (!clean) stopped = true;
    }
    if (abort.signal.aborted) stopReason = 'promote interrupted';
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await gateway.close();
    await channels.close();
    refusals.flush();
    await audit.appendDurable({ event: 'gate_stopped', reason: stopReason }).catch(() => {});
  }
  printPromote(report, opts.json === true);
  return report.lines.every((l) => l.status === 'executed' || l.status === 'already_replayed') ? 0 : 2;
}
