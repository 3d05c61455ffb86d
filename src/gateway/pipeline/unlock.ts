import type { ToolCall, Verdict } from '../../types.js';
import type { BlockInfo } from '../interlock.js';
import { askPerson } from './ask.js';
import type { CallContext, PipelineDeps } from './context.js';
import { approvalEntry } from './entries.js';
import type { Outcome } from './outcome.js';

/**
 * A call to a blocked tool asks a person to unlock it, showing what is blocked, since when and why.
 * Approving unlocks the tool and runs nothing: a fresh call is needed, under the normal policy.
 */
export async function unlock(deps: PipelineDeps, call: ToolCall, block: BlockInfo, ctx: CallContext): Promise<Outcome> {
  const verdictOf = (v: Omit<Verdict, 'call_id' | 'args_sha256'>, sha: string): Verdict => ({ ...v, call_id: call.callId, args_sha256: sha });
  const base = { call_id: call.callId, tool: call.tool };
  // The block as it stands while the person is asked: only this one is lifted by the answer.
  const asked = deps.interlock.blockOf(call.tool);
  const since = new Date(block.sinceMs).toISOString();
  const summary = `UNLOCK ${call.tool}: blocked since ${since} because ${block.reason} (call ${block.callId}). Approving unlocks the tool; it does not run this call.`;
  const approval = await askPerson(deps, ctx, { call, summary, deadlineMs: deps.clock.nowMs() + deps.confirmTimeoutMs, purpose: 'unlock', risk: 'high' });
  const approved = approval.kind === 'approved' && !ctx.signal.aborted;
  await deps.audit.appendDurable(approvalEntry(base, approval, 'unlock', approved)).catch(() => {});
  if (!approved) {
    const reason = `${call.tool} is blocked since ${since} because ${block.reason}; it stays blocked (${approval.kind === 'denied' ? approval.reason : 'cancelled'})`;
    const v = verdictOf({ outcome: 'denied', reason, retry_safe: false, blocked: true }, call.argsSha256);
    return { kind: 'refused', verdict: v, text: `lookfirst: NOT executed: ${reason}. Look in the target system, then approve the unlock request.` };
  }
  // In the gate-wide execution order: an unlock approved for an earlier block never lifts a newer one
  // (another session's execution may have blocked the tool again while this question was open).
  const refused = await deps.interlock.executing(call.tool, async (): Promise<Outcome | undefined> => {
    const current = deps.interlock.blockOf(call.tool);
    if (current && (current.callId !== asked?.callId || current.sinceMs !== asked.sinceMs)) {
      const reason = `${call.tool} was blocked again (call ${current.callId}: ${current.reason}) while this unlock was asked; the unlock was for the earlier block and lifts nothing`;
      const v = verdictOf({ outcome: 'denied', reason, retry_safe: false, blocked: true }, call.argsSha256);
      return { kind: 'refused', verdict: v, text: `lookfirst: NOT executed: ${reason}. Call again to ask a person to unlock the new block.` };
    }
    try {
      await deps.audit.appendDurable({ event: 'execution_unblocked', ...base, blocked_call: block.callId, actor: approval.actor });
    } catch (err) {
      const v = verdictOf(
        { outcome: 'denied', reason: `the audit log cannot be written (${(err as Error).message})`, retry_safe: true, blocked: true },
        call.argsSha256,
      );
      return { kind: 'refused', verdict: v, text: `lookfirst: ${call.tool} stays blocked: ${v.reason}` };
    }
    await deps.interlock.unblock(call.tool, current?.callId, deps.clock.nowMs());
    return undefined;
  });
  if (refused) return refused;
  const v = verdictOf({ outcome: 'unblocked', reason: `unlocked by ${approval.actor}`, approved_by: approval.actor, blocked: false }, call.argsSha256);
  return {
    kind: 'not-executed',
    verdict: v,
    text: `lookfirst: ${call.tool} is unlocked. The call that asked was not run: call it again to run it under the normal policy.`,
  };
}
