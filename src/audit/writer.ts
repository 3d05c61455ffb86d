/**
 * The audit log as the gate uses it. The file, the chain and the key live in a worker thread
 * (worker.ts → ChainWriter); this facade only queues and posts.
 *
 * Durability posture: `appendDurable` (anything about a write) posts every queued entry plus its own and
 * resolves only once the worker has fdatasynced them, so the entry is on disk before the write it records
 * proceeds. `appendLater` (allowed reads, security events) only queues: entries go to the worker in one
 * batched message at most every 50 ms, and are signed and written there, behind the read. A crash can lose that
 * last batch of read entries, never a write's. The head is refreshed at most every 100 ms and at close.
 */
import { type KeyObject, sign } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { type Clock, systemMonoClock } from '../clock.js';
import { startWorker } from '../core/worker.js';
import { type ErrorCode, LookfirstError } from '../errors.js';
import type { AppendedEntry } from './chain-writer.js';
import type { AuditFields } from './entry.js';
import type { NoteSigner } from './note.js';
import type { FromWorker, PostedEntry, ToWorker } from './worker-protocol.js';

export type { AppendedEntry } from './chain-writer.js';

export { CHAIN_EXTENSION, sidecarPaths } from './chain-writer.js';

/** The worker's answer to a durable batch: an error, or where its last entry landed. */
type Ack = { error?: string; seq?: number; hash?: string; ts?: number };

/** Longest the head may lag behind the log while the gate runs (ms). */
export const HEAD_INTERVAL_MS = 100;
/** Longest a read's entry waits in memory before it goes to the worker (ms). */
export const READ_BATCH_MS = 50;
/** A batch this large goes to the worker at once. */
export const READ_BATCH_MAX = 256;
/**
 * Fields that carry free text (an upstream's words, a person's comment, a method an upstream named):
 * masked under the privacy filter, then cut to {@link MAX_FREE_TEXT} characters (masking first: a value
 * cut in half is no longer recognisable).
 */
const FREE_TEXT_FIELDS = ['reason', 'error', 'detail', 'comment', 'taint', 'method'] as const;
/** Longest free-text field written (UTF-16 code units), with an ellipsis when cut. */
export const MAX_FREE_TEXT = 500;

/** Options for opening a log. */
export interface AuditLogOptions {
  logPath: string;
  signer: NoteSigner;
  clock: Clock;
  /** Called with a sentence for the operator (stderr in the CLI). */
  warn: (message: string) => void;
  /** The command that verifies this log, named in the errors at open (ChainWriterOptions.verifyCommand). */
  verifyCommand?: string;
}

