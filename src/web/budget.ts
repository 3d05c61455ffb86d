/**
 * Request bodies held in memory, bounded one by one and all together. Every listener of the gate reads
 * bodies through `readBounded`, against one process-wide `ByteBudget`: a body is refused with 413 when it
 * alone is too large (its Content-Length is checked before a byte is read), and with 503 when the bytes
 * all requests hold at once would pass the budget. A body's bytes count until its response has closed
 * (the parsed message lives that long). Fail closed: a body that cannot be reserved is not read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bytes of request bodies that all listeners together may hold at once (two largest MCP messages). */
export const DEFAULT_TOTAL_BODY_BYTES = 128 * 1024 * 1024;

/** A count of bytes held, never past `maxBytes`. */
export class ByteBudget {
  private used = 0;

  /** @param maxBytes the most bytes held at once. */
  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get usedBytes(): number {
    return this.used;
  }

  /** Takes `n` bytes; false (and nothing taken) when that would pass the budget. */
  tryReserve(n: number): boolean {
    if (n < 0 || this.used + n > this.maxBytes) return false;
    this.used += n;
    return true;
  }

  /** Gives `n` bytes back. */
  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

/** The budget every listener in this process shares. */
export const requestBytes = new ByteBudget(DEFAULT_TOTAL_BODY_BYTES);

/** Outcome of reading a body: the bytes, or the status and sentence to answer with. */
export type BodyResult = { ok: true; body: Buffer } | { ok: false; status: 400 | 413 | 503; message: string };

/**
 * Reads a request's whole body within `maxBytes` and the shared budget. On refusal the connection is
 * marked to close after the answer, so the rest of the body is never read.
 * @param res the response whose close gives the bytes back.
 */
export function readBounded(req: IncomingMessage, res: ServerResponse, maxBytes: number, budget: ByteBudget = requestBytes): Promise<BodyResult> {
  const refuse = (status: 413 | 503, message: string): BodyResult => {
    res.shouldKeepAlive = false;
    req.pause();
    return { ok: false, status, message };
  };
  const tooLarge = () => refuse(413, `the request body is larger than ${maxBytes} bytes, the most one request may carry: send a smaller one`);
  const busy = () =>
    refuse(503, `the gate is holding as many request bytes as it may (${budget.maxBytes} bytes across all requests in progress): retry in a moment`);
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(tooLarge());
  let held = 0;
  res.once('close', () => budget.release(held));
  if (Number.isFinite(declared) && declared > 0) {
    if (!budget.tryReserve(declared)) return Promise.resolve(busy());
    held = declared;
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: BodyResult) => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      resolve(r);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) return finish(tooLarge());
      if (size > held) {
        if (!budget.tryReserve(size - held)) return finish(busy());
        held = size;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => finish({ ok: true, body: Buffer.concat(chunks) }));
    req.once('error', () => finish({ ok: false, status: 400, message: 'the request body could not be read' }));
    req.once('close', () => finish({ ok: false, status: 400, message: 'the request body could not be read' }));
  });
}
