/**
 * JSON-RPC errors as the client sees them. The SDK's McpError prefixes its message with "MCP error <code>:",
 * and the SDK on the client side prefixes it again; the gate sends the bare message once, with the code
 * and data it was given (an upstream's own error keeps its code, message and data).
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

export { ErrorCode };

const PREFIX = /^(?:MCP error -?\d+: )+/;

/** An error that the SDK's request handling turns into a JSON-RPC error response as is. */
export class WireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'WireError';
  }
}

/** Converts anything thrown on a request path into a WireError (unknown failures are InternalError). */
export function toWireError(err: unknown): WireError {
  if (err instanceof WireError) return err;
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  const code = typeof e?.code === 'number' && Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError;
  return new WireError(code, plainMessage(err), e?.data);
}

/** The message of an error without the SDK's "MCP error <code>:" prefixes. */
export function plainMessage(err: unknown): string {
  const m = (err as { message?: unknown })?.message;
  return typeof m === 'string' ? m.replace(PREFIX, '') : String(err);
}

/** Why an upstream request failed, in words for the approver and the log (connection, timeout, error code). */
export function describeUpstreamError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === ErrorCode.ConnectionClosed) return `the upstream connection closed: ${plainMessage(err)}`;
  if (code === ErrorCode.RequestTimeout) return `the upstream did not answer in time: ${plainMessage(err)}`;
  if (typeof code === 'number') return `the upstream answered with error ${code}: ${plainMessage(err)}`;
  return plainMessage(err);
}
