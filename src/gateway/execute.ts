/**
 * The end of a gated call: running an approved call exactly once and reading it back, or answering that
 * a person has not decided yet. Shared by the live pipeline (gateway/call.ts) and by the replay of a
 * dry-run session (gateway/replay.ts), so that a replayed write is executed and logged the same way.
 * A write that a rule allows (nobody is asked) is run by {@link executeAllowed}: logged as a write, on disk
 * before it is sent, whatever `audit.reads` says. Every call goes upstream through gateway/tool-result.ts.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { oneLine } from '../confirm/visible.js';
import type { Approval, Decision, ToolCall, Verdict } from '../types.js';
import type { CallContext, PipelineDeps } from './call.js';
import type { CatalogueTool } from './catalogue.js';
import type { Hold } from './hold.js';
import { runReadback } from './readback.js';
import { callTool } from './tool-result.js';
import { denialText, errorResult, unknownOutcomeText, withVerdict } from './verdict.js';
import { describeUpstreamError } from './wire-error.js';

/**
 * Writes the two entries that open a gated call's record, each on disk before the call goes on:
 * `call_received` (what was asked, by whom; `extra` marks a dry run or a replay) and `decision`.
 * @throws when the audit log cannot be written (the caller denies the call).
 */
export async function logReceipt(
  deps: PipelineDeps,
  call: ToolCall,
  client: string,
  decision: Pick<Decision, 'action' | 'reason' | 'rule' | 'classification'>,
  extra: { dry_run?: boolean; replay_of?: string } = {},
): Promise<void> {
  const base = { call_id: call.callId, tool: call.tool };
  await deps.audit.appendDurable({
    event: 'call_received',
    ...base,
    upstream: call.upstream,
    upstream_tool: call.upstreamTool,
    args_sha256: call.argsSha256,
    client: oneLine(client).slice(0, 100),
    ...extra,
  });
  await deps.audit.appendDurable({
    event: 'decision',
    ...base,
    action: decision.action,
    reason: decision.reason,
    rule: decision.rule,
    kind: decision.classification?.kind,
    risk: decision.classification?.risk,
  });
}

/** Completes a verdict with the call's id and args_sha256. */
export type VerdictOf = (v: Omit<Verdict, 'call_id' | 'args_sha256'>, sha?: string) => Verdict;

/**
 * Runs an approved (or denied) call: exactly the approved name and arguments, once, then reads it back.
 * An approved call waits for every earlier execution of its tool, in any session, to finish, then checks
 * the tool's block again (gateway/interlock.ts, docs/decisions/0007-interlock-scope.md).
 */
export function execute(deps: PipelineDeps, tool: CatalogueTool, call: ToolCall, ctx: CallContext, approval: Approval, verdictOf: VerdictOf): Promise<Result> {
  if (approval.kind === 'denied') return executeNow(deps, tool, call, ctx, approval, verdictOf);
  return deps.interlock.executing(tool.exposed, () => executeNow(deps, tool, call, ctx, approval, verdictOf));
}

/**
 * Writes `execution_started` to disk before anything is sent (no execution without its entry).
 * @returns undefined once written, or the reason the call must not run.
 */
async function startExecution(deps: PipelineDeps, base: { call_id: string; tool: string }): Promise<string | undefined> {
  try {
    await deps.audit.appendDurable({ event: 'execution_started', ...base });
    return undefined;
  } catch (err) {
    return `the audit log cannot be written (${(err as Error).message})`;
  }
}

/** Why an execution that was sent has no known outcome: the client cancelled, the time ran out, or the upstream failed. */
function unknownOutcomeReason(deps: PipelineDeps, client: AbortSignal, execution: AbortSignal, err: unknown): string {
  if (client.aborted) return 'cancelled by the client during execution';
  if (execution.aborted) return `no answer within execution.timeout_seconds (${deps.executionTimeoutMs / 1000} s)`;
  return describeUpstreamError(err);
}

