/**
 * Step `execute`: runs an approved call exactly once: exactly the approved name and arguments (a retry's
 * own `_meta` or extra params do not go), after `execution_started` is on disk (no execution without its
 * entry). It runs in the gate-wide execution order of its tool (gateway/interlock.ts `executing`), and
 * checks the tool's block again there: another session's execution may have blocked it while this call
 * waited for its person. No answer (a cancel, a timeout, a lost upstream) is an unknown outcome: the tool
 * is blocked until a person looks, unless a rule approved it (nobody is there to look).
 */
import { callTool } from '../../tool-result.js';
import { describeUpstreamError } from '../../wire-error.js';
import type { FixedState, PipelineDeps, Step } from '../context.js';
import { denied, type Outcome, unknownOutcomeText } from '../outcome.js';
import { resolvedEntry } from './placeholders.js';

export const execute: Step<FixedState> = async (s): Promise<Outcome | undefined> => {
  const { deps, tool, call, ctx } = s;
  const approval = s.approval;
  const base = { call_id: call.callId, tool: tool.exposed };
  const deny = (reason: string, extra: { blocked?: boolean; denied_by?: string } = {}) =>
    denied({ call_id: call.callId, args_sha256: call.argsSha256, reason, ...extra });
  if (!approval) return deny('no approval was given');
  if (approval.kind === 'denied') return deny(approval.reason, approval.actor ? { denied_by: approval.actor } : {});
  // A cancel that lands with the approval: nothing has been sent, so it is a clean denial, not an unknown outcome.
  if (ctx.signal.aborted) {
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution' }).catch(() => {});
    return deny('cancelled by the client');
  }
  const block = deps.interlock.blockOf(tool.exposed);
  if (block) {
    const reason = `${tool.exposed} was blocked while this call waited (${block.reason}); nothing was run. Call it again to ask a person to unlock it`;
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution', reason }).catch(() => {});
    return deny(reason, { blocked: true });
  }
  try {
    // Which placeholders' real values go (ids and kinds): on disk before they are sent.
    await resolvedEntry(s, call.callId);
    await deps.audit.appendDurable({ event: 'execution_started', ...base });
  } catch (err) {
    return deny(`the audit log cannot be written (${(err as Error).message})`);
  }
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.executionTimeoutMs)]);
  try {
    // Exactly the approved arguments, with the real values behind this session's placeholders put back.
    const args = s.resolved?.args ?? call.args;
    s.result = await callTool(deps, tool, { name: call.upstreamTool, arguments: args }, { signal, onprogress: ctx.progress, trace: s.trace });
    return undefined;
  } catch (err) {
    const reason = unknownOutcomeReason(deps, ctx.signal, signal, err);
    await deps.audit
      .appendDurable({ event: 'execution_failed', ...base, outcome: 'unknown', reason })
      // The entry its receipt links to (steps/sign-receipt.ts).
      .then((at) => (s.entries = { ...s.entries, executed: { ...at, event: 'execution_failed', outcome: 'unknown' } }))
      .catch(() => {});
    if (s.byRule) {
      // Settled as far as the gate goes: the rule needs no person to look (a restart must not block the tool).
      await deps.audit.appendDurable({ event: 'execution_resolved', ...base }).catch(() => {});
    } else await blockTool(s, `outcome unknown: ${reason}`);
    const by = s.byRule ? `rule "${s.byRule}"` : approval.actor;
    return {
      kind: 'refused',
      verdict: {
        outcome: 'executed',
        reason: s.byRule ? `allowed by ${by}; ${reason}` : reason,
        approved_by: by,
        retry_safe: false,
        readback: 'unclear',
        readback_detail: `outcome unknown: ${reason}`,
        blocked: s.byRule ? undefined : true,
        call_id: call.callId,
        args_sha256: call.argsSha256,
      },
      text: unknownOutcomeText(tool.exposed, reason),
    };
  }
};

/** Blocks the call's tool until a person unlocks it, and logs why. */
export async function blockTool(s: FixedState, reason: string): Promise<void> {
  await s.deps.interlock.block(s.tool.exposed, { sinceMs: s.deps.clock.nowMs(), reason, callId: s.call.callId }).catch(() => {});
  await s.deps.audit.appendDurable({ event: 'execution_blocked', call_id: s.call.callId, tool: s.tool.exposed, reason }).catch(() => {});
}

/** Why an execution that was sent has no known outcome: the client cancelled, the time ran out, or the upstream failed. */
function unknownOutcomeReason(deps: PipelineDeps, client: AbortSignal, execution: AbortSignal, err: unknown): string {
  if (client.aborted) return 'cancelled by the client during execution';
  if (execution.aborted) return `no answer within execution.timeout_seconds (${deps.executionTimeoutMs / 1000} s)`;
  return describeUpstreamError(err);
}
