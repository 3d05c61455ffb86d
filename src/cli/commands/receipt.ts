/**
 * `lookfirst receipt show FILE [--json]` and `lookfirst receipt verify FILE [--config F] [--log PATH]
 * [--pub PATH] [--json]`: read and check a signed receipt (audit/receipt.ts). `show` prints who confirmed
 * what, when and how, with every check, and verifies nothing (it says so). `verify` checks, each by name:
 * the receipt is well-formed, its file is named for its call (when it is named for a call), its signature
 * holds under audit.pub, it names that key, its audit entry is in the log at its seq with its hash and for
 * its call, a `receipt_issued` entry names its SHA-256, and the log itself is not tampered (verify-log). Exit 0 when every check passes, 2 when any fails, 1 for a usage
 * error (no config, log or key to check against). Missing evidence is never a pass.
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { loadVerifier } from '../../audit/keys.js';
import { parseReceipt, type Receipt, receiptSha256, verifyReceiptSignature } from '../../audit/receipt.js';
import { checkReceiptLink } from '../../audit/receipt-link.js';
import { loadConfig } from '../../config/load.js';
import { oneLine, showHiddenInJson } from '../../confirm/visible.js';
import { LookfirstError } from '../../errors.js';
import { cliName, paint } from '../output.js';
import { verifyLogFile } from './verify-log.js';

/** A file name that names a call (the gate's call ids are UUIDs): only such names are compared with the receipt's call. */
const CALL_ID_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Exit codes of `receipt verify` (and `show` of an unreadable receipt). */
export const RECEIPT_EXIT = { ok: 0, usage: 1, failed: 2 } as const;

/** One check of `receipt verify`: a stable name, whether it passed, and in words what it found. */
export interface ReceiptCheck {
  name: 'well_formed' | 'file_name' | 'signature' | 'key' | 'entry_in_log' | 'receipt_issued' | 'log_intact';
  ok: boolean;
  message: string;
}

/**
 * Most bytes a receipt file may have. A receipt is a few kilobytes (card text and transcript are bounded
 * where they are made); anything this large is not one, and reading it whole would only cost memory.
 */
export const MAX_RECEIPT_BYTES = 1024 * 1024;

/** Why a receipt file cannot be read, in words and with what to do (a bare `ENOENT` tells a person nothing). */
function cannotRead(shown: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return `no such file: ${shown} (give the path of a receipt's .json file, in the audit.receipts folder)`;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied reading ${shown}: run as a user who may read it`;
  if (code === 'EISDIR') return `${shown} is a folder, not a receipt: give the path of one receipt's .json file in it`;
  return `cannot read the receipt ${shown}: ${code ?? (err as Error).message ?? err}`;
}

/**
 * Reads a receipt file's bytes: a regular file of at most MAX_RECEIPT_BYTES. Opened non-blocking and
 * checked before reading, so a FIFO, a device (`/dev/zero`) or a huge file is refused, not read forever.
 * @throws LookfirstError `USAGE` when it cannot be read, is not a regular file, or is too large.
 */
function readReceiptFile(file: string): Buffer {
  const shown = oneLine(file);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new LookfirstError('USAGE', cannotRead(shown, err));
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new LookfirstError('USAGE', cannotRead(shown, Object.assign(new Error('is a directory'), { code: 'EISDIR' })));
    if (!st.isFile()) throw new LookfirstError('USAGE', `${shown} is not a regular file, so it is not a receipt: give the path of a receipt's .json file`);
    if (st.size > MAX_RECEIPT_BYTES)
      throw new LookfirstError('USAGE', `${shown} has ${st.size} bytes, more than any receipt (${MAX_RECEIPT_BYTES}): it is not a receipt`);
    const buf = Buffer.alloc(MAX_RECEIPT_BYTES + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      // Grew while being read: still not a receipt.
      if (n > MAX_RECEIPT_BYTES) throw new LookfirstError('USAGE', `${shown} has more than ${MAX_RECEIPT_BYTES} bytes: it is not a receipt`);
    }
    return buf.subarray(0, n);
  } catch (err) {
    if (err instanceof LookfirstError) throw err;
    throw new LookfirstError('USAGE', cannotRead(shown, err));
  } finally {
    closeSync(fd);
  }
}

/** JSON for stdout with every hidden or control character escaped (same meaning, nothing for a terminal to act on). */
const jsonLine = (v: unknown) => `${showHiddenInJson(JSON.stringify(v))}\n`;

/**
 * Runs `receipt show`; returns the exit code (2 when the file is not a well-formed receipt).
 * @throws LookfirstError `USAGE` when the file cannot be read.
 */
