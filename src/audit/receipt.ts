/**
 * Receipt format (version 1): what an executed write leaves behind, one per call, so that anyone holding
 * audit.pub can check who confirmed what, when and how, and find the audit entry that records it
 * (decision 0018, "Receipts"). The file is RFC 8785 canonical JSON of the receipt with its `sig`, then one
 * newline:
 *
 *   { "v":1, "type":"lookfirst-receipt", "id":"rc_…", "call_id", "who":{…}, "what":{…}, "when":{…},
 *     "how":{…}, "checks":[{name, ok, detail?}], "outcome":{…}, "audit":{ "seq", "entry_sha256", "event" },
 *     "key":"lookfirst/<8 hex>", "sig":"<base64>" }
 *
 * `sig` is Ed25519 (the audit key, the same that signs the log) over the canonical JSON of the receipt
 * without `sig`. `audit.entry_sha256` is SHA-256 of the linked entry's line (what the next entry's `prev`
 * holds), `audit.seq` its seq. Arguments appear only as `args_sha256`. Pure: no file, clock or randomness
 * (file I/O is audit/receipts.ts; checking against a log is audit/verify/receipt.ts).
 * @see https://www.rfc-editor.org/rfc/rfc8785
 */
import { type KeyObject, verify } from 'node:crypto';
import type { CheckResult, Evidence, Trust } from '../types.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { decodeBase64Canonical } from './verify/encoding.js';

/** Format version written in every receipt. */
export const RECEIPT_VERSION = 1;
/** The `type` of every receipt, so that a receipt is never taken for another signed JSON document. */
export const RECEIPT_TYPE = 'lookfirst-receipt';

/** Who confirmed: the channel and actor as logged in the `approval` entry, and the user and device when known. */
export interface ReceiptWho {
  channel: string;
  actor: string;
  trust: Trust;
  user?: string;
  device?: string;
  /** The gate replica whose page or webhook took the decision. */
  replica?: string;
}

/** What ran: the tool as exposed and upstream, the SHA-256 (hex) of its canonical arguments, the card text shown. */
export interface ReceiptWhat {
  tool: string;
  upstream: string;
  upstream_tool: string;
  args_sha256: string;
  /** The card or question text the person was shown (absent when nobody was asked: a rule). */
  shown?: string;
}

/** When, as ISO 8601 UTC with milliseconds: proposed (call_received), shown, confirmed, executed (its entry). */
export interface ReceiptWhen {
  proposed?: string;
  shown?: string;
  confirmed: string;
  executed: string;
}

/**
 * How it was confirmed (Evidence.method), with the voice transcript and audio fingerprint, and the evidence
 * ref. `first` is a high-risk call's first yes (Evidence.first) when the method is its second.
 */
export interface ReceiptHow {
  method: Evidence['method'];
  evidence_ref?: string;
  card_set?: string;
  transcript?: string;
  audio_sha256?: string;
  first?: { method: 'tap' | 'voice'; transcript?: string; audio_sha256?: string; confirmed: string };
}

/** How the execution ended: the upstream's answer (`unknown` when none came) and the read-back, when known. */
export interface ReceiptOutcome {
  executed: 'ok' | 'upstream_error' | 'unknown';
  readback?: 'ok' | 'failed' | 'unclear' | 'none';
}

/** The audit entry this receipt belongs to: `executed`, or `execution_failed` when no answer came. */
export interface ReceiptLink {
  seq: number;
  entry_sha256: string;
  event: 'executed' | 'execution_failed';
}

/** A receipt without its signature (what is signed). */
export interface ReceiptBody {
  v: typeof RECEIPT_VERSION;
  type: typeof RECEIPT_TYPE;
  /** `rc_` + 16 hex, derived from the call id and its entry hash (stable: the same call gives the same id). */
  id: string;
  call_id: string;
  who: ReceiptWho;
  what: ReceiptWhat;
  when: ReceiptWhen;
  how: ReceiptHow;
  /** Every check by name, in the order run: the decision's, then those run before execution. */
  checks: CheckResult[];
  outcome: ReceiptOutcome;
  audit: ReceiptLink;
  /** The signing key's note name (`lookfirst/<8 hex>`), as audit.pub names it. */
  key: string;
}

/** A signed receipt. */
export interface Receipt extends ReceiptBody {
  /** Ed25519 signature (standard base64, 64 bytes) over the canonical JSON of the body. */
  sig: string;
}

/** The receipt id of a call: `rc_` + the first 16 hex of SHA-256 over the call id and its entry hash. */
export function receiptIdOf(callId: string, entrySha256: string): string {
  return `rc_${sha256Hex(`${callId}\n${entrySha256}`).slice(0, 16)}`;
}

/** Milliseconds since the epoch as ISO 8601 UTC with milliseconds (`2026-12-02T01:33:46.123Z`). */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The bytes of a signed receipt as written to its file: canonical JSON with `sig`, then a newline.
 * @param sign signs the canonical body bytes with the audit key (AuditLog.signDetached).
 * @throws TypeError when the body holds a value that is not JSON (undefined fields are dropped first).
 */
