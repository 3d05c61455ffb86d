/**
 * Newline-delimited JSON-RPC framing for stdio (MCP spec, transports §stdio), read once and checked once.
 *
 * The SDK's stdio transports parse every message twice over (JSON, then a zod schema of the whole
 * message, result included); on the gate's read path that second pass is pure cost, since the gate
 * forwards results raw. Here a line is parsed with JSON.parse and its JSON-RPC 2.0 envelope checked by
 * hand, nothing deeper. Robustness (shared cases BR-07, BR-09, BR-11): a trailing CR is dropped, empty
 * lines are skipped, non-JSON-RPC lines are reported and dropped, a line longer than `maxBytes` is
 * discarded up to its newline with memory bounded, and acceptance never depends on how bytes were chunked.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Default largest message (bytes): 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Splits a byte stream into JSON-RPC messages. */
export class LineReader {
  private chunks: Buffer[] = [];
  private pending = 0;
  private discarding = false;

  /**
   * @param onMessage called with each well-formed message.
   * @param onError called with a reason for each dropped line (noise, malformed, oversized).
   */
  constructor(
    private readonly onMessage: (m: JSONRPCMessage) => void,
    private readonly onError: (err: Error) => void,
    private readonly maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
    /** Called with a JSON object that is not a valid message (so a server can answer -32600). */
    private readonly onInvalid?: (value: Record<string, unknown>) => void,
  ) {}

  /** Feeds a chunk; emits every message it completes. */
  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const tail = chunk.subarray(start, nl);
      if (this.discarding) {
        this.discarding = false;
      } else if (this.pending === 0) {
        this.line(tail);
      } else {
        this.chunks.push(tail);
        this.line(Buffer.concat(this.chunks, this.pending + tail.length));
      }
      this.chunks = [];
      this.pending = 0;
      start = nl + 1;
    }
    if (start < chunk.length && !this.discarding) {
      const rest = chunk.subarray(start);
      this.pending += rest.length;
      if (this.pending > this.maxBytes) {
        this.onError(new Error(`a message exceeded the ${this.maxBytes}-byte limit and was dropped`));
        this.chunks = [];
        this.pending = 0;
        this.discarding = true;
      } else {
        this.chunks.push(rest);
      }
    }
  }

  private line(bytes: Buffer): void {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 13) end--;
    if (end === 0) return;
    const text = bytes.toString('utf8', 0, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.onError(new SyntaxError(`not JSON: ${text.slice(0, 80)}`));
      return;
    }
    if (isJsonRpcMessage(value)) this.onMessage(value);
    else {
      this.onError(new SyntaxError(`not a JSON-RPC 2.0 message: ${text.slice(0, 80)}`));
      if (isObject(value)) this.onInvalid?.(value);
    }
  }
}

/**
 * Checks the JSON-RPC 2.0 envelope: a request or notification (string method, object params if any,
 * string or number id if any), or a response (string or number id with an object result, or an error with
 * a numeric code and a string message). Batches are not part of MCP since 2025-06-18 and are rejected.
 */
export function isJsonRpcMessage(v: unknown): v is JSONRPCMessage {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const m = v as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  const idOk = typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id));
  if (typeof m.method === 'string') {
    if (!((m.id === undefined || idOk) && (m.params === undefined || isObject(m.params)))) return false;
    // The SDK's schema requires `_meta` to be an object and drops a request whose `_meta` is not, without
    // an answer: refused here instead, so the client gets -32600 rather than waiting for its timeout.
    const meta = isObject(m.params) ? m.params._meta : undefined;
    if (meta === undefined) return true;
    if (!isObject(meta)) return false;
    const token = meta.progressToken;
    return token === undefined || typeof token === 'string' || (typeof token === 'number' && Number.isInteger(token));
  }
  if (!idOk) return false;
  if ('result' in m) return isObject(m.result);
  if (isObject(m.error)) return typeof m.error.code === 'number' && typeof m.error.message === 'string';
  return false;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One message as a line: JSON plus "\n" (never CRLF, on any OS). */
export function serializeLine(message: JSONRPCMessage): string {
  return `${JSON.stringify(message)}\n`;
}
