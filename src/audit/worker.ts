/**
 * The audit worker thread: owns the ChainWriter (file, lock, chain state, key) so that canonical JSON,
 * SHA-256, Ed25519 and disk syncs run beside the gate's event loop, not on it. Messages from the main
 * thread arrive in order on one port, so entries are written in the order they were appended.
 */

import type { KeyObject } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { LookfirstError } from '../errors.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { ChainWriter, type PendingEntry } from './chain-writer.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

const { logPath, key, keyId, name, headIntervalMs, verifyCommand } = workerData as {
  logPath: string;
  verifyCommand?: string;
  key: KeyObject;
  keyId: Uint8Array;
  name: string;
  headIntervalMs: number;
};
const port = parentPort!;
const send = (m: FromWorker) => port.postMessage(m);

let writer: ChainWriter | undefined;
try {
  writer = ChainWriter.open({ logPath, signer: { name, keyId: Buffer.from(keyId), key }, warn: (message) => send({ type: 'warn', message }), verifyCommand });
  send({ type: 'opened', size: writer.size, blocked: writer.interlockAtOpen() });
} catch (err) {
  send({ type: 'failed', code: err instanceof LookfirstError ? err.code : 'AUDIT_LOG_UNREADABLE', message: (err as Error).message });
}

let headTimer: NodeJS.Timeout | undefined;
const scheduleHead = () => {
  if (headTimer) return;
  headTimer = setTimeout(() => {
    headTimer = undefined;
    try {
      writer?.writeHead();
    } catch (err) {
      send({ type: 'warn', message: `audit: could not refresh the head: ${(err as Error).message}` });
    }
  }, headIntervalMs);
};

port.on('message', (m: ToWorker) => {
  if (!writer) return;
  if (m.type === 'batch') {
    const entries: PendingEntry[] = m.entries.map((e) => ({
      ts: e.ts,
      fields: e.hashArgs === undefined ? e.fields : { ...e.fields, args_sha256: argsHash(e.hashArgs) },
    }));
    try {
      const last = writer.append(entries, m.ackId !== undefined);
      // After an entry about a write, the head follows at once: a crash then leaves no signed gap.
      if (m.ackId !== undefined) writer.writeHead();
      if (m.ackId !== undefined) send({ type: 'ack', id: m.ackId, seq: last?.seq, hash: last?.hash, ts: last?.ts });
    } catch (err) {
      if (m.ackId !== undefined) send({ type: 'ack', id: m.ackId, error: (err as Error).message });
      else send({ type: 'warn', message: `audit: could not write read entries: ${(err as Error).message}` });
    }
    scheduleHead();
  } else if (m.type === 'close') {
    if (headTimer) clearTimeout(headTimer);
    let error: string | undefined;
    try {
      writer.close();
    } catch (err) {
      error = (err as Error).message;
    }
    send({ type: 'ack', id: m.ackId, error });
    port.close();
  }
});

function argsHash(args: unknown): string {
  try {
    return sha256Hex(canonicalJson(args ?? {}));
  } catch {
    return 'unhashable';
  }
}
