/**
 * Over 400 lines: connecting, reconnecting after a crash and renewing an HTTP session are one connection's lifecycle, sharing its state.
 *
 * One upstream MCP server, seen from the gate: an SDK Client on stdio or Streamable HTTP, connected at
 * start and, after a crash, lazily reconnected (at most once a second). A request that was in flight when
 * the connection died fails with ConnectionClosed and is never re-sent: replaying a write is worse than
 * reporting that its outcome is unknown.
 *
 * A Streamable HTTP upstream that ended the session (it restarted: HTTP 404 for the old session id, with
 * no JSON-RPC answer to the request) gets one new session, transparently; the dead id is never sent again
 * (gateway/transport/http-session.ts), and stderr says so, naming the status. The request that found out
 * is sent once more on the new session only when that cannot run anything twice: a method that changes
 * nothing upstream, or a `tools/call` its caller proved read-only (`readOnly`). Any other `tools/call` is
 * sent AT MOST ONCE: it fails with its outcome unknown (the server may have run it before answering 404),
 * and the caller's interlock and read-back take over. An answer that carries the request's id is its
 * answer, whatever the HTTP status, and never ends the session.
 *
 * Raw requests (the read fast path) to an HTTP upstream go out as POSTs of their own on kept-alive
 * connections, in the SDK transport's session, their answers read once (gateway/transport/http-post.ts);
 * an answer that ends without a response fails the request at once (ConnectionClosed) instead of waiting
 * for the timeout. The SDK transport's own requests get a signal each (one listener on the connection's).
 *
 * Over 400 lines: connecting, reconnecting, the SDK path and the raw path share one connection's state
 * (its client, session guard and in-flight raw requests); the transports themselves are in transport/.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema, type Notification, type Result, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, systemClock } from '../clock.js';
import type { UpstreamConfig } from '../config/load.js';
import type { DeclaredTool } from './declared.js';
import { isPlainObject, RAW_RESULT } from './raw.js';
import type { TraceContext } from './tracing.js';
import { HttpPoster, RedirectedError } from './transport/http-post.js';
import { countSends, isSessionEnded, mayResend, SessionEndedError, SessionGuard } from './transport/http-session.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './transport/lines.js';
import { ChildProcessTransport } from './transport/stdio-client.js';
import { ErrorCode, hideUrlSecrets, plainMessage, WireError } from './wire-error.js';

/** Largest message accepted on stdio, from an upstream or the client (bytes). */
export const MAX_MESSAGE_BYTES = DEFAULT_MAX_MESSAGE_BYTES;
const RECONNECT_INTERVAL_MS = 1000;

/** Options of one forwarded request. */
export interface ForwardOptions {
  signal?: AbortSignal;
  /** Called with each progress notification's params (without the upstream's token). */
  onprogress?: (progress: Record<string, unknown>) => void;
  /**
   * Set only when the policy proved this `tools/call` read-only: if its session ends before the server
   * takes it, it is sent once more on a new session. Any other `tools/call` is sent at most once.
   */
  readOnly?: boolean;
  /**
   * `tools/call` through gateway/tool-result.ts: the gate's span for this request, put in the request's
   * `_meta` (replacing a `traceparent`/`tracestate` the client sent) so the upstream's spans are its children.
   */
  trace?: TraceContext;
}

/** The upstream's answer to a raw request: its JSON-RPC response as sent, or why none will come. */
export type RawReply = { kind: 'response'; message: Record<string, unknown> } | { kind: 'failed'; error: WireError };

interface RawPending {
  reply: (r: RawReply) => void;
  timer: NodeJS.Timeout;
  /** The connection it was sent on, and whether the send finished (the upstream has it). */
  via: Transport;
  delivered?: boolean;
  /** Drops its HTTP request (a raw POST), once its answer is no longer wanted. */
  abort?: () => void;
}

/** Events an upstream reports to the gateway. */
export interface UpstreamEvents {
  notification: (upstream: Upstream, n: Notification) => void;
  log: (message: string) => void;
  /** A request from the upstream to the client (elicitation, sampling) during a call; throws to refuse it. */
  request?: (upstream: Upstream, method: string, params: Record<string, unknown> | undefined, signal: AbortSignal) => Promise<Result>;
  /** A connection was opened again after the first (the server restarted: its tools may differ). */
  reconnected?: (upstream: Upstream) => void;
}

