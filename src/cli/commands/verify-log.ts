/**
 * `lookfirst verify-log --config F [--trusted-head FILE] [--json]`: checks the audit log's bytes exactly as
 * they are on disk. Exit 0 intact, 2 tampered (a log or head under a key other than audit.pub's included),
 * 1 when no verdict can be given (no head to check the end against, or files missing): missing evidence is
 * never a clean verdict. `--json` adds the configured key (`key: { name, key_id, file }`) to the report.
 */
import { existsSync, readFileSync } from 'node:fs';
import { loadVerifier } from '../../audit/keys.js';
import type { NoteVerifier } from '../../audit/note.js';
import { type HeadInput, type Problem, type VerifyReport, verifyLog } from '../../audit/verify/verify.js';
import { sidecarPaths } from '../../audit/writer.js';
import { loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { cliName, paint } from '../output.js';

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
}

/**
 * Reads a log's bytes and its heads (the sidecar, and a trusted copy when given), once.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` (no log, unreadable log or trusted head).
 */
export function readLogEvidence(logPath: string, trustedHead?: string, configFile = 'lookfirst.yaml'): LogEvidence {
  let bytes: Buffer;
  try {
    bytes = readFileSync(logPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new LookfirstError(
        'AUDIT_LOG_UNREADABLE',
        `no audit log at ${logPath} yet: the gate creates it when it first runs (${cliName()} serve --config ${configFile}).`,
      );
    throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the audit log ${logPath}: ${code ?? err}`);
  }
  const heads: HeadInput[] = [];
  const sidecar = sidecarPaths(logPath).head;
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
  return { bytes, heads, sidecarNote, missing };
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
  const verifier = loadVerifier(pubPath, `${cliName()} keygen --config ${configFile}`);
  const evidence = readLogEvidence(logPath, trustedHead, configFile);
  // The bytes, not a decoded string: invalid UTF-8 read leniently would hide a changed line.
  const report = verifyLog(evidence.bytes, verifier, evidence.heads);
  // The sidecar warning says the same as the verifier's generic "no head" one, with the path.
  if (evidence.heads.length === 0) report.warnings = report.warnings.filter((w) => !w.startsWith('no head to check against'));
  report.warnings.unshift(...evidence.missing);
  // Without the sidecar, a trusted head alone still cannot vouch for entries written after it.
  if (evidence.missing.length > 0 && report.verdict === 'intact') report.verdict = 'unproven';
  return { report, text: evidence.bytes.toString('utf8'), evidence, verifier };
}

/** Runs the command; returns the exit code. */
export function verifyLogCommand(opts: { config: string; trustedHead?: string; json?: boolean }): number {
  const config = loadConfig(opts.config);
  const { report, verifier } = verifyLogFile(config.audit.logPath, config.audit.pubPath, opts.trustedHead, config.file);
  if (opts.json) {
    const key = { name: verifier.name, key_id: verifier.keyId.toString('hex'), file: config.audit.pubPath };
    process.stdout.write(`${JSON.stringify({ log: config.audit.logPath, key, ...report })}\n`);
  } else {
    const out = process.stdout;
    const where = (p: Problem) => (p.kind === 'key' ? 'key' : p.line > 0 ? `line ${p.line}` : 'head');
    for (const p of report.problems) out.write(`${paint(out, 'red', where(p))}: ${p.message}\n`);
    for (const w of report.warnings) out.write(`${paint(out, 'yellow', 'warning')}: ${w}\n`);
    const summary =
      report.verdict === 'intact'
        ? paint(out, 'green', `intact: ${report.entries} entries, signatures, hash chain and signed head all check out`)
        : report.verdict === 'tampered'
          ? paint(out, 'red', `TAMPERED: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} in ${config.audit.logPath}`)
          : paint(out, 'yellow', `no verdict: ${report.entries} entries, but the evidence is incomplete (see the warnings above)`);
    out.write(`${summary}\n`);
  }
  return VERIFY_EXIT[report.verdict];
}
