/**
 * Reads a log's bytes into items (a line, or a run of lines that cannot be part of the chain): each line's
 * hash, number and link, whether its content is signed by the key, and
 * whether its bytes are the canonical ones the gate writes. Only the canonical encoding counts: every line
 * is decoded and encoded again (UTF-8, RFC 8785 JSON, base64 signature), and a line that does not come back
 * byte for byte is flawed, even when its content still verifies. Pure.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../canonical.js';
import { GENESIS_PREV, verifyEntrySignature } from '../entry.js';
import { decodeBase64Canonical, decodeUtf8Strict } from './encoding.js';
import type { Item, Problem } from './types.js';

const NEWLINE = 0x0a;
const HEX64 = /^[0-9a-f]{64}$/;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
/** JSON whitespace (RFC 8259): a line may only be an object if, past it, it starts with "{" and ends with "}". */
const isJsonSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;

/** Whether a line's bytes could be a JSON object at all, without parsing (or throwing on) them. */
function mayBeObject(bytes: Buffer): boolean {
  let a = 0;
  let z = bytes.length - 1;
  while (a <= z && isJsonSpace(bytes[a])) a++;
  while (z >= a && isJsonSpace(bytes[z])) z--;
  return z > a && bytes[a] === OPEN_BRACE && bytes[z] === CLOSE_BRACE;
}

/**
 * Splits a log into items. A last line without its newline is a problem (torn or appended by hand) and
 * is not an item. Consecutive lines that cannot be part of the chain (not JSON objects, or unsigned and
 * not linking to the line before) become one item, a run; a line that is not even shaped like an object
 * is neither parsed nor hashed unless it ends its run. So the state kept grows with the entries and the
 * lines that link in, not with every line (a flood of empty lines is one item).
 * @param data the whole JSONL file's bytes (checked exactly).
 */
export function parseItems(data: Buffer, key: KeyObject, problems: Problem[]): Item[] {
  const items: Item[] = [];
  // The pending run of lines that are not entries: its first line, length, last line's bytes, and the
  // item for its one line when it is a single line (kept whole, as any other line).
  let run: { line: number; span: number; last: Buffer; single: Item | undefined; objects: number; empty: boolean } | undefined;
  const flush = () => {
    if (!run) return;
    if (run.span === 1) items.push(run.single ?? { ...unreadable(run.last, run.line), empty: run.empty });
    else {
      const object = run.objects === run.span ? true : run.objects === 0 ? false : undefined;
      items.push({
        line: run.line,
        span: run.span,
        hash: sha256Hex(run.last),
        object,
        empty: run.empty,
        signed: false,
        sigOk: false,
        seq: undefined,
        prev: undefined,
      });
    }
    run = undefined;
  };
  // The line before (undefined at the start, where a first entry's prev is GENESIS_PREV, not a hash).
  let lastBytes: Buffer | undefined;
  let line = 0;
  let start = 0;
  while (start < data.length) {
    const nl = data.indexOf(NEWLINE, start);
    if (nl < 0) {
      flush();
      problems.push({ kind: 'edited', line: line + 1, message: 'the last line has no newline: torn or appended by hand' });
      break;
    }
    const bytes = data.subarray(start, nl);
    start = nl + 1;
    line++;
    const item = mayBeObject(bytes) ? readLine(bytes, line, key) : undefined;
    // An unsigned line that links to the line before may be forged (it continues the chain): kept apart.
    if (item && (item.signed || (item.prev !== undefined && HEX64.test(item.prev) && item.prev === (lastBytes ? sha256Hex(lastBytes) : GENESIS_PREV)))) {
      flush();
      items.push(item);
    } else if (run) {
      run.span++;
      run.last = bytes;
      run.single = undefined;
      run.objects += item ? 1 : 0;
      run.empty &&= bytes.length === 0;
    } else run = { line, span: 1, last: bytes, single: item, objects: item ? 1 : 0, empty: bytes.length === 0 };
    lastBytes = bytes;
  }
  flush();
  return items;
}

/** The number of whole lines the items stand for. */
export function lineCount(items: Item[]): number {
  const last = items.at(-1);
  return last ? last.line + last.span - 1 : 0;
}

/** A line that is not a JSON object. */
function unreadable(bytes: Buffer, line: number): Item {
  return { line, span: 1, hash: sha256Hex(bytes), object: false, signed: false, sigOk: false, seq: undefined, prev: undefined };
}

function readLine(bytes: Buffer, line: number, key: KeyObject): Item {
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
  if (!entry) return unreadable(bytes, line);
  const hash = sha256Hex(bytes);
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
  return { line, span: 1, hash, object: true, signed, sigOk: signed && flaw === undefined, flaw, seq, prev };
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
