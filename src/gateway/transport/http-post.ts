/**
 * The lean leg to a Streamable HTTP upstream, for the read fast path (gateway/fast-path.ts,
 * `Upstream.sendRaw`): one POST per request on kept-alive connections (a node:http Agent of the upstream's
 * own, enough sockets for every call in flight), its answer read as it arrives, JSON or SSE, each message
 * parsed once. The SDK transport stays in charge of the session (initialize, the standalone stream,
 * notifications, everything on the SDK path); this only borrows its session id and protocol version.
 *
 * It keeps the session rules of gateway/transport/http-session.ts: a session id the server ended is never
 * sent (refused locally with SessionEndedError), and a 404, or a 400 with an id-less error naming the
 * session, with no answer to the request, ends the session (SessionEndedError with the status). A body
 * that carries the request's answer, or is too large to read whole, never does.
 *
 * What it does not do, and leaves to the SDK transport: redirects (a 3xx is thrown as
 * {@link RedirectedError}, before anything of the answer is read; the caller sends the request on the SDK
 * transport, which follows same-origin ones), authorization flows, resuming a broken stream.
 */
import http from 'node:http';
import https from 'node:https';
import { endsSessionText, MAX_BODY_BYTES, SessionEndedError, type SessionGuard } from './http-session.js';

/** The upstream answered a redirect: the request was not taken; send it where redirects are followed. */
export class RedirectedError extends Error {
  constructor(readonly status: number) {
    super(`the upstream answered HTTP ${status} (a redirect)`);
  }
}

/** The session a POST belongs to, as the SDK transport negotiated it. */
export interface PostSession {
  sessionId?: string;
  protocolVersion?: string;
}

/** Where the answer goes. */
export interface PostHandlers {
  /** Each JSON object of the answer, in order (the request's response, and what the server sent with it). */
  message: (m: Record<string, unknown>) => void;
  /** The answer ended, broke, or could not be read, without a response to the request: why, in words. */
  unanswered: (why: string) => void;
}

/** One POST in flight: `sent` resolves once the server took it (2xx); `abort` drops it and its answer. */
export interface Post {
  sent: Promise<void>;
  abort: () => void;
}

/** Sockets per upstream: every one of 50 concurrent callers (and more) gets its own connection. */
const MAX_SOCKETS = 128;

/** POSTs JSON-RPC requests to one Streamable HTTP upstream. */
export class HttpPoster {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  /** Where every POST goes, worked out once (not from the URL on every request). */
  private readonly target: { protocol: string; hostname: string; port: string; path: string };
  /** Header names of the config, lower-cased: they override the transport's own, as in the SDK transport. */
  private readonly headers: Record<string, string>;

  constructor(
    url: URL,
    headers: Record<string, string>,
    private readonly guard: SessionGuard,
    /** Largest message accepted in an answer (bytes). */
    private readonly maxBytes: number,
  ) {
    const secure = url.protocol === 'https:';
    const options = { keepAlive: true, maxSockets: MAX_SOCKETS, maxFreeSockets: MAX_SOCKETS, scheduling: 'lifo' as const };
    this.agent = secure ? new https.Agent(options) : new http.Agent(options);
    this.request = secure ? https.request : http.request;
    this.target = {
      protocol: url.protocol,
      // node:http wants an IPv6 literal without its brackets.
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || (secure ? '443' : '80'),
      path: `${url.pathname}${url.search}`,
    };
    this.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  }

