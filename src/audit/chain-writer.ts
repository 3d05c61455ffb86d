/**
 * The synchronous core of the audit log: one writer per log (a lock file), append-only JSONL,
 * hash-chained and signed, with an RFC 6962 checkpoint in the head sidecar. It runs inside the audit
 * worker thread (see writer.ts), so signing and disk waits never sit on the gate's request path.
 *
 * `append(batch, durable)` signs and writes a batch in one write; with `durable` it fdatasyncs before
 * returning. `writeHead()` syncs the log first, then writes the head to a temp file and renames it over
 * the old one, so the head never covers more than is on disk. At open, the existing log is checked by
 * `checkBeforeAppend` (audit/verify/append-check.ts, the same check `promote` holds a replayed log to), and
 * a torn last line (no newline: a crash mid-write) is moved to `<log>.quarantine` with a warning, never
 * silently dropped.
 */
import { createPublicKey } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { LookfirstError } from '../errors.js';
import { sha256Hex } from './canonical.js';
import { type EntryFields, encodeEntry, GENESIS_PREV } from './entry.js';
import { releaseLock, takeLock } from './lock.js';
import { CompactTree, leafHash } from './merkle.js';
import { formatCheckpoint, type NoteSigner, signNote } from './note.js';
import { type AppendProblem, checkBeforeAppend } from './verify/append-check.js';
import { verifyLog } from './verify/verify.js';

/** Extension line carrying the hash-chain tip inside the checkpoint. */
export const CHAIN_EXTENSION = 'lookfirst-chain';

/** Where the log's sidecars live, derived from the log path. */
export function sidecarPaths(logPath: string): { head: string; lock: string; quarantine: string } {
  return { head: `${logPath}.head`, lock: `${logPath}.lock`, quarantine: `${logPath}.quarantine` };
}

/** Options for opening a log. */
export interface ChainWriterOptions {
  logPath: string;
  signer: NoteSigner;
  /** Called with a sentence for the operator (stderr in the CLI). */
  warn: (message: string) => void;
  /**
   * The command that verifies this log, named in the errors at open, e.g. `lookfirst verify-log --config
   * /etc/lf/lookfirst.yaml` (default `lookfirst verify-log`): the person is told exactly what to run.
   */
  verifyCommand?: string;
}

/** One entry to write: its time (ms) and fields. */
export interface PendingEntry {
  ts: number;
  fields: EntryFields;
}

/**
 * Where an entry landed: its `seq` (0-based, as written in the entry) and `hash`, the SHA-256 (hex) of its
 * line's bytes without the newline: the value the next entry's `prev` chains to, so verify-log recomputes it.
 * A receipt (audit/receipt.ts) links to its call's entry by both.
 */
export interface AppendedEntry {
  seq: number;
  hash: string;
  /** The entry's `ts` (ms since epoch). */
  ts: number;
}

/** An open, locked audit log (single-threaded core). */
export class ChainWriter {
  private fd: number;
  private seq = 0;
  private prev = GENESIS_PREV;
  private tree = new CompactTree();
  private headSize = -1;
  private closed = false;
  private readonly paths: ReturnType<typeof sidecarPaths>;
  /** Executions started and not resolved or blocked, by call id (replayed from the log). */
  private readonly started = new Map<string, { tool: string; ts: number }>();
  /** Tools blocked at the end of the log (replayed). */
  private readonly blockedTools = new Map<string, { sinceMs: number; reason: string; callId: string }>();

  private constructor(private readonly opts: ChainWriterOptions) {
    this.paths = sidecarPaths(opts.logPath);
    takeLock(this.paths.lock, opts.logPath, opts.warn);
    try {
      this.recover();
      this.fd = openSync(opts.logPath, 'a', 0o600);
    } catch (err) {
      releaseLock(this.paths.lock);
      throw err;
    }
  }

  /**
   * Opens (creating if needed) and locks a log, recovering its state (count, chain tip, Merkle tree).
   * @throws LookfirstError `AUDIT_LOCKED` when another live gate holds the lock; `AUDIT_LOG_UNREADABLE`
   *   when the log cannot be read or its lines do not chain (run `lookfirst verify-log`).
   */
  static open(opts: ChainWriterOptions): ChainWriter {
    return new ChainWriter(opts);
  }

