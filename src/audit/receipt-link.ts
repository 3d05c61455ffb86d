/**
 * Checks that a receipt (audit/receipt.ts) belongs to a log: its entry is there at its seq with its hash,
 * for its call, signed by the log's key, and a `receipt_issued` entry names the receipt's SHA-256. Pure: it
 * reads bytes it is given. It does not judge the whole log (signatures of every line, the chain, the head):
 * that is verify-log's job, which `receipt verify` runs beside it.
 */
import type { KeyObject } from 'node:crypto';
import { sha256Hex } from './canonical.js';
import { verifyEntrySignature } from './entry.js';
import type { Receipt } from './receipt.js';

/** One named problem of the link, in words for a person. */
export interface LinkProblem {
  /** `entry_missing`, `entry_changed`, `entry_other_call`, `entry_unsigned`, `not_issued`. */
  name: 'entry_missing' | 'entry_changed' | 'entry_other_call' | 'entry_unsigned' | 'not_issued';
  message: string;
}

/**
 * Every problem with the receipt's link to the log (empty when it holds).
 * @param log the log's bytes as on disk (JSONL, one entry a line).
 * @param receiptSha SHA-256 (hex) of the receipt file's bytes.
 * @param key the audit public key the log's entries are signed with.
 */
export function checkReceiptLink(receipt: Receipt, receiptSha: string, log: Uint8Array, key: KeyObject): LinkProblem[] {
  const lines = Buffer.from(log).toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const { seq, entry_sha256: want } = receipt.audit;
  const out: LinkProblem[] = [];
  // In a log one gate wrote, line i holds seq i; anything else (a merged or cut log) is searched by seq.
  let line = lines[seq];
  if (line === undefined || seqOf(line) !== seq) line = lines.find((l) => seqOf(l) === seq);
  if (line === undefined)
    out.push({ name: 'entry_missing', message: `its audit entry (seq ${seq}) is missing from the log (the log has ${lines.length} entries)` });
  else if (sha256Hex(line) !== want)
    out.push({
      name: 'entry_changed',
      message: `its audit entry (seq ${seq}) is missing from the log: the entry there has another hash (${sha256Hex(line).slice(0, 16)}…, the receipt says ${want.slice(0, 16)}…): another log, or an entry that was changed`,
    });
  else {
    const entry = parse(line) ?? {};
    if (entry.event !== receipt.audit.event || entry.call_id !== receipt.call_id || entry.tool !== receipt.what.tool)
      out.push({
        name: 'entry_other_call',
        message: `its audit entry (seq ${seq}) is a "${String(entry.event)}" entry of call ${String(entry.call_id)}, not the ${receipt.audit.event} entry of call ${receipt.call_id}`,
      });
    if (!verifyEntrySignature(entry, key)) out.push({ name: 'entry_unsigned', message: `its audit entry (seq ${seq}) is not signed by the audit key` });
  }
  const issued = lines.some((l) => {
    const e = parse(l);
    return e?.event === 'receipt_issued' && e.receipt_sha256 === receiptSha && e.call_id === receipt.call_id && verifyEntrySignature(e, key);
  });
  if (!issued)
    out.push({
      name: 'not_issued',
      message: `no signed receipt_issued entry in the log names this receipt (SHA-256 ${receiptSha.slice(0, 16)}…): the receipt was not issued by this log's gate as it is now`,
    });
  return out;
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function seqOf(line: string): number | undefined {
  const v = parse(line)?.seq;
  return typeof v === 'number' ? v : undefined;
}
