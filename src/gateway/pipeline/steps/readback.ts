/**
 * Step `readback`: never report a write as done without checking it. After the upstream answered, the
 * target is read back when a rule says how (gateway/readback.ts) and the outcome logged. A call a person
 * approved blocks its tool unless the read-back is clear (`ok`, or `none` asked); an upstream error is
 * `unclear`. A write a rule allowed blocks its tool only when the read-back finds another effect (nobody
 * is there to look at an unclear one: the verdict says `retry_safe: false`). The call ends here.
 */
import type { Verdict } from '../../../types.js';
import { runDeclaredReadback } from '../../declared.js';
import { runReadback } from '../../readback.js';
import type { FixedState, Step } from '../context.js';
import { type Outcome, unknownOutcomeText } from '../outcome.js';
import { blockTool } from './execute.js';

type Check = { readback: 'ok' | 'failed' | 'unclear' | 'none'; detail?: Verdict['readback_detail'] };

export const readback: Step<FixedState> = async (s): Promise<Outcome> => {
  const { deps, tool, call } = s;
  const result = s.result;
  if (!result) throw new Error('readback: no result (the execute step runs first)');
  const base = { call_id: call.callId, tool: tool.exposed };
  const upstreamError = result.isError === true;
  let unlogged = '';
  try {
    const outcome = upstreamError ? 'upstream_error' : 'ok';
    const at = await deps.audit.appendDurable({ event: 'executed', ...base, outcome });
    // The entry its receipt links to (steps/sign-receipt.ts).
    s.entries = { ...s.entries, executed: { ...at, event: 'executed', outcome } };
  } catch (err) {
    // A person's approval: its outcome is not on record, so it counts as unknown; a rule's: it is said.
    if (!s.byRule) return outcomeUnrecorded(s, err);
    unlogged = `; its outcome could not be written to the audit log (${(err as Error).message})`;
  }
  const readOpts = { catalogue: deps.catalogue, policy: deps.policy, timeoutMs: deps.executionTimeoutMs };
  let check: Check | undefined;
  // Compared against what was sent (the real values, where placeholders were resolved); the read tool
  // gets them only when its upstream may (its own upstream, or one that resolves `always`).
  const resolved = s.resolved;
  const sendable = (reader: { upstream: { name: string; config: { resolve?: string } } }) =>
    resolved && (reader.upstream.name === tool.upstream.name || (reader.upstream.config.resolve ?? 'always') === 'always') ? resolved.args : call.args;
  // A tool its server author declared (the library) is read back by the author's own function.
  const declared = tool.declared?.readback ? tool.declared : undefined;
  if (!upstreamError && declared) check = await runDeclaredReadback(declared, resolved?.args ?? call.args, result, deps.executionTimeoutMs);
  else if (!upstreamError) check = await runReadback(readOpts, resolved ? { ...call, args: resolved.args } : call, result, sendable);
  else if (!s.byRule) check = { readback: 'unclear', detail: 'the upstream answered with an error: whether the call took effect is unknown' };
  if (check && (check.readback !== 'none' || !s.byRule)) {
    try {
      await deps.audit.appendDurable({ event: 'readback', ...base, outcome: check.readback, detail: detailText(check.detail) });
    } catch (err) {
      if (!s.byRule) return outcomeUnrecorded(s, err);
    }
  }
  const blocked = s.byRule ? check?.readback === 'failed' : !(check?.readback === 'ok' || check?.readback === 'none');
  if (blocked) await blockTool(s, s.byRule ? 'read-back failed' : upstreamError ? 'the upstream answered with an error' : `read-back ${check?.readback}`);
  // Without execution_resolved, a restart would take the call as cut off mid-execution and block its tool.
  else await deps.audit.appendDurable({ event: 'execution_resolved', ...base }).catch(() => {});
  return executed(s, check, blocked, upstreamError, unlogged);
};

/** A person approved it, it ran, and how it ended cannot be written: the tool is blocked until a person looks. */
async function outcomeUnrecorded(s: FixedState, err: unknown): Promise<Outcome> {
  const reason = `the audit log cannot be written (${(err as Error).message})`;
  const base = { call_id: s.call.callId, tool: s.tool.exposed };
  await s.deps.audit
    .appendDurable({ event: 'execution_failed', ...base, outcome: 'unknown', reason })
    .then((at) => (s.entries = { ...s.entries, executed: { ...at, event: 'execution_failed', outcome: 'unknown' } }))
    .catch(() => {});
  await blockTool(s, `outcome unknown: ${reason}`);
  return {
    kind: 'refused',
    verdict: {
      outcome: 'executed',
      reason,
      approved_by: s.approval?.actor,
      retry_safe: false,
      readback: 'unclear',
      readback_detail: `outcome unknown: ${reason}`,
      blocked: true,
      call_id: s.call.callId,
      args_sha256: s.call.argsSha256,
    },
    text: unknownOutcomeText(s.tool.exposed, reason),
  };
}

function executed(s: FixedState, check: Check | undefined, blocked: boolean, upstreamError: boolean, unlogged: string): Outcome {
  const { tool, call } = s;
  const actor = s.byRule ? `rule "${s.byRule}"` : (s.approval?.actor ?? 'nobody');
  const why = upstreamError ? 'the upstream answered with an error' : `read-back ${check?.readback}`;
  const reason = s.byRule
    ? `allowed by ${actor}${blocked ? `; read-back failed: ${tool.exposed} is blocked until a person unlocks it` : ''}${unlogged}`
    : blocked
      ? `approved by ${actor}; ${why}: ${tool.exposed} is blocked until a person unlocks it`
      : `approved by ${actor}`;
  return {
    kind: 'executed',
    result: s.result ?? { content: [] },
    verdict: {
      outcome: 'executed',
      reason,
      approved_by: actor,
      upstream_error: upstreamError || undefined,
      retry_safe: false,
      readback: check?.readback,
      readback_detail: check?.detail,
      blocked: s.byRule ? blocked || undefined : blocked,
      call_id: call.callId,
      args_sha256: call.argsSha256,
    },
  };
}

function detailText(detail: Check['detail']): string | undefined {
  return detail === undefined ? undefined : typeof detail === 'string' ? detail : JSON.stringify(detail);
}