/** An open, locked audit log, written by a worker thread. */
export class AuditLog {
  private queue: PostedEntry[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private nextAck = 1;
  private readonly acks = new Map<number, (ack: Ack) => void>();
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly opts: AuditLogOptions,
    /** Entries in the log when it was opened. */
    readonly sizeAtOpen: number,
    /** Tools the log says must start blocked (see ChainWriter.interlockAtOpen). */
    readonly blockedAtOpen: [string, { sinceMs: number; reason: string; callId: string }][] = [],
  ) {
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'ack') {
        this.acks.get(m.id)?.(m);
        this.acks.delete(m.id);
      } else if (m.type === 'warn') opts.warn(m.message);
    });
    worker.on('error', (err) => this.failAll(`the audit worker crashed: ${err.message}`));
    worker.on('exit', () => this.failAll('the audit worker stopped'));
  }

  /**
   * Opens (creating if needed) and locks a log, recovering its state.
   * @throws LookfirstError `AUDIT_LOCKED` when another live gate holds the lock; `AUDIT_LOG_UNREADABLE`
   *   when the log cannot be read or does not chain.
   */
  static async open(opts: AuditLogOptions): Promise<AuditLog> {
    const workerData = {
      logPath: opts.logPath,
      key: opts.signer.key satisfies KeyObject,
      keyId: opts.signer.keyId,
      name: opts.signer.name,
      headIntervalMs: HEAD_INTERVAL_MS,
      verifyCommand: opts.verifyCommand,
    };
    const worker = startWorker(import.meta.url, 'worker', workerData);
    const first = await new Promise<FromWorker>((resolve, reject) => {
      const onMessage = (m: FromWorker) => {
        if (m.type === 'warn') return opts.warn(m.message);
        worker.off('message', onMessage);
        resolve(m);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    if (first.type === 'opened') return new AuditLog(worker, opts, first.size, first.blocked);
    await worker.terminate();
    if (first.type === 'failed') throw new LookfirstError(first.code as ErrorCode, first.message);
    throw new LookfirstError('AUDIT_LOG_UNREADABLE', `unexpected message from the audit worker: ${first.type}`);
  }

  /**
   * Queues an entry to be written behind the current work. Never waits for disk.
   * @param hashArgs arguments whose `args_sha256` the worker computes (keeps hashing off the hot path).
   */
  appendLater(fields: AuditFields, hashArgs?: unknown): void {
    if (this.closed) return;
    fields = this.filtered(fields);
    this.queue.push(hashArgs === undefined ? { ts: this.opts.clock.nowMs(), fields } : { ts: this.opts.clock.nowMs(), fields, hashArgs });
    // Batching wakes the worker a few times a second instead of once per read: on a small machine the
    // wake-ups, not the signatures, are what a read would otherwise pay for.
    if (this.queue.length >= READ_BATCH_MAX) this.flush();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), READ_BATCH_MS);
  }

  /**
   * Writes an entry after everything queued before it; resolves once it is on disk.
   * @returns where it landed: its seq, line hash and ts (what a receipt links to; callers may ignore it).
   * @throws LookfirstError `AUDIT_WRITE_FAILED` when it could not be written: the caller must not proceed.
   */
  async appendDurable(fields: AuditFields): Promise<AppendedEntry> {
    if (this.closed) throw new LookfirstError('AUDIT_WRITE_FAILED', 'the audit log is closed');
    const entries = [...this.take(), { ts: this.opts.clock.nowMs(), fields: this.filtered(fields) }];
    const observe = this.appendObserver;
    const ack = observe ? await this.timed(observe, entries) : await this.post((ackId) => ({ type: 'batch', entries, ackId }));
    // Its own entry is the batch's last, so the worker's answer names it.
    if (ack.seq === undefined || ack.hash === undefined || ack.ts === undefined)
      throw new LookfirstError('AUDIT_WRITE_FAILED', 'the audit worker did not say where the entry landed');
    return { seq: ack.seq, hash: ack.hash, ts: ack.ts };
  }

  /**
   * Signs bytes with the log's own Ed25519 key, for documents that link to the log and are checked against
   * audit.pub (receipts: audit/receipt.ts). The key itself never leaves the log.
   * @returns the signature (64 bytes) and the key's note name (`lookfirst/<8 hex>`).
   */
  signDetached(bytes: Uint8Array): { sig: Buffer; keyName: string } {
    return { sig: sign(null, bytes, this.opts.signer.key), keyName: this.opts.signer.name };
  }

  /** The note name of the log's key (`lookfirst/<8 hex>`), as audit.pub names it. */
  get keyName(): string {
    return this.opts.signer.name;
  }

  /** Says a sentence to the operator (stderr in the CLI), as the log's own warnings are said. */
  warn(message: string): void {
    this.opts.warn(message);
  }

  /**
   * Masks the free-text fields of every entry from now on (the privacy filter: `privacy.forLog`), so that
   * an upstream's error message or a read-back detail does not carry private values into the log.
   * Identifiers, hashes, names of tools and who approved are not free text and are kept.
   */
  setTextFilter(filter: (text: string) => string): void {
    this.textFilter = filter;
  }

  private textFilter: ((text: string) => string) | undefined;

  /**
   * Tells `observe` how long each durable append took (ms, from the call to the worker's fdatasync
   * acknowledgement) and whether it was written: the gate's metrics (gateway/metrics.ts). Queued appends
   * (`appendLater`) are not timed: nothing waits for them.
   */
  setAppendObserver(observe: (ms: number, ok: boolean) => void): void {
    this.appendObserver = observe;
  }

  private appendObserver: ((ms: number, ok: boolean) => void) | undefined;

  private async timed(observe: (ms: number, ok: boolean) => void, entries: PostedEntry[]): Promise<Ack> {
    const t0 = systemMonoClock.monoMs();
    try {
      const ack = await this.post((ackId) => ({ type: 'batch', entries, ackId }));
      observe(systemMonoClock.monoMs() - t0, true);
      return ack;
    } catch (err) {
      observe(systemMonoClock.monoMs() - t0, false);
      throw err;
    }
  }

  /**
   * A view of this log for one client session: its entries' free text passes `filter` first (the
   * session's own hidden values, which the gate-wide filter cannot know), then the log's own filter.
   * Everything else is this log.
   */
  withTextFilter(filter: (text: string) => string): AuditLog {
    const view = Object.create(this) as AuditLog;
    view.appendLater = (fields, hashArgs) => this.appendLater(filterFields(fields, filter), hashArgs);
    view.appendDurable = (fields) => this.appendDurable(filterFields(fields, filter));
    return view;
  }

  /** The log's own filter (the gate's privacy filter, when on), then the length limit. */
  private filtered(fields: AuditFields): AuditFields {
    const filter = this.textFilter;
    return filterFields(fields, (v) => {
      const shown = filter ? filter(v) : v;
      return shown.length > MAX_FREE_TEXT ? `${shown.slice(0, MAX_FREE_TEXT - 1)}…` : shown;
    });
  }

  /** Flushes everything, writes the final head, releases the lock, stops the worker. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    const done = this.post((ackId) => ({ type: 'close', ackId }));
    this.closed = true;
    try {
      await done;
    } finally {
      await this.worker.terminate();
    }
  }

  private take(): PostedEntry[] {
    const q = this.queue;
    this.queue = [];
    return q;
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.queue.length > 0 && !this.closed) this.send({ type: 'batch', entries: this.take() });
  }

  private post(make: (ackId: number) => ToWorker): Promise<Ack> {
    const id = this.nextAck++;
    return new Promise((resolve, reject) => {
      this.acks.set(id, (ack) => (ack.error ? reject(new LookfirstError('AUDIT_WRITE_FAILED', ack.error)) : resolve(ack)));
      this.send(make(id));
    });
  }

  /**
   * Posts to the worker. A batch the structured clone cannot carry (arguments nested too deep) is sent
   * again with those arguments left out; never throws for a batch, since it runs from a timer.
   */
  private send(m: ToWorker): void {
    try {
      this.worker.postMessage(m);
      return;
    } catch (err) {
      if (m.type !== 'batch') throw new LookfirstError('AUDIT_WRITE_FAILED', `cannot reach the audit worker: ${(err as Error).message}`);
    }
    // Keep the hash of every entry that can travel alone; mark the others (checked in the same wrapping).
    const entries = m.entries.map((e) => {
      try {
        structuredClone({ type: 'batch', entries: [e] });
        return e;
      } catch {
        return withoutArgs(e);
      }
    });
    try {
      this.worker.postMessage({ ...m, entries });
    } catch {
      // Nesting just under the limit can pass alone and fail in the batch: send none of the arguments.
      this.postStripped(m);
    }
  }

  private postStripped(m: ToWorker & { type: 'batch' }): void {
    try {
      this.worker.postMessage({ ...m, entries: m.entries.map(withoutArgs) });
    } catch (err) {
      this.opts.warn(`audit: could not hand ${m.entries.length} entries to the audit worker: ${(err as Error).message}`);
      if (m.ackId !== undefined) this.acks.get(m.ackId)?.({ error: `cannot hand the entry to the audit worker: ${(err as Error).message}` });
    }
  }

  private failAll(reason: string): void {
    this.closed = true;
    for (const ack of this.acks.values()) ack({ error: reason });
    this.acks.clear();
  }
}

/** An entry with its arguments replaced by the mark that they could not be hashed. */
function withoutArgs(e: PostedEntry): PostedEntry {
  return e.hashArgs === undefined ? e : { ts: e.ts, fields: { ...e.fields, args_sha256: 'unhashable' } };
}

/** The fields with `filter` applied to their free text (a copy when anything changed). */
function filterFields(fields: AuditFields, filter: (text: string) => string): AuditFields {
  let out: Record<string, unknown> | undefined;
  const f = fields as unknown as Record<string, unknown>;
  for (const k of FREE_TEXT_FIELDS) {
    const v = f[k];
    if (typeof v !== 'string') continue;
    const masked = filter(v);
    if (masked === v) continue;
    out ??= { ...f };
    out[k] = masked;
  }
  return (out ?? fields) as AuditFields;
}