  /**
   * Sends one request.
   * @param id the request's JSON-RPC id: its response ends the wait for an answer.
   * @param retryStale send it once more when a kept-alive connection turns out closed before anything came
   *   back (only for requests that may be sent twice: proven reads).
   * @returns the POST; `sent` rejects with SessionEndedError (the session is dead, or this answer ended
   *   it), RedirectedError, or an Error saying why the server did not take it.
   */
  post(message: unknown, id: string, session: PostSession, on: PostHandlers, retryStale = true): Post {
    let current: http.ClientRequest | undefined;
    let aborted = false;
    const sent = new Promise<void>((resolve, reject) => {
      if (this.guard.isDead(session.sessionId)) return reject(new SessionEndedError());
      const body = Buffer.from(JSON.stringify(message));
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': body.length,
      };
      if (session.sessionId !== undefined) headers['mcp-session-id'] = session.sessionId;
      if (session.protocolVersion !== undefined) headers['mcp-protocol-version'] = session.protocolVersion;
      Object.assign(headers, this.headers);
      const attempt = (again: boolean) => {
        let answered = false;
        const req = this.request({ ...this.target, method: 'POST', headers, agent: this.agent });
        current = req;
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (aborted || answered) return;
          // A kept-alive connection the server closed as it was reused: nothing was read, send it again.
          if (again && req.reusedSocket && err.code === 'ECONNRESET') return attempt(false);
          reject(new Error(`cannot reach the upstream: ${err.message}`));
        });
        req.on('response', (res) => {
          answered = true;
          this.answer(res, id, session, on, resolve, reject);
        });
        req.end(body);
      };
      attempt(retryStale);
    });
    return {
      sent,
      abort: () => {
        aborted = true;
        current?.destroy();
      },
    };
  }

  /** Reads an answer: hands its messages over, or rejects with what the status says. */
  private answer(res: http.IncomingMessage, id: string, session: PostSession, on: PostHandlers, resolve: () => void, reject: (err: Error) => void): void {
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400) {
      res.resume();
      reject(new RedirectedError(status));
      return;
    }
    if (status < 200 || status >= 300) {
      // Read as much as the session rules need (a longer body might hold the answer: it is one).
      readBounded(res, MAX_BODY_BYTES).then(
        (text) => {
          if (text !== undefined && session.sessionId !== undefined && endsSessionText(status, text, [id])) {
            this.guard.end(session.sessionId);
            return reject(new SessionEndedError(status));
          }
          reject(new Error(`Streamable HTTP error: Error POSTing to endpoint: ${text === undefined ? `HTTP ${status}` : text}`));
        },
        (err: Error) => reject(new Error(`Streamable HTTP error: HTTP ${status}, and its body could not be read (${err.message})`)),
      );
      return;
    }
    resolve();
    if (status === 202) {
      // Taken, with the answer to come elsewhere (the standalone stream): nothing to read here.
      res.resume();
      return;
    }
    const type = (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    let answered = false;
    const message = (m: unknown) => {
      if (typeof m !== 'object' || m === null || Array.isArray(m)) return;
      const o = m as Record<string, unknown>;
      if (o.id === id && !('method' in o)) answered = true;
      on.message(o);
    };
    const finish = (why: string) => {
      if (!answered) on.unanswered(why);
    };
    res.on('error', (err) => finish(`broke off its answer (${err.message})`));
    res.on('aborted', () => finish('broke off its answer'));
    if (type === 'text/event-stream') {
      const sse = new SseReader((data) => {
        try {
          message(JSON.parse(data));
        } catch {
          // Not JSON: not a message (the SDK transport reports it and goes on, so does this).
        }
      }, this.maxBytes);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!sse.push(chunk)) {
          res.destroy();
          finish(`sent an answer larger than ${this.maxBytes} bytes`);
        }
      });
      res.on('end', () => finish('ended its answer stream without answering'));
      return;
    }
    if (type === 'application/json') {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > this.maxBytes) {
          res.destroy();
          return finish(`sent an answer larger than ${this.maxBytes} bytes`);
        }
        chunks.push(c);
      });
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return finish('answered with a body that is not JSON');
        }
        for (const m of Array.isArray(parsed) ? parsed : [parsed]) message(m);
        finish('answered without a response to the request');
      });
      return;
    }
    res.resume();
    finish(`answered with an unexpected content type (${type || 'none'})`);
  }

  /** Closes the kept-alive connections (the upstream is closed). */
  close(): void {
    this.agent.destroy();
  }
}

/** A body as text, or undefined when it is longer than `max` bytes (the rest is not read). */
function readBounded(res: http.IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        res.destroy();
        resolve(undefined);
      } else chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/**
 * Server-sent events (WHATWG HTML §9.2) read incrementally: each `message` event's data goes to `onData`
 * (events of other types, comments, ids and retry fields are skipped).
 */
export class SseReader {
  private buffer = '';
  private data: string[] = [];
  private dataBytes = 0;
  private event = '';
  /** Whether the last chunk ended in CR (a CRLF may be split across chunks). */
  private lastCr = false;
  /** Whether the buffer holds a CR at all (most streams use LF only: one search per line then). */
  private hasCr = false;

  constructor(
    private readonly onData: (data: string) => void,
    private readonly maxBytes: number,
  ) {}

  /** @returns false when an event grew larger than `maxBytes` (stop reading). */
  push(chunk: string): boolean {
    let text = chunk;
    if (this.lastCr && text.startsWith('\n')) text = text.slice(1);
    this.lastCr = text.endsWith('\r');
    this.buffer += text;
    this.hasCr = this.buffer.includes('\r');
    let start = 0;
    for (;;) {
      const nl = this.nextBreak(start);
      if (nl < 0) break;
      const line = this.buffer.slice(start, nl);
      start = nl + (this.buffer[nl] === '\r' && this.buffer[nl + 1] === '\n' ? 2 : 1);
      this.line(line);
    }
    this.buffer = this.buffer.slice(start);
    return this.buffer.length + this.dataBytes <= this.maxBytes;
  }

  private nextBreak(from: number): number {
    const n = this.buffer.indexOf('\n', from);
    if (!this.hasCr) return n;
    const r = this.buffer.indexOf('\r', from);
    if (r < 0) return n;
    if (n < 0) return r;
    return Math.min(n, r);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0 && (this.event === '' || this.event === 'message')) this.onData(this.data.join('\n'));
      this.data = [];
      this.dataBytes = 0;
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataBytes += value.length;
    } else if (field === 'event') this.event = value;
  }
}
