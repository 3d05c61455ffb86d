/**
 * The session of a Streamable HTTP upstream, seen from the gate: when the server has ended it (it
 * restarted, or dropped it), it answers HTTP 404 to a request carrying its id (MCP spec 2025-11-25,
 * basic/transports §Session Management), and the client must start a new session. Many servers that
 * route sessions through a map (the reference server-everything among them) answer 400 with a JSON-RPC
 * error naming the session instead; that is taken the same way, but only when the error carries no id.
 *
 * Security posture: a session ends only on an answer that is NOT an answer to the request. A body that
 * carries a JSON-RPC message with the request's id (a result or an error, whatever the HTTP status) is the
 * request's answer: the server took it, and it is never sent again. A body too large to read whole, or a
 * 400 that does not name the session with an id-less error, does not end the session either.
 *
 * What may be sent once more on a new session ({@link mayResend}): requests that change nothing upstream
 * (lists, reads, completion, ping...) and a `tools/call` the policy proved read-only. A `tools/call` that
 * may write is sent AT MOST ONCE by the gate, whatever the status said: a hostile or buggy server can run
 * it and then answer 404 (or 400 naming some session), and a second send would run it twice. It fails
 * instead, with its outcome unknown (the caller's interlock and read-back take it from there).
 *
 * A guard around `fetch` remembers every session id that was answered so, and refuses locally (never
 * sending it) any later request that would carry one: the dead id is never sent again, whichever part
 * of the SDK transport would send it (a request, a notification, the SSE stream's reconnection). The
 * answer that ended the session is thrown as a {@link SessionEndedError} naming its status, never handed
 * to the SDK as a response.
 */
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

const ENDED_TEXT = 'the upstream ended this session; a new session is needed';

/** Thrown instead of a response (or instead of sending) when the request's session has ended. */
export class SessionEndedError extends Error {
  /**
   * @param status the HTTP status that ended the session (404, or 400 naming it) with no answer to this
   *   request; undefined when the gate refused to send the request because its session had ended already.
   */
  constructor(readonly status?: number) {
    super(
      status === undefined
        ? `${ENDED_TEXT} (it had ended before this request was sent)`
        : `${ENDED_TEXT} (it answered HTTP ${status}${status === 400 ? ' naming the session' : ''}, with no answer to the request)`,
    );
  }

  /** What said the session ended, in words for stderr. */
  get why(): string {
    if (this.status === undefined) return 'an earlier answer on it said so';
    return `it answered HTTP ${this.status}${this.status === 400 ? ' with an id-less error naming the session' : ''}, with no answer to the request`;
  }

  /** What happened to the request, in words for stderr and error messages. */
  get how(): string {
    if (this.status === undefined) return 'its session had already ended, so it was refused before it was sent';
    return `the upstream answered HTTP ${this.status}${this.status === 400 ? ' with an id-less error naming the session' : ''} and no answer to the request`;
  }
}

/** Methods that change nothing upstream (MCP 2025-11-25), or the same thing twice: sent once more on a new session. */
const RESENDABLE = new Set([
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
]);

/**
 * Whether a request whose session ended may be sent once more on a new session.
 * @param readOnly true only when the policy proved this `tools/call` read-only (the classifier said so).
 * @returns true for a method that changes nothing upstream and for a proven read; false for every other
 *   `tools/call` (it may write: sent at most once) and for any method not known to be safe.
 */
export function mayResend(method: string, readOnly: boolean | undefined): boolean {
  return method === 'tools/call' ? readOnly === true : RESENDABLE.has(method);
}

/** Largest number of ended session ids remembered per upstream (each is one restart or drop). */
const MAX_DEAD_SESSIONS = 1000;
/** Largest 404/400 body read to tell whether it answers the request; a longer one is taken as an answer. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Dead session ids of one upstream, and the fetch that never sends them. */
export class SessionGuard {
  private readonly dead = new Set<string>();

  /** True when the server ended this session. */
  isDead(sessionId: string | undefined): boolean {
    return sessionId !== undefined && this.dead.has(sessionId);
  }

  /**
   * A fetch for the SDK's StreamableHTTPClientTransport.
   * @throws SessionEndedError instead of sending a request with a dead session id, and instead of returning
   *   an answer that ends the session (the session id is dead from then on).
   */
  readonly fetch: FetchLike = async (url, init) => {
    const sessionId = sessionIdIn(init?.headers);
    if (this.isDead(sessionId)) throw new SessionEndedError();
    const { signal, release } = ownSignal(init?.signal ?? undefined);
    let response: Response;
    try {
      response = await fetch(url, signal ? { ...init, signal } : init);
    } catch (err) {
      release();
      throw err;
    }
    // The request's ids are read (a second parse of its body) only when the status could end the session.
    if (sessionId === undefined || !(await endsSession(response, () => requestIdsOf(init?.body)))) return releasedWithBody(response, release);
    release();
    this.end(sessionId);
    response.body?.cancel().catch(() => {});
    throw new SessionEndedError(response.status);
  };

  /** Remembers that the server ended this session: it is never sent again. */
  end(sessionId: string): void {
    this.dead.add(sessionId);
    if (this.dead.size > MAX_DEAD_SESSIONS) this.dead.delete(this.dead.values().next().value as string);
  }
}

/** The `mcp-session-id` of a request's headers, without building a Headers object for a plain record. */
function sessionIdIn(headers: HeadersInit | undefined): string | undefined {
  if (headers === undefined) return undefined;
  if (headers instanceof Headers || Array.isArray(headers)) return new Headers(headers).get('mcp-session-id') ?? undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === 'mcp-session-id') return v;
  return undefined;
}

