/**
 * The gate over Streamable HTTP (MCP spec 2025-11-25, basic/transports): one endpoint, `/mcp`, one MCP
 * session per client (`Mcp-Session-Id`), each an isolated gateway session: its request ids and held
 * approvals are its own. Before anything reaches MCP: Host must be this endpoint's own address and
 * Origin, when sent, its own origin (DNS rebinding, as on the approval page); with tokens, every request
 * needs `Authorization: Bearer <one of them>` (else 401, nothing runs). Upstream legs are independent: the
 * client's session id never goes upstream, each upstream has its own session. A POST that carries one
 * `tools/call` is answered on its own response by gateway/transport/http-front.ts (allowed reads on the raw
 * fast path, as on stdio); the rest of the protocol goes through the SDK's StreamableHTTPServerTransport.
 * Limits: connections as every listener (listener.ts: idle sockets closed and evicted first, requests in
 * progress counted per principal, one per connection); bodies within
 * MAX_MESSAGE_BYTES each and the process-wide budget (budget.ts: 413, 503); sessions per principal (each
 * token is one), per remote address and in all (session-table.ts: a principal at its cap gives up its own
 * oldest idle session, nobody else's). A session is used only by the principal that opened it.
 * The token authenticates; it does not encrypt. Beyond this host, put TLS in front.
 */

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { type Clock, systemClock } from '../clock.js';
import type { Gateway } from '../gateway/gateway.js';
import type { ModernFront } from '../gateway/modern.js';
import { AUTHENTICATED_PREFIX } from '../gateway/session.js';
import { HttpFrontTransport } from '../gateway/transport/http-front.js';
import { MAX_MESSAGE_BYTES } from '../gateway/upstream.js';
import { readBounded } from './budget.js';
import { allowedHosts, checkHost, checkSameOrigin } from './guards.js';
import { close, header, listen, sendJson } from './http.js';
import { createListener, type ListenerLimits } from './listener.js';
import { DEFAULT_SESSION_CAPS, type SessionCaps, SessionTable } from './session-table.js';

/** A session with no request for this long is closed (a client that left without DELETE), in ms. */
export const SESSION_IDLE_MS = DEFAULT_SESSION_CAPS.idleMs;

/** Options of the MCP endpoint. */
export interface McpEndpointOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * Bearer tokens, one per principal: every request must carry one of them; empty or undefined only on
   * loopback (everyone is then one principal). Sessions and their caps belong to the token's principal.
   */
  tokens?: readonly string[];
  /** Address clients use when it is not host:port (behind a TLS proxy): its host and origin are accepted too. */
  publicUrl?: string;
  gateway: Gateway;
  /** Serves 2026-07-28 requests (no session, envelope in `_meta`); without it they are refused as unknown sessions. */
  modern?: ModernFront;
  onRefused?: (reason: string) => void;
  log: (line: string) => void;
  /** Overrides of the connection limits (tests use short timeouts). */
  limits?: Partial<ListenerLimits>;
  /** Overrides of the session caps (tests use small ones). */
  sessionCaps?: Partial<SessionCaps>;
  /** Session idleness and caps are timed by it (default systemClock). */
  clock?: Clock;
}

