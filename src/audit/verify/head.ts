/**
 * The heads a log is checked against (C2SP checkpoints in signed notes), and who signed them: a log or
 * head under a key other than the configured one is named with both key ids, with how to tell a wrong
 * key in the config from a forgery. Pure.
 * @see https://c2sp.org/signed-note
 * @see https://c2sp.org/tlog-checkpoint
 */

import { sha256Hex } from '../canonical.js';
import { GENESIS_PREV } from '../entry.js';
import { CompactTree, leafHash } from '../merkle.js';
import { type NoteVerifier, openNote, parseCheckpoint } from '../note.js';
import { decodeBase64Canonical, printable } from './encoding.js';
import { lineCount } from './items.js';
import type { HeadInput, Item, Problem } from './types.js';

/** Extension line name carrying the chain tip in a lookfirst checkpoint. */
const CHAIN_EXTENSION = 'lookfirst-chain';

/** A signer named in a note: its key name and 8-hex-digit key id ("?" when the signature is unreadable). */
export interface NamedSigner {
  name: string;
  keyId: string;
}

/** The signature lines of a note, as name and key id. Pure; malformed lines are left out. */
export function noteSigners(note: string): NamedSigner[] {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return [];
  return [...note.slice(split + 2).matchAll(/^\u2014 (\S+) (\S+)$/gmu)].map((m) => {
    const blob = decodeBase64Canonical(m[2]!);
    return { name: m[1]!, keyId: blob && blob.length === 68 ? blob.subarray(0, 4).toString('hex') : '?' };
  });
}

/** "name (key id xxxxxxxx)", the name made printable (it may come from a crafted head). */
export function describeKey(k: { name: string; keyId: string | Buffer }): string {
  return `${printable(k.name)} (key id ${typeof k.keyId === 'string' ? k.keyId : k.keyId.toString('hex')})`;
}

const isConfigured = (s: NamedSigner, v: NoteVerifier) => s.name === v.name && s.keyId === v.keyId.toString('hex');
/** A readable signature by a key other than the configured one. */
const isOther = (s: NamedSigner, v: NoteVerifier) => s.keyId !== '?' && !isConfigured(s, v);

/** How to tell a wrong public key in the config from a forgery, for a log or head signed by `other`. */
function wrongKeyOrForgery(other: string): string {
  return (
    `A wrong key or a forgery? A key's name is a fingerprint of its public key. If ${other} is a key you hold (the audit.pub beside the audit.key that wrote this log), ` +
    `the config points at the wrong public key: set audit.pub to that file, or run with the config that wrote the log, and verify again. ` +
    'If no key you hold has that id, someone signed this log with their own key: treat it as forged.'
  );
}

/**
 * Not one entry verifies under the configured key, and no head names that key: the log is not vouched
 * for by the key the user trusts. That is tampering (exit 2) whatever the cause; the message names the
 * configured key and the key the heads name, and says how to tell a wrong-key mistake from a forgery.
 * (When a head does name the configured key, the lines are judged one by one: they were replaced.)
 * @returns the problem, or undefined when some entry verifies, there is none, or a head names the key.
 */
export function keyMismatch(items: Item[], heads: HeadInput[], verifier: NoteVerifier): Problem | undefined {
  if (items.length === 0 || items.some((i) => i.signed)) return undefined;
  const signers = heads.flatMap((h) => noteSigners(h.note));
  if (signers.some((s) => s.name === verifier.name && !isOther(s, verifier))) return undefined;
  const others = [...new Set(signers.filter((s) => isOther(s, verifier)).map(describeKey))];
  const why =
    others.length > 0
      ? `the head is signed by ${others.join(', ')}. ${wrongKeyOrForgery(others.join(', '))}`
      : 'and no head names the key that did sign it. If another key pair of yours wrote this log, verify with its audit.pub; if none did, treat the log as forged.';
  return { kind: 'key', line: 1, message: `no entry of the log verifies with the configured public key ${describeKey(verifier)}; ${why}` };
}

/** The size a head records, when it opens under the key. */
export function headSizeOf(head: HeadInput, verifier: NoteVerifier): number | undefined {
  const opened = openNote(head.note, verifier);
  return opened.ok ? parseCheckpoint(opened.text)?.size : undefined;
}

