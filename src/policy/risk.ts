/**
 * A coarse risk for the approver's card, from the upstream's annotations (spec 2025-11-25
 * `ToolAnnotations`). Annotations are untrusted, so they only ever raise the risk shown: a declared
 * `destructiveHint: true` is high; a tool that declares itself non-destructive is medium (low when it
 * also declares itself idempotent); a tool that says nothing is medium. The classifier planned next
 * replaces this with a verdict from the name and the arguments. Pure.
 */
import type { Risk, ToolAnnotations } from '../types.js';

/** Risk and the reason shown beside it. */
export function riskOf(annotations: ToolAnnotations | undefined): { risk: Risk; reason: string } {
  if (annotations?.destructiveHint === true) return { risk: 'high', reason: 'the upstream declares it destructive' };
  if (annotations?.destructiveHint === false && annotations.idempotentHint === true)
    return { risk: 'low', reason: 'the upstream declares it non-destructive and idempotent' };
  if (annotations?.destructiveHint === false) return { risk: 'medium', reason: 'the upstream declares it non-destructive' };
  return { risk: 'medium', reason: 'the upstream does not say what it changes' };
}
