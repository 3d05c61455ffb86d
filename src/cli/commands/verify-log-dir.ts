/**
 * `lookfirst verify-log --dir DIR`: verifies every audit log in a folder, one per gate replica (decision
 * 0015). A log is each `*.jsonl` in DIR (not recursive), and each `*.jsonl.head` whose log is gone (a
 * deleted log under a head is a cut, never "no log"). Each log is checked exactly as `verify-log` checks
 * one: its sidecars from sidecarPaths (`<log>.head`), its public key `<log>.pub` beside it, else the
 * config's audit.pub; that key is checked against `<log>.key` (or the config's audit.key) when readable,
 * and against `--expect-key` when given (for replicas that share one key).
 *
 * Verdicts: one per log and an overall, the worst of them (tampered over unproven over intact). Missing
 * evidence is never clean: a log with no key, an unreadable log, and an empty folder each give no
 * verdict (exit 1), never intact.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { VerifyReport } from '../../audit/verify/verify.js';
import { type Config, loadConfig } from '../../config/load.js';
import { ConfigError, LookfirstError } from '../../errors.js';
import { cliName, paint } from '../output.js';
import { problemPlace, VERIFY_EXIT, verifyLogFile } from './verify-log.js';
import { checkVerifierKey, parseExpectedKey } from './verify-log-key.js';

/** Extension of the logs a folder holds. */
export const LOG_EXTENSION = '.jsonl';

/** One log's outcome: its report, the key it was judged with, or why no verdict could be given. */
export interface FolderLogReport extends VerifyReport {
  /** The log's file name inside the folder. */
  log: string;
  /** The key the verdict was made with, when one could be loaded. */
  key?: { name: string; key_id: string; file: string; checked_against: string[] };
  /** Why the log could not be verified at all (verdict `unproven`). */
  error?: string;
}

/** A folder's outcome: the worst verdict, each log's, and the verified text of each (not for output). */
export interface FolderReport {
  verdict: VerifyReport['verdict'];
  logs: FolderLogReport[];
  /** The exact text each verified log was judged on, by file name (absent when it could not be read). */
  texts: Map<string, string>;
  /** A sentence for the user when the folder holds no log. */
  message?: string;
}

const RANK = { intact: 0, unproven: 1, tampered: 2 } as const;

/** The worse of two verdicts. */
export function worseVerdict(a: VerifyReport['verdict'], b: VerifyReport['verdict']): VerifyReport['verdict'] {
  return RANK[b] > RANK[a] ? b : a;
}

/**
 * The logs of a folder, by file name, sorted.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` when the folder cannot be read.
 */
export function listLogs(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot read the folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const logs = new Set(names.filter((n) => n.endsWith(LOG_EXTENSION)));
  for (const n of names) if (n.endsWith(`${LOG_EXTENSION}.head`)) logs.add(n.slice(0, -'.head'.length));
  return [...logs].sort();
}

/**
 * Verifies every log in `dir`.
 * @param configFile the config whose audit.pub (and audit.key) judge a log with no `<log>.pub`; read only then.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` (folder unreadable), `USAGE` (an `--expect-key` that is no key).
 */
export function verifyFolder(dir: string, opts: { configFile: string; expectKey?: string }): FolderReport {
  if (opts.expectKey !== undefined) parseExpectedKey(opts.expectKey);
  const names = listLogs(dir);
  const texts = new Map<string, string>();
  if (names.length === 0)
    return {
      verdict: 'unproven',
      logs: [],
      texts,
      message: `no audit logs (*${LOG_EXTENSION}) in ${dir}, so there is nothing to vouch for. Copy each replica's log (its audit.log) into the folder with its head sidecar (<log>.head) and its public key as <log>.pub, then run ${cliName()} verify-log --dir ${dir} again.`,
    };
  let config: Config | undefined;
  const configKeys = () => {
    config ??= loadConfig(opts.configFile);
    return config.audit;
  };
  const logs = names.map((name): FolderLogReport => {
    const logPath = join(dir, name);
    try {
      const own = `${logPath}.pub`;
      const files = existsSync(own) ? { pubPath: own, keyPath: `${logPath}.key` } : configKeys();
      const { report, text, verifier } = verifyLogFile(logPath, files.pubPath, undefined, opts.configFile);
      const keyCheck = checkVerifierKey(verifier, files, opts.expectKey);
      if (keyCheck.problems.length > 0) {
        report.problems.unshift(...keyCheck.problems);
        report.verdict = 'tampered';
      }
      report.warnings.push(...keyCheck.warnings);
      texts.set(name, text);
      const key = { name: verifier.name, key_id: verifier.keyId.toString('hex'), file: files.pubPath, checked_against: keyCheck.pinnedBy };
      return { log: name, key, ...report };
    } catch (err) {
      if (err instanceof LookfirstError && err.code === 'USAGE') throw err;
      if (!(err instanceof LookfirstError) && !(err instanceof ConfigError)) throw err;
      const why =
        err instanceof ConfigError
          ? `there is no ${name}.pub beside it, and no config to take audit.pub from (${err.file}: ${err.problems.map((p) => p.message).join('; ')}). Put that replica's audit.pub at ${join(dir, `${name}.pub`)}, or pass its config with --config`
          : err.message;
      return { log: name, verdict: 'unproven', entries: 0, problems: [], omitted: 0, warnings: [], error: why };
    }
  });
  const verdict = logs.reduce<VerifyReport['verdict']>((w, l) => worseVerdict(w, l.verdict), 'intact');
  return { verdict, logs, texts };
}

