/**
 * The approval page: a live queue of held calls (server-sent events), Approve / Deny with an optional
 * comment, and the recent decisions with their outcome and read-back.
 * Built as an approval authority. Every request passes the Host check first (DNS rebinding); every
 * request but the static script and style needs the per-process access key (`?k=`, part of the address
 * the gate prints); a decision must be a `POST` of `application/json` with the per-process CSRF token in
 * `X-Lookfirst-CSRF`, from a same-origin page, naming a pending call and its args_sha256, else 403 and
 * nothing changes. No CORS header is ever sent; nothing can frame the page; the script writes text
 * nodes only. Refusals are reported to `onRefused` (the gate logs them).
 * The key never leaves this process on a command line: the browser is opened through a launch file
 * (launch-file.ts). A tab left open across a gate restart reconnects by itself when the new gate has the
 * same key (`accessKey`) and takes the new gate's CSRF token from the stream's first event; when the key
 * changed, its stream is refused (403) and the page says to open the new address the gate printed.
 * A refusal is the JSON `{ "error": … }` for scripts and API clients, and a small HTML page with the same
 * sentence (no script, strict CSP) when a browser asks for a page (Accept: text/html); same status.
 * "Pair a phone" (only with a `pairing` option): `POST /pair`, guarded exactly as a decision, opens a
 * pairing (confirm/devices/pairing.ts) and answers its 6-digit code, the pairing address and a QR code
 * of it as SVG; the script shows the SVG as an image from a Blob URL (never as markup).
 * Who decided: with `identityHeader` (set by an authenticating proxy) the actor is `web:<header value>`,
 * trust `authenticated`; otherwise `web:<name typed on the page>`, trust `self-declared`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import QRCode from 'qrcode';
import { type Clock, systemClock } from '../clock.js';
import { type Pairing, pairingUrl } from '../confirm/devices/pairing.js';
import type { PendingApprovals } from '../confirm/pending.js';
import { LookfirstError } from '../errors.js';
import type { Decider } from '../types.js';
import { allowedHosts, checkCsrf, checkHost, checkSameOrigin, type GuardResult } from './guards.js';
import { acceptsHtml, close, header, isJson, listen, parseJsonObject, readBody, safeName, send, sendJson } from './http.js';
import { createListener, type ListenerLimits, SMALL_REQUEST_TIMEOUT_MS } from './listener.js';
import { pageState } from './state.js';
import { errorPage, shellPage } from './views.js';

/** Interval of keep-alive comments on the event stream (ms), so proxies do not drop it. */
const KEEPALIVE_MS = 15_000;

/** Most live pages at once (event streams). */
const MAX_STREAMS = 32;

/**
 * The page's Content-Security-Policy: its own script and style only, nothing inline, no framing.
 * `img-src blob:` is there for the pairing QR code only: the script makes it a Blob URL from the SVG the
 * page's own `POST /pair` answered, and only a script of this origin can make a Blob URL of this origin.
 */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The error page's Content-Security-Policy: no script at all, the page's own style sheet only. */
export const ERROR_CSP = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Fewest characters of an access key given in `accessKey` (the generated one has 32). */
export const MIN_ACCESS_KEY_CHARS = 32;

/**
 * Fewest different characters in an access key: a random key of 32 or more characters has far more, and
 * a pattern (`aaaa…`, `abab…`) that a length check alone would let through has fewer.
 */
export const MIN_ACCESS_KEY_DISTINCT = 8;

/**
 * True when `key` can be the page's access key: URL-safe (it goes into `?k=` as is), long enough to guess
 * at no better than chance, and not an obvious pattern (MIN_ACCESS_KEY_DISTINCT different characters).
 */
export function isAccessKey(key: string): boolean {
  return new RegExp(`^[A-Za-z0-9_-]{${MIN_ACCESS_KEY_CHARS},}$`).test(key) && new Set(key).size >= MIN_ACCESS_KEY_DISTINCT;
}

/** Options of the approval page. */
export interface WebAppOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  pending: PendingApprovals;
  /** Header an authenticating proxy sets to the signed-in user (lower or mixed case). */
  identityHeader?: string;
  /** Address the proxy serves the page at: its host and origin are accepted too. */
  publicUrl?: string;
  onRefused?: (reason: string, req: IncomingMessage) => void;
  /** Overrides of the connection limits (tests use short timeouts). */
  limits?: Partial<ListenerLimits>;
  /** How an open tab reconnects after losing the gate, and when it stops trying (tests use short times). */
  reconnect?: Partial<ReconnectSettings>;
  /** The time source for the page's server time and the listener; systemClock when omitted. */
  clock?: Clock;
  /** Enables "Pair a phone": pairings open in `pairing` for `user`, at the device endpoint's `deviceUrl`. */
  pairing?: PagePairing;
  /**
   * The page's access key, when it must outlive the process (at least MIN_ACCESS_KEY_CHARS characters of
   * `A-Za-z0-9_-`): an open tab then reconnects to a restarted gate on the same port. A fresh random key
   * per process when omitted, and an open tab must then be reopened from the new address.
   */
  accessKey?: string;
}

