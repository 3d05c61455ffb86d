/**
 * Small HTTP helpers shared by the approval page and the webhook decision endpoint: bounded body reads,
 * responses that can never be framed, cached or read cross-origin, and listening with an error that
 * says what to change.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { LookfirstError } from '../errors.js';
import { readBounded } from './budget.js';
import { responseOf } from './listener.js';

/** Largest request body accepted (bytes). */
export const MAX_BODY_BYTES = 16 * 1024;

/** Security headers on every response. No CORS header is ever sent, so no other origin can read one. */
export const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** Statuses after which the connection is closed (`Connection: close`): a refused client does not keep a socket. */
const CLOSING = new Set([400, 401, 403, 404, 405, 408, 413, 415, 429, 503]);

/** Sends a complete response (no-op when headers went out already); a refusal closes the connection after it. */
export function send(res: ServerResponse, status: number, body: string, type: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) return;
  if (CLOSING.has(status)) res.shouldKeepAlive = false;
  res.writeHead(status, { ...BASE_HEADERS, 'content-type': type, ...extra });
  res.end(body);
}

/** Sends `{ "error": message }` (or another object) as JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  send(res, status, JSON.stringify(body), 'application/json; charset=utf-8', extra);
}

/**
 * Reads the whole body (at most MAX_BODY_BYTES, within the process-wide budget of budget.ts).
 * @returns the text; `undefined` when the body is too large or the budget is spent (the request is then
 *   dropped; with a listener's request the caller's answer goes out and the connection closes after it).
 */
export async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const res = responseOf(req);
  if (!res) {
    req.destroy();
    return undefined;
  }
  const r = await readBounded(req, res, MAX_BODY_BYTES);
  return r.ok ? r.body.toString('utf8') : undefined;
}

/** Parses a JSON object body; a string saying what is wrong otherwise. */
export function parseJsonObject(text: string): Record<string, unknown> | string {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : 'the body must be a JSON object';
  } catch {
    return 'the body is not valid JSON';
  }
}

/** True when the Content-Type is exactly `application/json` (parameters such as charset allowed). */
export function isJson(req: IncomingMessage): boolean {
  return (header(req, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/**
 * True when the request's Accept header names `text/html` (with a non-zero `q`): what a browser sends
 * when a person opens an address or follows a link. `fetch()` (any type by default), EventSource
 * (`text/event-stream`) and API clients do not, so they keep getting JSON. A full negotiation library
 * would rank types; all that matters here is whether a person's browser is asking for a page.
 */
export function acceptsHtml(req: IncomingMessage): boolean {
  return (header(req, 'accept') ?? '').split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (type !== 'text/html') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** One header's value (the first when repeated). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Listens on host:port. Make the server with `createListener` (listener.ts): it carries the connection
 * limits every listener of the gate shares.
 * @param setting the config key to name in the error, e.g. `confirm.web.port`.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address is taken or cannot be bound.
 */
export async function listen(server: Server, host: string, port: number, what: string, setting: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const why = err.code === 'EADDRINUSE' ? 'it is already in use (another gate, or another program)' : err.message;
      reject(
        new LookfirstError(
          'WEB_UNAVAILABLE',
          `the ${what} cannot listen on ${where}: ${why}. Set ${setting} to a free port, or to 0 to let the system pick one (the address is printed at start).`,
          { cause: err },
        ),
      );
    });
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}

/** Closes a server and every connection it holds (event streams included). */
export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Keeps a name to letters, digits and `._@-` and spaces, 64 characters at most (it goes into the log). */
export function safeName(name: string): string {
  return name
    .normalize('NFC')
    .replace(/[^\p{L}\p{N} ._@-]/gu, '')
    .trim()
    .slice(0, 64);
}
