/**
 * The local approval page (loopback only): lists held calls and takes Approve / Deny.
 * Every request passes the Host check first, then must carry the per-process access key (`?k=`, part of
 * the address the gate prints at start); a POST also needs a same-origin request, a form body, and the
 * per-process CSRF token, all before the body is looked at for anything else. Refusals are 403 and are
 * reported to `onRefused` (the gate logs them); nothing changes state on a refused request.
 * Posture: the access key is the person's credential. A process that can read the gate's stderr (the
 * client's MCP log) can read it too; keep such processes behind the gate, or approve in the client.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import type { PendingApprovals } from '../confirm/pending.js';
import { LookfirstError } from '../errors.js';
import { allowedHosts, checkCsrf, checkHost, checkSameOrigin, type GuardResult } from './guards.js';
import { pendingPage } from './views.js';

/** Largest form body accepted (bytes). */
const MAX_BODY_BYTES = 16 * 1024;

/** Options of the approval page. */
export interface WebAppOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  pending: PendingApprovals;
  onRefused?: (reason: string, req: IncomingMessage) => void;
}

/** A running approval page. */
export interface WebApp {
  /** The page's address, access key included: only whoever has it can see or decide anything. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the page.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address is taken (EADDRINUSE) or cannot be bound.
 */
export async function startWebApp(opts: WebAppOptions): Promise<WebApp> {
  const csrf = randomBytes(32).toString('base64url');
  // The access key is what separates the person (who has the address the gate printed) from any other
  // local process that can reach loopback: without it, nothing is shown and nothing can be decided.
  const accessKey = randomBytes(24).toString('base64url');
  let hosts = new Set<string>();
  const defaultApprover = safeName(userInfo().username);
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => send(res, 500, `internal error: ${(err as Error).message}`));
  });

  const refuse = (res: ServerResponse, req: IncomingMessage, r: GuardResult & { ok: false }) => {
    opts.onRefused?.(r.reason, req);
    send(res, 403, `refused: ${r.reason}`);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = checkHost(req.headers.host, hosts);
    if (!host.ok) return refuse(res, req, host);
    const url = new URL(req.url ?? '/', 'http://page.invalid');
    const path = url.pathname;
    const key = checkCsrf(url.searchParams.get('k') ?? undefined, accessKey);
    if (!key.ok)
      return refuse(res, req, { ok: false, reason: `${key.reason.replace('CSRF token', 'access key')}: open the address the gate printed at start` });
    if (req.method === 'GET' && path === '/') {
      return send(res, 200, pendingPage(opts.pending.list(), csrf, accessKey, defaultApprover, Date.now()), 'text/html; charset=utf-8');
    }
    if (req.method === 'GET' && path === '/pending.json') {
      return send(
        res,
        200,
        JSON.stringify(opts.pending.list().map(({ argsCanonical, ...v }) => ({ ...v, args: JSON.parse(argsCanonical) }))),
        'application/json',
      );
    }
    if (path !== '/decide') return send(res, 404, 'not found');
    if (req.method !== 'POST') return send(res, 405, 'use POST');
    const same = checkSameOrigin(header(req, 'origin'), header(req, 'sec-fetch-site'), hosts);
    if (!same.ok) return refuse(res, req, same);
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return send(res, 415, 'expected a form (application/x-www-form-urlencoded)');
    const body = await readBody(req);
    if (body === undefined) return send(res, 413, 'form too large');
    const form = new URLSearchParams(body);
    const token = checkCsrf(form.get('csrf') ?? undefined, csrf);
    if (!token.ok) return refuse(res, req, token);
    const decision = form.get('decision');
    if (decision !== 'approve' && decision !== 'deny') return send(res, 400, 'decision must be approve or deny');
    const actor = safeName(form.get('approver') ?? '') || defaultApprover;
    const result = opts.pending.decide(form.get('call_id') ?? '', form.get('args_sha256') ?? '', decision === 'approve', 'web', actor);
    if (!result.ok) return send(res, 409, pendingPage(opts.pending.list(), csrf, accessKey, actor, Date.now(), result.reason), 'text/html; charset=utf-8');
    res.writeHead(303, { location: `/?k=${accessKey}`, 'cache-control': 'no-store' }).end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${opts.host}:${opts.port}`;
      const why = err.code === 'EADDRINUSE' ? `${where} is already in use (another gate, or another program)` : `${where}: ${err.message}`;
      reject(
        new LookfirstError(
          'WEB_UNAVAILABLE',
          `the approval page cannot listen on ${why}. Set confirm.web.port to a free port, or to 0 to let the system pick one (the address is printed at start).`,
          { cause: err },
        ),
      );
    });
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(opts.host, port);
  const shownHost = opts.host === '::1' ? '[::1]' : opts.host;
  return {
    url: `http://${shownHost}:${port}/?k=${accessKey}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
  });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function safeName(name: string): string {
  return name
    .replace(/[^A-Za-z0-9 ._@-]/g, '')
    .trim()
    .slice(0, 64);
}
