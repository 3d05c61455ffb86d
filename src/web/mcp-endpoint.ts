/**
 * The gate over Streamable HTTP (MCP spec 2025-11-25, basic/transports): one endpoint, `/mcp`, one MCP
 * session per client (`Mcp-Session-Id`), each an isolated gateway session: its request ids and held
 * approvals are its own. Before anything reaches MCP: Host must be this endpoint's own address and
 * Origin, when sent, its own origin (DNS rebinding, as on the approval page); with a token, every request
 * needs `Authorization: Bearer <token>` (else 401, nothing runs). Upstream legs are independent: the
 * client's session id never goes upstream, each upstream has its own session.
 * The token authenticates; it does not encrypt. Beyond this host, put TLS in front.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { Gateway } from '../gateway/gateway.js';
import type { ModernFront } from '../gateway/modern.js';
import { MAX_MESSAGE_BYTES } from '../gateway/upstream.js';
import { allowedHosts, checkHost, checkSameOrigin } from './guards.js';
import { close, header, listen, sendJson } from './http.js';

/** Most MCP sessions at once. */
const MAX_SESSIONS = 256;
/** A session with no request for this long is closed (a client that left without DELETE), in ms. */
export const SESSION_IDLE_MS = 30 * 60_000;

/** Options of the MCP endpoint. */
export interface McpEndpointOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Bearer token every request must carry; undefined only on loopback. */
  token?: string;
  /** Address clients use when it is not host:port (behind a TLS proxy): its host and origin are accepted too. */
  publicUrl?: string;
  gateway: Gateway;
  /** Serves 2026-07-28 requests (no session, envelope in `_meta`); without it they are refused as unknown sessions. */
  modern?: ModernFront;
  onRefused?: (reason: string) => void;
  log: (line: string) => void;
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

function readJson(req: IncomingMessage): Promise<{ ok: true; body: unknown } | { ok: false; status: number; message: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_MESSAGE_BYTES) {
        resolve({ ok: false, status: 413, message: `message larger than ${MAX_MESSAGE_BYTES} bytes` });
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve({ ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolve({ ok: false, status: 400, message: 'Parse error: the body is not JSON' });
      }
    });
    req.on('error', () => resolve({ ok: false, status: 400, message: 'the request body could not be read' }));
  });
}

/**
 * Starts the endpoint.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address cannot be bound.
 */
export async function startMcpEndpoint(opts: McpEndpointOptions): Promise<McpEndpoint> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  // Clients that vanish without DELETE must not fill the session table for good.
  const sweeper = setInterval(() => {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const [id, seen] of lastSeen) {
      if (seen < cutoff) {
        lastSeen.delete(id);
        void sessions
          .get(id)
          ?.close()
          .catch(() => {});
      }
    }
  }, 60_000);
  sweeper.unref();
  let allowed = allowedHosts(opts.host, opts.port, opts.publicUrl);
  const modernHandler = opts.modern
    ? createMcpHandler(
        // The principal is what was authenticated: the checked bearer token, else anyone on loopback (an
        // unchecked Authorization header is a claim, and must not buy a fresh taint memory).
        opts.modern.factory(
          (ctx) => opts.modern?.principalOf(opts.token === undefined ? 'anyone on loopback' : (ctx.requestInfo?.headers.get('authorization') ?? '')) ?? '',
        ),
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
  const expected = opts.token === undefined ? undefined : Buffer.from(`Bearer ${opts.token}`);
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
    if (expected) {
      const given = Buffer.from(header(req, 'authorization') ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return refuse(res, 401, 'missing or wrong bearer token', { 'www-authenticate': 'Bearer realm="lookfirst"' });
    }
    const sessionId = header(req, 'mcp-session-id');
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (!transport) return rpcError(res, 404, -32001, 'unknown or ended MCP session: start a new one with initialize');
      lastSeen.set(sessionId, Date.now());
      if (req.method === 'POST') {
        const parsed = await readJson(req);
        if (!parsed.ok) return rpcError(res, parsed.status, -32700, parsed.message);
        return transport.handleRequest(req, res, parsed.body);
      }
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return rpcError(res, 400, -32000, 'no MCP session: send initialize first (POST)');
    const parsed = await readJson(req);
    if (!parsed.ok) return rpcError(res, parsed.status, -32700, parsed.message);
    // 2026-07-28: no session; each request carries its envelope. The SDK's own classification decides.
    if (modernNode && !(await isLegacyRequest(await toWebRequest(req, parsed.body), parsed.body))) return modernNode(req, res, parsed.body);
    if (!isInitializeRequest(parsed.body)) return rpcError(res, 400, -32000, 'no MCP session: the first request must be initialize');
    if (sessions.size >= MAX_SESSIONS) return rpcError(res, 503, -32000, `too many MCP sessions (${MAX_SESSIONS}); close some clients`);
    // Checked here, before a gateway session exists: the SDK would refuse it only after one was made.
    const accept = header(req, 'accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
      return rpcError(res, 406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        lastSeen.set(id, Date.now());
      },
    });
    await opts.gateway.serve(transport, { fastPath: false });
    const gatewayOnClose = transport.onclose;
    transport.onclose = () => {
      gatewayOnClose?.();
      if (transport.sessionId) {
        sessions.delete(transport.sessionId);
        lastSeen.delete(transport.sessionId);
      }
    };
    await transport.handleRequest(req, res, parsed.body);
    // The SDK refused the initialize (no session came of it): drop the gateway session made for it.
    if (!transport.sessionId || !sessions.has(transport.sessionId)) await transport.close().catch(() => {});
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.log(`MCP endpoint: ${(err as Error).message}`);
      if (!res.headersSent) rpcError(res, 500, -32603, 'internal error');
    });
  });
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
