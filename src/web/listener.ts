/**
 * The one way the gate listens for HTTP: the MCP endpoint, the approval page and the webhook decision
 * endpoint all take their server from `createListener`, so a flood of connections is handled alike.
 *
 * Security posture. A connection costs the attacker nothing until it sends a request, so a connection
 * that is idle (no request in progress: never sent complete headers, or kept alive after a response)
 * never locks anyone out:
 * - it is closed when it has not sent complete headers within `headersTimeoutMs` (Node's own
 *   `headersTimeout` only starts at the first byte: a socket that sends nothing is closed here);
 * - past `maxIdle` idle connections (or `maxIdlePerAddress` from one remote address), idle ones are
 *   closed to make room, one event-loop turn later (after the next round of reads): first those whose
 *   last request was not authenticated (or that never sent one), oldest first, and only then those
 *   whose last request was authenticated (a client's kept-alive socket between its calls).
 * A connection has at most one request in progress: requests pipelined behind it wait, unread by any
 * handler, until its response has ended (past `maxPipelined` waiting, the connection is closed). A request
 * is in progress from its headers until its handler ends the response, or the connection closes: every
 * slot a connection held is given back when it closes, whatever Node says of queued responses.
 * Requests in progress are capped per principal (`maxBusyPerPrincipal`, when `principalOf` authenticates
 * the request) and, for requests not authenticated, per remote address (`maxBusyPerAddress`): past a cap
 * the oldest request of the same principal (or address) whose body is still arriving is closed; when none
 * is, the newcomer gets 503. Nobody else is touched. All connections together are bounded by
 * `maxConnections` (file descriptors). Receiving a whole request is bounded by `requestTimeoutMs`; the
 * response is not, since it may wait for a person, but output the client does not read is: a connection
 * whose queued output has not moved for `drainTimeoutMs` is closed (an answer waiting for a person has
 * written nothing, and is not affected).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type Clock, systemClock } from '../clock.js';

/** Connection limits of a listener (ms and counts). Defaults in DEFAULT_LISTENER_LIMITS. */
export interface ListenerLimits {
  /** A connection must send complete request headers within this long of connecting or of going idle (ms). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this long (ms). */
  requestTimeoutMs: number;
  /** A kept-alive connection with no new request is closed after this long (ms). */
  keepAliveTimeoutMs: number;
  /** A connection whose written output has not drained for this long is closed (ms). */
  drainTimeoutMs: number;
  /** Most connections at once, idle or not (Node's `maxConnections`: the file-descriptor bound). */
  maxConnections: number;
  /** Most idle connections at once; past it idle ones are closed (unauthenticated first, oldest first). */
  maxIdle: number;
  /** Most idle connections from one remote address; past it that address's idle ones are closed likewise. */
  maxIdlePerAddress: number;
  /** Most unauthenticated requests in progress from one remote address; past it the oldest still receiving its body is closed, else 503. */
  maxBusyPerAddress: number;
  /** Most authenticated requests in progress of one principal; past it its oldest still receiving its body is closed, else 503. */
  maxBusyPerPrincipal: number;
  /** Most requests pipelined on one connection behind the one in progress; past it the connection is closed. */
  maxPipelined: number;
}

/** The limits every listener uses unless a test passes shorter ones. */
export const DEFAULT_LISTENER_LIMITS: Readonly<ListenerLimits> = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 5_000,
  drainTimeoutMs: 15_000,
  // Node raises its file-descriptor limit to the hard limit at start; an idle socket costs a few KiB.
  maxConnections: 4096,
  maxIdle: 1024,
  maxIdlePerAddress: 256,
  maxBusyPerAddress: 256,
  maxBusyPerPrincipal: 256,
  maxPipelined: 16,
};

/** The response of each request a listener took, for helpers that only get the request (see readBody). */
const responses = new WeakMap<IncomingMessage, ServerResponse>();

/** The response belonging to a request taken by a listener; undefined for any other request. */
export function responseOf(req: IncomingMessage): ServerResponse | undefined {
  return responses.get(req);
}

/** Whole-request bound of the page and the webhook listener, whose bodies are at most 16 KiB (ms). */
export const SMALL_REQUEST_TIMEOUT_MS = 15_000;

/** A request handler as `createServer` takes it. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Who sent a request, for the in-progress caps: the principal its credentials authenticate (checked, not
 * claimed), or undefined when they authenticate nobody (the request then counts against its address).
 */
