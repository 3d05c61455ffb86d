/**
 * One client's Streamable HTTP session (MCP 2025-11-25, basic/transports), seen from the gate's side: the
 * SDK's StreamableHTTPServerTransport, except for the call path. A POST that carries one `tools/call`
 * request is answered here, without the SDK's conversion of every request and response to web streams
 * and its schema checks of every message (measured, bench/http-load.ts: they cost more than the gate's
 * decision and the upstream leg together).
 *
 * The answer keeps what the SDK transport promises: everything sent for that request (its response, and
 * whatever the gateway sends with `relatedRequestId` meanwhile: an elicitation, progress, a notification)
 * goes back on that POST's response, and only there. The format is chosen by what comes first: the
 * response alone is sent as `application/json`; anything before it opens `text/event-stream` and the
 * response ends it (the spec lets the server choose either for a POST that carries requests; clients must
 * accept both, which is checked, as the SDK does, from the Accept header).
 *
 * Everything else goes to the SDK transport unchanged: initialize, batches, other methods, responses and
 * notifications from the client, GET streams, DELETE, and any POST this does not fully vouch for (a
 * content type, Accept header or protocol version the SDK would refuse, a body that is not one well-formed
 * request, a request id already in flight here), so the SDK's own answers and refusals stay as they were.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

type Id = string | number;

/** A call answered on its own POST's response. */
interface Open {
  res: ServerResponse;
  /** Whether the SSE headers went out (something came before the response). */
  streaming: boolean;
  /** The client went away: what still comes is dropped. */
  gone: boolean;
}

/** A session transport that answers calls itself and leaves the rest of the protocol to the SDK transport. */
export class HttpFrontTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** Calls in flight on their own POST, by request id (1 and "1" are different ids, and keys, here). */
  private readonly open = new Map<Id, Open>();
  private closed = false;

  constructor(readonly sdk: StreamableHTTPServerTransport) {
    sdk.onmessage = (m, extra) => {
      // A client that cancels a call is no longer reading its answer: end that POST's response.
      if ('method' in m && m.method === 'notifications/cancelled') this.cancelled(m.params);
      this.onmessage?.(m, extra);
    };
    sdk.onclose = () => {
      this.endAll();
      this.onclose?.();
    };
    sdk.onerror = (e) => this.onerror?.(e);
  }

  get sessionId(): string | undefined {
    return this.sdk.sessionId;
  }

  start(): Promise<void> {
    return this.sdk.start();
  }

  async close(): Promise<void> {
    this.endAll();
    await this.sdk.close();
  }

  /**
   * Sends through the SDK transport only, never onto a call this transport answers itself: for an answer
   * to a request the SDK transport received whose id is also one of those calls' (a reused id, refused by
   * the gateway), which must go to the POST that carried it.
   */
  sendPastOwnCalls(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.sdk.send(message, options);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isResponse = !('method' in message) && 'id' in message;
    const id = isResponse ? (message.id as Id) : options?.relatedRequestId;
    const open = id === undefined ? undefined : this.open.get(id);
    if (!open || id === undefined) return this.sdk.send(message, options);
    if (isResponse) this.open.delete(id);
    if (open.gone) return;
    const { res } = open;
    const json = JSON.stringify(message);
    if (!open.streaming) {
      if (isResponse) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
        res.writeHead(200, headers).end(json);
        return;
      }
      this.startStream(open);
    }
    res.write(`event: message\ndata: ${json}\n\n`);
    if (isResponse) res.end();
  }

  /**
   * Handles one HTTP request of this session (its session id already checked), `body` parsed already for a POST.
   */
  async handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    const call = req.method === 'POST' ? this.ownCall(req, body) : undefined;
    if (call === undefined) return this.sdk.handleRequest(req, res, body);
    const open: Open = { res, streaming: false, gone: false };
    this.open.set(call.id, open);
    res.once('close', () => {
      if (this.open.get(call.id) === open && !res.writableFinished) open.gone = true;
    });
    const url = new URL(req.url ?? '/mcp', `http://${req.headers.host ?? 'localhost'}`);
    this.onmessage?.(call as unknown as JSONRPCMessage, { requestInfo: { headers: req.headers, url } } as never);
  }

  /** The body as one `tools/call` request this transport answers itself, or undefined to leave it to the SDK. */
  private ownCall(req: IncomingMessage, body: unknown): { id: Id; method: string } | undefined {
    if (this.closed || this.sessionId === undefined) return undefined;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const m = body as Record<string, unknown>;
    if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return undefined;
    const id = m.id;
    if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) return undefined;
    if (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params)) return undefined;
    // In flight already: the gateway refuses the second one, and the SDK keeps that answer apart.
    if (this.open.has(id)) return undefined;
    // What the SDK would refuse, it refuses itself, in its own words.
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') return undefined;
    const version = req.headers['mcp-protocol-version'];
    if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
    return m as { id: Id; method: string };
  }

  private startStream(open: Open): void {
    const headers: Record<string, string> = {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
    };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    open.res.writeHead(200, headers);
    open.streaming = true;
  }

  /** Ends the response of a call the client cancelled: no answer will come on it. */
  private cancelled(params: unknown): void {
    const id = (params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const open = this.open.get(id);
    if (!open) return;
    this.open.delete(id);
    this.finish(open);
  }

  /** The session ends: every call still open ends with an empty stream, as the SDK transport ends its own. */
  private endAll(): void {
    this.closed = true;
    const open = [...this.open.values()];
    this.open.clear();
    for (const o of open) this.finish(o);
  }

  private finish(open: Open): void {
    if (open.gone || open.res.writableEnded) return;
    if (!open.streaming) this.startStream(open);
    open.res.end();
  }
}