/**
 * An upstream that lives in the gate's own process (the library's `createGatedServer`): the server
 * author's tools on an SDK server, reached through an in-memory transport instead of a child process or
 * a URL. Everything else (the catalogue, the pipeline, the audit) treats it as any upstream.
 */
export interface InProcessUpstream {
  /** Opens a fresh connection: the client end of a linked pair whose server end the author's tools serve. */
  connect: () => Promise<Transport>;
  /** The author's declarations, by the tool's own name (trusted: gateway/declared.ts). */
  declared: ReadonlyMap<string, DeclaredTool>;
}

/** A connection to one upstream server. */
export class Upstream {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private lastAttemptMs = 0;
  private lastError = '';
  private shuttingDown = false;
  private everConnected = false;
  private transportInUse: Transport | undefined;
  private readonly raw = new Map<string, RawPending>();
  /** Raw requests waiting for a new session, to be sent once more (their session ended). */
  private readonly resending = new Map<string, RawPending>();
  /** HTTP upstreams: the session ids the server ended, never sent again. */
  private readonly sessions: SessionGuard | undefined;
  /** Per HTTP connection (its transport): its sends in progress, raw POSTs included. */
  private readonly sendsOf = new WeakMap<Transport, ReturnType<typeof countSends>>();
  /** HTTP upstreams: raw requests go out here, on kept-alive connections (gateway/transport/http-post.ts). */
  private readonly poster: HttpPoster | undefined;
  /** Set once the upstream answered a raw POST with a redirect: raw requests then go through the SDK transport. */
  private rawThroughSdk = false;
  private nextRawId = 1;
  /** Lines on stdout that were not JSON-RPC (dropped, counted). */
  noiseLines = 0;

  constructor(
    readonly config: UpstreamConfig,
    private readonly events: UpstreamEvents,
    private readonly clock: Clock = systemClock,
    /** Set for the library's in-process upstream: its transport and its trusted declarations. */
    readonly inProcess?: InProcessUpstream,
  ) {
    if (config.kind === 'http') {
      this.sessions = new SessionGuard();
      this.poster = new HttpPoster(new URL(config.url), config.headers, this.sessions, MAX_MESSAGE_BYTES);
    }
  }

  get name(): string {
    return this.config.name;
  }

  /** Capabilities the upstream declared, once connected. */
  get capabilities(): ServerCapabilities | undefined {
    return this.client?.getServerCapabilities();
  }

  /** The upstream's `instructions` from initialize, once connected. */
  get instructions(): string | undefined {
    return this.client?.getInstructions();
  }

