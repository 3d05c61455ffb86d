/**
 * Canonical JSON (RFC 8785, JCS) and SHA-256, the two primitives every hash in lookfirst is built on.
 * `args_sha256` and every audit entry's signed bytes come from here, so they are the same on every machine.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * RFC 8785 canonical JSON of a JSON value.
 * @throws TypeError when the value is not JSON (undefined, a function, a bigint, a non-finite number).
 * @see https://www.rfc-editor.org/rfc/rfc8785
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value is not representable as JSON');
  return text;
}

/** SHA-256 of a UTF-8 string or bytes, as lowercase hex (64 characters). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of bytes as a Buffer (32 bytes). */
export function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}
