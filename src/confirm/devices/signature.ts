/**
 * Signed device requests (decision 0018, "Signed requests"; documented for third-party apps in
 * docs/device-api.md). Every device request but pairing and static files carries:
 *
 *     X-Lookfirst-Device:    <device id>
 *     X-Lookfirst-Timestamp: <ms since epoch, decimal>
 *     X-Lookfirst-Signature: base64url(HMAC-SHA256(key, signingString(...)))
 *
 * Security posture: fail closed. A request is accepted only when the device exists and is not revoked
 * (read from the store on every request, so a revocation holds on every replica at once), the timestamp
 * is within ±60 s of the gate's clock, the HMAC matches (constant-time comparison), and the signature was
 * never seen before (store `putIfAbsent`, kind `device-sig`, key = SHA-256 of the signature's bytes, kept 130 s:
 * longer than the window, so a replay inside the window always finds it). Anything missing, malformed or
 * unreadable is a 401 (403 only for a revoked device, with a sentence saying so).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Store } from '../../store/store.js';
import { type DeviceRecord, type DeviceRegistry, isDeviceId } from './registry.js';

/** First line of every signing string: the scheme and its version. */
export const SIGNATURE_SCHEME = 'LOOKFIRST-DEVICE-1';
/** How far a request's timestamp may be from the gate's clock, either way (ms). */
export const SIGNATURE_WINDOW_MS = 60_000;
/** How long a seen signature is remembered (ms): longer than the whole ±60 s window. */
export const SEEN_SIGNATURE_TTL_MS = 130_000;
/** Store kind of seen signatures. */
export const SEEN_SIGNATURE_KIND = 'device-sig';

/** The three request headers, lowercase as Node's `IncomingMessage.headers` gives them. */
export const DEVICE_HEADERS = {
  device: 'x-lookfirst-device',
  timestamp: 'x-lookfirst-timestamp',
  signature: 'x-lookfirst-signature',
} as const;

const bodyBytes = (body: Uint8Array | string | undefined): Uint8Array => (typeof body === 'string' ? Buffer.from(body, 'utf8') : (body ?? new Uint8Array()));

/**
 * The text a device signs: `LOOKFIRST-DEVICE-1\n` + METHOD + `\n` + path?query + `\n` + timestamp + `\n` +
 * hex(sha256(body)). The method is upper-cased; the path is the request target exactly as sent (path and
 * query, no scheme or host).
 * @param timestampMs ms since the Unix epoch, an integer.
 * @param body the raw request body (empty for a GET); a string is taken as UTF-8.
 */
export function signingString(method: string, pathWithQuery: string, timestampMs: number, body?: Uint8Array | string): string {
  const bodySha = createHash('sha256').update(bodyBytes(body)).digest('hex');
  return `${SIGNATURE_SCHEME}\n${method.toUpperCase()}\n${pathWithQuery}\n${Math.trunc(timestampMs)}\n${bodySha}`;
}

/**
 * Signs a request as a device does: base64url (no padding) of HMAC-SHA256 over `signingString`.
 * @param key the device key, base64url of 32 bytes.
 */
export function signRequest(key: string, method: string, pathWithQuery: string, timestampMs: number, body?: Uint8Array | string): string {
  return createHmac('sha256', Buffer.from(key, 'base64url'))
    .update(signingString(method, pathWithQuery, timestampMs, body))
    .digest('base64url');
}

/** The three headers of a signed request (a device's or a test's convenience). */
export function signedHeaders(
  device: { id: string; key: string },
  method: string,
  pathWithQuery: string,
  timestampMs: number,
  body?: Uint8Array | string,
): Record<string, string> {
  return {
    [DEVICE_HEADERS.device]: device.id,
    [DEVICE_HEADERS.timestamp]: String(Math.trunc(timestampMs)),
    [DEVICE_HEADERS.signature]: signRequest(device.key, method, pathWithQuery, timestampMs, body),
  };
}

/** A request as the device endpoint received it. Header names lowercase (as Node gives them). */
export interface DeviceRequest {
  method: string;
  /** The request target: path and query as sent. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body?: Uint8Array | string;
}

/** The verdict on a device request: the device it came from, or the HTTP status and why not. */
export type DeviceAuth = { ok: true; device: DeviceRecord } | { ok: false; status: 401 | 403; reason: string };

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v);

/**
 * What can be judged of a signed request from its headers alone, before its body is read: the three
 * headers in form, the timestamp within the window, and a paired, unrevoked device under the id. It
 * spends nothing and proves nothing (the HMAC is not checked: `verifyDeviceRequest` still must run); it
 * lets the endpoint refuse a request no device could have sent before taking in a body of up to 2 MiB.
 * @returns undefined when the request may go on to its body, else the refusal. Never throws.
 */
