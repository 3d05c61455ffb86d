/**
 * Audit entry format (version 1). One JSON object per line, itself RFC 8785 canonical JSON:
 *
 *   { "v":1, "seq":<0-based index>, "ts":<ms>, "event":"...", ...fields, "prev":"<hex>", "sig":"<base64>" }
 *
 * `sig` is Ed25519 over the canonical JSON of the entry without `sig`. `prev` is SHA-256 (hex) of the
 * previous line's bytes (64 zeros for the first), so the lines form a hash chain; the same line bytes are
 * the RFC 6962 Merkle leaves of the log's checkpoint. Arguments appear only as `args_sha256`, except in
 * `dry_run_recorded` entries, which keep a dry-run call's canonical arguments for `lookfirst promote`.
 * Pinned by test/audit-format.test.ts: change on purpose only.
 */
import { type KeyObject, sign, verify } from 'node:crypto';
import { canonicalJson } from './canonical.js';
import type { TypedAuditFields } from './events.js';
import { decodeBase64Canonical } from './verify/encoding.js';

/** Format version written in every entry. */
export const ENTRY_VERSION = 1;
/** `prev` of the first entry. */
export const GENESIS_PREV = '0'.repeat(64);

/** Every event the gate writes, and each one's fields (audit/events.ts). */
export type { AuditEvent } from './events.js';

/** Fields of an entry besides the envelope (`v`, `seq`, `ts`, `prev`, `sig`): a kind and exactly its fields. */
export type AuditFields = TypedAuditFields;

/** What the encoding takes: any kind, JSON values only (the writer's API takes only {@link AuditFields}). */
export type EntryFields = { event: string } & Record<string, string | number | boolean | null | undefined>;

/** An entry as written. */
export interface AuditEntry extends Record<string, unknown> {
  v: number;
  seq: number;
  ts: number;
  event: string;
  prev: string;
  sig: string;
}

/**
 * Builds and signs one line (without the newline).
 * @param fields event and its data; `undefined` values are omitted.
 */
export function encodeEntry(fields: EntryFields, seq: number, ts: number, prev: string, key: KeyObject): string {
  const body: Record<string, unknown> = { v: ENTRY_VERSION, seq, ts, prev };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body[k] = v;
  const signed = canonicalJson(body);
  const sig = sign(null, Buffer.from(signed, 'utf8'), key).toString('base64');
  return canonicalJson({ ...body, sig });
}

/**
 * Checks an entry's signature against a public key. Pure; false for anything malformed, and for a `sig`
 * that is not the canonical base64 of its 64 bytes (changed padding or unused bits would otherwise verify).
 */
export function verifyEntrySignature(entry: Record<string, unknown>, key: KeyObject): boolean {
  const { sig, ...body } = entry;
  if (typeof sig !== 'string') return false;
  const bytes = decodeBase64Canonical(sig);
  if (bytes?.length !== 64) return false;
  try {
    return verify(null, Buffer.from(canonicalJson(body), 'utf8'), key, bytes);
  } catch {
    return false;
  }
}
