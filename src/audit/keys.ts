/**
 * The audit key pair: an Ed25519 private key (PKCS#8 PEM, mode 0600) and, beside it, the public key as a
 * C2SP verifier key string, so `verify-log` and standard note tools can check the log without the secret.
 * Keys are parsed once per process, never per entry.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LookfirstError } from '../errors.js';
import { sha256Hex } from './canonical.js';
import { formatVerifierKey, keyIdOf, type NoteSigner, type NoteVerifier, parseVerifierKey, rawPublicKey } from './note.js';

/** The note name of a key: stable, derived from the public key, e.g. `lookfirst/3fa2b01c`. */
export function keyNameFor(key: KeyObject): string {
  return `lookfirst/${sha256Hex(rawPublicKey(key)).slice(0, 8)}`;
}

/**
 * Creates a new key pair at `keyPath` (0600) and `pubPath`.
 * @throws LookfirstError `AUDIT_KEY_EXISTS` when either file exists: a key is never overwritten, since
 *   that would orphan every signature already in the log; `AUDIT_KEY_UNWRITABLE` when a file or its
 *   folder cannot be written (a missing folder is created, 0700).
 */
export function generateAuditKey(keyPath: string, pubPath: string): { name: string; vkey: string } {
  for (const p of [keyPath, pubPath]) {
    if (existsSync(p))
      throw new LookfirstError(
        'AUDIT_KEY_EXISTS',
        `${p} already exists; lookfirst never overwrites an audit key. Move it away first if you really mean to start a new log.`,
      );
  }
  const { privateKey } = generateKeyPairSync('ed25519');
  const name = keyNameFor(privateKey);
  const vkey = formatVerifierKey(name, privateKey);
  try {
    // A folder the config names but nobody made yet: made here, private (it holds the signing key).
    mkdirSync(dirname(keyPath), { recursive: true, mode: 0o700 });
    mkdirSync(dirname(pubPath), { recursive: true, mode: 0o755 });
    writeFileSync(keyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    writeFileSync(pubPath, `${vkey}\n`, { mode: 0o644, flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const path = (err as NodeJS.ErrnoException).path ?? keyPath;
    throw new LookfirstError(
      'AUDIT_KEY_UNWRITABLE',
      `cannot write the audit key at ${path} (${code}): give audit.key a path in a folder you can write, or fix that folder's permissions`,
      { cause: err },
    );
  }
  return { name, vkey };
}

/**
 * Loads the private key as a note signer.
 * @param keygenHint the command that creates the key, shown when it is missing.
 * @throws LookfirstError `AUDIT_KEY_MISSING` (with the keygen command to run) or `AUDIT_KEY_INVALID`.
 */
export function loadSigner(keyPath: string, keygenHint: string): NoteSigner {
  let pem: string;
  try {
    pem = readFileSync(keyPath, 'utf8');
  } catch {
    throw new LookfirstError('AUDIT_KEY_MISSING', `no audit key at ${keyPath}. Create one with: ${keygenHint}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new LookfirstError('AUDIT_KEY_INVALID', `${keyPath} is not a PEM private key`, { cause: err });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new LookfirstError('AUDIT_KEY_INVALID', `${keyPath} is a ${key.asymmetricKeyType} key; lookfirst signs with Ed25519`);
  const name = keyNameFor(key);
  return { name, keyId: keyIdOf(name, rawPublicKey(key)), key };
}

/**
 * Loads the public verifier key.
 * @param keygenHint the command that creates the key pair, shown when it is missing.
 * @throws LookfirstError `AUDIT_KEY_MISSING` or `AUDIT_KEY_INVALID`.
 */
export function loadVerifier(pubPath: string, keygenHint = 'lookfirst keygen'): NoteVerifier {
  let text: string;
  try {
    text = readFileSync(pubPath, 'utf8');
  } catch {
    throw new LookfirstError(
      'AUDIT_KEY_MISSING',
      `no audit public key at ${pubPath}. If this gate never had a key, create the pair with: ${keygenHint}; if the log came from elsewhere, put its audit.pub there.`,
    );
  }
  try {
    return parseVerifierKey(text);
  } catch (err) {
    throw new LookfirstError('AUDIT_KEY_INVALID', `${pubPath}: ${(err as Error).message}`, { cause: err });
  }
}
