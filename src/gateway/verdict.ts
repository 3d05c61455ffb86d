/**
 * How the gate's verdict travels to the client on a gated call's result: in `_meta.lookfirst` always,
 * and in `structuredContent.lookfirst` unless the tool declares an outputSchema (then the client validates
 * structuredContent against the upstream's schema, which must keep passing: shared notes §5).
 * A denial is an error result (`isError: true`) whose text says what was not executed and whether a retry
 * is safe.
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

/** An error result for a call that was not executed, or whose outcome is unknown. */
export function errorResult(text: string, verdict: Verdict, hasOutputSchema: boolean): Result {
  return withVerdict({ content: [{ type: 'text', text }], isError: true }, verdict, hasOutputSchema);
}

/** Text of a denial: what was not executed, why, and that a retry is safe. */
export function denialText(tool: string, reason: string): string {
  return `lookfirst: ${tool} was NOT executed: ${reason}. Nothing was sent to the upstream, so retrying is safe once the cause is fixed.`;
}

/** Text when a call was sent but no answer came back: the effect is unknown. */
export function unknownOutcomeText(tool: string, reason: string): string {
  return `lookfirst: ${tool} was sent to the upstream, but no answer came back (${reason}). It may or may not have taken effect: check the target system before retrying. lookfirst did not and will not re-send it.`;
}