  /**
   * Tools that must start blocked: an unresolved `execution_blocked`, or an `execution_started` with no
   * outcome after it (the gate stopped mid-execution).
   */
  interlockAtOpen(): [string, { sinceMs: number; reason: string; callId: string }][] {
    const out = new Map(this.blockedTools);
    for (const [callId, s] of this.started) {
      if (!out.has(s.tool)) out.set(s.tool, { sinceMs: s.ts, reason: 'the gate stopped while it was executing; its outcome is unknown', callId });
    }
    return [...out.entries()];
  }

  private replayInterlock(e: { event?: unknown; tool?: unknown; call_id?: unknown; reason?: unknown; ts?: unknown }): void {
    const tool = typeof e.tool === 'string' ? e.tool : undefined;
    const callId = typeof e.call_id === 'string' ? e.call_id : '';
    const ts = typeof e.ts === 'number' ? e.ts : 0;
    if (!tool) return;
    if (e.event === 'execution_started') this.started.set(callId, { tool, ts });
    else if (e.event === 'execution_resolved') this.started.delete(callId);
    else if (e.event === 'execution_blocked') {
      this.started.delete(callId);
      this.blockedTools.set(tool, { sinceMs: ts, reason: typeof e.reason === 'string' ? e.reason : 'blocked', callId });
    } else if (e.event === 'execution_unblocked') this.blockedTools.delete(tool);
  }

  /** Number of entries written. */
  get size(): number {
    return this.seq;
  }

