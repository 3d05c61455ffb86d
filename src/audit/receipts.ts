/**
 * Writes signed receipts (format: audit/receipt.ts) to the receipts folder (`audit.receipts`), one file
 * per call, `<call id>.json`. A receipt is public evidence (no arguments, only their hash), so files are
 * 0644 in a 0755 folder. Each is written to a temp file, synced and renamed over, so a reader never sees
 * half a receipt; an existing receipt is never overwritten (a call executes once).
 */
import { closeSync, existsSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { encodeReceipt, type ReceiptBody, receiptSha256 } from './receipt.js';

/** What issuing a receipt gives back: where it is and the SHA-256 of its bytes (for `receipt_issued`). */
export interface IssuedReceipt {
  path: string;
  sha256: string;
}

/** Call ids become file names: only these characters, so a call id can never name a path elsewhere. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Signs a receipt and writes it to `<dir>/<call id>.json` (folder created 0755, file 0644, temp + rename).
 * @param sign signs bytes with the audit key (AuditLog.signDetached).
 * @throws Error when the call id is not a safe file name, a receipt for the call exists already, or the
 *   folder or file cannot be written (the message names the path).
 */
export function writeReceipt(dir: string, body: ReceiptBody, sign: (bytes: Uint8Array) => Buffer): IssuedReceipt {
  if (!SAFE_NAME.test(body.call_id)) throw new Error(`the call id ${JSON.stringify(body.call_id.slice(0, 40))} cannot name a receipt file`);
  const text = encodeReceipt(body, sign);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const path = join(dir, `${body.call_id}.json`);
  if (existsSync(path)) throw new Error(`${path} exists already: a call has one receipt`);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', 0o644);
    try {
      const bytes = Buffer.from(text, 'utf8');
      let done = 0;
      while (done < bytes.length) {
        const n = writeSync(fd, bytes, done, bytes.length - done);
        if (n <= 0) throw new Error(`short write: ${done} of ${bytes.length} bytes`);
        done += n;
      }
      // Public evidence, whatever the gate's umask (which would narrow the mode given to open).
      fchmodSync(fd, 0o644);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new Error(`cannot write the receipt ${path}: ${(err as Error).message}`, { cause: err });
  }
  return { path, sha256: receiptSha256(text) };
}