export function receiptShowCommand(file: string, opts: { json?: boolean }): number {
  const bytes = readReceiptFile(file);
  const parsed = parseReceipt(bytes);
  if (!parsed.ok) {
    if (opts.json) process.stdout.write(jsonLine({ file, ok: false, problems: parsed.problems }));
    // A problem may quote the file's bytes (JSON.parse does): never let them reach the terminal raw.
    else for (const p of parsed.problems) process.stdout.write(`${paint(process.stdout, 'red', 'not a receipt')}: ${oneLine(p)}\n`);
    return RECEIPT_EXIT.failed;
  }
  const r = parsed.receipt;
  if (opts.json) {
    process.stdout.write(jsonLine({ file, sha256: receiptSha256(bytes), receipt: r }));
    return RECEIPT_EXIT.ok;
  }
  process.stdout.write(describeReceipt(r, receiptSha256(bytes)));
  process.stdout.write(`${paint(process.stdout, 'dim', `not verified here: run ${cliName()} receipt verify ${oneLine(file)}`)}\n`);
  return RECEIPT_EXIT.ok;
}

/**
 * A receipt in words for a person: who, what, when, how, each check, the outcome and the audit link.
 * `show` verifies nothing, so every field is hostile text: each line is made one line with its hidden and
 * control characters shown as `\uXXXX` (a forged receipt cannot paint "verified" or clear the screen).
 */
export function describeReceipt(r: Receipt, sha: string): string {
  const out = process.stdout;
  const lines: string[] = [];
  const who = [r.who.actor, r.who.user && `user ${r.who.user}`, r.who.device && `device ${r.who.device}`, r.who.replica && `replica ${r.who.replica}`]
    .filter(Boolean)
    .join(', ');
  lines.push(`receipt ${r.id} for call ${r.call_id} (sha256 ${sha})`);
  lines.push(`who:   ${who} (channel ${r.who.channel}, trust ${r.who.trust})`);
  lines.push(`what:  ${r.what.tool} on ${r.what.upstream} (${r.what.upstream_tool}), arguments sha256 ${r.what.args_sha256}`);
  if (r.what.shown !== undefined) lines.push(`shown: ${JSON.stringify(r.what.shown)}`);
  const when = [
    r.when.proposed && `proposed ${r.when.proposed}`,
    r.when.shown && `shown ${r.when.shown}`,
    `confirmed ${r.when.confirmed}`,
    `executed ${r.when.executed}`,
  ];
  lines.push(`when:  ${when.filter(Boolean).join(', ')}`);
  const how = [r.how.method, r.how.evidence_ref && `evidence ${r.how.evidence_ref}`, r.how.card_set && `card set ${r.how.card_set}`];
  lines.push(`how:   ${how.filter(Boolean).join(', ')}`);
  if (r.how.transcript !== undefined) lines.push(`heard: ${JSON.stringify(r.how.transcript)}`);
  if (r.how.audio_sha256 !== undefined) lines.push(`audio: sha256 ${r.how.audio_sha256}`);
  // A high-risk call's first yes: the second is the method above.
  const first = r.how.first;
  if (first)
    lines.push(
      oneLine(
        `first yes: ${first.method} at ${first.confirmed}${first.transcript !== undefined ? `, heard ${JSON.stringify(first.transcript)}` : ''}${first.audio_sha256 ? `, audio sha256 ${first.audio_sha256}` : ''}`,
      ),
    );
  lines.push(`checks (${r.checks.length}):`);
  for (const c of r.checks)
    lines.push(`  ${c.ok ? paint(out, 'green', 'ok    ') : paint(out, 'red', 'FAILED')} ${oneLine(`${c.name}${c.detail ? `: ${c.detail}` : ''}`)}`);
  if (r.checks.length === 0) lines.push('  (none recorded by the channel)');
  lines.push(`outcome: ${r.outcome.executed}${r.outcome.readback ? `, read-back ${r.outcome.readback}` : ''}`);
  lines.push(`audit: ${r.audit.event} entry seq ${r.audit.seq}, sha256 ${r.audit.entry_sha256}; signed by ${r.key}`);
  // The checks' lines carry colour codes of our own and are made one line above; every other line here.
  return `${lines.map((l) => (l.startsWith('  ') ? l : oneLine(l))).join('\n')}\n`;
}

/**
 * Runs `receipt verify`; returns the exit code: 0 every check passed, 2 one failed.
 * @throws LookfirstError `USAGE` (no receipt file, no config and no --pub/--log), `AUDIT_KEY_MISSING`,
 *   `AUDIT_LOG_UNREADABLE`, ConfigError.
 */
export function receiptVerifyCommand(file: string, opts: { config?: string; log?: string; pub?: string; json?: boolean }): number {
  const bytes = readReceiptFile(file);
  const configFile = opts.config ?? (existsSync('lookfirst.yaml') ? 'lookfirst.yaml' : undefined);
  const config = configFile && (!opts.log || !opts.pub) ? loadConfig(configFile) : undefined;
  const logPath = opts.log ?? config?.audit.logPath;
  const pubPath = opts.pub ?? config?.audit.pubPath;
  if (!logPath || !pubPath)
    throw new LookfirstError(
      'USAGE',
      'receipt verify needs the audit log and audit.pub the receipt is checked against: give --config lookfirst.yaml (or run it where lookfirst.yaml is), or --log and --pub',
    );
  const checks = verifyReceipt(bytes, logPath, pubPath, configFile, basename(file));
  const ok = checks.every((c) => c.ok);
  if (opts.json) process.stdout.write(jsonLine({ file, log: logPath, pub: pubPath, ok, checks }));
  else {
    const out = process.stdout;
    // Messages quote the receipt and the log (hostile text): one line each, nothing hidden.
    for (const c of checks) out.write(`${c.ok ? paint(out, 'green', 'ok    ') : paint(out, 'red', 'FAILED')} ${c.name}: ${oneLine(c.message)}\n`);
    const f = oneLine(file);
    out.write(ok ? `${paint(out, 'green', 'receipt verified')}: ${f}\n` : `${paint(out, 'red', 'receipt NOT verified')}: ${f}\n`);
  }
  return ok ? RECEIPT_EXIT.ok : RECEIPT_EXIT.failed;
}

