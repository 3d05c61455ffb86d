/**
 * The gate's client-facing stdio transport: MCP messages as lines on stdin/stdout (see lines.ts for why
 * not the SDK's own). stdout carries protocol messages only.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_MESSAGE_BYTES, LineReader, serializeLine } from './lines.js';

/** MCP server transport over a pair of streams (process.stdin / process.stdout in the CLI). */
export class LineServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;
  private readonly reader: LineReader;
  private readonly onData = (chunk: Buffer) => this.reader.push(chunk);
  private readonly onEnd = () => void this.close();

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {
    this.reader = new LineReader(
      (m) => this.onmessage?.(m),
      (e) => this.onerror?.(e),
      maxBytes,
      // JSON-RPC 2.0 §5: an invalid request is answered with -32600 (id null when it has no usable id),
      // so a client never waits for an answer that cannot come.
      (v) => {
        if (typeof v.method !== 'string' && !('id' in v)) return;
        const id = typeof v.id === 'string' || typeof v.id === 'number' ? v.id : null;
        const error = { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 request (check jsonrpc, id and params)' };
        void this.send({ jsonrpc: '2.0', id, error } as unknown as JSONRPCMessage).catch(() => {});
      },
    );
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', (e: Error) => this.onerror?.(e));
    // The client stopped reading (EPIPE): it is gone; close as if stdin ended, do not crash.
    this.output.on('error', (e: Error) => {
      this.onerror?.(e);
      void this.close();
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(serializeLine(message))) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.onclose?.();
  }
}
