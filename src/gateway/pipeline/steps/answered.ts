/**
 * Step `answered`: a 2026-07-28 call that comes back with the answer to its approval question
 * (gateway/mrtr.ts). A refused answer is logged as a call of its own (received, refused, nothing sent);
 * an accepted one continues the call it answers, under that call's id, straight to execution. What
 * changed while the client's user decided is applied: a deny rule or a blocked tool wins.
 */
import { carriesAnswer, redeemAnswer } from '../../mrtr.js';
import type { FixedState, Step } from '../context.js';
import { approvalEntry, receivedEntry } from '../entries.js';
import { denied } from '../outcome.js';

export const answered: Step<FixedState> = async (s) => {
  const { deps, tool, call, decision } = s;
  // An allowed call asked no question.
  if (decision.action === 'allow' || !carriesAnswer(s.ctx.mrtr)) return undefined;
  const r = await redeemAnswer(s.ctx.mrtr, { tool: tool.exposed, argsSha256: call.argsSha256 }, deps.clientName(), deps.clock.nowMs());
  const deny = (reason: string) => denied({ call_id: s.call.callId, args_sha256: call.argsSha256, reason });
  try {
    if (!r.ok) {
      await deps.audit.appendDurable(receivedEntry(call, deps.clientName()));
      await deps.audit.appendDurable({ event: 'input_refused', call_id: call.callId, tool: tool.exposed, reason: r.reason });
      return deny(r.reason);
    }
    s.call = { ...call, callId: r.callId };
    const base = { call_id: r.callId, tool: tool.exposed };
    await deps.audit.appendDurable({ event: 'input_answered', ...base });
    if (decision.action === 'deny') return deny(`denied by ${decision.reason}`);
    if (deps.interlock.blockOf(tool.exposed)) return deny(`${tool.exposed} was blocked after the question was asked; call again to ask a person to unlock it`);
    await deps.audit.appendDurable(approvalEntry(base, r.approval));
    // Asked in the client: when the question went out is the client's to know, so no time to decision.
    deps.metrics.decided(r.approval.channel, r.approval.kind);
    s.approval = r.approval;
    return undefined;
  } catch (err) {
    return deny(`the audit log cannot be written (${(err as Error).message})`);
  }
};