/** One log's verdict as a line of text (without color). */
export function summaryOf(l: FolderLogReport): string {
  if (l.error) return `no verdict: ${l.error}`;
  const count = l.problems.length + l.omitted;
  if (l.verdict === 'tampered') return `TAMPERED: ${count} problem${count === 1 ? '' : 's'}`;
  if (l.verdict === 'unproven') return `no verdict: ${l.entries} entries, but the evidence is incomplete (see the warnings)`;
  return `intact: ${l.entries} entries, signatures, hash chain and signed head all check out`;
}

/** The key line of a log's report. */
export function keyLineOf(l: FolderLogReport): string | undefined {
  if (!l.key) return undefined;
  const against = l.key.checked_against.length > 0 ? `matches ${l.key.checked_against.join(' and ')}` : 'not checked against a private key or --expect-key';
  return `key ${l.key.name} (key id ${l.key.key_id}) from ${l.key.file}, ${against}`;
}

/**
 * Runs `verify-log --dir`; returns the exit code (the worst verdict's: 2 over 1 over 0).
 * @throws LookfirstError `USAGE` with `--trusted-head` (it names one log's head: verify that log alone).
 */
export function verifyLogDirCommand(dir: string, opts: { config: string; trustedHead?: string; expectKey?: string; json?: boolean }): number {
  if (opts.trustedHead !== undefined)
    throw new LookfirstError(
      'USAGE',
      `--trusted-head names the head of one log; with --dir there are several. Verify that log alone: ${cliName()} verify-log --config <its replica's config> --trusted-head ${opts.trustedHead}`,
    );
  const folder = verifyFolder(dir, { configFile: opts.config, expectKey: opts.expectKey });
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ dir, verdict: folder.verdict, logs: folder.logs, message: folder.message })}\n`);
    return VERIFY_EXIT[folder.verdict];
  }
  const out = process.stdout;
  const color = { intact: 'green', unproven: 'yellow', tampered: 'red' } as const;
  for (const l of folder.logs) {
    out.write(`${paint(out, 'bold', l.log)}: ${paint(out, color[l.verdict], summaryOf(l))}\n`);
    const keyLine = keyLineOf(l);
    if (keyLine) out.write(`  ${keyLine}\n`);
    for (const p of l.problems) out.write(`  ${paint(out, 'red', problemPlace(p))}: ${p.message}\n`);
    if (l.omitted > 0) out.write(`  ${paint(out, 'red', `${l.omitted} more`)}: problems after these are counted, not listed\n`);
    for (const w of l.warnings) out.write(`  ${paint(out, 'yellow', 'warning')}: ${w}\n`);
  }
  const bad = (v: VerifyReport['verdict']) => folder.logs.filter((l) => l.verdict === v).map((l) => l.log);
  const n = folder.logs.length;
  const overall =
    folder.verdict === 'intact'
      ? paint(out, 'green', `intact: all ${n} log${n === 1 ? '' : 's'} in ${dir} check out`)
      : folder.verdict === 'tampered'
        ? paint(out, 'red', `TAMPERED: ${bad('tampered').join(', ')}${bad('unproven').length > 0 ? `; no verdict on ${bad('unproven').join(', ')}` : ''}`)
        : paint(
            out,
            'yellow',
            folder.message ? `no verdict: ${folder.message}` : `no verdict on ${bad('unproven').join(', ')}: the evidence is incomplete (see above)`,
          );
  out.write(`${overall}\n`);
  return VERIFY_EXIT[folder.verdict];
}
