/**
 * `lookfirst verify-log --config F [--trusted-head FILE] [--json]`: checks the audit log.
 * Exit 0 intact, 2 tampered, 1 when no verdict can be given (no head to check the end against, or files
 * missing): missing evidence is never a clean verdict.
 */
import { existsSync, readFileSync } from 'node:fs';
import { loadVerifier } from '../../audit/keys.js';
import { type HeadInput, type VerifyReport, verifyLog } from '../../audit/verify/verify.js';
import { sidecarPaths } from '../../audit/writer.js';
import { loadConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { paint } from '../output.js';

/** Exit codes of verify-log (pinned by tests). */
export const VERIFY_EXIT = { intact: 0, unproven: 1, tampered: 2 } as const;

/** Reads the files and verifies; pure verification happens in audit/verify. */
export function runVerify(logPath: string, pubPath: string, trustedHead?: string): VerifyReport {
  const verifier = loadVerifier(pubPath);
  let text: string;
  try {
    text = readFileSync(logPath, 'utf8');
  } catch (err) {
    throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the audit log ${logPath}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const heads: HeadInput[] = [];
  const sidecar = sidecarPaths(logPath).head;
  const missing: string[] = [];
  if (existsSync(sidecar)) heads.push({ label: 'head sidecar', note: readFileSync(sidecar, 'utf8') });
  else missing.push(`no head sidecar at ${sidecar}: a cut at the end of the log cannot be detected`);
  if (trustedHead) {
    try {
      heads.push({ label: `trusted head ${trustedHead}`, note: readFileSync(trustedHead, 'utf8') });
    } catch (err) {
      throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the trusted head ${trustedHead}: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
  }
  const report = verifyLog(text, verifier, heads);
  report.warnings.unshift(...missing);
  // Without the sidecar, a trusted head alone still cannot vouch for entries written after it.
  if (missing.length > 0 && report.verdict === 'intact') report.verdict = 'unproven';
  return report;
}

/** Runs the command; returns the exit code. */
export function verifyLogCommand(opts: { config: string; trustedHead?: string; json?: boolean }): number {
  const config = loadConfig(opts.config);
  const report = runVerify(config.audit.logPath, config.audit.pubPath, opts.trustedHead);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ log: config.audit.logPath, ...report })}\n`);
  } else {
    const out = process.stdout;
    for (const p of report.problems) out.write(`${paint(out, 'red', p.line > 0 ? `line ${p.line}` : 'head')}: ${p.message}\n`);
    for (const w of report.warnings) out.write(`${paint(out, 'yellow', 'warning')}: ${w}\n`);
    const summary =
      report.verdict === 'intact'
        ? paint(out, 'green', `intact: ${report.entries} entries, signatures, hash chain and signed head all check out`)
        : report.verdict === 'tampered'
          ? paint(out, 'red', `TAMPERED: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} in ${config.audit.logPath}`)
          : paint(
              out,
              'yellow',
              `unproven: ${report.entries} entries check out by signature and chain, but there is no head to prove nothing was cut from the end`,
            );
    out.write(`${summary}\n`);
  }
  return VERIFY_EXIT[report.verdict];
}