/**
 * Every check of a receipt against a log and key, in order; a check that cannot run after an earlier
 * failure is reported failed with why (never skipped as a pass).
 * @throws LookfirstError `AUDIT_KEY_MISSING`/`AUDIT_KEY_INVALID` (audit.pub), `AUDIT_LOG_UNREADABLE` (the log).
 */
export function verifyReceipt(bytes: Uint8Array, logPath: string, pubPath: string, configFile = 'lookfirst.yaml', fileName?: string): ReceiptCheck[] {
  const verifier = loadVerifier(pubPath, `${cliName()} keygen --config ${configFile}`);
  const parsed = parseReceipt(bytes);
  const checks: ReceiptCheck[] = [];
  if (!parsed.ok) {
    checks.push({ name: 'well_formed', ok: false, message: `it is not a well-formed receipt (edited, or not a receipt): ${parsed.problems.join('; ')}` });
    return checks;
  }
  const r = parsed.receipt;
  const sha = receiptSha256(bytes);
  checks.push({
    name: 'well_formed',
    ok: parsed.canonical,
    message: parsed.canonical
      ? `receipt format v${r.v}, sha256 ${sha}`
      : 'the receipt was edited after signing: its bytes are not the canonical form it was written in (RFC 8785 JSON, one newline)',
  });
  // Receipts are written as `<call id>.json`: a file under one call's name holding another call's receipt
  // (two files swapped, or one copied over another) is a true receipt of the wrong call.
  const named = fileName ? /^(.+)\.json$/.exec(fileName)?.[1] : undefined;
  if (named !== undefined && CALL_ID_NAME.test(named))
    checks.push({
      name: 'file_name',
      ok: named === r.call_id,
      message:
        named === r.call_id
          ? `the file is named for its call ${r.call_id}`
          : `the file is named for call ${named}, but holds the receipt of call ${r.call_id} (files swapped or copied): it is no receipt of ${named}`,
    });
  const sigOk = verifyReceiptSignature(r, verifier.key);
  // A receipt that names another key was most likely signed by another gate: say that first, since
  // "edited" would send the reader hunting for tampering that is not there (the `key` check confirms it).
  const otherKey = r.key !== verifier.name;
  checks.push({
    name: 'signature',
    ok: sigOk,
    message: sigOk
      ? `signed by the key in ${pubPath} (${verifier.name})`
      : otherKey
        ? `signed by another key (${JSON.stringify(r.key)}), not this gate's audit.pub (${verifier.name} in ${pubPath}): check it with that gate's audit.pub (--pub) and log (--log); if it is meant to be this gate's, it was edited after signing`
        : `the receipt was edited after signing: its signature does not match the key in ${pubPath} (${verifier.name}), which it names`,
  });
  const keyOk = r.key === verifier.name;
  checks.push({ name: 'key', ok: keyOk, message: keyOk ? `names ${r.key}` : `names the key ${JSON.stringify(r.key)}, but ${pubPath} holds ${verifier.name}` });
  const { report, evidence } = verifyLogFile(logPath, pubPath, undefined, configFile);
  const link = checkReceiptLink(r, sha, evidence.bytes, verifier.key);
  const entryProblems = link.filter((p) => p.name !== 'not_issued');
  checks.push({
    name: 'entry_in_log',
    ok: entryProblems.length === 0,
    message:
      entryProblems.length === 0
        ? `its ${r.audit.event} entry is in ${logPath} at seq ${r.audit.seq} with hash ${r.audit.entry_sha256.slice(0, 16)}…, for call ${r.call_id}`
        : entryProblems.map((p) => p.message).join('; '),
  });
  const notIssued = link.find((p) => p.name === 'not_issued');
  checks.push({ name: 'receipt_issued', ok: !notIssued, message: notIssued ? notIssued.message : 'a signed receipt_issued entry names this receipt' });
  // A receipt is only as good as the log it is linked to: a tampered log fails it; a log whose end is not
  // vouched for by a head (unproven) does not, since the entry itself was found and its signature checked.
  const intact = report.verdict !== 'tampered';
  checks.push({
    name: 'log_intact',
    ok: intact,
    message: intact
      ? `the log verifies (${report.verdict})`
      : `the log does not verify (tampered: ${report.problems[0]?.message ?? 'see verify-log'}); run ${cliName()} verify-log`,
  });
  return checks;
}
