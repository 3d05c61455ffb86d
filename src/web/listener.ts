/**
 * The one way the gate listens for HTTP: the MCP endpoint, the approval page and the webhook decision
 * endpoint all take their server from `createListener`, so a flood of connections is handled alike.
 *
 * Security posture. A connection costs the attacker nothing until it sends a request, so a connection
 * that is idle (no request in progress: never sent complete headers, or kept alive after a response)
 * never locks anyone out:
 * - it is closed when it has not sent complete headers within `headersTimeoutMs` (Node's own
 *   `headersTimeout` only starts at the first byte: a socket that sends nothing is closed here);
 * - past `maxIdle` idle connections (or `maxIdlePerAddress` from one remote address), the ones idle for
 *   longest are closed to make room, one event-loop turn later (after the next round of reads). A real
 *   client sends its request within milliseconds of connecting, and has sent it by then: to push it out
 *   before its headers are read, an attacker must open more connections than the cap in that moment.
 * Requests in progress are capped per remote address (`maxBusyPerAddress`): past it the oldest one whose
 * body is still arriving (a slow sender, waiting on the client like an idle socket) is closed; when none
 * is, the newcomer gets 503. All connections together are bounded by `maxConnections` (file descriptors). Receiving a whole
 * request is bounded by `requestTimeoutMs`; the response is not, since it may wait for a person.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Connection limits of a listener (ms and counts). Defaults in DEFAULT_LISTENER_LIMITS. */
export interface ListenerLimits {
  /** A connection must send complete request headers within this long of connecting or of going idle (ms). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this long (ms). */
  requestTimeoutMs: number;
  /** A kept-alive connection with no new request is closed after this long (ms). */
  keepAliveTimeoutMs: number;
  /** Most connections at once, idle or not (Node's `maxConnections`: the file-descriptor bound). */
  maxConnections: number;
  /** Most idle connections at once; past it the oldest idle one is closed. */
  maxIdle: number;
  /** Most idle connections from one remote address; past it that address's oldest idle one is closed. */
  maxIdlePerAddress: number;
  /** Most requests in progress from one remote address; past it the oldest still receiving its body is closed, else 503. */
  maxBusyPerAddress: number;
}

/** The limits every listener uses unless a test passes shorter ones. */
export const DEFAULT_LISTENER_LIMITS: Readonly<ListenerLimits> = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 5_000,
  // Node raises its file-descriptor limit to the hard limit at start; an idle socket costs a few KiB.
  maxConnections: 4096,
  maxIdle: 1024,
  maxIdlePerAddress: 256,
  maxBusyPerAddress: 256,
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

/** Per-connection bookkeeping. */
interface Conn {
  address: string;
  busy: number;
  /** True once a request on it completed (its idle timer then includes the keep-alive time). */
  used: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * Creates an HTTP server with the limits above.
 * @param limits overrides of DEFAULT_LISTENER_LIMITS (tests use short timeouts).
 * @returns the server, not yet listening (see `listen` in http.ts).
 */
export function createListener(handler: RequestHandler, limits: Partial<ListenerLimits> = {}): Server {
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
  // Idle connections in the order they went idle (Map keeps insertion order): oldest first, in all and
  // per address. Age alone decides: a connection that answered a request once is not spared, or an
  // attacker's kept-alive sockets would outlive every newcomer.
  const idleAll = new Map<Socket, true>();
  const idleByAddress = new Map<string, Map<Socket, true>>();
  // Requests in progress per address, oldest first.
  const busyByAddress = new Map<string, Map<IncomingMessage, true>>();

  const unidle = (s: Socket, c: Conn) => {
    idleAll.delete(s);
    const mine = idleByAddress.get(c.address);
    mine?.delete(s);
    if (mine?.size === 0) idleByAddress.delete(c.address);
    if (c.timer) clearTimeout(c.timer);
    c.timer = undefined;
  };
  const first = (m: Map<Socket, true>) => m.keys().next().value as Socket | undefined;
  const idle = (s: Socket, c: Conn) => {
    idleAll.set(s, true);
    const mine = idleByAddress.get(c.address) ?? new Map<Socket, true>();
    idleByAddress.set(c.address, mine);
    mine.set(s, true);
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
  /** Closes an idle connection, taking it out of the idle maps at once (its 'close' comes later). */
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
      for (let v = mine && first(mine); mine && v && mine.size > l.maxIdlePerAddress; v = first(mine)) {
        mine.delete(v);
        evict(v);
      }
    }
    crowded.clear();
    for (let v = first(idleAll); v && idleAll.size > l.maxIdle; v = first(idleAll)) evict(v);
  };
  const scheduleSweep = () => {
    if (sweepPending) return;
    sweepPending = true;
    setImmediate(() => setImmediate(sweep));
  };

  server.on('connection', (s: Socket) => {
    const c: Conn = { address: s.remoteAddress ?? 'unknown', busy: 0, used: false };
    conns.set(s, c);
    s.once('close', () => {
      unidle(s, c);
      conns.delete(s);
    });
    idle(s, c);
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const s = req.socket;
    const c = conns.get(s);
    responses.set(req, res);
    if (!c) return handler(req, res);
    unidle(s, c);
    c.busy++;
    const mine = busyByAddress.get(c.address) ?? new Map<IncomingMessage, true>();
    busyByAddress.set(c.address, mine);
    mine.set(req, true);
    res.once('close', () => {
      c.busy--;
      c.used = true;
      mine.delete(req);
      if (mine.size === 0 && busyByAddress.get(c.address) === mine) busyByAddress.delete(c.address);
      if (c.busy === 0 && !s.destroyed && conns.has(s)) idle(s, c);
    });
    if (mine.size > l.maxBusyPerAddress) {
      // A request whose body has not all arrived waits on its sender, like an idle connection: the
      // oldest such one gives way. Requests fully received (a call waiting for a person) never do.
      const slow = [...mine.keys()].find((r) => r !== req && !r.complete);
      if (slow) slow.socket.destroy();
      else {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5', connection: 'close' });
        res.end(`too many requests in progress from your address (${l.maxBusyPerAddress}): finish or close some, then retry\n`);
        return;
      }
    }
    handler(req, res);
  });
  return server;
}
