/**
 * The check a gate runs on an existing log before it appends to it (ChainWriter at start), and the one
 * `promote LOG` holds a log it replays to: one function, so the two cannot drift apart. Stricter on
 * structure than verifyLog, and it stops at the first problem:
 * - every line continues the chain exactly: its number is its position, its `prev` the hash of the line
 *   before (so no entry of another log under the same key, spliced in past a lagging head, passes);
 * - the head is a checkpoint signed by the given key (the gate's own), and the log matches it: not cut,
 *   same Merkle root and chain tip over the entries it covers;
 * - every entry past the head is signed by that key, in exactly the canonical bytes the gate writes;
 * - a log with entries has a head (without one, a cut at the end cannot be seen).
 * Bytes after the last newline (a torn write) are not checked: `end` says where the whole lines end, and
 * the caller decides (the gate quarantines them; promote refuses them through verifyLog).
 * Pure: the log's bytes and the head's text in, a result out.
 */
import { canonicalJson, sha256Hex } from '../canonical.js';
import { GENESIS_PREV, verifyEntrySignature } from '../entry.js';
import { CompactTree, EMPTY_ROOT, leafHash } from '../merkle.js';
import { type NoteVerifier, openNote, parseCheckpoint } from '../note.js';

/** Extension line carrying the hash-chain tip inside the checkpoint. */
const CHAIN_EXTENSION = 'lookfirst-chain';

/** Why a log may not be appended to. */
export type AppendProblem =
  /** The head is not a checkpoint signed by the key. */
  | { kind: 'head'; detail: string }
  /** A line (1-based) is damaged; `what` completes "line N …". */
  | { kind: 'line'; line: number; what: string }
  /** The log has `size` entries and no head. */
  | { kind: 'unheaded'; size: number };

/** The chain's state after the last whole line: what the next entry continues. */
export interface AppendState {
  /** Entries (whole lines). */
  size: number;
  /** SHA-256 (hex) of the last line: the next entry's `prev`. */
  tip: string;
  /** RFC 6962 tree over the lines. */
  tree: CompactTree;
  /** Byte offset where the whole lines end (a torn tail follows when it is short of the length). */
  end: number;
}

/** Result of checkBeforeAppend. */
export type AppendCheck = ({ ok: true } & AppendState) | { ok: false; problem: AppendProblem };

/**
 * Checks a log before anything is appended to it (see the module header for what is checked).
 * @param data the log file's bytes.
 * @param headNote the head sidecar's text, or undefined when there is none.
 * @param verifier the key the appender signs with (its public half).
 * @param onEntry called with each entry in order (the gate replays its interlock from them).
 */
export function checkBeforeAppend(
  data: Uint8Array,
  headNote: string | undefined,
  verifier: NoteVerifier,
  onEntry?: (entry: Record<string, unknown>) => void,
): AppendCheck {
  let head: { size: number; root: Buffer; chain: string | undefined } | undefined;
  if (headNote !== undefined) {
    const opened = openNote(headNote, verifier);
    const cp = opened.ok ? parseCheckpoint(opened.text) : undefined;
    if (!cp) return { ok: false, problem: { kind: 'head', detail: opened.ok ? 'not a checkpoint' : opened.reason } };
    const chain = cp.extensions.find((e) => e.startsWith(`${CHAIN_EXTENSION} `))?.slice(CHAIN_EXTENSION.length + 1);
    head = { size: cp.size, root: cp.root, chain };
  }
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const end = bytes.lastIndexOf(0x0a) + 1;
  const tree = new CompactTree();
  let seq = 0;
  let tip = GENESIS_PREV;
  let rootAtHead: Buffer | undefined;
  let tipAtHead: string | undefined;
  const fail = (line: number, what: string): AppendCheck => ({ ok: false, problem: { kind: 'line', line, what } });
  // Line by line over the bytes: a log larger than the biggest string Node can hold still replays.
  for (let start = 0; start < end; ) {
    const nl = bytes.indexOf(0x0a, start);
    const line = bytes.subarray(start, nl);
    start = nl + 1;
    let entry: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(line.toString('utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return fail(seq + 1, 'is not a JSON object');
      entry = parsed as Record<string, unknown>;
    } catch {
      return fail(seq + 1, 'is not JSON');
    }
    if (entry.seq !== seq || entry.prev !== tip) return fail(seq + 1, 'does not continue the hash chain');
    tip = sha256Hex(line);
    tree.appendLeafHash(leafHash(line));
    seq++;
    onEntry?.(entry);
    if (head && seq === head.size) [rootAtHead, tipAtHead] = [tree.root(), tip];
    // Entries the head does not cover yet are vouched for by their signatures alone: check them, and
    // that their bytes are the canonical ones (the head's Merkle root pins the bytes of the others).
    if (head && seq > head.size) {
      if (!verifyEntrySignature(entry, verifier.key)) return fail(seq, "is not signed by this gate's key");
      if (!isCanonical(entry, line)) return fail(seq, 'is not in the canonical encoding the gate writes');
    }
  }
  if (head) {
    // The head was signed by this key: a log that no longer matches it was cut or rewritten since.
    if (head.size > seq) return fail(seq + 1, `ends after ${seq} entries, but its signed head records ${head.size}: entries were removed`);
    const root = head.size === 0 ? EMPTY_ROOT : rootAtHead;
    const tipThen = head.size === 0 ? GENESIS_PREV : tipAtHead;
    if (!root?.equals(head.root) || tipThen !== head.chain) return fail(head.size, 'does not match its signed head');
  } else if (seq > 0) return { ok: false, problem: { kind: 'unheaded', size: seq } };
  return { ok: true, size: seq, tip, tree, end };
}

function isCanonical(entry: Record<string, unknown>, line: Buffer): boolean {
  try {
    return Buffer.from(canonicalJson(entry), 'utf8').equals(line);
  } catch {
    return false;
  }
}
