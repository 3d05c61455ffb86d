/**
 * Reads a log's bytes into lines: each line's hashes, entry, whether its content is signed by the key, and
 * whether its bytes are the canonical ones the gate writes. Only the canonical encoding counts: every line
 * is decoded and encoded again (UTF-8, RFC 8785 JSON, base64 signature), and a line that does not come back
 * byte for byte is flawed, even when its content still verifies. Pure.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../canonical.js';
import { verifyEntrySignature } from '../entry.js';
import { leafHash } from '../merkle.js';
import { decodeBase64Canonical, decodeUtf8Strict } from './encoding.js';
import type { Item, Problem } from './types.js';

const NEWLINE = 0x0a;

/**
 * Splits a log into items. A last line without its newline is a problem (torn or appended by hand) and
 * is not an item.
 * @param log the whole JSONL file, as bytes (preferred: checks them exactly) or as text.
 */
export function parseItems(log: string | Uint8Array, key: KeyObject, problems: Problem[]): Item[] {
  const data = typeof log === 'string' ? Buffer.from(log, 'utf8') : Buffer.from(log.buffer, log.byteOffset, log.byteLength);
  const items: Item[] = [];
  let start = 0;
  while (start < data.length) {
    const nl = data.indexOf(NEWLINE, start);
    if (nl < 0) {
      problems.push({ kind: 'edited', line: items.length + 1, message: 'the last line has no newline: torn or appended by hand' });
      break;
    }
    items.push(readLine(data.subarray(start, nl), items.length + 1, key));
    start = nl + 1;
  }
  return items;
}

function readLine(bytes: Buffer, line: number, key: KeyObject): Item {
  const hash = sha256Hex(bytes);
  const leaf = leafHash(bytes);
  const strict = decodeUtf8Strict(bytes);
  let flaw = strict === undefined ? 'its bytes are not valid UTF-8' : undefined;
  const text = strict ?? bytes.toString('utf8');
  let entry: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) entry = parsed as Record<string, unknown>;
  } catch {
    entry = undefined;
  }
  if (!entry) return { line, hash, leaf, entry, signed: false, sigOk: false, seq: undefined, prev: undefined };
  const seq = typeof entry.seq === 'number' && Number.isInteger(entry.seq) && entry.seq >= 0 ? entry.seq : undefined;
  const prev = typeof entry.prev === 'string' ? entry.prev : undefined;
  flaw ??= canonicalFlaw(entry, text);
  // Whether the content verifies with its signature re-encoded: tells a re-encoded line from an edited one.
  const sig = entry.sig;
  let signed = verifyEntrySignature(entry, key);
  if (!signed && typeof sig === 'string' && decodeBase64Canonical(sig) === undefined) {
    const bytesOfSig = Buffer.from(sig, 'base64');
    if (bytesOfSig.length === 64 && verifyEntrySignature({ ...entry, sig: bytesOfSig.toString('base64') }, key)) {
      signed = true;
      flaw ??= 'its signature is not in canonical base64 (padding, unused bits or alphabet changed)';
    }
  }
  return { line, hash, leaf, entry, signed, sigOk: signed && flaw === undefined, flaw, seq, prev };
}

/** Why a parsed line is not the RFC 8785 form of itself, or undefined when it is. */
function canonicalFlaw(entry: Record<string, unknown>, text: string): string | undefined {
  let canonical: string;
  try {
    canonical = canonicalJson(entry);
  } catch {
    return 'it holds a value that has no canonical JSON form';
  }
  return canonical === text ? undefined : 'it is not in canonical JSON (RFC 8785): spacing, key order, escapes or number form changed';
}
