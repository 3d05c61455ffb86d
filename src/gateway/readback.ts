/**
 * Running a read-back after an executed call: find the rule's read tool, make sure the current policy
 * allows it as a read (read-back never runs a write), fill its arguments, call it once (never retried),
 * bounded by `execution.timeout_seconds`, and compare. Anything that prevents a clear answer is `unclear`.
 */

import { decide, matchRule, type Policy } from '../policy/evaluate.js';
import { checkExpectations, type FieldMismatch, fillReferences } from '../readback/evaluate.js';
import type { ToolCall } from '../types.js';
import { type Catalogue, type CatalogueTool, classifyTool } from './catalogue.js';
import { plainMessage } from './wire-error.js';

/** A read-back's result as the verdict and the audit log carry it. */
export interface ReadbackReport {
  readback: 'ok' | 'failed' | 'unclear' | 'none';
  /** Why it is unclear, or which fields did not match. */
  detail?: string | FieldMismatch[];
}

/** What a read-back needs from the gate. */
export interface ReadbackDeps {
  catalogue: Catalogue;
  policy: Policy;
  timeoutMs: number;
}

/**
 * Reads the target back after `call` returned `result`. Never throws.
 * @param sendable the arguments the read tool may be sent, given its upstream (privacy filter: the real
 *   values only toward an upstream that may receive them, else the agent's placeholders); default
 *   `call.args`. Expected values are always filled from `call.args`: they are compared here, never sent.
 * @returns `none` when no rule asks for a read-back.
 */
export async function runReadback(
  deps: ReadbackDeps,
  call: ToolCall,
  result: Record<string, unknown>,
  sendable: (reader: CatalogueTool) => Record<string, unknown> = () => call.args,
): Promise<ReadbackReport> {
  const rule = matchRule(deps.policy, call.tool)?.readback;
  if (!rule) return { readback: 'none' };
  const unclear = (detail: string): ReadbackReport => ({ readback: 'unclear', detail });
  const reader = deps.catalogue.get(rule.tool);
  if (!reader) return unclear(`the read tool "${rule.tool}" is not among the upstream tools`);
  const sources = { args: call.args, result };
  const args = fillReferences(rule.args, { args: sendable(reader), result });
  if (!args.ok) return unclear(`${args.missing} has no value`);
  // Judged with the arguments it will get: a read-back must itself be an allowed read.
  const decision = decide(deps.policy, reader.exposed, classifyTool(reader, args.value));
  if (decision.action !== 'allow') return unclear(`the read tool "${rule.tool}" is not allowed as a read by the current policy (${decision.reason})`);
  const expect = fillReferences(rule.expect, sources);
  if (!expect.ok) return unclear(`${expect.missing} has no value`);
  let read: Record<string, unknown>;
  try {
    // Sent once more on a new HTTP session only when the classifier proves it read-only (a rule may allow a write).
    read = await reader.upstream.request(
      'tools/call',
      { name: reader.upstreamTool, arguments: args.value },
      { signal: AbortSignal.timeout(deps.timeoutMs), readOnly: decision.classification?.kind === 'read-only' },
    );
  } catch (err) {
    return unclear(`the read tool "${rule.tool}" failed: ${plainMessage(err)}`);
  }
  if (read.isError === true) return unclear(`the read tool "${rule.tool}" answered with an error`);
  const checked = checkExpectations(read, expect.value as Record<string, unknown>);
  if (checked.outcome === 'ok') return { readback: 'ok' };
  if (checked.outcome === 'failed') return { readback: 'failed', detail: checked.mismatches };
  return unclear(checked.reason);
}
