/** Messages between the gate's main thread and the audit worker (structured-clone safe). */
import type { EntryFields } from './entry.js';

/** One entry as posted: time (ms), fields, and optionally arguments whose args_sha256 the worker computes. */
export interface PostedEntry {
  ts: number;
  fields: EntryFields;
  hashArgs?: unknown;
}

/** Main → worker. A batch with `ackId` is durable: the worker fdatasyncs, then acknowledges. */
export type ToWorker = { type: 'batch'; entries: PostedEntry[]; ackId?: number } | { type: 'close'; ackId: number };

/** Worker → main. */
export type FromWorker =
  | { type: 'opened'; size: number; blocked: [string, { sinceMs: number; reason: string; callId: string }][] }
  | { type: 'failed'; code: string; message: string }
  /** `seq`/`hash`: the batch's last entry (chain-writer.ts AppendedEntry), on success. */
  | { type: 'ack'; id: number; error?: string; seq?: number; hash?: string; ts?: number }
  | { type: 'warn'; message: string };
