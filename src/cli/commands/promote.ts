/**
 * `lookfirst promote LOG [--config F] [--session N] [--dry-run] [--yes] [--json]`: replays, for real, the
 * calls a dry-run session recorded in LOG, through the gate's normal policy and confirmation
 * (gateway/replay.ts, cli/commands/promote-run.ts). LOG must verify first (signatures, hash chain, signed
 * head: audit/verify) and pass the check a gate start runs under the gate's own key (promote-check.ts); a
 * log that does not is refused. Calls are replayed in the order they were
 * recorded, each once: one already sent by an earlier promote is skipped, and the replay stops at the
 * first call that does not complete cleanly, since later calls may depend on it. Exit 0 when every call
 * ran without an error and no read-back contradicted it, 2 when one was refused, failed or is unclear
 * (or LOG is tampered), 1 when no replay could start.
 */
import { closeSync, existsSync, openSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSigner } from '../../audit/keys.js';
import { type DryRunSession, dryRunSessions, type Promotion, promotions, type RecordedCall } from '../../audit/ledger.js';
import type { VerifyReport } from '../../audit/verify/verify.js';
import { AuditLog, sidecarPaths } from '../../audit/writer.js';
import { systemClock } from '../../clock.js';
import { type Config, loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { definitionSha, ToolPins } from '../../gateway/pins.js';
import { openStore } from '../../store/open.js';
import type { ToolAnnotations } from '../../types.js';
import { cliName, logLine } from '../output.js';
import { checkReplayLog, gateKeyOf } from './promote-check.js';
import { approvers, runReplay, toSend } from './promote-run.js';
import { describeRecorded, type PromoteLine, type PromoteReport, printPromote } from './promote-view.js';

/** Options of `lookfirst promote`. */
export interface PromoteOptions {
  config?: string;
  /** `seq` of the session's `gate_started` entry (default: the latest session that recorded calls). */
  session?: string;
  /** A copy of the log's head kept elsewhere, to catch a log and head rolled back together. */
  trustedHead?: string;
  /** Replay only the calls recorded up to this entry (what a reviewed plan showed). */
  through?: string;
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

/**
 * Whether a log has any evidence to check: entries, or a head (a head over a deleted or emptied log still
 * records the replays it held, so that log must verify before promote trusts that none were made).
 */
function hasEvidence(path: string): boolean {
  if (existsSync(sidecarPaths(path).head)) return true;
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

/**
 * Whether an earlier promote sent every call a session recorded, and each ended cleanly (or a person
 * settled it). A call a rule let through that ended with an upstream error, an unknown outcome or an
 * unclear read-back is settled for the gate, but its session is not "replayed in full": it stays the
 * default, and its plan says how that call ended (it is still never sent again).
 */
function isReplayed(session: DryRunSession, done: ReadonlyMap<string, Promotion>): boolean {
  return session.calls.every((c) => {
    const d = done.get(c.callId);
    return d?.started === true && d.settled && d.notClean === undefined;
  });
}

/** How a replay that did not end as asked ended, for a person. */
const NOT_CLEAN: Record<NonNullable<Promotion['notClean']>, string> = {
  upstream_error: 'the upstream answered with an error',
  outcome_unknown: 'its outcome is unknown',
  readback_failed: 'its read-back did not match',
  readback_unclear: 'its read-back was unclear',
};

/**
 * The session to promote: the one named, else the latest with a call not yet replayed (a session replayed
 * in full has nothing left to send, so it is never the default), else none.
 * @throws LookfirstError `USAGE` for a session number that starts no dry-run session.
 */
function chooseSession(sessions: DryRunSession[], wanted: string | undefined, log: string, replayed: ReadonlySet<number>): DryRunSession | undefined {
  if (wanted === undefined) return sessions.filter((s) => !replayed.has(s.startSeq)).at(-1);
  const found = sessions.find((s) => s.startSeq === Number(wanted));
  if (!found)
    throw new LookfirstError(
      'USAGE',
      `no dry-run session starts at entry ${wanted} of ${log}${sessions.length > 0 ? `; sessions that recorded calls start at entries ${sessions.map((s) => s.startSeq).join(', ')}` : ''}`,
    );
  return found;
}

/**
 * Checks that LOG is an audit log before verifying it, so that a wrong path gets a clear word instead of
 * "tampered".
 * @throws LookfirstError `USAGE` naming the config's own log.
 */
function checkIsLog(path: string, target: string): void {
  const hint = `the audit log of this config is ${target}`;
  let first: string;
  try {
    if (statSync(path).isDirectory()) throw new LookfirstError('USAGE', `${path} is a folder, not an audit log; ${hint}`);
    first = readFileSync(path, 'utf8').split('\n', 1)[0] ?? '';
  } catch (err) {
    if (err instanceof LookfirstError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new LookfirstError('USAGE', `${code === 'ENOENT' ? `no file at ${path}` : `cannot read ${path} (${code ?? err})`}; ${hint}`);
  }
  let entry: unknown;
  try {
    entry = JSON.parse(first);
  } catch {
    entry = undefined;
  }
  const e = entry as Record<string, unknown> | undefined;
  if (first !== '' && (typeof e !== 'object' || e === null || typeof e.seq !== 'number' || typeof e.sig !== 'string'))
    throw new LookfirstError('USAGE', `${path} is not a lookfirst audit log (its first line is not a signed entry); ${hint}`);
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
 *   log, `AUDIT_LOG_UNREADABLE`, `USAGE` (not a log, unknown session, nobody to approve).
 */
export async function promoteCommand(logArg: string, opts: PromoteOptions): Promise<number> {
  if (opts.through !== undefined && !/^\d+$/.test(opts.through))
    throw new LookfirstError('USAGE', `--through takes an entry number (a whole number, as the plan prints it), not "${opts.through}"`);
  if (opts.session !== undefined && !/^\d+$/.test(opts.session))
    throw new LookfirstError(
      'USAGE',
      `--session takes the entry number where a session starts (a whole number, as promote --dry-run lists them), not "${opts.session}"`,
    );
  const loaded = loadConfig(opts.config ?? 'lookfirst.yaml');
  // A promote replays for real (never as a dry run) and also asks on this terminal when it has one.
  const config: Config = { ...loaded, dryRun: false, confirm: { ...loaded.confirm, elicitation: false, terminal: loaded.confirm.terminal || hasTerminal() } };
  const usedConfig = `${config.file}${opts.config ? '' : ' (the default: no --config given)'}`;
  const logPath = resolve(logArg);
  const target = config.audit.logPath;
  checkIsLog(logPath, target);
  if (!opts.dryRun && !opts.yes && approvers(config).startsWith('no channel'))
    throw new LookfirstError(
      'USAGE',
      `nobody could approve the replayed calls: run promote in a terminal, enable confirm.web or confirm.webhook in ${config.file}, or pass --yes to approve every call that no deny rule refuses`,
    );
  // Held to verify-log's checks and to the very check a gate start runs, under the gate's own key.
  const gateKey = gateKeyOf(config, opts.dryRun === true);
  if (gateKey.note) logLine(gateKey.note);
  const verify = (path: string) => checkReplayLog(path, config, path === logPath ? opts.trustedHead : undefined, gateKey.verifier);
  const refuse = (path: string, report: VerifyReport): number => {
    const where = (p: { line: number; through?: number }) => (p.through && p.through > p.line ? `lines ${p.line}\u2013${p.through}` : `line ${p.line}`);
    const why = [...report.problems.map((p) => (p.line > 0 ? `${where(p)}: ${p.message}` : p.message)), ...report.warnings].map((w) => w.replace(/\.+$/, ''));
    logLine(`refusing to replay: ${path} does not verify (${report.verdict}) with the key of ${usedConfig}. ${why.slice(0, 5).join('; ')}.`);
    logLine(
      `see every problem with: ${cliName()} verify-log --config ${config.file}${samePath(path, target) ? '' : ` (it checks ${target})`}${report.problems.some((p) => /torn|not a JSON object/.test(p.message)) ? '. A last line torn by a killed gate is moved aside by the next serve start' : ''}`,
    );
    return report.verdict === 'tampered' ? 2 : 1;
  };
  // Verified before anything opens it for writing (which would refuse a broken chain less clearly) ...
  const first = verify(logPath);
  if (first.report.verdict !== 'intact') return refuse(logPath, first.report);
  // ... and again under the lock, which no gate or other promote can write past meanwhile.
  const audit = opts.dryRun ? undefined : await openLocked(config);
  try {
    const { report, text } = audit ? verify(logPath) : first;
    if (report.verdict !== 'intact') return refuse(logPath, report);
    const entries = entriesOf(text);
    const sessions = dryRunSessions(entries);
    // Earlier replays are found in both logs; the config's log must verify too, or a cut (or a deleted log) could hide one.
    const separate = !samePath(logPath, target) && hasEvidence(target);
    const own = separate ? verify(target) : undefined;
    if (own && own.report.verdict !== 'intact') {
      logLine(`the config's own audit log ${target} does not verify (${own.report.verdict}), so earlier replays recorded in it cannot be trusted`);
      return refuse(target, own.report);
    }
    if (!samePath(logPath, target))
      logLine(
        `note: replays are recorded in ${target} (this config's log), and promote skips only the calls it finds replayed there or in ${logPath}. Promote one recording through one config, or a copy could be replayed twice.`,
      );
    const done = promotions(own ? [...entries, ...entriesOf(own.text)] : entries);
    const replayed = new Set(sessions.filter((s) => isReplayed(s, done)).map((s) => s.startSeq));
    const session = chooseSession(sessions, opts.session, logPath, replayed);
    if (session && replayed.has(session.startSeq))
      logLine(
        `the session at entry ${session.startSeq} was already replayed in full by an earlier promote: every call it recorded was sent once, and none is sent again (nothing is executed now)`,
      );
    if (session && session.problems.length > 0) {
      for (const p of session.problems) logLine(`entry ${p.seq}: ${p.message}`);
      logLine(`refusing to replay the session at entry ${session.startSeq}: ${session.problems.length} recording(s) cannot be trusted (see above)`);
      return 2;
    }
    const pins = await readPins(config, target);
    // --through binds the replay to what a reviewed plan showed: calls recorded later are left alone.
    const through = opts.through === undefined ? Number.POSITIVE_INFINITY : Number(opts.through);
    const calls = (session?.calls ?? []).filter((c) => c.seq <= through);
    const later = (session?.calls.length ?? 0) - calls.length;
    if (later > 0)
      logLine(`${later} call${later === 1 ? '' : 's'} recorded after entry ${opts.through} ${later === 1 ? 'is' : 'are'} left out (--through ${opts.through})`);
    const lines = calls.map((rec) => plannedLine(rec, done.get(rec.callId), config, pins, opts.yes === true));
    const growing = existsSync(sidecarPaths(logPath).lock) && !audit;
    if (growing && opts.dryRun)
      logLine(`note: a gate may still be writing ${logPath}: its session can grow after this plan; the command below replays only the calls shown`);
    const plan: PromoteReport = {
      log: logPath,
      entries: report.entries,
      session: session
        ? { start_seq: session.startSeq, started_at: new Date(session.startedAt).toISOString(), replayed: replayed.has(session.startSeq) || undefined }
        : undefined,
      sessions: sessions.map((s) => s.startSeq),
      replayed_sessions: [...replayed],
      dry_run: opts.dryRun === true,
      lines,
      command:
        session && calls.length > 0
          ? `${cliName()} promote ${logPath} --config ${config.file} --session ${session.startSeq} --through ${calls.at(-1)?.seq}`
          : undefined,
    };
    const code = opts.dryRun || !audit || !lines.some(toSend) ? 0 : await runReplay(config, audit, plan, calls, opts);
    printPromote(plan, opts.json === true);
    return opts.dryRun ? 0 : code === 0 && lines.every((l) => l.status === 'executed' || l.status === 'already_replayed') ? 0 : 2;
  } finally {
    await audit?.close().catch(() => {});
  }
}

/**
 * Opens the config's audit log for writing, under its lock.
 * @throws LookfirstError `AUDIT_LOCKED` saying to stop the gate that writes it.
 */
async function openLocked(config: Config): Promise<AuditLog> {
  try {
    return await AuditLog.open({
      logPath: config.audit.logPath,
      signer: loadSigner(config.audit.keyPath, `${cliName()} keygen --config ${config.file}`),
      clock: systemClock,
      warn: logLine,
      verifyCommand: `${cliName()} verify-log --config ${config.file}`,
    });
  } catch (err) {
    if (!(err instanceof LookfirstError) || err.code !== 'AUDIT_LOCKED') throw err;
    const pid = /pid (\S+)\)/.exec(err.message)?.[1];
    throw new LookfirstError(
      'AUDIT_LOCKED',
      `a gate${pid ? ` (pid ${pid})` : ''} is still writing ${config.audit.logPath}: stop it (end the agent's session, or Ctrl-C the gate), then promote again. promote --dry-run works meanwhile.`,
    );
  }
}

/** The config's pins as its store holds them now (the older pins file imported once, as a gate does at start). */
async function readPins(config: Config, target: string): Promise<ToolPins> {
  const store = await openStore(config.store);
  const pins = new ToolPins(`${target}.pins.json`, { store });
  try {
    await pins.ready();
  } finally {
    await pins.close();
    await store.close();
  }
  return pins;
}

function plannedLine(rec: RecordedCall, done: Promotion | undefined, config: Config, pins: ToolPins, yes: boolean): PromoteLine {
  const pinned = pins.definition(rec.upstream, rec.upstreamTool);
  const line = describeRecorded(rec, config, yes, pinned?.annotations as ToolAnnotations | undefined);
  // The replay asks a person about a definition other than the one the dry run saw; say so now.
  if (line.status === 'would_replay' && (!pinned || definitionSha(pinned) !== rec.definitionSha))
    line.approval = "a person (the tool's pinned definition is not the one the dry run saw: --yes does not cover it)";
  if (done?.started && done.settled && done.notClean)
    return {
      ...line,
      status: 'already_replayed',
      replay_call_id: done.callId,
      reason: `an earlier promote sent it (call ${done.callId}), and ${NOT_CLEAN[done.notClean]}: it is never sent again. Look at the target, and redo it there by hand if it did not take effect`,
    };
  if (done?.started && done.settled)
    return { ...line, status: 'already_replayed', replay_call_id: done.callId, reason: 'an earlier promote sent it; it is never sent twice' };
  if (done?.started)
    return {
      ...line,
      status: 'sent_unclear',
      replay_call_id: done.callId,
      reason: `an earlier promote sent it (call ${done.callId}) and it did not end cleanly; it is never sent again. Look at the target, then a person unlocks ${rec.tool} before the calls after it are replayed`,
    };
  return line;
}
