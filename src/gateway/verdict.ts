/**
 * How the gate's verdict travels to the client on a gated call's result: in `_meta.lookfirst` always,
 * and in `structuredContent.lookfirst` unless the tool declares an outputSchema (then the client validates
 * structuredContent against the upstream's schema, which must keep passing: shared notes §5).
 * Built only by the pipeline's exit (gateway/pipeline/outcome.ts).
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { Verdict } from '../types.js';
import { isPlainObject } from './raw.js';

/** Key under which the verdict is placed in `_meta` and `structuredContent`. */
export const VERDICT_KEY = 'lookfirst';

/** Returns a copy of an upstream result carrying the verdict; the upstream's fields are left as sent. */
export function withVerdict(result: Result, verdict: Verdict, hasOutputSchema: boolean): Result {
  const out: Result = { ...result, _meta: { ...(isPlainObject(result._meta) ? result._meta : {}), [VERDICT_KEY]: verdict } };
  if (!hasOutputSchema) {
    const sc = result.structuredContent;
    if (sc === undefined) out.structuredContent = { [VERDICT_KEY]: verdict };
    else if (isPlainObject(sc)) out.structuredContent = { ...sc, [VERDICT_KEY]: verdict };
  }
  return out;
}
