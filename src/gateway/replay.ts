/**
 * Replaying one call that a dry run recorded (`lookfirst promote`), for real, through the gate's normal
 * pipeline: the tool's definition must still be the pinned one (else a person accepts it first), a deny
 * rule wins, a blocked tool stays blocked, and every replayed call needs an approval: a person's on the
 * configured channels, or the operator's blanket `--yes`, which never covers a call that untrusted data
 * flowed into (Rule of Two): during the dry run, or from what an earlier replay of this promote returned
 * (replays remember untrusted results like a live session: gateway/tool-result.ts). It is then executed
 * once and read back exactly like a live call. Its
 * `call_received` entry names the recorded call in `replay_of`, which is how a second promote knows not
 * to send it again (audit/ledger.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { RecordedCall } from '../audit/ledger.js';
import { decide } from '../policy/evaluate.js';
import type { Approval, Decider, Decision, Risk, ToolCall, Verdict } from '../types.js';
import { awaitApproval, describeRisk, summaryOf } from './ask.js';
import type { CallContext, PipelineDeps } from './call.js';
import { type CatalogueTool, classifyTool } from './catalogue.js';
import { acceptDefinition, type DefinitionDoubt } from './definitions.js';
import { diffPreview } from './diff-preview.js';
import { execute, logReceipt } from './execute.js';
import { taintText } from './taint.js';
import { unlock } from './unlock.js';
import { VERDICT_KEY } from './verdict.js';

/** How a replay is approved: `yes` is the operator's blanket approval (`promote --yes`). */
export interface ReplayOptions {
  yes?: Decider;
}

/** What came of replaying one recorded call: the verdict (as a live call would get) and the result's text. */
export interface ReplayOutcome {
  verdict: Verdict;
  text: string;
  /** The classifier's risk, with the upstream's annotations, once the call was judged. */
  risk?: Risk;
}

const denied = (callId: string, sha: string, reason: string): ReplayOutcome => ({
  verdict: { outcome: 'denied', reason, call_id: callId, args_sha256: sha, retry_safe: true },
  text: reason,
});

/**
 * Replays one recorded call.
 * @param ctx the signal cancels a wait for a person (nothing then runs) or an execution in progress.
 * @returns the verdict: `executed` (with its read-back) or `denied` (nothing was sent, and why).
 */
export async function replayRecorded(deps: PipelineDeps, rec: RecordedCall, opts: ReplayOptions, ctx: CallContext): Promise<ReplayOutcome> {
  let tool = deps.catalogue.get(rec.tool);
  if (!tool) {
    await deps.catalogue.refreshAll();
    tool = deps.catalogue.get(rec.tool);
  }
  if (!tool) return denied(rec.callId, rec.argsSha256, `${rec.tool} is not offered by any upstream now`);
  // The name must still lead to the same upstream tool: a renamed or re-pointed config is not the recording.
  if (tool.upstream.name !== rec.upstream || tool.upstreamTool !== rec.upstreamTool)
    return denied(
      rec.callId,
      rec.argsSha256,
      `${rec.tool} now leads to ${tool.upstream.name}'s "${tool.upstreamTool}", not ${rec.upstream}'s "${rec.upstreamTool}" as recorded`,
    );
  // The definition must be the one a person trusts: the pinned one, and the one the dry run saw (the
  // pins file may have been deleted or be another config's since).
  const pin = deps.catalogue.pinStatus(tool);
  const status: DefinitionDoubt | undefined = pin.kind !== 'pinned' ? pin : rec.definitionSha !== tool.definitionSha ? { kind: 'recorded' } : undefined;
  if (status) {
    const refused = await acceptDefinition(deps, tool, status, ctx);
    if (refused) return fromResult(refused, rec);
  }
  const decision = decide(deps.policy, tool.exposed, classifyTool(tool, rec.args));
  return { ...(await replayDecided(deps, tool, rec, decision, opts, ctx)), risk: decision.classification?.risk };
}

