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

const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi;
const URL_QUERY = /\b([a-z][a-z0-9+.-]*:\/\/[^\s?#]*)\?[^\s#)"'<>]*/gi;

/**
 * Text with the credentials of every URL in it hidden: `user:password@` becomes `***@` and a query
 * (`?token=…`, `?key=…`) becomes `?***`. For our own errors about an upstream, which may quote its
 * configured url (fetch refuses a url with credentials by quoting it whole) and reach the agent, the
 * log, `check` and `pilot-status`: the url's secrets are the operator's, not theirs.
 */
export function hideUrlSecrets(text: string): string {
  return text.replace(URL_USERINFO, '$1***@').replace(URL_QUERY, '$1?***');
}