async function executeNow(
  deps: PipelineDeps,
  tool: CatalogueTool,
  call: ToolCall,
  ctx: CallContext,
  approval: Approval,
  verdictOf: VerdictOf,
): Promise<Result> {
  const callId = call.callId;
  const sha = call.argsSha256;
  const base = { call_id: callId, tool: tool.exposed };
  const deny = (reason: string, extra: Partial<Verdict> = {}) => {
    const v = verdictOf({ outcome: 'denied', reason, retry_safe: true, ...extra }, sha);
    return errorResult(denialText(tool.exposed, reason), v, tool.hasOutputSchema);
  };
  if (approval.kind === 'denied') return deny(approval.reason, approval.actor ? { denied_by: approval.actor } : {});
  // Another session's execution may have blocked the tool while this call waited for its person.
  const block = deps.interlock.blockOf(tool.exposed);
  if (block) {
    const reason = `${tool.exposed} was blocked while this call waited (${block.reason}); nothing was run. Call it again to ask a person to unlock it`;
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution', reason: reason.slice(0, 300) }).catch(() => {});
    return deny(reason, { blocked: true });
  }

  // Only what was approved goes upstream: the name and the arguments (a retry's own _meta or extra params do not).
  const forward = { name: call.upstreamTool, arguments: call.args };
  const blockTool = async (reason: string) => {
    deps.interlock.block(tool.exposed, { sinceMs: deps.clock.nowMs(), reason, callId });
    await deps.audit.appendDurable({ event: 'execution_blocked', ...base, reason: reason.slice(0, 300) }).catch(() => {});
  };
  // A cancel that lands with the approval: nothing has been sent, so it is a clean denial, not an unknown outcome.
  if (ctx.signal.aborted) {
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution' }).catch(() => {});
    return deny('cancelled by the client');
  }
  const notLogged = await startExecution(deps, base);
  if (notLogged) return deny(notLogged);
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.executionTimeoutMs)]);
  try {
    const result = await callTool(deps, tool, forward, { signal, onprogress: ctx.progress });
    const upstreamError = result.isError === true;
    await deps.audit.appendDurable({ event: 'executed', ...base, outcome: upstreamError ? 'upstream_error' : 'ok' });
    // Never report a write as done without checking it: read the target back when a rule says how.
    const check = upstreamError
      ? ({ readback: 'unclear', detail: 'the upstream answered with an error: whether the call took effect is unknown' } as const)
      : await runReadback({ catalogue: deps.catalogue, policy: deps.policy, timeoutMs: deps.executionTimeoutMs }, call, result);
    await deps.audit.appendDurable({
      event: 'readback',
      ...base,
      outcome: check.readback,
      detail: check.detail === undefined ? undefined : (typeof check.detail === 'string' ? check.detail : JSON.stringify(check.detail)).slice(0, 500),
    });
    const clear = !upstreamError && (check.readback === 'ok' || check.readback === 'none');
    const why = upstreamError ? 'the upstream answered with an error' : `read-back ${check.readback}`;
    if (clear) await deps.audit.appendDurable({ event: 'execution_resolved', ...base }).catch(() => {});
    else await blockTool(why);
    const v = verdictOf(
      {
        outcome: 'executed',
        reason: clear ? `approved by ${approval.actor}` : `approved by ${approval.actor}; ${why}: ${tool.exposed} is blocked until a person unlocks it`,
        approved_by: approval.actor,
        upstream_error: upstreamError || undefined,
        retry_safe: false,
        readback: check.readback,
        readback_detail: check.detail,
        blocked: !clear,
      },
      sha,
    );
    return withVerdict(result, v, tool.hasOutputSchema);
  } catch (err) {
    const reason = unknownOutcomeReason(deps, ctx.signal, signal, err);
    try {
      await deps.audit.appendDurable({ event: 'execution_failed', ...base, outcome: 'unknown', reason });
    } catch {
      // The failure is reported to the client below; a second disk error adds nothing it can act on.
    }
    await blockTool(`outcome unknown: ${reason}`);
    const v = verdictOf(
      {
        outcome: 'executed',
        reason,
        approved_by: approval.actor,
        retry_safe: false,
        readback: 'unclear',
        readback_detail: `outcome unknown: ${reason}`,
        blocked: true,
      },
      sha,
    );
    return errorResult(unknownOutcomeText(tool.exposed, reason), v, tool.hasOutputSchema);
  }
}

/**
 * Runs a call that a rule allows but that the classifier does not prove read-only: a write nobody is
 * asked about. Its `call_received` and `decision` entries (naming the rule) are on disk already;
 * `execution_started` is written before it is sent and `executed` (with the outcome) after, each durable.
 * Exactly the logged arguments go upstream, once. The verdict (`approved_by: rule "…"`) travels in
 * `_meta.lookfirst`. A read-back the rule asks for runs as after an approved call. No person is asked, so
 * an upstream error or an unclear outcome does not block the tool (the verdict says `retry_safe: false`
 * and, when no answer came, that the effect is unknown); a read-back that finds another effect does.
 * @returns the upstream's result with the verdict, or a denial when the log cannot be written first.
 */
export function executeAllowed(deps: PipelineDeps, tool: CatalogueTool, call: ToolCall, ctx: CallContext, rule: string, verdictOf: VerdictOf): Promise<Result> {
  // Like an approved call: after every earlier execution of the tool, in any session, and not on a block.
  return deps.interlock.executing(tool.exposed, () => executeAllowedNow(deps, tool, call, ctx, rule, verdictOf));
}

