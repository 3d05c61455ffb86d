/**
 * The device endpoint (decision 0018, docs/device-api.md): the phone page and the API a paired device
 * speaks. Static files under `/device/` need nothing; `POST /device/api/pair` needs the pairing code (its
 * tries are the rate limit: 5 wrong codes lock the pairing); every other API request must be signed with
 * the device key (HMAC-SHA256, ±60 s, each signature once: confirm/devices/signature.ts).
 *
 * Security posture: the Host check runs first on every request (DNS rebinding). Bodies are bounded
 * (16 KiB of JSON, MAX_VOICE_BYTES of audio) and read before the signature is checked, since the
 * signature covers the body's hash. Anything malformed is refused with a sentence and changes nothing;
 * every refusal is reported to `onRefused`. A decision changes a call only through `Cards.decide`, which
 * runs every named check; this file never decides by itself. No CORS header is ever sent; nothing can be
 * framed; API answers are `no-store` and the service worker never caches them. With `tls` the same
 * handler is served over node:https (a phone on the LAN needs a secure context for WebCrypto).
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type Clock, systemClock } from '../clock.js';
import type { Pairing } from '../confirm/devices/pairing.js';
import type { DeviceRegistry } from '../confirm/devices/registry.js';
import { precheckDeviceHeaders, verifyDeviceRequest } from '../confirm/devices/signature.js';
import type { Store } from '../store/store.js';
import { readBounded } from './budget.js';
import { DEVICE_CSP, deviceAsset } from './device-assets.js';
import { type DeviceCards, type DeviceVoice, decisionAnswer, duplicateTopLevelKey, toDecision } from './device-decide.js';
import { allowedHosts, checkHost, checkSameOrigin } from './guards.js';
import { close, header, isJson, listen, MAX_BODY_BYTES, parseJsonObject, send, sendJson } from './http.js';
import { createListener, DEFAULT_LISTENER_LIMITS, type ListenerLimits, SMALL_REQUEST_TIMEOUT_MS } from './listener.js';

/**
 * Largest voice upload (bytes): 2 MiB, a little over 60 s (the most confirm.device.voice.max_seconds
 * allows) of 16 kHz mono 16-bit PCM. The recording's own length is checked against max_seconds too.
 */
export const MAX_VOICE_BYTES = 2 * 1024 * 1024;

/** Options of the device endpoint. */
export interface DeviceEndpointOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Serve over HTTPS with this PEM certificate and key (a phone needs it off loopback). */
  tls?: { cert: string; key: string };
  /** The address phones use (a proxy, a LAN name): its host is accepted in Host, and pairing addresses use it. */
  publicUrl?: string;
  pairing: Pairing;
  registry: DeviceRegistry;
  cards: DeviceCards;
  /** Voice answers; without it `POST /device/api/voice` answers 501 and `/device/api/me` says `voice: false`. */
  voice?: DeviceVoice;
  /**
   * `confirm.mode: pending`: an approved call runs only when the agent collects it (lookfirst_confirm), so
   * the answer says so instead of "executes now".
   */
  pendingMode?: boolean;
  /** Where seen signatures are kept (kind `device-sig`): the same store every replica uses. */
  store: Store;
  clock?: Clock;
  /** Called for every refused request (the gate logs them). Never given a key, code, nonce or signature. */
  onRefused?: (reason: string, req: IncomingMessage) => void;
  /** Overrides of the connection limits (tests use short timeouts). */
  limits?: Partial<ListenerLimits>;
}