  /**
   * Signs and writes a batch in one write; with `durable`, syncs it to disk before returning.
   * @returns the batch's last entry (seq, line hash, ts), or undefined for an empty batch.
   * @throws LookfirstError `AUDIT_WRITE_FAILED`; after a failed write the writer refuses every later
   *   batch, since its chain state would run ahead of the file.
   */
  append(batch: PendingEntry[], durable: boolean): AppendedEntry | undefined {
    if (this.closed) throw new LookfirstError('AUDIT_WRITE_FAILED', 'the audit log is closed');
    try {
      this.writeEntries(batch);
      if (durable) fdatasyncSync(this.fd);
      const last = batch.at(-1);
      return last ? { seq: this.seq - 1, hash: this.prev, ts: last.ts } : undefined;
    } catch (err) {
      this.closed = true;
      throw new LookfirstError('AUDIT_WRITE_FAILED', `cannot write the audit log ${this.opts.logPath}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Writes the final head, closes the file, releases the lock. Idempotent. */
  close(): void {
    if (this.fd < 0) return;
    try {
      if (!this.closed) this.writeHead();
    } finally {
      this.closed = true;
      closeSync(this.fd);
      this.fd = -1;
      releaseLock(this.paths.lock);
    }
  }

  private writeEntries(batch: PendingEntry[]): void {
    if (batch.length === 0) return;
    const lines: string[] = [];
    for (const { ts, fields } of batch) {
      const line = encodeEntry(fields, this.seq, ts, this.prev, this.opts.signer.key);
      lines.push(line);
      this.prev = sha256Hex(line);
      this.tree.appendLeafHash(leafHash(Buffer.from(line, 'utf8')));
      this.seq++;
    }
    // One write per batch: a crash tears at most the tail, which open() quarantines.
    writeFully(this.fd, Buffer.from(`${lines.join('\n')}\n`, 'utf8'));
  }

  /** Refreshes the head sidecar if entries were written since the last one. */
  writeHead(): void {
    if (this.closed || (this.headSize === this.seq && existsSync(this.paths.head))) return;
    fdatasyncSync(this.fd);
    const text = formatCheckpoint({
      origin: this.opts.signer.name,
      size: this.seq,
      root: this.tree.root(),
      extensions: [`${CHAIN_EXTENSION} ${this.prev}`],
    });
    const tmp = `${this.paths.head}.tmp`;
    const fd = openSync(tmp, 'w', 0o644);
    try {
      writeFully(fd, Buffer.from(signNote(text, this.opts.signer), 'utf8'));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.paths.head);
    this.headSize = this.seq;
  }

  /**
   * Checks the log as checkBeforeAppend does (the same check promote holds a replayed log to), restores
   * seq, chain tip and tree from it, and quarantines a torn last line.
   * @throws LookfirstError `AUDIT_LOG_UNREADABLE` naming the line, or the head, that does not check out.
   */
  private recover(): void {
    const path = this.opts.logPath;
    const headPath = this.paths.head;
    const verify = this.opts.verifyCommand ?? 'lookfirst verify-log';
    // A missing log is checked as an empty one against the head that remains: a head that vouched for
    // entries over a deleted log is a cut, never a fresh start (which would overwrite the head).
    const logMissing = !existsSync(path);
    if (logMissing && !existsSync(headPath)) return;
    const read = (file: string, what: (b: Buffer) => void) => {
      try {
        what(readFileSync(file));
      } catch (err) {
        throw new LookfirstError(
          'AUDIT_LOG_UNREADABLE',
          `cannot read ${file}: ${(err as Error).message}. The gate will not append to a log it cannot check: make it a readable file again, or run ${verify} to see what is wrong.`,
        );
      }
    };
    let data: Buffer = Buffer.alloc(0);
    let headNote: string | undefined;
    if (!logMissing) read(path, (b) => (data = b));
    if (existsSync(headPath)) read(headPath, (b) => (headNote = b.toString('utf8')));
    const signer = this.opts.signer;
    const verifier = { name: signer.name, keyId: signer.keyId, key: createPublicKey(signer.key) };
    const checked = checkBeforeAppend(data, headNote, verifier, (entry) => this.replayInterlock(entry));
    if (!checked.ok && logMissing && checked.problem.kind === 'line')
      throw new LookfirstError(
        'AUDIT_LOG_UNREADABLE',
        `${path} is missing, but its signed head ${headPath} still records entries: the log was deleted or moved, and starting afresh would overwrite the head and erase that history. Restore the log from a backup; to start a new log on purpose, move the head aside too (keep both as evidence). Run ${verify} to see what the head records.`,
      );
    if (!checked.ok) {
      // Name the line verify-log names: the append check stops where the chain first fails to continue
      // (after an edited line, the line that follows it); the verifier says which line was changed.
      const problem = checked.problem.kind === 'line' ? (verifierLine(data, headNote, verifier) ?? checked.problem) : checked.problem;
      throw appendRefused(path, headPath, problem, verify);
    }
    this.seq = checked.size;
    this.prev = checked.tip;
    this.tree = checked.tree;
    const end = checked.end;
    if (end < data.length) {
      const torn = data.subarray(end);
      appendFileSync(this.paths.quarantine, Buffer.concat([torn, Buffer.from('\n')]), { mode: 0o600 });
      const fd = openSync(path, 'r+');
      try {
        ftruncateSync(fd, end);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      this.opts.warn(`audit: ${path} ended in a torn line (${torn.length} bytes, likely a crash mid-write); moved it to ${this.paths.quarantine}`);
    }
    this.headSize = -1;
  }
}

/**
 * Writes every byte or throws. `writeSync` may write fewer bytes than asked (a full disk, a file size
 * limit); a short write must never pass for a whole entry.
 */
function writeFully(fd: number, bytes: Buffer): void {
  let done = 0;
  while (done < bytes.length) {
    const n = writeSync(fd, bytes, done, bytes.length - done);
    if (n <= 0) throw new Error(`short write: ${done} of ${bytes.length} bytes written`);
    done += n;
  }
}

/**
 * The first line verify-log reports for this log (the same 1-based line and message), or undefined when
 * it reports no line of the log itself.
 */
function verifierLine(
  data: Buffer,
  headNote: string | undefined,
  verifier: Parameters<typeof verifyLog>[1],
): { kind: 'line'; line: number; what: string } | undefined {
  const heads = headNote === undefined ? [] : [{ label: 'head sidecar', note: headNote }];
  const first = verifyLog(data, verifier, heads).problems.find((p) => p.kind !== 'key' && p.line > 0);
  return first && { kind: 'line', line: first.line, what: first.message };
}

/** The error for a log checkBeforeAppend refused, saying what to do next (`verify`: the command to run). */
function appendRefused(path: string, headPath: string, problem: AppendProblem, verify: string): LookfirstError {
  if (problem.kind === 'line')
    return new LookfirstError(
      'AUDIT_LOG_UNREADABLE',
      `${path} line ${problem.line}: ${problem.what}; the log is damaged. Run ${verify} to see every problem; the gate will not append to a broken chain.`,
    );
  if (problem.kind === 'head')
    return new LookfirstError(
      'AUDIT_LOG_UNREADABLE',
      `${headPath} is not a head signed by this gate's key (${problem.detail}). Run ${verify}; the gate will not append to a log it cannot vouch for.`,
    );
  // Without its head, a cut at the end cannot be seen: re-signing now would launder it.
  return new LookfirstError(
    'AUDIT_LOG_UNREADABLE',
    `${path} has ${problem.size} entries but no signed head (${headPath}): it was deleted, or the gate crashed before writing it. Run ${verify}; to start afresh, move the log aside (keep it as evidence).`,
  );
}