export type PrincipalOf = (req: IncomingMessage) => string | undefined;

/** Per-connection bookkeeping. */
interface Conn {
  address: string;
  /** The request in progress, with the function that gives its slot back. */
  current?: { req: IncomingMessage; release: () => void };
  /** Requests pipelined behind `current`, handled in order once it has ended. */
  waiting: [IncomingMessage, ServerResponse][];
  /** Responses not yet closed (written out, or the connection gone). */
  unclosed: number;
  /** True once a request on it completed (its idle timer then includes the keep-alive time). */
  used: boolean;
  /** True when its last request was authenticated: evicted after every other idle connection. */
  trusted: boolean;
  timer?: NodeJS.Timeout;
  /** Output bytes flushed at the last drain check, and since when output has waited without moving. */
  flushed: number;
  stalledSince?: number;
}

/** Idle connections in two tiers, each oldest first (Map keeps insertion order). */
class IdleSet {
  private readonly plain = new Map<Socket, true>();
  private readonly trusted = new Map<Socket, true>();
  get size(): number {
    return this.plain.size + this.trusted.size;
  }
  add(s: Socket, trusted: boolean): void {
    (trusted ? this.trusted : this.plain).set(s, true);
  }
  delete(s: Socket): void {
    this.plain.delete(s);
    this.trusted.delete(s);
  }
  /** The one to close first: the oldest not trusted, else the oldest trusted. */
  first(): Socket | undefined {
    return (this.plain.keys().next().value ?? this.trusted.keys().next().value) as Socket | undefined;
  }
}

/**
 * Creates an HTTP server with the limits above.
 * @param limits overrides of DEFAULT_LISTENER_LIMITS (tests use short timeouts).
 * @param principalOf who a request authenticates as; without it every request counts against its address.
 * @param clock the time source for stalled output (tests inject one).
 * @returns the server, not yet listening (see `listen` in http.ts).
 */