/** A running device endpoint. */
export interface DeviceEndpoint {
  /** `http(s)://host:port` (or publicUrl without its trailing slash): the base of `/device/`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the endpoint.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address is taken or cannot be bound.
 */
export async function startDeviceEndpoint(opts: DeviceEndpointOptions): Promise<DeviceEndpoint> {
  const clock = opts.clock ?? systemClock;
  const scheme = opts.tls ? 'https' : 'http';
  const allowedFor = (port: number) => {
    const a = allowedHosts(opts.host, port, opts.publicUrl);
    if (opts.tls) for (const h of a.hosts) a.origins.add(`https://${h}`);
    return a;
  };
  let allowed = allowedFor(opts.port);
  const base = { 'content-security-policy': DEVICE_CSP };
  const api = () => ({ ...base, 'x-lookfirst-now': String(clock.nowMs()) });

  const refuse = (res: ServerResponse, req: IncomingMessage, status: number, reason: string, extra: Record<string, unknown> = {}) => {
    opts.onRefused?.(reason, req);
    sendJson(res, status, { error: reason, ...extra }, api());
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err) => sendJson(res, 500, { error: `internal error: ${(err as Error).message}` }, api()));
  };

  async function body(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Buffer | undefined> {
    const r = await readBounded(req, res, maxBytes);
    if (r.ok) return r.body;
    refuse(res, req, r.status, r.message);
    return undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = checkHost(req.headers.host, allowed);
    if (!host.ok) return refuse(res, req, 403, host.reason);
    const target = req.url ?? '/';
    const url = new URL(target, 'http://device.invalid');
    const path = url.pathname;
    if (!path.startsWith('/device/api/')) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'use GET' }, { ...base, allow: 'GET' });
      if (path === '/' || path === '/device') return send(res, 308, '', 'text/plain', { ...base, location: '/device/' });
      const file = deviceAsset(path);
      if (!file) return sendJson(res, 404, { error: 'not found: the device page is at /device/' }, base);
      return send(res, 200, file.body, file.type, path === '/device/sw.js' ? { ...base, 'service-worker-allowed': '/device/' } : base);
    }
    // The signature covers the target as sent, the route is chosen on the parsed path: only a target that
    // is its own parsed form (no `..`, `//`, `\\`, fragment or absolute form) is taken, so that what was
    // signed and what is routed are one string.
    if (target !== path + url.search)
      return refuse(res, req, 400, 'send the request target as a plain path (no "..", "//", "\\", "#" or scheme and host): sign exactly what you send');
    if (path === '/device/api/pair') return pair(req, res);
    const route = ROUTES[path];
    if (!route) return sendJson(res, 404, { error: 'not found: see docs/device-api.md for the routes' }, api());
    if (req.method !== route.method) return sendJson(res, 405, { error: `use ${route.method}` }, { ...api(), allow: route.method });
    if (route.method === 'POST') {
      const want = route.type === 'json' ? isJson(req) : WAV_TYPES.has((header(req, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase());
      if (!want) return refuse(res, req, 415, route.type === 'json' ? 'send application/json' : 'send the recording as audio/wav');
    }
    // Headers first: a request no paired device could have sent is refused before its body is taken in.
    const early = await precheckDeviceHeaders({ registry: opts.registry, clock }, req.headers);
    if (early) return refuse(res, req, early.status, early.reason);
    const raw = route.method === 'GET' ? Buffer.alloc(0) : await body(req, res, route.type === 'wav' ? MAX_VOICE_BYTES : MAX_BODY_BYTES);
    if (!raw) return;
    const who = await verifyDeviceRequest(
      { registry: opts.registry, store: opts.store, clock },
      { method: req.method ?? 'GET', path: target, headers: req.headers, body: raw },
    );
    if (!who.ok) return refuse(res, req, who.status, who.reason);
    const device = who.device;
    if (path === '/device/api/me')
      return sendJson(
        res,
        200,
        { device_id: device.id, user: device.user, name: device.name, paired_at: device.pairedAtMs, voice: opts.voice !== undefined },
        api(),
      );
    if (path === '/device/api/cards') {
      const set = await opts.cards.issue(device).catch(() => undefined);
      if (!set) return refuse(res, req, 503, 'the shared state store cannot be read or written: no cards were issued; retry in a moment');
      return sendJson(res, 200, { ...set, now_ms: clock.nowMs() }, api());
    }
    if (path === '/device/api/decide') {
      const text = raw.toString('utf8');
      const parsed = parseJsonObject(text);
      if (typeof parsed === 'string') return refuse(res, req, 400, parsed);
      const twice = duplicateTopLevelKey(text);
      if (twice !== undefined) return refuse(res, req, 400, `the body names "${twice.slice(0, 40)}" twice: send each field once`);
      const d = toDecision(parsed);
      if (typeof d === 'string') return refuse(res, req, 400, d);
      const r = await opts.cards.decide(device, { ...d, how: { method: 'tap' } });
      const a = decisionAnswer(r, opts.pendingMode === true);
      if (a.status !== 200) return refuse(res, req, a.status, String(a.body.error), a.body);
      return sendJson(res, 200, a.body, api());
    }
    // POST /device/api/voice?set=<id>
    if (!opts.voice) return refuse(res, req, 501, 'voice answers are not configured on this gate (confirm.device.voice): tap Approve or Deny instead');
    const setId = url.searchParams.get('set') ?? '';
    if (!/^cs_[0-9a-f]{16}$/.test(setId)) return refuse(res, req, 400, 'name the card set the recording answers: ?set=cs_<16 hex>');
    const stop = new AbortController();
    res.once('close', () => stop.abort());
    let r: Awaited<ReturnType<DeviceVoice['answer']>>;
    try {
      r = await opts.voice.answer(device, setId, raw, stop.signal);
    } catch (err) {
      return refuse(
        res,
        req,
        502,
        `the recording could not be transcribed (${(err as Error).message.slice(0, 200)}): nothing was decided; record again, or tap instead`,
      );
    }
    const a = decisionAnswer(r, opts.pendingMode === true);
    if (a.status !== 200) return refuse(res, req, a.status, String(a.body.error), a.body);
    return sendJson(res, 200, a.body, api());
  }

  async function pair(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' }, { ...api(), allow: 'POST' });
    // A web page elsewhere must not post guesses from a visitor's browser; apps send no Origin at all.
    const same = checkSameOrigin(header(req, 'origin'), header(req, 'sec-fetch-site'), allowed);
    if (!same.ok) return refuse(res, req, 403, same.reason);
    if (!isJson(req)) return refuse(res, req, 415, 'send application/json');
    const raw = await body(req, res, MAX_BODY_BYTES);
    if (!raw) return;
    const text = raw.toString('utf8');
    const b = parseJsonObject(text);
    if (typeof b === 'string') return refuse(res, req, 400, b);
    const twice = duplicateTopLevelKey(text);
    if (twice !== undefined) return refuse(res, req, 400, `the body names "${twice.slice(0, 40)}" twice: send each field once`);
    if (typeof b.code !== 'string' || typeof b.key !== 'string')
      return refuse(res, req, 400, 'send { "code": "<6 digits>", "key": "<base64url of 32 bytes>", "name": "...", "pairing_id"?: "pr_..." }');
    const r = await opts.pairing.redeem({
      pairingId: typeof b.pairing_id === 'string' ? b.pairing_id : undefined,
      code: b.code,
      key: b.key,
      name: typeof b.name === 'string' ? b.name : undefined,
    });
    if (!r.ok) return refuse(res, req, r.status, `pairing refused: ${r.error}`, r.triesLeft === undefined ? {} : { tries_left: r.triesLeft });
    sendJson(res, 201, { device_id: r.deviceId, user: r.user }, api());
  }

  const limits = { ...DEFAULT_LISTENER_LIMITS, requestTimeoutMs: SMALL_REQUEST_TIMEOUT_MS * 2, ...opts.limits };
  let server: HttpServer;
  if (opts.tls) {
    // node:https has no createListener: the same timeouts and connection bound, without the idle sweeps.
    server = createHttpsServer(
      {
        cert: opts.tls.cert,
        key: opts.tls.key,
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs + 1),
        keepAliveTimeout: limits.keepAliveTimeoutMs,
      },
      handler,
    ) as unknown as HttpServer;
    server.maxConnections = limits.maxConnections;
  } else server = createListener(handler, limits, undefined, clock);
  const port = await listen(server, opts.host, opts.port, 'device endpoint', 'confirm.device.port');
  allowed = allowedFor(port);
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: opts.publicUrl ? opts.publicUrl.replace(/\/+$/, '') : `${scheme}://${shown}:${port}`,
    port,
    close: () => close(server),
  };
}

/** Content-Types a recording may be sent as (the registered name and the two older spellings). */
const WAV_TYPES = new Set(['audio/wav', 'audio/x-wav', 'audio/wave']);

/** The signed routes: method and body type. */
const ROUTES: Record<string, { method: 'GET' | 'POST'; type?: 'json' | 'wav' }> = {
  '/device/api/me': { method: 'GET' },
  '/device/api/cards': { method: 'GET' },
  '/device/api/decide': { method: 'POST', type: 'json' },
  '/device/api/voice': { method: 'POST', type: 'wav' },
};