/** The requests in flight on each long-lived signal, each with a signal of its own. */
const requestsOn = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * A signal of this request's own, aborted with `outer`. The SDK transport gives every request of a
 * connection the same long-lived signal, and fetch (undici) adds an abort listener to it per request that
 * it removes only when the request is garbage-collected: under load they pile up (MaxListenersExceeded-
 * Warning, and fetch scans them on every request). Here `outer` gets ONE listener, whatever the number of
 * requests, which aborts the requests in flight; `release` forgets a request once it settles (it failed,
 * or its body was read to the end, failed or was cancelled). Fetch's own listeners go on the request's
 * signal, which dies with it.
 */
export function ownSignal(outer: AbortSignal | undefined): { signal: AbortSignal | undefined; release: () => void } {
  if (!outer || outer.aborted) return { signal: outer, release: () => {} };
  let inFlight = requestsOn.get(outer);
  if (!inFlight) {
    const set = new Set<AbortController>();
    requestsOn.set(outer, set);
    outer.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(outer.reason);
        set.clear();
      },
      { once: true },
    );
    inFlight = set;
  }
  const controller = new AbortController();
  inFlight.add(controller);
  const set = inFlight;
  return { signal: controller.signal, release: () => void set.delete(controller) };
}

/** Statuses whose response has no body (a Response cannot be built with one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The response, its body passed through so that `release` runs when the body settles. */
function releasedWithBody(response: Response, release: () => void): Response {
  const source = response.body;
  if (!source || NULL_BODY.has(response.status)) {
    release();
    return response;
  }
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            release();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          release();
          controller.error(err);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * True for an error that says a session ended, to keep it off stderr (it is said once, in words, when the
 * next session is opened). Also matches the SDK's wrapping of a refused SSE reconnection. Never use it to
 * decide a resend: an upstream's own error text could match; only a {@link SessionEndedError} may.
 */
export function isSessionEnded(err: unknown): boolean {
  if (err instanceof SessionEndedError) return true;
  return err instanceof Error && err.message.includes(ENDED_TEXT);
}

export type JsonRpcId = string | number;

/** The JSON-RPC ids of the request(s) in a POST body (none for a notification, a GET, or an unreadable body). */
function requestIdsOf(body: unknown): JsonRpcId[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]).map((m) => (isObject(m) ? m.id : undefined)).filter(isId);
  } catch {
    return [];
  }
}

/**
 * 404, or 400 with an id-less JSON-RPC error naming the session, and in either case no JSON-RPC message
 * carrying the request's id: the server does not know the session (any more) and did not answer the request.
 */
async function endsSession(response: Response, idsOf: () => JsonRpcId[]): Promise<boolean> {
  if (response.status !== 404 && response.status !== 400) return false;
  const text = await boundedText(response.clone(), MAX_BODY_BYTES);
  // Too large to read whole: it might hold the answer, so it is taken as one.
  if (text === undefined) return false;
  return endsSessionText(response.status, text, idsOf());
}

/**
 * The decision of {@link endsSession} on a body already read whole (`text`; a body larger than
 * MAX_BODY_BYTES must not be passed: it is an answer).
 */
export function endsSessionText(status: number, text: string, ids: JsonRpcId[]): boolean {
  if (status !== 404 && status !== 400) return false;
  const messages = messagesIn(text);
  // Loose comparison on purpose: "2" for 2 is still an answer to request 2.
  if (messages.some((m) => isId(m.id) && ids.some((id) => String(id) === String(m.id)))) return false;
  if (status === 404) return true;
  return messages.some(
    (m) => (m.id === undefined || m.id === null) && isObject(m.error) && typeof m.error.message === 'string' && /session/i.test(m.error.message),
  );
}

/** The JSON objects in a body: a JSON message or batch, or the `data:` lines of an SSE stream. */
function messagesIn(text: string): Record<string, unknown>[] {
  const parse = (s: string): unknown[] => {
    try {
      const v = JSON.parse(s) as unknown;
      return Array.isArray(v) ? v : [v];
    } catch {
      return [];
    }
  };
  const whole = parse(text);
  const found = whole.length > 0 ? whole : text.split(/\r\n|\r|\n/).flatMap((line) => (line.startsWith('data:') ? parse(line.slice(5)) : []));
  return found.filter(isObject);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || typeof v === 'number';
}

/** A body as text, or undefined when it is longer than `max` bytes (the rest is not read). */
async function boundedText(response: Response, max: number): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > max) {
      // Not awaited: cancelling one branch of a cloned body settles only once the other is cancelled too.
      reader.cancel().catch(() => {});
      return undefined;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Counts a transport's sends in progress. A session the server ended is closed only once every send on
 * it has settled: a send the server refused because the session ended must fail with that (and be sent
 * again, if it may be), not with the ConnectionClosed that closing the client gives every request still waiting.
 * @returns `idle()`, which resolves (a macrotask later, once the SDK has settled its requests) when no
 *   send is in progress.
 */
export function countSends(transport: Transport): { idle: () => Promise<void>; track: <T>(sent: Promise<T>) => Promise<T> } {
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
  /** Counts a send made beside the transport (the raw POSTs of gateway/transport/http-post.ts). */
  const track = <T>(sent: Promise<T>): Promise<T> => {
    inFlight++;
    sent.then(done, done);
    return sent;
  };
  transport.send = (message, options) => track(send(message, options));
  return {
    idle: () => new Promise<void>((resolve) => (inFlight === 0 ? setImmediate(resolve) : waiters.push(resolve))),
    track,
  };
}