  /** True while a connection is open. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /**
   * Connects (or returns the open connection).
   * @throws WireError ConnectionClosed with a sentence naming the upstream when it cannot be reached.
   */
  async connect(): Promise<Client> {
    if (this.client) return this.client;
    if (this.shuttingDown) throw this.unavailable('the gate is shutting down');
    if (this.connecting) return this.connecting;
    const now = this.clock.nowMs();
    if (now - this.lastAttemptMs < RECONNECT_INTERVAL_MS && this.lastError) {
      throw this.unavailable(this.lastError);
    }
    this.lastAttemptMs = now;
    this.connecting = this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<Client> {
    // Elicitation and sampling are declared so that an upstream may ask the client during a call; the
    // gateway relays such a question to the one client that has a call in flight here, or refuses it.
    const client = new Client({ name: 'lookfirst', version: '0.1.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
    let transport: Transport;
    try {
      transport = this.inProcess ? await this.inProcess.connect() : this.transport();
    } catch (err) {
      this.lastError = hideUrlSecrets(plainMessage(err));
      throw this.unavailable(this.lastError);
    }
    client.fallbackNotificationHandler = async (n) => this.events.notification(this, n);
    client.fallbackRequestHandler = async (req, extra) => {
      if (!this.events.request) throw new WireError(ErrorCode.MethodNotFound, `Method not found: ${req.method}`);
      return this.events.request(this, req.method, isPlainObject(req.params) ? req.params : undefined, extra.signal);
    };
    client.onerror = (err) => {
      // A session the server ended is said once, in words, when the gate opens the next one (retire()).
      if (isSessionEnded(err)) return;
      // Non-protocol lines on a stdio upstream's stdout (version banners, log lines) land here.
      if (err instanceof SyntaxError) {
        this.noiseLines++;
        this.events.log(`upstream ${this.name}: dropped a non-protocol line on stdout (${this.noiseLines} so far)`);
      } else {
        this.events.log(`upstream ${this.name}: ${hideUrlSecrets(err.message)}`);
      }
    };
    client.onclose = () => {
      // Only this connection's raw requests: a retired one's were failed by retire(), and by now raw
      // requests may be waiting on the next connection.
      if (this.client === client) {
        this.failRaw(new WireError(ErrorCode.ConnectionClosed, `upstream "${this.name}" closed the connection`));
        this.client = undefined;
        this.transportInUse = undefined;
        this.lastError = 'the connection closed';
        this.events.log(`upstream ${this.name}: connection closed; it will be reconnected on next use`);
      }
    };
    try {
      await client.connect(transport, { timeout: this.config.timeoutMs });
    } catch (err) {
      this.lastError = hideUrlSecrets(plainMessage(err));
      await client.close().catch(() => {});
      throw this.unavailable(this.lastError);
    }
    this.lastError = '';
    this.client = client;
    this.transportInUse = transport;
    if (transport instanceof StreamableHTTPClientTransport) this.sendsOf.set(transport, countSends(transport));
    if (this.everConnected) queueMicrotask(() => this.events.reconnected?.(this));
    this.everConnected = true;
    // Responses to raw requests (ids the gate minted, strings the SDK never uses) bypass the SDK client.
    const sdkOnMessage = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
      if (this.takeRaw(m as unknown as Record<string, unknown>)) return;
      (sdkOnMessage as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(m, extra);
    };
    return client;
  }

  /** Answers a raw request with its response, when `m` is one. @returns true when it was. */
  private takeRaw(m: Record<string, unknown>): boolean {
    if ('method' in m || typeof m.id !== 'string') return false;
    const pending = this.raw.get(m.id);
    if (!pending) return false;
    this.raw.delete(m.id);
    clearTimeout(pending.timer);
    // Checked here for raw POSTs, whose messages no schema saw (the SDK transport validates its own).
    if (!('result' in m) && !isPlainObject(m.error)) {
      pending.reply({
        kind: 'failed',
        error: new WireError(ErrorCode.InternalError, `upstream "${this.name}" sent a response with neither a result nor an error`),
      });
    } else pending.reply({ kind: 'response', message: m });
    return true;
  }

  /**
   * Sends a raw request on a connection: over HTTP as a POST of its own on kept-alive connections, its
   * answer read once and handed over as the SDK transport would (gateway/transport/http-post.ts); on
   * stdio, or after the upstream redirected a raw POST, through the transport.
   * @returns a promise that resolves once the upstream took the request.
   */
  private post(transport: Transport, id: string, pending: RawPending, message: JSONRPCMessage): Promise<void> {
    const poster = this.poster;
    if (!poster || this.rawThroughSdk || !(transport instanceof StreamableHTTPClientTransport)) return transport.send(message);
    const post = poster.post(
      message,
      id,
      { sessionId: transport.sessionId, protocolVersion: transport.protocolVersion },
      {
        message: (m) => this.receive(transport, m),
        unanswered: (why) => {
          if (this.raw.get(id) !== pending) return;
          this.raw.delete(id);
          clearTimeout(pending.timer);
          pending.reply({ kind: 'failed', error: new WireError(ErrorCode.ConnectionClosed, `upstream "${this.name}" ${why}`) });
        },
      },
    );
    pending.abort = post.abort;
    const sent = this.sendsOf.get(transport)?.track(post.sent) ?? post.sent;
    return sent.catch((err: unknown) => {
      if (!(err instanceof RedirectedError)) throw err;
      // Not taken: the SDK transport follows same-origin redirects; raw requests go its way from now on.
      this.rawThroughSdk = true;
      this.events.log(`upstream ${this.name}: ${err.message}; raw requests now go through the SDK transport, which follows same-origin redirects`);
      pending.abort = undefined;
      return transport.send(message);
    });
  }

  /** A message that came with the answer to a raw POST: a raw response, or (schema-checked) one for the SDK client. */
  private receive(transport: Transport, m: Record<string, unknown>): void {
    if (this.takeRaw(m)) return;
    const parsed = JSONRPCMessageSchema.safeParse(m);
    if (!parsed.success) {
      this.events.log(`upstream ${this.name}: dropped a message that is not JSON-RPC in an answer`);
      return;
    }
    transport.onmessage?.(parsed.data);
  }

  /**
   * Sends a request as raw JSON-RPC on the open connection, outside the SDK client: the gate's read fast
   * path, where the result must reach the client byte-for-byte and the SDK's bookkeeping is pure cost.
   * Times out after the upstream's `timeout_seconds` (cancelling upstream).
   * @param opts.readOnly as in {@link ForwardOptions}: whether a `tools/call` may be sent once more.
   * @returns the id used upstream, or undefined when not connected (use the SDK path instead).
   */
  sendRaw(method: string, params: Record<string, unknown>, reply: (r: RawReply) => void, opts: { readOnly?: boolean } = {}): string | undefined {
    const transport = this.transportInUse;
    if (!this.client || !transport) return undefined;
    const id = `lf-${this.nextRawId++}`;
    const timer = setTimeout(() => {
      this.cancelRaw(id, 'Request timed out');
      reply({ kind: 'failed', error: new WireError(ErrorCode.RequestTimeout, `upstream "${this.name}" did not answer within ${this.config.timeoutMs} ms`) });
    }, this.config.timeoutMs);
    const pending: RawPending = { reply, timer, via: transport };
    this.raw.set(id, pending);
    const message = { jsonrpc: '2.0', id, method, params } as JSONRPCMessage;
    const fail = (err: Error) => {
      clearTimeout(timer);
      const error = err instanceof WireError ? err : new WireError(ErrorCode.ConnectionClosed, `cannot send to upstream "${this.name}": ${plainMessage(err)}`);
      reply({ kind: 'failed', error });
    };
    const client = this.client;
    const delivered = () => {
      pending.delivered = true;
    };
    this.post(transport, id, pending, message).then(delivered, (err: Error) => {
      if (this.raw.get(id) !== pending) return;
      this.raw.delete(id);
      if (!(err instanceof SessionEndedError)) return fail(err);
      this.retire(client, err);
      if (!this.resendOrRefuse(method, opts.readOnly, err)) return fail(this.notResent(method, err));
      // Not taken: sent once more on a new session (unless it is withdrawn or times out meanwhile).
      this.resending.set(id, pending);
      this.connect()
        .then(() => {
          if (this.resending.get(id) !== pending) return;
          this.resending.delete(id);
          const fresh = this.transportInUse;
          if (!fresh) throw new Error('the new session closed at once');
          pending.via = fresh;
          this.raw.set(id, pending);
          return this.post(fresh, id, pending, message).then(delivered);
        })
        .catch((again: Error) => {
          if (this.resending.get(id) !== pending && this.raw.get(id) !== pending) return;
          this.resending.delete(id);
          this.raw.delete(id);
          fail(again);
        });
    });
    return id;
  }

  /** Withdraws a raw request: forwards `notifications/cancelled` with the upstream id; a late answer is dropped. */
  cancelRaw(id: string, reason: string): void {
    const waiting = this.resending.get(id);
    if (waiting) {
      // Not sent yet (its session ended; a new one is being opened): it simply will not be.
      this.resending.delete(id);
      clearTimeout(waiting.timer);
      return;
    }
    const pending = this.raw.get(id);
    if (!pending) return;
    this.raw.delete(id);
    clearTimeout(pending.timer);
    void this.transportInUse?.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } } as JSONRPCMessage).catch(() => {});
    // Its answer, if one still comes, is dropped: the POST that would carry it need not stay open.
    pending.abort?.();
  }

