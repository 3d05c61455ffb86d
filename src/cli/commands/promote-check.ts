/**
 * What `promote` holds a log to before it replays anything from it: verify-log's checks under audit.pub,
 * and the very check a gate runs before it appends to a log (audit/verify/append-check.ts, the function
 * ChainWriter uses at start), under the key the gate signs with. Both run on one reading of the bytes,
 * and the text promote then acts on is that reading. Fail closed: a log either check refuses is not
 * replayed.
 */
import { createPublicKey } from 'node:crypto';
import { loadSigner, loadVerifier } from '../../audit/keys.js';
import type { NoteVerifier } from '../../audit/note.js';
import { type AppendProblem, checkBeforeAppend } from '../../audit/verify/append-check.js';
import { describeKey } from '../../audit/verify/head.js';
import type { Problem, VerifyReport } from '../../audit/verify/verify.js';
import type { Config } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { cliName } from '../output.js';
import { verifyLogFile } from './verify-log.js';

/**
 * The key a gate under this config signs with (public half), as the gate start checks a log with it.
 * @param fallbackToPub for a plan that executes nothing: when audit.key cannot be read here, use audit.pub.
 * @throws LookfirstError `AUDIT_KEY_MISSING` / `AUDIT_KEY_INVALID` when audit.key is needed and unusable.
 */
export function gateKeyOf(config: Config, fallbackToPub: boolean): { verifier: NoteVerifier; note?: string } {
  const hint = `${cliName()} keygen --config ${config.file}`;
  try {
    const signer = loadSigner(config.audit.keyPath, hint);
    return { verifier: { name: signer.name, keyId: signer.keyId, key: createPublicKey(signer.key) } };
  } catch (err) {
    if (!fallbackToPub || !(err instanceof LookfirstError) || err.code !== 'AUDIT_KEY_MISSING') throw err;
    return {
      verifier: loadVerifier(config.audit.pubPath, hint),
      note: `note: ${config.audit.keyPath} cannot be read here, so the gate's start-up check ran with ${config.audit.pubPath}; the replay itself checks against the gate's own key`,
    };
  }
}

/**
 * Verifies a log to replay from: verify-log's checks, then the gate's start-up check on the same bytes.
 * @returns the combined report (intact only when both pass) and the exact text that was checked.
 * @throws LookfirstError as verifyLogFile does.
 */
export function checkReplayLog(path: string, config: Config, trustedHead: string | undefined, gateKey: NoteVerifier): { report: VerifyReport; text: string } {
  const { report, text, evidence, verifier } = verifyLogFile(path, config.audit.pubPath, trustedHead, config.file);
  const sameKey = verifier.name === gateKey.name && verifier.keyId.equals(gateKey.keyId);
  if (!sameKey)
    report.problems.unshift({
      kind: 'key',
      line: 0,
      message: `${config.audit.pubPath} holds ${describeKey(verifier)}, but the gate signs with ${describeKey(gateKey)} (${config.audit.keyPath}): they are not one key pair, so a log that verifies under audit.pub is not one the gate's own key vouches for. Point audit.key and audit.pub at one pair.`,
    });
  const start = checkBeforeAppend(evidence.bytes, evidence.sidecarNote, gateKey);
  if (!start.ok && !report.problems.some((p) => p.kind === 'key' || (start.problem.kind === 'line' && p.line === start.problem.line)))
    report.problems.push(asProblem(start.problem));
  if (!sameKey || (!start.ok && start.problem.kind !== 'unheaded')) report.verdict = 'tampered';
  else if (!start.ok && report.verdict === 'intact') report.verdict = 'unproven';
  return { report, text };
}

/** The gate's start-up refusal as a report line. */
function asProblem(problem: AppendProblem): Problem {
  const refused = "the gate's start-up check refuses this log";
  if (problem.kind === 'head') return { kind: 'head', line: 0, message: `${refused}: its head is not signed by the gate's key (${problem.detail})` };
  if (problem.kind === 'unheaded') return { kind: 'head', line: 0, message: `${refused}: it has ${problem.size} entries and no signed head` };
  const w = problem.what;
  const kind: Problem['kind'] = w.includes('entries were removed')
    ? 'truncated'
    : w.includes('signed head')
      ? 'head'
      : w.includes("signed by this gate's key")
        ? 'key'
        : w.includes('canonical')
          ? 'encoding'
          : w.includes('JSON')
            ? 'edited'
            : 'spliced';
  return { kind, line: problem.line, message: `${refused}: line ${problem.line} ${problem.what}` };
}
