/**
 * Lossless result handling for forwarded requests. The SDK's typed paths strip fields they do not know
 * (see shared notes, "what the SDK does behind a proxy's back"); a gate must hand the client exactly what
 * the upstream sent. The JSON-RPC envelope is already validated by the transport, so results are not
 * parsed a second time: validate once.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';

/**
 * A result "schema" in the shape the SDK's `request()` accepts (zod v3's `safeParse`), that passes the
 * upstream's result through untouched.
 */
export const RAW_RESULT = {
  safeParse: (data: unknown) => ({ success: true as const, data: data as Result }),
} as unknown as Parameters<import('@modelcontextprotocol/sdk/client/index.js').Client['request']>[1];

/** A JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A map key for a JSON-RPC id that keeps 1 and "1" apart. */
export function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}