export function encodeReceipt(body: ReceiptBody, sign: (bytes: Uint8Array) => Buffer): string {
  const clean = JSON.parse(JSON.stringify(body)) as ReceiptBody;
  const sig = sign(Buffer.from(canonicalJson(clean), 'utf8')).toString('base64');
  return `${canonicalJson({ ...clean, sig })}\n`;
}

/** SHA-256 (hex) of a receipt file's bytes: what `receipt_issued` names. */
export function receiptSha256(bytes: string | Uint8Array): string {
  return sha256Hex(bytes);
}

/**
 * A receipt read back from its bytes, or every reason it is not one. `canonical` false: it has a
 * receipt's shape, but its bytes are not the form a receipt is written in (they were changed since).
 */
export type ParsedReceipt = { ok: true; receipt: Receipt; canonical: boolean } | { ok: false; problems: string[] };

/**
 * Reads a receipt's bytes and checks its shape: JSON, version 1, every required field of its type, and
 * whether the bytes are exactly the canonical form this format writes. Hostile input: anything
 * unexpected is a problem, listed.
 */
export function parseReceipt(bytes: Uint8Array): ParsedReceipt {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, problems: ['it is not UTF-8 text'] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [`it is not JSON (${(err as Error).message})`] };
  }
  const problems = shapeProblems(value);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, receipt: value as Receipt, canonical: `${canonicalJson(value)}\n` === text };
}

/**
 * Checks a receipt's signature against the audit public key. Pure; false for anything malformed and for a
 * `sig` that is not the canonical base64 of 64 bytes.
 */
export function verifyReceiptSignature(receipt: Receipt, key: KeyObject): boolean {
  const { sig, ...body } = receipt;
  const bytes = typeof sig === 'string' ? decodeBase64Canonical(sig) : undefined;
  if (bytes?.length !== 64) return false;
  try {
    return verify(null, Buffer.from(canonicalJson(body), 'utf8'), key, bytes);
  } catch {
    return false;
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const METHODS = new Set(['tap', 'voice', 'page', 'webhook', 'terminal', 'elicitation', 'operator', 'rule']);

/** Every way a parsed value differs from a v1 receipt's shape (empty when it has it). */
function shapeProblems(v: unknown): string[] {
  const out: string[] = [];
  const obj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!obj(v)) return ['it is not a JSON object'];
  const need = (cond: boolean, what: string) => {
    if (!cond) out.push(what);
  };
  const str = (x: unknown) => typeof x === 'string' && x.length > 0;
  const optStr = (x: unknown) => x === undefined || typeof x === 'string';
  need(v.v === RECEIPT_VERSION, `its version is ${JSON.stringify(v.v)}, not ${RECEIPT_VERSION}`);
  need(v.type === RECEIPT_TYPE, `its type is not "${RECEIPT_TYPE}"`);
  need(typeof v.id === 'string' && /^rc_[0-9a-f]{16}$/.test(v.id), 'its id is not rc_ and 16 hex digits');
  need(str(v.call_id), 'it has no call_id');
  need(str(v.key), 'it names no key');
  need(typeof v.sig === 'string', 'it has no signature (sig)');
  const who = v.who;
  need(
    obj(who) && str(who.channel) && str(who.actor) && str(who.trust) && optStr(who.user) && optStr(who.device),
    'its "who" is not { channel, actor, trust, user?, device? }',
  );
  const what = v.what;
  need(
    obj(what) &&
      str(what.tool) &&
      str(what.upstream) &&
      str(what.upstream_tool) &&
      typeof what.args_sha256 === 'string' &&
      HEX64.test(what.args_sha256) &&
      optStr(what.shown),
    'its "what" is not { tool, upstream, upstream_tool, args_sha256 (64 hex), shown? }',
  );
  const when = v.when;
  const time = (x: unknown) => typeof x === 'string' && ISO.test(x);
  need(
    obj(when) &&
      time(when.confirmed) &&
      time(when.executed) &&
      (when.proposed === undefined || time(when.proposed)) &&
      (when.shown === undefined || time(when.shown)),
    'its "when" is not ISO 8601 UTC times { proposed?, shown?, confirmed, executed }',
  );
  const how = v.how;
  need(
    obj(how) && typeof how.method === 'string' && METHODS.has(how.method) && optStr(how.transcript) && optStr(how.audio_sha256),
    'its "how" names no known method',
  );
  const checks = v.checks;
  need(
    Array.isArray(checks) && checks.every((c) => obj(c) && str(c.name) && typeof c.ok === 'boolean' && optStr(c.detail)),
    'its "checks" are not a list of { name, ok, detail? }',
  );
  const outcome = v.outcome;
  need(obj(outcome) && ['ok', 'upstream_error', 'unknown'].includes(outcome.executed as string), 'its "outcome" does not say how the execution ended');
  const audit = v.audit;
  need(
    obj(audit) &&
      Number.isSafeInteger(audit.seq) &&
      (audit.seq as number) >= 0 &&
      typeof audit.entry_sha256 === 'string' &&
      HEX64.test(audit.entry_sha256) &&
      (audit.event === 'executed' || audit.event === 'execution_failed'),
    'its "audit" link is not { seq, entry_sha256 (64 hex), event }',
  );
  return out;
}