/**
 * The chain tips (hex) the heads record, for heads that open under the key and cover at least one entry:
 * where the log's own history ends, so its own lines can be told from another log's under the same key.
 */
export function headTips(heads: HeadInput[], verifier: NoteVerifier): string[] {
  const tips: string[] = [];
  for (const head of heads) {
    const opened = openNote(head.note, verifier);
    const cp = opened.ok ? parseCheckpoint(opened.text) : undefined;
    const chain = cp?.extensions.find((e) => e.startsWith(`${CHAIN_EXTENSION} `))?.slice(CHAIN_EXTENSION.length + 1);
    if (cp && cp.size > 0 && chain) tips.push(chain);
  }
  return tips;
}

/** The RFC 6962 root over the first `size` lines of the log's bytes, and the hash of the last of them. */
function prefixOf(data: Buffer, size: number): { root: Buffer; tip: string } {
  const tree = new CompactTree();
  let tip = GENESIS_PREV;
  for (let start = 0, n = 0; n < size; n++) {
    const nl = data.indexOf(0x0a, start);
    const line = data.subarray(start, nl);
    tree.appendLeafHash(leafHash(line));
    if (n === size - 1) tip = sha256Hex(line);
    start = nl + 1;
  }
  return { root: tree.root(), tip };
}

/**
 * Checks one head: signature, origin, size against the log, Merkle root and chain tip over its prefix.
 * @param data the log's bytes (the Merkle root is computed over them, not kept per line).
 */
export function checkHead(head: HeadInput, data: Buffer, items: Item[], verifier: NoteVerifier, problems: Problem[], warnings: string[]): void {
  const opened = openNote(head.note, verifier);
  if (!opened.ok) {
    const signers = noteSigners(head.note);
    const others = [...new Set(signers.filter((s) => isOther(s, verifier)).map(describeKey))];
    const signedByOther = others.length > 0 && !signers.some((s) => s.name === verifier.name && !isOther(s, verifier));
    problems.push({
      kind: signedByOther ? 'key' : 'head',
      line: 0,
      message: signedByOther
        ? `${head.label}: signed by ${others.join(', ')}, not by the configured public key ${describeKey(verifier)}. ${wrongKeyOrForgery(others.join(', '))}`
        : `${head.label}: ${opened.reason}`,
    });
    return;
  }
  const cp = parseCheckpoint(opened.text);
  if (!cp) {
    problems.push({ kind: 'head', line: 0, message: `${head.label}: signed, but not a checkpoint` });
    return;
  }
  if (cp.origin !== verifier.name)
    problems.push({ kind: 'head', line: 0, message: `${head.label}: origin "${printable(cp.origin)}" is not this log's key name "${verifier.name}"` });
  // A loop, not Math.max(...spread): a log of a few hundred thousand entries would overflow the stack.
  let maxSeq = -1;
  for (const i of items) if (i.signed && i.kind !== 'inserted' && i.seq !== undefined && i.seq > maxSeq) maxSeq = i.seq;
  const lines = lineCount(items);
  if (lines < cp.size || maxSeq + 1 < cp.size) {
    const held = Math.min(lines, maxSeq + 1);
    problems.push({
      kind: 'truncated',
      line: lines + 1,
      message: `log truncated: ${head.label} records ${cp.size} entries, the log ends after ${held}`,
    });
    return;
  }
  const { root, tip } = prefixOf(data, cp.size);
  const chain = cp.extensions.find((e) => e.startsWith(`${CHAIN_EXTENSION} `))?.slice(CHAIN_EXTENSION.length + 1);
  const lineProblems = problems.some((p) => p.kind !== 'head' && p.kind !== 'key' && p.line <= cp.size);
  if (!root.equals(cp.root) && !lineProblems) {
    problems.push({ kind: 'head', line: 0, message: `${head.label}: Merkle root over the first ${cp.size} entries does not match` });
  } else if (chain !== tip && !lineProblems) {
    problems.push({ kind: 'head', line: cp.size, message: `${head.label}: chain hash of entry #${cp.size - 1} does not match` });
  }
  if (lines > cp.size) warnings.push(`${head.label} covers ${cp.size} of ${lines} entries; the rest are checked by signature and chain only`);
}