export function createListener(handler: RequestHandler, limits: Partial<ListenerLimits> = {}, principalOf?: PrincipalOf, clock: Clock = systemClock): Server {
  const l = { ...DEFAULT_LISTENER_LIMITS, ...limits };
  const server = createServer({
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: Math.max(l.requestTimeoutMs, l.headersTimeoutMs + 1),
    keepAliveTimeout: l.keepAliveTimeoutMs,
    // How often Node checks the two timeouts above (its default, 30 s, would let them run far over).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(l.headersTimeoutMs / 2))),
  });
  server.maxConnections = l.maxConnections;
  const conns = new Map<Socket, Conn>();
  const idleAll = new IdleSet();
  const idleByAddress = new Map<string, IdleSet>();
  // Requests in progress per principal or address (at most one per connection), oldest first.
  const busy = new Map<string, Map<IncomingMessage, true>>();

  const unidle = (s: Socket, c: Conn) => {
    idleAll.delete(s);
    const mine = idleByAddress.get(c.address);
    mine?.delete(s);
    if (mine?.size === 0) idleByAddress.delete(c.address);
    if (c.timer) clearTimeout(c.timer);
    c.timer = undefined;
  };
  const idle = (s: Socket, c: Conn) => {
    unidle(s, c);
    idleAll.add(s, c.trusted);
    const mine = idleByAddress.get(c.address) ?? new IdleSet();
    idleByAddress.set(c.address, mine);
    mine.add(s, c.trusted);
    c.timer = setTimeout(() => s.destroy(), c.used ? l.keepAliveTimeoutMs + l.headersTimeoutMs : l.headersTimeoutMs);
    c.timer.unref();
    if (mine.size > l.maxIdlePerAddress) crowded.add(c.address);
    if (mine.size > l.maxIdlePerAddress || idleAll.size > l.maxIdle) scheduleSweep();
  };
  // The caps are enforced one event-loop turn later, after the next round of reads: a real client whose
  // request is already on its way has then sent it (it is no longer idle), and only silent sockets go,
  // even when a burst of connections was accepted in the same turn. maxConnections bounds the overshoot.
  const crowded = new Set<string>();
  let sweepPending = false;
  /** Closes an idle connection, taking it out of the idle sets at once (its 'close' comes later). */
  const evict = (s: Socket) => {
    const c = conns.get(s);
    if (c) unidle(s, c);
    idleAll.delete(s);
    s.destroy();
  };
  const sweep = () => {
    sweepPending = false;
    for (const address of crowded) {
      const mine = idleByAddress.get(address);
      for (let v = mine?.first(); mine && v && mine.size > l.maxIdlePerAddress; v = mine.first()) {
        mine.delete(v);
        evict(v);
      }
    }
    crowded.clear();
    for (let v = idleAll.first(); v && idleAll.size > l.maxIdle; v = idleAll.first()) evict(v);
  };
  const scheduleSweep = () => {
    if (sweepPending) return;
    sweepPending = true;
    setImmediate(() => setImmediate(sweep));
  };

  // Output the client does not read: closed once it has not moved for drainTimeoutMs.
  const drainCheck = setInterval(
    () => {
      const now = clock.nowMs();
      for (const [s, c] of conns) {
        const flushed = s.bytesWritten - s.writableLength;
        if (s.writableLength === 0 || flushed !== c.flushed) {
          c.flushed = flushed;
          c.stalledSince = s.writableLength === 0 ? undefined : now;
        } else if (c.stalledSince === undefined) c.stalledSince = now;
        else if (now - c.stalledSince >= l.drainTimeoutMs) s.destroy();
      }
    },
    Math.max(50, Math.min(1_000, Math.floor(l.drainTimeoutMs / 4))),
  );
  drainCheck.unref();
  server.once('close', () => clearInterval(drainCheck));

  server.on('connection', (s: Socket) => {
    const c: Conn = { address: s.remoteAddress ?? 'unknown', waiting: [], unclosed: 0, used: false, trusted: false, flushed: 0 };
    conns.set(s, c);
    s.once('close', () => {
      unidle(s, c);
      conns.delete(s);
      // Node emits no 'close' for responses queued behind others when the socket dies: give back here.
      c.waiting.length = 0;
      c.current?.release();
    });
    idle(s, c);
  });

  /** Handles a request as the connection's one in progress. */
  const begin = (s: Socket, c: Conn, req: IncomingMessage, res: ServerResponse) => {
    const principal = principalOf?.(req);
    const key = principal === undefined ? `address ${c.address}` : `principal ${principal}`;
    const mine = busy.get(key) ?? new Map<IncomingMessage, true>();
    busy.set(key, mine);
    mine.set(req, true);
    c.unclosed++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      mine.delete(req);
      if (mine.size === 0 && busy.get(key) === mine) busy.delete(key);
      if (c.current?.req === req) c.current = undefined;
      c.used = true;
      c.trusted = principal !== undefined;
      const next = c.waiting.shift();
      // Not from inside the handler's own `end`: the next request starts on the next tick.
      if (next) process.nextTick(() => conns.has(s) && !s.destroyed && !c.current && begin(s, c, ...next));
    };
    c.current = { req, release };
    // The slot is given back when the handler ends the response (its output may still be queued).
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const r = end(...args);
      release();
      return r;
    }) as typeof res.end;
    res.once('close', () => {
      release();
      c.unclosed--;
      if (c.unclosed === 0 && !c.current && c.waiting.length === 0 && !s.destroyed && conns.has(s)) idle(s, c);
    });
    const cap = principal === undefined ? l.maxBusyPerAddress : l.maxBusyPerPrincipal;
    if (mine.size > cap) {
      // A request whose body has not all arrived waits on its sender, like an idle connection: the
      // oldest such one of the same principal (or address) gives way. Requests fully received (a call
      // waiting for a person) never do.
      const slow = [...mine.keys()].find((r) => r !== req && !r.complete);
      if (slow) slow.socket.destroy();
      else {
        const whose = principal === undefined ? 'from your address' : 'with your credentials';
        res.shouldKeepAlive = false;
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5', connection: 'close' });
        res.end(`too many requests in progress ${whose} (${cap}): finish or close some, then retry\n`);
        return;
      }
    }
    handler(req, res);
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const s = req.socket;
    const c = conns.get(s);
    responses.set(req, res);
    if (!c) return handler(req, res);
    unidle(s, c);
    if (c.current || c.waiting.length > 0) {
      // Pipelined behind a request in progress: it waits, unhandled and uncounted.
      if (c.waiting.length >= l.maxPipelined) return s.destroy();
      c.waiting.push([req, res]);
      return;
    }
    begin(s, c, req, res);
  });
  return server;
}
