/**
 * C2SP signed notes and tlog checkpoints, with Ed25519 keys, so the audit log's head can be checked by
 * standard transparency-log tools (Go's sumdb/note, the C2SP witness ecosystem).
 *
 * Key ID = SHA-256(name || 0x0A || 0x01 || 32-byte public key)[:4]. A signature line is
 * "— <name> <base64(keyID || 64-byte signature)>" and the signature covers the note text (which ends in
 * a newline). A verifier key string is "<name>+<keyID hex>+<base64(0x01 || key)>".
 * @see https://c2sp.org/signed-note
 * @see https://c2sp.org/tlog-checkpoint
 */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { sha256 } from './canonical.js';
import { decodeBase64Canonical, printable } from './verify/encoding.js';

const ALG_ED25519 = 0x01;
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const EM_DASH = '\u2014';

/** An Ed25519 public key with its note name and key ID. */
export interface NoteVerifier {
  name: string;
  keyId: Buffer;
  key: KeyObject;
}

/** An Ed25519 private key with its note name and key ID. */
export interface NoteSigner {
  name: string;
  keyId: Buffer;
  key: KeyObject;
}

/** Raw 32-byte Ed25519 public key of a KeyObject. */
export function rawPublicKey(key: KeyObject): Buffer {
  const der = (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32);
}

/** C2SP key ID: first 4 bytes of SHA-256(name || "\n" || 0x01 || pubkey). */
export function keyIdOf(name: string, rawPub: Uint8Array): Buffer {
  return sha256(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([ALG_ED25519]), rawPub])).subarray(0, 4);
}

/** Formats a verifier key string "<name>+<keyID hex>+<base64(0x01||key)>". */
export function formatVerifierKey(name: string, key: KeyObject): string {
  const raw = rawPublicKey(key);
  return `${name}+${keyIdOf(name, raw).toString('hex')}+${Buffer.concat([Buffer.from([ALG_ED25519]), raw]).toString('base64')}`;
}

/**
 * Parses a verifier key string. Splits on the first two "+" only: base64 may contain "+".
 * @throws Error when the shape, the algorithm byte, the length or the key ID is wrong.
 */
export function parseVerifierKey(vkey: string): NoteVerifier {
  const text = vkey.trim();
  const first = text.indexOf('+');
  const second = text.indexOf('+', first + 1);
  if (first <= 0 || second < 0) throw new Error('verifier key must look like <name>+<hex key id>+<base64 key>');
  const name = text.slice(0, first);
  const idHex = text.slice(first + 1, second);
  const blob = Buffer.from(text.slice(second + 1), 'base64');
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new Error('verifier key id must be 8 hex digits');
  if (blob.length !== 33 || blob[0] !== ALG_ED25519) throw new Error('verifier key is not an Ed25519 key (algorithm 0x01, 32 bytes)');
  const raw = blob.subarray(1);
  if (!keyIdOf(name, raw).equals(Buffer.from(idHex, 'hex'))) throw new Error('verifier key id does not match its name and key');
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
  return { name, keyId: Buffer.from(idHex, 'hex'), key };
}

/**
 * Parses a Go sumdb/note signer key "PRIVATE+KEY+<name>+<hex id>+<base64(0x01||seed)>".
 * @throws Error on any malformed part.
 */
export function parseSignerKey(skey: string): NoteSigner {
  const parts = skey.trim().split('+');
  if (parts.length < 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') throw new Error('signer key must start with PRIVATE+KEY+');
  const name = parts[2]!;
  const blob = Buffer.from(parts.slice(4).join('+'), 'base64');
  if (blob.length !== 33 || blob[0] !== ALG_ED25519) throw new Error('signer key is not an Ed25519 seed');
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, blob.subarray(1)]), format: 'der', type: 'pkcs8' });
  return { name, keyId: keyIdOf(name, rawPublicKey(key)), key };
}

/**
 * Signs note text (must end with "\n") and returns the whole note: text, blank line, signature line.
 * @throws Error when the text does not end with a newline.
 */
export function signNote(text: string, signer: NoteSigner): string {
  return `${text}\n${signatureLine(text, signer)}\n`;
}

/** The signature line for text, without its trailing newline. */
export function signatureLine(text: string, signer: NoteSigner): string {
  if (!text.endsWith('\n')) throw new Error('note text must end with a newline');
  const sig = sign(null, Buffer.from(text, 'utf8'), signer.key);
  return `${EM_DASH} ${signer.name} ${Buffer.concat([signer.keyId, sig]).toString('base64')}`;
}

/** Result of opening a note: the text when a signature by the verifier checks out. */
export type NoteCheck = { ok: true; text: string } | { ok: false; reason: string };

/**
 * Opens a signed note and checks it against one verifier. Pure.
 * Returns `ok: false` (never throws) for malformed notes (a signature line of any key that is not
 * canonical base64 of at least 5 bytes), unknown signers, bad signatures, and a signature by the verifier's
 * name whose base64 is not canonical. Well-formed lines of other keys (cosignatures) are ignored.
 */
export function openNote(note: string, verifier: NoteVerifier): NoteCheck {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return { ok: false, reason: 'not a signed note (no blank line before signatures)' };
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  let result: NoteCheck | undefined;
  for (const line of lines) {
    const m = /^\u2014 (\S+) (\S+)$/u.exec(line);
    if (!m) return { ok: false, reason: `malformed signature line: ${printable(line, 60)}` };
    // Only the canonical base64 counts: a signature with its padding or unused bits changed is not the one signed.
    const blob = decodeBase64Canonical(m[2]!);
    // Other keys' lines (C2SP cosignatures) are ignored, but only when well formed: a key hash and a
    // signature (at least 5 bytes), as C2SP signed-note and Go's note.Open require.
    if (m[1] !== verifier.name) {
      if (!blob || blob.length < 5) return { ok: false, reason: `malformed signature line: ${printable(line, 60)}` };
      continue;
    }
    if (!blob) return { ok: false, reason: `signature by ${verifier.name} is not in canonical base64` };
    if (blob.length !== 68 || !blob.subarray(0, 4).equals(verifier.keyId)) continue;
    // Every line is checked for its form before the note is accepted: the verdict waits for the loop.
    result ??= verify(null, Buffer.from(text, 'utf8'), verifier.key, blob.subarray(4))
      ? { ok: true, text }
      : { ok: false, reason: `signature by ${verifier.name} does not verify` };
  }
  return result ?? { ok: false, reason: `no signature by ${verifier.name}` };
}

/** A tlog checkpoint body: origin, tree size, root hash, extension lines. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
  extensions: string[];
}

/** Formats checkpoint text per C2SP tlog-checkpoint (each line ends in "\n"). */
export function formatCheckpoint(c: Checkpoint): string {
  return [c.origin, String(c.size), c.root.toString('base64'), ...c.extensions].map((l) => `${l}\n`).join('');
}

/** Parses checkpoint text; `undefined` when it is not one. Pure. */
export function parseCheckpoint(text: string): Checkpoint | undefined {
  const lines = text.split('\n');
  if (lines.pop() !== '' || lines.length < 3) return undefined;
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (!origin || !/^(0|[1-9][0-9]*)$/.test(sizeText)) return undefined;
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText) return undefined;
  return { origin, size: Number(sizeText), root, extensions };
}