  private failRaw(error: WireError, only: (p: RawPending) => boolean = () => true): void {
    for (const [id, p] of this.raw) {
      if (!only(p)) continue;
      clearTimeout(p.timer);
      this.raw.delete(id);
      p.abort?.();
      p.reply({ kind: 'failed', error });
    }
  }

  private transport(): Transport {
    const c = this.config;
    if (c.kind === 'http') return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers }, fetch: this.sessions?.fetch });
    return new ChildProcessTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      env: c.env,
      maxBytes: MAX_MESSAGE_BYTES,
      onStderr: (line) => this.events.log(`[${c.name}] ${line}`),
    });
  }

  private unavailable(reason: string): WireError {
    return new WireError(ErrorCode.ConnectionClosed, `upstream "${this.name}" is not reachable (${reason}); check its command or url in the config`);
  }

  /**
   * Sends one request and returns the upstream's result exactly as sent.
   * @throws McpError (from the SDK client): the upstream's own JSON-RPC error, or ConnectionClosed / RequestTimeout.
   */
  async request(method: string, params: Record<string, unknown> | undefined, opts: ForwardOptions = {}): Promise<Result> {
    const client = this.client ?? (await this.connect());
    try {
      return await this.send(client, method, params, opts);
    } catch (err) {
      if (!(err instanceof SessionEndedError)) throw err;
      // The server ended the session and did not answer the request: a new session; the request once
      // more on it only if sending it twice cannot run anything twice.
      this.retire(client, err);
      if (!this.resendOrRefuse(method, opts.readOnly, err)) throw this.notResent(method, err);
      return this.send(await this.connect(), method, params, opts);
    }
  }

  /** Whether a request that met the end of its session is sent once more (said on stderr either way). */
  private resendOrRefuse(method: string, readOnly: boolean | undefined, ended: SessionEndedError): boolean {
    const again = mayResend(method, readOnly);
    this.events.log(
      again
        ? `upstream ${this.name}: ${method} is sent once more, on the new session (${ended.how}; it changes nothing upstream${method === 'tools/call' ? ': a proven read' : ''})`
        : `upstream ${this.name}: ${method} is NOT sent again (${ended.how}); a call that may write is sent at most once, so its outcome is reported as unknown`,
    );
    return again;
  }

  /** The error for a request that is not sent again after its session ended (its outcome is unknown). */
  private notResent(method: string, ended: SessionEndedError): WireError {
    return new WireError(
      ErrorCode.ConnectionClosed,
      `upstream "${this.name}" ended the gate's session as this ${method} went out (${ended.how}); the server may have run it before it answered, and a call that may write is never sent twice, so it was not sent again`,
    );
  }

  /**
   * Leaves a session the server ended: the next use opens a new one (one, however many requests saw the
   * old one die). Requests still waiting on the old session fail with ConnectionClosed (outcome unknown).
   */
  private retire(client: Client | undefined, ended: SessionEndedError): void {
    if (!client || this.client !== client) return;
    this.client = undefined;
    this.transportInUse = undefined;
    this.lastError = '';
    this.events.log(
      `upstream ${this.name}: the server ended the gate's session (${ended.why}: it restarted, or dropped the session); a new session is opened on next use; the old session id is never sent again`,
    );
    // Closed once its sends have settled; then what it delivered will never be answered: those fail.
    const old = client.transport;
    void ((old && this.sendsOf.get(old)?.idle()) ?? Promise.resolve())
      .then(() => {
        this.failRaw(
          new WireError(ErrorCode.ConnectionClosed, `upstream "${this.name}" ended the session while the request was in flight`),
          (p) => p.via === old && p.delivered === true,
        );
        return client.close();
      })
      .catch(() => {});
  }

  private send(client: Client, method: string, params: Record<string, unknown> | undefined, opts: ForwardOptions): Promise<Result> {
    return client.request({ method, params } as never, RAW_RESULT, {
      signal: opts.signal,
      timeout: this.config.timeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: opts.onprogress as never,
    });
  }

  /** Sends a notification if connected (dropped otherwise: there is nobody to tell). */
  async notify(n: Notification): Promise<void> {
    await this.client?.notification(n as never).catch(() => {});
  }

  /** From now on, never (re)connect: the gate is stopping. */
  shutdown(): void {
    this.shuttingDown = true;
  }

  /** Closes the connection (stops a stdio child). */
  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.transportInUse = undefined;
    this.failRaw(new WireError(ErrorCode.ConnectionClosed, `upstream "${this.name}" was closed (the gate is stopping)`));
    await c?.close().catch(() => {});
    this.poster?.close();
  }
}
