/**
 * `lookfirst verify-log --config F [--trusted-head FILE] [--expect-key KEY] [--json]`: checks the audit log's bytes exactly as
 * they are on disk. Exit 0 intact, 2 tampered (a log or head under a key other than audit.pub's included),
 * 1 when no verdict can be given (no head to check the end against, or files missing): missing evidence is
 * never a clean verdict. audit.pub is checked against audit.key (when it can be read here) and
 * `--expect-key` (verify-log-key.ts). `--json` adds the key (`key: { name, key_id, file, checked_against }`).
 * A `--trusted-head` in the log's own folder is warned about (trusted-head.ts), as pilot-status fails it.
 * `--dir` (a folder of logs, one per replica) is verify-log-dir.ts, built on verifyLogFile below.
 */
import { existsSync, readFileSync } from 'node:fs';
import { loadVerifier } from '../../audit/keys.js';
import type { NoteVerifier } from '../../audit/note.js';
import { describeKey } from '../../audit/verify/head.js';
import { type HeadInput, type Problem, type VerifyReport, verifyLog } from '../../audit/verify/verify.js';
import { sidecarPaths } from '../../audit/writer.js';
import { loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { refuseIrregular } from '../log-file.js';
import { cliName, paint } from '../output.js';
import { headBesideLogWarning, isHeadBesideLog } from '../trusted-head.js';
import { checkVerifierKey } from './verify-log-key.js';

/** Exit codes of verify-log (pinned by tests). */
export const VERIFY_EXIT = { intact: 0, unproven: 1, tampered: 2 } as const;

/** Reads the files and verifies; pure verification happens in audit/verify. */
export function runVerify(logPath: string, pubPath: string, trustedHead?: string, configFile = 'lookfirst.yaml'): VerifyReport {
  return verifyLogFile(logPath, pubPath, trustedHead, configFile).report;
}

/** A log as read once: its bytes, the heads to check it against, and what was missing. */
export interface LogEvidence {
  bytes: Buffer;
  heads: HeadInput[];
  /** The head sidecar's text, when there is one. */
  sidecarNote: string | undefined;
  /** Warnings about missing evidence. */
  missing: string[];
  /** The log file does not exist, but a head does: `bytes` is empty and the head decides. */
  logMissing: boolean;
}

/**
 * Reads a log's bytes and its heads (the sidecar, and a trusted copy when given), once.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` (no log, unreadable log or trusted head).
 */
export function readLogEvidence(logPath: string, trustedHead?: string, configFile = 'lookfirst.yaml'): LogEvidence {
  let bytes: Buffer;
  let logMissing = false;
  const sidecar = sidecarPaths(logPath).head;
  try {
    bytes = readFileSync(logPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A missing log under a head (or a trusted head) is checked as an empty one: the head says how many
    // entries it vouched for, and a deleted history is a cut, never "no log yet".
    if (code !== 'ENOENT') throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the audit log ${logPath}: ${code ?? err}`);
    if (!existsSync(sidecar) && !trustedHead)
      throw new LookfirstError(
        'AUDIT_LOG_UNREADABLE',
        `no audit log at ${logPath} yet: the gate creates it when it first runs (${cliName()} serve --config ${configFile}).`,
      );
    bytes = Buffer.alloc(0);
    logMissing = true;
  }
  const heads: HeadInput[] = [];
  const missing: string[] = [];
  let sidecarNote: string | undefined;
  try {
    sidecarNote = existsSync(sidecar) ? readFileSync(sidecar, 'utf8') : undefined;
  } catch (err) {
    // A sidecar that is there but cannot be read (a folder, no permission) vouches for nothing.
    missing.push(`the head sidecar ${sidecar} cannot be read (${(err as NodeJS.ErrnoException).code ?? err}): it vouches for nothing`);
  }
  if (sidecarNote !== undefined) heads.push({ label: 'head sidecar', note: sidecarNote });
  else if (missing.length === 0)
    missing.push(
      trustedHead
        ? `no head sidecar at ${sidecar}: checked against the trusted head only; entries written after it are checked by signature and chain alone`
        : `no head sidecar at ${sidecar}: entries cut from the end of the log would go unnoticed`,
    );
  if (trustedHead) {
    try {
      heads.push({ label: `trusted head ${trustedHead}`, note: readFileSync(trustedHead, 'utf8') });
    } catch (err) {
      throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the trusted head ${trustedHead}: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
  }
  return { bytes, heads, sidecarNote, missing, logMissing };
}

/**
 * Like runVerify, and also returns the exact text that was verified (and the evidence it came from), so
 * that a caller acting on the entries reads the bytes that were checked, not the file again.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` (no log, unreadable log or trusted head), `AUDIT_KEY_MISSING`.
 */
export function verifyLogFile(
  logPath: string,
  pubPath: string,
  trustedHead?: string,
  configFile = 'lookfirst.yaml',
): { report: VerifyReport; text: string; evidence: LogEvidence; verifier: NoteVerifier } {
  // Read whole below: a FIFO there would block forever and a device (/dev/zero) never ends.
  refuseIrregular(pubPath, 'audit.pub');
  refuseIrregular(logPath, 'audit.log');
  refuseIrregular(sidecarPaths(logPath).head, "the log's head");
  if (trustedHead) refuseIrregular(trustedHead, 'the trusted head');
  const verifier = loadVerifier(pubPath, `${cliName()} keygen --config ${configFile}`);
  const evidence = readLogEvidence(logPath, trustedHead, configFile);
  // The bytes, not a decoded string: invalid UTF-8 read leniently would hide a changed line.
  const report = verifyLog(evidence.bytes, verifier, evidence.heads);
  // The sidecar warning says the same as the verifier's generic "no head" one, with the path.
  if (evidence.heads.length === 0) report.warnings = report.warnings.filter((w) => !w.startsWith('no head to check against'));
  report.warnings.unshift(...evidence.missing);
  if (evidence.logMissing) {
    const cut = report.problems.find((p) => p.kind === 'truncated');
    if (cut)
      cut.message = `${cut.message}: the log file ${logPath} is missing (deleted or moved) while its signed head remains. Restore the log from a backup; the gate refuses to start until then. To start a new log on purpose, move the head aside too (keep both as evidence)`;
    else report.warnings.push(`the log file ${logPath} is missing; its head records no entries, so it was checked as an empty log`);
  }
  // Without the sidecar, a trusted head alone still cannot vouch for entries written after it.
  if (evidence.missing.length > 0 && report.verdict === 'intact') report.verdict = 'unproven';
  return { report, text: evidence.bytes.toString('utf8'), evidence, verifier };
}

/** Where a problem is, as the report prints it: `line 3`, `lines 3–5`, `head` or `key`. */
export function problemPlace(p: Problem): string {
  return p.kind === 'key' ? 'key' : p.line > 0 ? (p.through && p.through > p.line ? `lines ${p.line}\u2013${p.through}` : `line ${p.line}`) : 'head';
}

/**
 * Runs the command; returns the exit code. The key the verdict is made with is always named, with what it
 * was checked against (audit.key when readable here, `--expect-key`); a mismatch is a `key` problem.
 * @throws LookfirstError `USAGE` for an `--expect-key` that is not a key id, a verifier key or a file holding one.
 */
export function verifyLogCommand(opts: { config: string; trustedHead?: string; json?: boolean; expectKey?: string }): number {
  const config = loadConfig(opts.config);
  const { report, verifier } = verifyLogFile(config.audit.logPath, config.audit.pubPath, opts.trustedHead, config.file);
  const keyCheck = checkVerifierKey(verifier, config.audit, opts.expectKey);
  if (keyCheck.problems.length > 0) {
    report.problems.unshift(...keyCheck.problems);
    report.verdict = 'tampered';
  }
  report.warnings.push(...keyCheck.warnings);
  // A "trusted" copy that falls with the log (pilot-status fails the same copy): the log may well continue it,
  // but that says nothing about a rollback, so say so rather than let "continues the trusted head" reassure.
  const besideLog = opts.trustedHead !== undefined && isHeadBesideLog(config.audit.logPath, opts.trustedHead);
  if (besideLog && opts.trustedHead !== undefined) report.warnings.push(headBesideLogWarning(opts.trustedHead));
  const keyId = verifier.keyId.toString('hex');
  if (opts.json) {
    const key = { name: verifier.name, key_id: keyId, file: config.audit.pubPath, checked_against: keyCheck.pinnedBy };
    const trusted_head = opts.trustedHead !== undefined ? { path: opts.trustedHead, beside_log: besideLog } : undefined;
    process.stdout.write(`${JSON.stringify({ log: config.audit.logPath, key, trusted_head, ...report })}\n`);
  } else {
    const out = process.stdout;
    const against =
      keyCheck.problems.length > 0
        ? ', NOT the key you hold (see below)'
        : keyCheck.pinnedBy.length > 0
          ? `, matches ${keyCheck.pinnedBy.join(' and ')}`
          : ', not checked against audit.key or --expect-key';
    out.write(`key: ${describeKey(verifier)} from ${config.audit.pubPath}${against}\n`);
    for (const p of report.problems) out.write(`${paint(out, 'red', problemPlace(p))}: ${p.message}\n`);
    if (report.omitted > 0) out.write(`${paint(out, 'red', `${report.omitted} more`)}: problems after these are counted, not listed\n`);
    for (const w of report.warnings) out.write(`${paint(out, 'yellow', 'warning')}: ${w}\n`);
    const count = report.problems.length + report.omitted;
    const summary =
      report.verdict === 'intact'
        ? paint(
            out,
            'green',
            `intact: ${report.entries} entries, signatures, hash chain and signed head all check out${opts.trustedHead ? (besideLog ? `; it continues ${opts.trustedHead}, but that copy sits beside the log (see the warning)` : `, and the log continues the trusted head ${opts.trustedHead}`) : ''}`,
          )
        : report.verdict === 'tampered'
          ? paint(out, 'red', `TAMPERED: ${count} problem${count === 1 ? '' : 's'} in ${config.audit.logPath}`)
          : paint(out, 'yellow', `no verdict: ${report.entries} entries, but the evidence is incomplete (see the warnings above)`);
    out.write(`${summary}\n`);
  }
  return VERIFY_EXIT[report.verdict];
}