export async function precheckDeviceHeaders(
  deps: { registry: DeviceRegistry; clock: Clock },
  headers: DeviceRequest['headers'],
): Promise<Extract<DeviceAuth, { ok: false }> | undefined> {
  const unsigned = (reason: string) => ({ ok: false as const, status: 401 as const, reason });
  const id = one(headers[DEVICE_HEADERS.device]);
  const ts = one(headers[DEVICE_HEADERS.timestamp]);
  const sig = one(headers[DEVICE_HEADERS.signature]);
  if (id === undefined || ts === undefined || sig === undefined)
    return unsigned('the request is not signed: it needs the X-Lookfirst-Device, X-Lookfirst-Timestamp and X-Lookfirst-Signature headers');
  if (!isDeviceId(id)) return unsigned('X-Lookfirst-Device is not a device id');
  if (!/^[0-9]{1,16}$/.test(ts)) return unsigned('X-Lookfirst-Timestamp must be milliseconds since the epoch, in decimal');
  if (!/^[A-Za-z0-9_-]{43}$/.test(sig)) return unsigned('X-Lookfirst-Signature must be base64url of an HMAC-SHA256');
  if (Math.abs(deps.clock.nowMs() - Number(ts)) > SIGNATURE_WINDOW_MS)
    return unsigned("the request's timestamp is more than 60 s from the gate's clock: set the phone's clock right and retry");
  try {
    const device = await deps.registry.get(id);
    if (!device) return unsigned('no device is paired with this id: pair again');
    if (device.revokedAtMs !== undefined)
      return {
        ok: false,
        status: 403,
        reason: 'this device was revoked (lookfirst devices revoke): it can no longer see or decide calls; pair it again to use it',
      };
    return undefined;
  } catch {
    return unsigned('the shared state store cannot be read: nothing was accepted; retry once it is back');
  }
}

/**
 * Verifies a signed device request (each signature is accepted once: this call spends it).
 * @param deps the device `registry`, the shared `store` (seen signatures), the gate's `clock`.
 * @returns `{ ok: true, device }`, or `{ ok: false, status: 401 | 403, reason }`. Never throws: a store
 *   that cannot be read refuses (401).
 */
export async function verifyDeviceRequest(deps: { registry: DeviceRegistry; store: Store; clock: Clock }, req: DeviceRequest): Promise<DeviceAuth> {
  const unsigned = (reason: string): DeviceAuth => ({ ok: false, status: 401, reason });
  const id = one(req.headers[DEVICE_HEADERS.device]);
  const ts = one(req.headers[DEVICE_HEADERS.timestamp]);
  const sig = one(req.headers[DEVICE_HEADERS.signature]);
  if (id === undefined || ts === undefined || sig === undefined)
    return unsigned('the request is not signed: it needs the X-Lookfirst-Device, X-Lookfirst-Timestamp and X-Lookfirst-Signature headers');
  if (!isDeviceId(id)) return unsigned('X-Lookfirst-Device is not a device id');
  if (!/^[0-9]{1,16}$/.test(ts)) return unsigned('X-Lookfirst-Timestamp must be milliseconds since the epoch, in decimal');
  if (!/^[A-Za-z0-9_-]{43}$/.test(sig)) return unsigned('X-Lookfirst-Signature must be base64url of an HMAC-SHA256');
  try {
    const device = await deps.registry.get(id);
    if (!device) return unsigned('no device is paired with this id: pair again');
    const tsMs = Number(ts);
    if (Math.abs(deps.clock.nowMs() - tsMs) > SIGNATURE_WINDOW_MS)
      return unsigned("the request's timestamp is more than 60 s from the gate's clock: set the phone's clock right and retry");
    const expected = Buffer.from(signRequest(device.key, req.method, req.path, tsMs, req.body), 'base64url');
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return unsigned('the signature does not match this request');
    // 43 base64url characters carry 258 bits for 256: the last character's two low bits are ignored by
    // the decoder, so four spellings decode to one MAC. Only the canonical spelling is accepted, and the
    // seen-key is taken over the decoded bytes, so no respelling makes a used signature new again.
    if (given.toString('base64url') !== sig) return unsigned('X-Lookfirst-Signature is not in canonical base64url (no padding): send it as encoded');
    if (device.revokedAtMs !== undefined)
      return {
        ok: false,
        status: 403,
        reason: 'this device was revoked (lookfirst devices revoke): it can no longer see or decide calls; pair it again to use it',
      };
    const seenKey = createHash('sha256').update(given).digest('hex');
    if (!(await deps.store.putIfAbsent(SEEN_SIGNATURE_KIND, seenKey, { atMs: tsMs }, { ttlMs: SEEN_SIGNATURE_TTL_MS })))
      return unsigned('this signature was used before: each signed request is accepted once');
    return { ok: true, device };
  } catch {
    return unsigned('the shared state store cannot be read: nothing was accepted; retry once it is back');
  }
}
