/**
 * The session of a Streamable HTTP upstream, seen from the gate: when the server has ended it (it
 * restarted, or dropped it), it answers HTTP 404 to a request carrying its id (MCP spec 2025-11-25,
 * basic/transports §Session Management), and the client must start a new session. Many servers that
 * route sessions through a map (the reference server-everything among them) answer 400 with a JSON-RPC
 * error naming the session instead; that is taken the same way. Either answer means the server did not
 * take the message, so it may be sent once more on a new session.
 *
 * A guard around `fetch` remembers every session id that was answered so, and refuses locally (never
 * sending it) any later request that would carry one: the dead id is never sent again, whichever part
 * of the SDK transport would send it (a request, a notification, the SSE stream's reconnection).
 */
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

const ENDED_TEXT = 'the upstream ended this session (it answered 404 for it); a new session is needed';

/** Thrown instead of sending a request that would carry a session id the server ended. */
export class SessionEndedError extends Error {
  /** The request was not sent (or the server refused it before taking it): it may be sent again. */
  readonly notDelivered = true;
  constructor() {
    super(ENDED_TEXT);
  }
}

/** Largest number of ended session ids remembered per upstream (each is one restart or drop). */
const MAX_DEAD_SESSIONS = 1000;

/** Dead session ids of one upstream, and the fetch that never sends them. */
export class SessionGuard {
  private readonly dead = new Set<string>();

  /** True when the server ended this session. */
  isDead(sessionId: string | undefined): boolean {
    return sessionId !== undefined && this.dead.has(sessionId);
  }

  /** A fetch for the SDK's StreamableHTTPClientTransport. */
  readonly fetch: FetchLike = async (url, init) => {
    const sessionId = new Headers(init?.headers).get('mcp-session-id') ?? undefined;
    if (this.isDead(sessionId)) throw new SessionEndedError();
    const response = await fetch(url, init);
    if (sessionId !== undefined && (await endsSession(response))) {
      this.dead.add(sessionId);
      if (this.dead.size > MAX_DEAD_SESSIONS) this.dead.delete(this.dead.values().next().value as string);
    }
    return response;
  };
}

/** True for an error that says a request was not taken because its session had ended. */
export function isSessionEnded(err: unknown, guard: SessionGuard | undefined, sessionId: string | undefined): boolean {
  if (err instanceof SessionEndedError) return true;
  // The SDK wraps the refusal of its SSE stream's reconnection in an Error of its own.
  if (err instanceof Error && err.message.includes(ENDED_TEXT)) return true;
  // The SDK's StreamableHTTPError carries the HTTP status as `code`; the guard saw the id die.
  const code = (err as { code?: unknown } | undefined)?.code;
  return (guard?.isDead(sessionId) ?? false) && (code === 400 || code === 404);
}

/** 404, or 400 whose JSON-RPC error names the session: the server does not know the session (any more). */
async function endsSession(response: Response): Promise<boolean> {
  if (response.status === 404) return true;
  if (response.status !== 400) return false;
  try {
    const body = JSON.parse(await firstBytes(response.clone(), 4096)) as { error?: { message?: unknown } };
    return typeof body.error?.message === 'string' && /session/i.test(body.error.message);
  } catch {
    return false;
  }
}

/** The first `max` bytes of a body as text (the rest is not read: a hostile server may send a lot). */
async function firstBytes(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < max) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/**
 * Counts a transport's sends in progress. A session the server ended is closed only once every send on
 * it has settled: a send the server refused because the session ended must fail with that (and be sent
 * again), not with the ConnectionClosed that closing the client gives every request still waiting.
 * @returns `idle()`, which resolves (a macrotask later, once the SDK has settled its requests) when no
 *   send is in progress.
 */
export function countSends(transport: Transport): { idle: () => Promise<void> } {
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  const send = transport.send.bind(transport);
  const done = () => {
    if (--inFlight > 0) return;
    const ready = waiters;
    waiters = [];
    setImmediate(() => {
      for (const f of ready) f();
    });
  };
  transport.send = (message, options) => {
    inFlight++;
    const sent = send(message, options);
    sent.then(done, done);
    return sent;
  };
  return {
    idle: () => new Promise<void>((resolve) => (inFlight === 0 ? setImmediate(resolve) : waiters.push(resolve))),
  };
}
