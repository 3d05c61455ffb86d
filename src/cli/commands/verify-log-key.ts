/**
 * Which key `verify-log` may trust. audit.pub sits beside the log, so whoever can write the log's folder can
 * replace it with their own key and re-sign an edited log and head: by itself it vouches for nothing. So
 * the key is checked against what the user holds: the private key the gate signs with (audit.key), when it
 * can be read here, and the key the user pins with `--expect-key`. A mismatch is a `key` problem
 * (tampered, exit 2). Fail closed: an audit.key that is there but not a usable key is a mismatch too.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { loadSigner } from '../../audit/keys.js';
import { type NoteVerifier, parseVerifierKey, rawPublicKey } from '../../audit/note.js';
import { describeKey } from '../../audit/verify/head.js';
import type { Problem } from '../../audit/verify/verify.js';
import { LookfirstError } from '../../errors.js';

/** The outcome of checking the verifying key: problems (kind `key`), warnings, and what it was checked against. */
export interface KeyCheck {
  problems: Problem[];
  warnings: string[];
  /** What the key was found to match: `audit.key`, `--expect-key`. Empty when nothing vouched for it. */
  pinnedBy: string[];
}

/** A key the user expects: a verifier key (`name+id+base64`), its 8-hex-digit key id, or a file holding a verifier key. */
type Expected = { keyId: Buffer; verifier?: NoteVerifier; shown: string };

/**
 * Parses `--expect-key`.
 * @throws LookfirstError `USAGE` when the value is neither a key id, a verifier key nor a file holding one.
 */
export function parseExpectedKey(value: string): Expected {
  const text = value.trim();
  if (/^[0-9a-fA-F]{8}$/.test(text)) return { keyId: Buffer.from(text.toLowerCase(), 'hex'), shown: `key id ${text.toLowerCase()}` };
  let vkey = text;
  if (!text.includes('+') && existsSync(text) && statSync(text).isFile()) vkey = readFileSync(text, 'utf8');
  try {
    const verifier = parseVerifierKey(vkey);
    return { keyId: verifier.keyId, verifier, shown: describeKey(verifier) };
  } catch (err) {
    throw new LookfirstError(
      'USAGE',
      `--expect-key takes the key you expect: its 8-hex-digit key id, its verifier key (the one line of your kept copy of audit.pub), or that copy's path. "${value.slice(0, 40)}" is none of these (${(err as Error).message}).`,
    );
  }
}

const sameKey = (a: NoteVerifier, b: NoteVerifier) => a.name === b.name && a.keyId.equals(b.keyId) && rawPublicKey(a.key).equals(rawPublicKey(b.key));

/**
 * Checks the key a log was verified with against audit.key (when readable) and `--expect-key`.
 * @param verifier the key loaded from `pubPath`.
 * @param expectKey the `--expect-key` value, if given.
 * @throws LookfirstError `USAGE` for an `--expect-key` that cannot be read as a key.
 */
export function checkVerifierKey(verifier: NoteVerifier, files: { pubPath: string; keyPath: string }, expectKey?: string): KeyCheck {
  const out: KeyCheck = { problems: [], warnings: [], pinnedBy: [] };
  const ours = describeKey(verifier);
  const reSigned =
    'If audit.pub was replaced, whoever replaced it may have re-signed the log and head with their own key: restore audit.pub from the copy you kept and verify again.';
  if (expectKey !== undefined) {
    const expected = parseExpectedKey(expectKey);
    const match = expected.verifier ? sameKey(expected.verifier, verifier) : expected.keyId.equals(verifier.keyId);
    if (match) out.pinnedBy.push('--expect-key');
    else
      out.problems.push({
        kind: 'key',
        line: 0,
        message: `${files.pubPath} holds ${ours}, but --expect-key names ${expected.shown}: the log was verified under a key you do not expect. ${reSigned} If you rotated keys on purpose, pin the new one.`,
      });
  }
  let signer: NoteVerifier | undefined;
  try {
    signer = loadSigner(files.keyPath, '');
  } catch (err) {
    if (err instanceof LookfirstError && err.code === 'AUDIT_KEY_MISSING') {
      if (out.pinnedBy.length === 0)
        out.warnings.push(
          `${files.keyPath} cannot be read here, so ${files.pubPath} (${ours}) was not checked against the gate's own key: anyone who can write that folder can replace both. Pin the key you expect with --expect-key <key id or kept copy of audit.pub>.`,
        );
      return out;
    }
    out.problems.push({
      kind: 'key',
      line: 0,
      message: `${files.keyPath} is there but is not a usable audit key (${(err as Error).message}), so ${files.pubPath} (${ours}) cannot be vouched for. Restore audit.key from your backup, or verify with --expect-key against the key you kept.`,
    });
    return out;
  }
  if (sameKey(signer, verifier)) out.pinnedBy.push('audit.key');
  else
    out.problems.push({
      kind: 'key',
      line: 0,
      message: `${files.pubPath} holds ${ours}, but the gate signs with ${files.keyPath}, whose public half is ${describeKey(signer)}: they are not one key pair. ${reSigned} If the config names keys of two pairs, point audit.key and audit.pub at one pair.`,
    });
  return out;
}
