/**
 * Request bodies held in memory, bounded one by one and all together. Every listener of the gate reads
 * bodies through `readBounded`, against one process-wide `ByteBudget`: a body is refused with 413 when it
 * alone is too large (its Content-Length is checked before a byte is read), and with 503 when the bytes
 * all requests hold at once would pass the budget, or one owner's share of it (half: one principal or
 * address cannot take it all). A body's bytes count until its response (or its connection) has closed (the parsed
 * message lives that long). Fail closed: a body that cannot be counted is not read further.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bytes of request bodies that all listeners together may hold at once (two largest MCP messages). */
export const DEFAULT_TOTAL_BODY_BYTES = 128 * 1024 * 1024;

/** A count of bytes held, never past `maxBytes` in all nor `maxPerOwnerBytes` for one owner. */
export class ByteBudget {
  private used = 0;
  private readonly byOwner = new Map<string, number>();

  /**
   * @param maxBytes the most bytes held at once.
   * @param maxPerOwnerBytes the most one owner (a principal, a remote address) holds at once; default half.
   */
  constructor(
    readonly maxBytes: number,
    readonly maxPerOwnerBytes: number = Math.floor(maxBytes / 2),
  ) {}

  /** Bytes held now. */
  get usedBytes(): number {
    return this.used;
  }

  /** Takes `n` bytes for `owner`; which bound stopped it (and nothing taken) when that would pass one. */
  reserve(n: number, owner: string): 'ok' | 'total' | 'owner' {
    const mine = this.byOwner.get(owner) ?? 0;
    if (n < 0 || this.used + n > this.maxBytes) return 'total';
    if (mine + n > this.maxPerOwnerBytes) return 'owner';
    this.used += n;
    this.byOwner.set(owner, mine + n);
    return 'ok';
  }

  /** Gives `n` bytes of `owner` back. */
  release(n: number, owner: string): void {
    this.used = Math.max(0, this.used - n);
    const left = (this.byOwner.get(owner) ?? 0) - n;
    if (left > 0) this.byOwner.set(owner, left);
    else this.byOwner.delete(owner);
  }
}

/** The budget every listener in this process shares. */
export const requestBytes = new ByteBudget(DEFAULT_TOTAL_BODY_BYTES);

/** Outcome of reading a body: the bytes, or the status and sentence to answer with. */
export type BodyResult = { ok: true; body: Buffer } | { ok: false; status: 400 | 413 | 503; message: string };

/**
 * Reads a request's whole body within `maxBytes` and the shared budget, counting bytes as they arrive
 * (a declared length is not reserved ahead: holding the budget costs sending the bytes). On refusal the
 * connection is marked to close after the answer, so the rest of the body is never read.
 * @param res the response whose close gives the bytes back.
 * @param owner whose share the bytes count against: the principal, else the remote address.
 */
export function readBounded(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
  budget: ByteBudget = requestBytes,
  owner: string = req.socket.remoteAddress ?? 'unknown',
): Promise<BodyResult> {
  const refuse = (status: 413 | 503, message: string): BodyResult => {
    res.shouldKeepAlive = false;
    req.pause();
    return { ok: false, status, message };
  };
  const tooLarge = () => refuse(413, `the request body is larger than ${maxBytes} bytes, the most one request may carry: send a smaller one`);
  const busy = (why: 'total' | 'owner') =>
    refuse(
      503,
      why === 'total'
        ? `the gate is holding as many request bytes as it may (${budget.maxBytes} bytes across all requests in progress): retry in a moment`
        : `your requests in progress already hold ${budget.maxPerOwnerBytes} bytes, the most one client may: let them finish, then retry`,
    );
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(tooLarge());
  let held = 0;
  let given = false;
  // Given back when the response closes, or when the connection does: Node emits no 'close' for a
  // response queued behind others when its socket dies.
  const socket = req.socket;
  const giveBack = () => {
    if (given) return;
    given = true;
    socket.removeListener('close', giveBack);
    budget.release(held, owner);
  };
  res.once('close', giveBack);
  socket.once('close', giveBack);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (r: BodyResult) => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      resolve(r);
    };
    const onData = (c: Buffer) => {
      if (held + c.length > maxBytes) return finish(tooLarge());
      const got = budget.reserve(c.length, owner);
      if (got !== 'ok') return finish(busy(got));
      held += c.length;
      chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => finish({ ok: true, body: Buffer.concat(chunks) }));
    req.once('error', () => finish({ ok: false, status: 400, message: 'the request body could not be read' }));
    req.once('close', () => finish({ ok: false, status: 400, message: 'the request body could not be read' }));
  });
}