/** What the page's "Pair a phone" button needs. */
export interface PagePairing {
  pairing: Pairing;
  /** The user the phone is paired for (confirm.device.default_user, `owner` by default). */
  user: string;
  /** The device endpoint's base address as a phone reaches it (no trailing slash), e.g. `https://gate.lan:8473`. */
  deviceUrl: string;
}

/** How an open page reconnects to its event stream (ms). */
export interface ReconnectSettings {
  /** Wait between attempts. */
  retryMs: number;
  /** After this long without the gate, the page stops and says the gate stopped or moved. */
  giveUpMs: number;
}

/** Retry every 2 s; give up after a minute. */
export const DEFAULT_RECONNECT: Readonly<ReconnectSettings> = { retryMs: 2_000, giveUpMs: 60_000 };

/** A running approval page. */
export interface WebApp {
  /** The page's address, access key included: only whoever has it can see or decide anything. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const STATIC: Record<string, { file: string; type: string }> = {
  '/static/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/static/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};
const assets = new Map<string, string>();
function asset(file: string): string {
  let text = assets.get(file);
  if (text === undefined) {
    text = readFileSync(new URL(`./static/${file}`, import.meta.url), 'utf8');
    assets.set(file, text);
  }
  return text;
}

/**
 * Starts the page.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address is taken (EADDRINUSE) or cannot be bound.
 */
export async function startWebApp(opts: WebAppOptions): Promise<WebApp> {
  const csrf = randomBytes(32).toString('base64url');
  // The access key separates the person (who has the address the gate printed) from any other local
  // process that can reach loopback: without it, nothing is shown and nothing can be decided.
  if (opts.accessKey !== undefined && !isAccessKey(opts.accessKey))
    throw new LookfirstError(
      'WEB_UNAVAILABLE',
      `the approval page's access key must be at least ${MIN_ACCESS_KEY_CHARS} characters of A-Z, a-z, 0-9, _ and -, random (at least ${MIN_ACCESS_KEY_DISTINCT} different ones; e.g. openssl rand -hex 32)`,
    );
  const accessKey = opts.accessKey ?? randomBytes(24).toString('base64url');
  const clock = opts.clock ?? systemClock;
  const identityHeader = opts.identityHeader?.toLowerCase();
  let allowed = allowedHosts(opts.host, opts.port, opts.publicUrl);
  const streams = new Set<ServerResponse>();
  const headers = { 'content-security-policy': CSP };

  // A person's browser gets a page it can read; a script or API client the JSON it parses.
  const fail = (res: ServerResponse, req: IncomingMessage, status: number, error: string, extra: Record<string, string> = {}) => {
    if (acceptsHtml(req)) send(res, status, errorPage(status, error), 'text/html; charset=utf-8', { ...extra, 'content-security-policy': ERROR_CSP });
    else sendJson(res, status, { error }, { ...headers, ...extra });
  };
  const refuse = (res: ServerResponse, req: IncomingMessage, r: GuardResult & { ok: false }) => {
    opts.onRefused?.(r.reason, req);
    fail(res, req, 403, `refused: ${r.reason}`);
  };
  const state = () => JSON.stringify(pageState(opts.pending.list(), opts.pending.history(), clock.nowMs()));
  const unsubscribe = opts.pending.subscribe(() => {
    const data = `event: state\ndata: ${state()}\n\n`;
    for (const s of streams) s.write(data);
  });
  const keepalive = setInterval(() => {
    for (const s of streams) s.write(': keep-alive\n\n');
  }, KEEPALIVE_MS).unref();

  const reconnect = { ...DEFAULT_RECONNECT, ...opts.reconnect };
  const server = createListener(
    (req, res) => {
      handle(req, res).catch((err) => sendJson(res, 500, { error: `internal error: ${(err as Error).message}` }, headers));
    },
    { requestTimeoutMs: SMALL_REQUEST_TIMEOUT_MS, ...opts.limits },
    undefined,
    clock,
  );

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = checkHost(req.headers.host, allowed);
    if (!host.ok) return refuse(res, req, host);
    const url = new URL(req.url ?? '/', 'http://page.invalid');
    const path = url.pathname;
    // Browsers ask for an icon by themselves, without the key: answer with nothing, and log nothing.
    if (path === '/favicon.ico' && req.method === 'GET') return send(res, 204, '', 'image/x-icon', headers);
    const file = STATIC[path];
    if (file && req.method === 'GET') return send(res, 200, asset(file.file), file.type, headers);
    const key = checkCsrf(url.searchParams.get('k') ?? undefined, accessKey);
    if (!key.ok)
      return refuse(res, req, {
        ok: false,
        reason:
          key.reason === 'missing CSRF token'
            ? `missing access key: open the address the gate printed at start (the line "approval page at http://…" on its standard error)`
            : `wrong access key (the gate restarted with a new key, or the address was cut short): open the address the gate printed at start (the line "approval page at http://…" on its standard error)`,
      });
    let identity: string | undefined;
    if (identityHeader) {
      identity = safeName(header(req, identityHeader) ?? '');
      if (!identity)
        return refuse(res, req, { ok: false, reason: `no ${opts.identityHeader} header: the page is served only through the authenticating proxy` });
    }
    if (req.method === 'GET' && path === '/')
      return send(
        res,
        200,
        shellPage(csrf, identity, `${reconnect.retryMs},${reconnect.giveUpMs}`, opts.pairing !== undefined),
        'text/html; charset=utf-8',
        headers,
      );
    if (req.method === 'GET' && path === '/state.json') return sendJson(res, 200, JSON.parse(state()), headers);
    if (req.method === 'GET' && path === '/events') {
      if (streams.size >= MAX_STREAMS) return sendJson(res, 503, { error: `too many open pages (${MAX_STREAMS}); close some tabs` }, headers);
      res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
      // The CSRF token travels with the stream too: a tab that reconnects to a restarted gate with the
      // same key needs the new process's token. Only a holder of the key can read this stream.
      res.write(`retry: ${reconnect.retryMs}\nevent: session\ndata: ${JSON.stringify({ csrf })}\n\nevent: state\ndata: ${state()}\n\n`);
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (path === '/pair' && opts.pairing) return pair(req, res, opts.pairing);
    if (path !== '/decision') return fail(res, req, 404, 'not found: the approval page is at / (with ?k=, as the gate printed it)');
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' }, { ...headers, allow: 'POST' });
    const same = checkSameOrigin(header(req, 'origin'), header(req, 'sec-fetch-site'), allowed);
    if (!same.ok) return refuse(res, req, same);
    if (!isJson(req))
      return refuse(res, req, { ok: false, reason: `a decision must be application/json, not ${(header(req, 'content-type') ?? 'nothing').slice(0, 40)}` });
    const token = checkCsrf(header(req, 'x-lookfirst-csrf'), csrf);
    if (!token.ok) return refuse(res, req, token);
    const text = await readBody(req);
    if (text === undefined) return sendJson(res, 413, { error: 'body too large' }, headers);
    const body = parseJsonObject(text);
    if (typeof body === 'string') return sendJson(res, 400, { error: body }, headers);
    if (body.decision !== 'approve' && body.decision !== 'deny') return sendJson(res, 400, { error: 'decision must be "approve" or "deny"' }, headers);
    const name = identity ?? safeName(typeof body.approver === 'string' ? body.approver : '');
    if (!name) return sendJson(res, 400, { error: 'type your name on the page first: it goes into the audit log with your decision' }, headers);
    const who: Decider = {
      channel: 'web',
      actor: `web:${name}`,
      trust: identity ? 'authenticated' : 'self-declared',
      comment: typeof body.comment === 'string' && body.comment.trim() ? body.comment.trim().slice(0, 500) : undefined,
      // Reached only when the page's own guards passed: any of them failing refused the request above.
      evidence: {
        method: 'page',
        decidedAtMs: clock.nowMs(),
        checks: [
          { name: 'page_access_key', ok: true },
          { name: 'csrf_token', ok: true },
          { name: 'same_origin', ok: true },
        ],
      },
    };
    const result = await opts.pending.decide(String(body.call_id ?? ''), String(body.args_sha256 ?? ''), body.decision === 'approve', who);
    if (!result.ok) return refuse(res, req, { ok: false, reason: result.reason });
    sendJson(res, 200, { ok: true, decision: body.decision }, headers);
  }

  /** `POST /pair`: the same guards as a decision (same origin, JSON, CSRF token), then a new pairing. */
  async function pair(req: IncomingMessage, res: ServerResponse, p: PagePairing): Promise<void> {
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' }, { ...headers, allow: 'POST' });
    const same = checkSameOrigin(header(req, 'origin'), header(req, 'sec-fetch-site'), allowed);
    if (!same.ok) return refuse(res, req, same);
    if (!isJson(req))
      return refuse(res, req, {
        ok: false,
        reason: `a pairing request must be application/json, not ${(header(req, 'content-type') ?? 'nothing').slice(0, 40)}`,
      });
    const token = checkCsrf(header(req, 'x-lookfirst-csrf'), csrf);
    if (!token.ok) return refuse(res, req, token);
    const started = await p.pairing.start(p.user);
    const url = pairingUrl(p.deviceUrl, started.pairingId);
    const qr = await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    sendJson(res, 200, { code: started.code, url, qr_svg: qr, expires_at: new Date(started.expiresAtMs).toISOString() }, headers);
  }

  const port = await listen(server, opts.host, opts.port, 'approval page', 'confirm.web.port');
  allowed = allowedHosts(opts.host, port, opts.publicUrl);
  const shownHost = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${shownHost}:${port}/?k=${accessKey}`,
    port,
    close: async () => {
      unsubscribe();
      clearInterval(keepalive);
      for (const s of streams) s.end();
      await close(server);
    },
  };
}