async function executeAllowedNow(
  deps: PipelineDeps,
  tool: CatalogueTool,
  call: ToolCall,
  ctx: CallContext,
  rule: string,
  verdictOf: VerdictOf,
): Promise<Result> {
  const base = { call_id: call.callId, tool: tool.exposed };
  const by = `rule "${rule}"`;
  const deny = (reason: string, extra: Partial<Verdict> = {}) =>
    errorResult(denialText(tool.exposed, reason), verdictOf({ outcome: 'denied', reason, retry_safe: true, ...extra }, call.argsSha256), tool.hasOutputSchema);
  if (ctx.signal.aborted) {
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution' }).catch(() => {});
    return deny('cancelled by the client');
  }
  const block = deps.interlock.blockOf(tool.exposed);
  if (block) {
    const reason = `${tool.exposed} was blocked while this call waited (${block.reason}); nothing was run. Call it again to ask a person to unlock it`;
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution', reason: reason.slice(0, 300) }).catch(() => {});
    return deny(reason, { blocked: true });
  }
  const notLogged = await startExecution(deps, base);
  if (notLogged) return deny(notLogged);
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.executionTimeoutMs)]);
  try {
    const result = await callTool(deps, tool, { name: call.upstreamTool, arguments: call.args }, { signal, onprogress: ctx.progress });
    const upstreamError = result.isError === true;
    let unlogged = '';
    try {
      await deps.audit.appendDurable({ event: 'executed', ...base, outcome: upstreamError ? 'upstream_error' : 'ok' });
    } catch (err) {
      unlogged = `; its outcome could not be written to the audit log (${(err as Error).message})`;
    }
    // A read-back the rule asks for still runs; one that finds another effect blocks the tool (the
    // upstream did not do what the rule allowed), anything else is reported.
    const check = upstreamError
      ? undefined
      : await runReadback({ catalogue: deps.catalogue, policy: deps.policy, timeoutMs: deps.executionTimeoutMs }, call, result);
    if (check && check.readback !== 'none')
      await deps.audit
        .appendDurable({
          event: 'readback',
          ...base,
          outcome: check.readback,
          detail: check.detail === undefined ? undefined : (typeof check.detail === 'string' ? check.detail : JSON.stringify(check.detail)).slice(0, 500),
        })
        .catch(() => {});
    const failed = check?.readback === 'failed';
    if (failed) {
      deps.interlock.block(tool.exposed, { sinceMs: deps.clock.nowMs(), reason: 'read-back failed', callId: call.callId });
      await deps.audit.appendDurable({ event: 'execution_blocked', ...base, reason: 'read-back failed' }).catch(() => {});
      // Without execution_resolved, a restart would take the call as cut off mid-execution and block its tool.
    } else await deps.audit.appendDurable({ event: 'execution_resolved', ...base }).catch(() => {});
    const v = verdictOf(
      {
        outcome: 'executed',
        reason: `allowed by ${by}${failed ? `; read-back failed: ${tool.exposed} is blocked until a person unlocks it` : ''}${unlogged}`,
        approved_by: by,
        upstream_error: upstreamError || undefined,
        retry_safe: false,
        readback: check?.readback,
        readback_detail: check?.detail,
        blocked: failed || undefined,
      },
      call.argsSha256,
    );
    return withVerdict(result, v, tool.hasOutputSchema);
  } catch (err) {
    const reason = unknownOutcomeReason(deps, ctx.signal, signal, err);
    await deps.audit.appendDurable({ event: 'execution_failed', ...base, outcome: 'unknown', reason }).catch(() => {});
    // Settled as far as the gate goes: the rule needs no person to look (a restart must not block the tool).
    await deps.audit.appendDurable({ event: 'execution_resolved', ...base }).catch(() => {});
    const v = verdictOf(
      {
        outcome: 'executed',
        reason: `allowed by ${by}; ${reason}`,
        approved_by: by,
        retry_safe: false,
        readback: 'unclear',
        readback_detail: `outcome unknown: ${reason}`,
      },
      call.argsSha256,
    );
    return errorResult(unknownOutcomeText(tool.exposed, reason), v, tool.hasOutputSchema);
  }
}

/** The answer when nobody decided within confirm.hold_seconds: not run, still asked, how to keep waiting. */
export async function pendingResult(deps: PipelineDeps, tool: CatalogueTool, hold: Hold, verdictOf: VerdictOf): Promise<Result> {
  const until = new Date(hold.deadlineMs).toISOString();
  const where = hold.channels.map((c) => CHANNEL_WORDS[c] ?? c).join(', ');
  await deps.audit
    .appendDurable({ event: 'approval_pending', call_id: hold.call.callId, tool: tool.exposed, channels: hold.channels.join(','), until })
    .catch(() => {});
  const reason = `waiting for a person to approve it on ${where} (open until ${until})`;
  const v = verdictOf({ outcome: 'pending', reason, retry_safe: true, pending_until: until, pending_on: hold.channels }, hold.call.argsSha256);
  return errorResult(
    `lookfirst: ${tool.exposed} has NOT been executed yet: it is ${reason}. Nothing has run. Call ${tool.exposed} again with exactly the same arguments to keep waiting for the decision (it runs once, if approved); other arguments make a new request.`,
    v,
    tool.hasOutputSchema,
  );
}

const CHANNEL_WORDS: Record<string, string> = { web: 'the approval web page', webhook: 'the webhook receiver', terminal: "the gate's terminal" };