/** The rest of a replay, once the tool is known and the policy has spoken. */
async function replayDecided(
  deps: PipelineDeps,
  tool: CatalogueTool,
  rec: RecordedCall,
  decision: Decision,
  opts: ReplayOptions,
  ctx: CallContext,
): Promise<ReplayOutcome> {
  const call = recordedCall(tool, rec);
  const base = { call_id: call.callId, tool: tool.exposed };
  const action = decision.action === 'deny' ? 'deny' : 'confirm';
  // Untrusted data this promote's earlier replays returned counts as in a live session; a read needs no person.
  const live = decision.classification?.kind !== 'read-only' ? taintText(deps.taint.check(rec.args)) : undefined;
  const taint = rec.taint ?? live;
  const why = live ? `taint: ${live.slice(9)}` : `a replayed call is approved one by one (${decision.reason})`;
  try {
    await logReceipt(deps, call, 'lookfirst promote', { ...decision, action, reason: action === 'deny' ? decision.reason : why }, { replay_of: rec.callId });
  } catch (err) {
    return denied(call.callId, call.argsSha256, `the audit log cannot be written (${(err as Error).message})`);
  }
  if (action === 'deny') return denied(call.callId, call.argsSha256, `denied by ${decision.reason} (--yes never overrides a deny rule)`);
  const verdictOf = (v: Omit<Verdict, 'call_id' | 'args_sha256'>, sha = ''): Verdict => ({ ...v, call_id: call.callId, args_sha256: sha });
  // A blocked tool: a person who has looked at the target unlocks it first (never --yes); then the call is asked as usual.
  const block = deps.interlock.blockOf(tool.exposed);
  if (block) {
    const unlocked = fromResult(await unlock(deps, tool, call, block, ctx, verdictOf), rec);
    if (unlocked.verdict.outcome !== 'unblocked') return unlocked;
  }

  let approval: Approval;
  if (opts.yes && !taint) {
    approval = { kind: 'approved', ...opts.yes };
    try {
      await deps.audit.appendDurable({
        event: 'approval',
        ...base,
        approved: true,
        channel: approval.channel,
        actor: approval.actor,
        trust: approval.trust,
        comment: approval.comment,
      });
    } catch (err) {
      return denied(call.callId, call.argsSha256, `the audit log cannot be written (${(err as Error).message})`);
    }
  } else {
    const { summary } = summaryOf(call, taint);
    const diff = await diffPreview({ catalogue: deps.catalogue, policy: deps.policy, timeoutMs: deps.executionTimeoutMs }, tool, call.args);
    const request = {
      call,
      summary: `REPLAY of dry-run call ${rec.callId} · ${summary}`,
      deadlineMs: deps.clock.nowMs() + deps.confirmTimeoutMs,
      ...describeRisk(decision.classification, call),
      diff,
    };
    const got = await awaitApproval(deps, ctx, request, undefined);
    if (got.kind !== 'decided') {
      if (got.kind === 'pending') deps.holds.withdraw(got.hold);
      return denied(
        call.callId,
        call.argsSha256,
        got.kind === 'lapsed' ? 'the approval lapsed' : got.kind === 'cancelled' ? 'cancelled' : 'nobody decided in time',
      );
    }
    approval = got.approval;
  }
  return fromResult(await execute(deps, tool, call, ctx, approval, verdictOf), rec);
}

/**
 * A recorded call that an earlier promote sent and that did not end cleanly: a person who has looked at
 * the target unlocks its tool, and only then may the replay go on past it. Asked whether or not this
 * gate's interlock knows of the block (the replay may be recorded in another log than this config's).
 * Nothing is sent; `--yes` cannot answer this.
 * @param sentAs the call id the earlier promote sent it under (named in the unlock, so that it settles it).
 * @returns `unblocked` when a person unlocked the tool, else the denial.
 */
export async function settleUnclear(deps: PipelineDeps, rec: RecordedCall, sentAs: string, ctx: CallContext): Promise<ReplayOutcome> {
  const tool = deps.catalogue.get(rec.tool);
  if (!tool) return denied(rec.callId, rec.argsSha256, `${rec.tool} is not offered by any upstream now, so it cannot be unlocked`);
  const known = deps.interlock.blockOf(rec.tool);
  const block = {
    sinceMs: known?.sinceMs ?? deps.clock.nowMs(),
    reason: `an earlier promote sent this recorded call (call ${sentAs}) and it did not end cleanly${known ? `: ${known.reason}` : ''}`,
    callId: sentAs,
  };
  const call = recordedCall(tool, rec);
  const verdictOf = (v: Omit<Verdict, 'call_id' | 'args_sha256'>, sha = ''): Verdict => ({ ...v, call_id: call.callId, args_sha256: sha });
  return fromResult(await unlock(deps, tool, call, block, ctx, verdictOf), rec);
}

/** The recorded call as the gate sends it now, under a new call id: exactly the recorded arguments. */
function recordedCall(tool: CatalogueTool, rec: RecordedCall): ToolCall {
  return {
    callId: randomUUID(),
    tool: tool.exposed,
    upstream: tool.upstream.name,
    upstreamTool: tool.upstreamTool,
    args: rec.args,
    argsCanonical: rec.argsCanonical,
    argsSha256: rec.argsSha256,
  };
}

function fromResult(result: Result, rec: RecordedCall): ReplayOutcome {
  const verdict = (result._meta as Record<string, Verdict> | undefined)?.[VERDICT_KEY] ?? {
    outcome: 'denied',
    reason: 'no verdict',
    call_id: rec.callId,
    args_sha256: rec.argsSha256,
  };
  const text = ((result.content as { type: string; text?: string }[] | undefined) ?? [])
    .map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`))
    .join(' ');
  return { verdict, text };
}