/** A running endpoint. */
export interface McpEndpoint {
  /** `http://host:port/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function rpcError(res: ServerResponse, status: number, code: number, message: string, extra: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code, message } }, extra);
}

async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
  principal: string,
): Promise<{ ok: true; body: unknown } | { ok: false; status: number; message: string }> {
  // Each principal's share of the body budget is its own: one token cannot take every other's room.
  const r = await readBounded(req, res, MAX_MESSAGE_BYTES, undefined, principal);
  if (!r.ok) return r;
  try {
    return { ok: true, body: JSON.parse(r.body.toString('utf8')) };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON' };
  }
}

/**
 * Starts the endpoint.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address cannot be bound.
 */
export async function startMcpEndpoint(opts: McpEndpointOptions): Promise<McpEndpoint> {
  const clock = opts.clock ?? systemClock;
  const sessions = new Map<string, HttpFrontTransport>();
  const table = new SessionTable({ ...DEFAULT_SESSION_CAPS, ...opts.sessionCaps });
  // A client churning sessions must not flood stderr: one line a second, with how many more there were.
  let lastNoteMs = 0;
  let quiet = 0;
  const note = (line: string) => {
    const now = clock.nowMs();
    if (now - lastNoteMs < 1000) {
      quiet++;
      return;
    }
    opts.log(quiet ? `${line} (and ${quiet} more closed since the last such line)` : line);
    lastNoteMs = now;
    quiet = 0;
  };
  const end = (id: string, why: string) => {
    table.remove(id);
    const t = sessions.get(id);
    if (!t) return;
    note(`MCP endpoint: closed session ${id.slice(0, 8)}… (${why})`);
    void t.close().catch(() => {});
  };
  // Clients that vanish without DELETE must not fill the session table for good.
  const sweeper = setInterval(
    () => {
      for (const id of table.expired(clock.nowMs())) end(id, `no request for ${Math.round(table.caps.idleMs / 60_000)} minutes`);
    },
    Math.min(60_000, table.caps.idleMs),
  );
  sweeper.unref();
  let allowed = allowedHosts(opts.host, opts.port, opts.publicUrl);
  const modernHandler = opts.modern
    ? createMcpHandler(
        // The principal is what was authenticated, named as for 2025 sessions (they share its taint memory):
        // the checked bearer token, else anyone on loopback (an unchecked Authorization header is a claim,
        // and must not buy a fresh taint memory). Only authenticated requests get this far.
        opts.modern.factory((ctx) => principalFor(ctx.requestInfo?.headers.get('authorization') ?? undefined) ?? 'unauthenticated'),
        { legacy: 'reject', onerror: (err) => opts.log(`MCP endpoint (2026-07-28): ${err.message}`) },
      )
    : undefined;
  const modernNode = modernHandler ? toNodeHandler(modernHandler) : undefined;
  const stopRelay = modernHandler
    ? opts.modern?.relayTo((n) => {
        if (n.method === 'notifications/tools/list_changed') modernHandler.notify.toolsChanged();
        else if (n.method === 'notifications/prompts/list_changed') modernHandler.notify.promptsChanged();
        else if (n.method === 'notifications/resources/list_changed') modernHandler.notify.resourcesChanged();
        else if (n.method === 'notifications/resources/updated') {
          const uri = (n.params as { uri?: unknown } | undefined)?.uri;
          if (typeof uri === 'string') modernHandler.notify.resourceUpdated(uri);
        }
      })
    : undefined;
  const expected = (opts.tokens ?? []).map((t) => ({ bearer: Buffer.from(`Bearer ${t}`), principal: tokenPrincipal(t) }));
  /**
   * Which principal an Authorization header authenticates as: `token:<digest>` (the same name for the same
   * token on every replica, whatever line of the token file holds it: held calls and taint follow it),
   * `loopback` without tokens, undefined when none matches.
   */
  function principalFor(authorization: string | undefined): string | undefined {
    if (expected.length === 0) return 'loopback';
    const given = Buffer.from(authorization ?? '');
    let found: string | undefined;
    // Every token is compared (no early exit), each in constant time.
    for (const e of expected) if (given.length === e.bearer.length && timingSafeEqual(given, e.bearer)) found = e.principal;
    return found;
  }
  const principalOf = (req: IncomingMessage): string | undefined => principalFor(header(req, 'authorization'));
  const refuse = (res: ServerResponse, status: number, reason: string, extra: Record<string, string> = {}) => {
    opts.onRefused?.(`MCP endpoint: ${reason}`);
    rpcError(res, status, -32001, `refused: ${reason}`, extra);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = checkHost(req.headers.host, allowed);
    if (!host.ok) return refuse(res, 403, host.reason);
    const origin = checkSameOrigin(header(req, 'origin'), undefined, allowed);
    if (!origin.ok) return refuse(res, 403, origin.reason);
    if (new URL(req.url ?? '/', 'http://x.invalid').pathname !== '/mcp') return rpcError(res, 404, -32601, 'not found: the MCP endpoint is /mcp');
    const principal = principalOf(req);
    if (principal === undefined) return refuse(res, 401, 'missing or wrong bearer token', { 'www-authenticate': 'Bearer realm="lookfirst"' });
    const sessionId = header(req, 'mcp-session-id');
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      // Another principal's session is as unknown as an ended one: its id alone must not let anyone in.
      if (!transport || !table.get(sessionId, principal)) return rpcError(res, 404, -32001, 'unknown or ended MCP session: start a new one with initialize');
      // A standalone event stream (GET) does not make a session busy: it may stay open for good.
      const done = table.begin(sessionId, clock.nowMs(), req.method !== 'GET');
      res.once('close', done);
      if (req.method === 'POST') {
        const parsed = await readJson(req, res, principal);
        if (!parsed.ok) return rpcError(res, parsed.status, -32700, parsed.message, parsed.status === 503 ? { 'retry-after': '1' } : {});
        return transport.handleRequest(req, res, parsed.body);
      }
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return rpcError(res, 400, -32000, 'no MCP session: send initialize first (POST)');
    const parsed = await readJson(req, res, principal);
    if (!parsed.ok) return rpcError(res, parsed.status, -32700, parsed.message, parsed.status === 503 ? { 'retry-after': '1' } : {});
    // 2026-07-28: no session; each request carries its envelope. The SDK's own classification decides.
    if (modernNode && !(await isLegacyRequest(await toWebRequest(req, parsed.body), parsed.body))) return modernNode(req, res, parsed.body);
    if (!isInitializeRequest(parsed.body)) return rpcError(res, 400, -32000, 'no MCP session: the first request must be initialize');
    // Checked here, before a gateway session exists: the SDK would refuse it only after one was made.
    const accept = header(req, 'accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
      return rpcError(res, 406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream');
    const address = req.socket.remoteAddress ?? 'unknown';
    const admission = table.admit(principal, address, clock.nowMs());
    if (admission.kind === 'refuse') {
      opts.onRefused?.(`MCP endpoint: new session refused (${principal}): ${admission.reason}`);
      return rpcError(res, 503, -32000, `too many MCP sessions: ${admission.reason}`, { 'retry-after': '5' });
    }
    for (const id of admission.evict) end(id, table.get(id, principal) ? `the oldest idle session of ${principal}, closed for its new one` : 'idle too long');
    // The slot is taken now, busy until this initialize is answered: concurrent initializes cannot pass a cap.
    const id = randomUUID();
    table.add(id, principal, address, clock.nowMs());
    res.once('close', table.begin(id, clock.nowMs(), true));
    let established = false;
    try {
      // Calls are answered on their own POST by the front transport; the rest of the protocol by the SDK's.
      const transport: HttpFrontTransport = new HttpFrontTransport(
        new StreamableHTTPServerTransport({
          sessionIdGenerator: () => id,
          onsessioninitialized: (sid) => {
            sessions.set(sid, transport);
            established = true;
          },
        }),
      );
      // The principal's taint memory, shared with its other sessions and its 2026-07-28 requests. Allowed
      // reads take the raw fast path: its answers carry the client's request id, by which the transport
      // finds the POST (and its response stream) that the request came on.
      await opts.gateway.serve(transport, { principal });
      const gatewayOnClose = transport.onclose;
      transport.onclose = () => {
        gatewayOnClose?.();
        sessions.delete(id);
        table.remove(id);
      };
      await transport.handleRequest(req, res, parsed.body);
      // The SDK refused the initialize (no session came of it): drop the gateway session made for it.
      if (!established) await transport.close().catch(() => {});
    } finally {
      if (!established) table.remove(id);
    }
  }

  const server = createListener(
    (req, res) => {
      handle(req, res).catch((err) => {
        opts.log(`MCP endpoint: ${(err as Error).message}`);
        if (!res.headersSent) rpcError(res, 500, -32603, 'internal error');
      });
      // Requests in progress are counted per authenticated principal: one token holder's calls cannot
      // fill the cap of every other client on the same address (loopback is one address).
    },
    opts.limits,
    principalOf,
  );
  const port = await listen(server, opts.host, opts.port, 'MCP endpoint', '--port (or http.port)');
  allowed = allowedHosts(opts.host, port, opts.publicUrl);
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${shown}:${port}/mcp`,
    port,
    close: async () => {
      clearInterval(sweeper);
      stopRelay?.();
      await modernHandler?.close().catch(() => {});
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
      await close(server);
    },
  };
}

/** The principal a bearer token authenticates as: a short digest, never the token (gateway/session.ts `isAuthenticated`). */
function tokenPrincipal(token: string): string {
  return `${AUTHENTICATED_PREFIX}${createHash('sha256').update(`lookfirst principal\u0000${token}`).digest('base64url').slice(0, 16)}`;
}
