/**
 * The gate's pipeline for one `tools/call`: look up → decide → (confirm) → execute → audit.
 *
 * A read (allowed, and proven read-only by the classifier) is forwarded raw and its audit entry is
 * written behind it (never waits for disk). Anything else is a gated call, a write that a rule allows
 * included: its arguments are fixed by canonical JSON and SHA-256 once, every step is
 * on disk before the next proceeds, a denial never reaches the upstream, and exactly the arguments that
 * were approved are sent, once. Any doubt (unknown tool, bad arguments, audit failure, cancellation)
 * means the call is not executed.
 */
import { randomUUID } from 'node:crypto';
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, sha256Hex } from '../audit/canonical.js';
import type { AuditLog } from '../audit/writer.js';
import type { Clock } from '../clock.js';
import type { ConfirmBroker } from '../confirm/broker.js';
import { oneLine } from '../confirm/visible.js';
import { decide, type Policy } from '../policy/evaluate.js';
import type { Approval, ToolCall, Verdict } from '../types.js';
import { awaitApproval, describeRisk, summaryOf } from './ask.js';
import { type Catalogue, type CatalogueTool, classifyTool } from './catalogue.js';
import { acceptDefinition } from './definitions.js';
import { diffPreview } from './diff-preview.js';
import { answerDryRun, type DryRunBudget, recordsInDryRun } from './dry-run.js';
import { execute, executeAllowed, logReceipt, pendingResult } from './execute.js';
import type { Holds } from './hold.js';
import type { Interlock } from './interlock.js';
import { askInClient, canAskInClient, carriesAnswer, type InClientRound, redeemAnswer } from './mrtr.js';
import { isPlainObject } from './raw.js';
import { forwardRead } from './read.js';
import { type TaintMemory, taintText } from './taint.js';
import { unlock } from './unlock.js';
import type { ForwardOptions } from './upstream.js';
import { denialText, errorResult } from './verdict.js';
import { ErrorCode, WireError } from './wire-error.js';

/** What the pipeline needs from the gate. */
export interface PipelineDeps {
  catalogue: Catalogue;
  policy: Policy;
  broker: ConfirmBroker;
  audit: AuditLog;
  clock: Clock;
  confirmTimeoutMs: number;
  /** Bound of each upstream execution and each read-back request (ms). */
  executionTimeoutMs: number;
  interlock: Interlock;
  logReads: boolean;
  /** The client's name from `initialize`, shown to the approver as who asked. */
  clientName: () => string;
  /** Interval of progress notifications while a call waits for a person (ms). */
  progressMs: number;
  /** How long one request waits for an out-of-band decision before answering pending (ms). */
  holdMs: number;
  /** This client session's approvals that may outlive their request. */
  holds: Holds;
  /** This client session's memory of untrusted data, and which tools are untrusted sources. */
  taint: TaintMemory;
  untrusted: (tool: string) => boolean;
  /** Dry run: record every call but allowed reads, answer it as not executed (gateway/dry-run.ts). */
  dryRun: boolean;
  /** The gate run's budget of recorded argument bytes (shared by its sessions). */
  dryRunBudget: DryRunBudget;
}

/** The parts of the SDK's request context the pipeline uses. */
export interface CallContext {
  signal: AbortSignal;
  /** Sends a progress notification to the client with the client's own token. */
  progress?: ForwardOptions['onprogress'];
  /** 2026-07-28 requests: the approval question goes back as `input_required` (gateway/mrtr.ts). */
  mrtr?: InClientRound;
}

/**
 * Handles one `tools/call`.
 * @param params the request params exactly as the client sent them.
 * @throws WireError InvalidParams for an unknown tool or a missing name (JSON-RPC error, spec §tools).
 * @returns the upstream's result (allowed reads: untouched), or an error result carrying the verdict.
 */
export async function handleToolCall(deps: PipelineDeps, params: Record<string, unknown>, ctx: CallContext): Promise<Result> {
  const name = params.name;
  if (typeof name !== 'string') throw new WireError(ErrorCode.InvalidParams, 'tools/call needs a string "name"');
  let tool = deps.catalogue.get(name);
  if (!tool) {
    // The client may know a tool the gate has not seen yet (a list_changed in flight): look once more.
    await deps.catalogue.refreshAll();
    tool = deps.catalogue.get(name);
  }
  if (!tool) throw new WireError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  // A definition that changed since it was pinned, or a new tool, is accepted by a person first.
  const pin = deps.catalogue.pinStatus(tool);
  if (pin.kind !== 'pinned') {
    const chosen = tool;
    const refused = await deps.interlock.exclusive(tool.exposed, () =>
      deps.catalogue.pinStatus(chosen).kind === 'pinned' ? Promise.resolve(undefined) : acceptDefinition(deps, chosen, pin, ctx),
    );
    if (refused) return refused;
  }
  let decision = decide(deps.policy, name, classifyTool(tool, params.arguments));
  // The upstream said its tools changed and they are being re-read: no read passes on old annotations.
  if (decision.action === 'allow' && !decision.rule && deps.catalogue.isChanged(tool.upstream)) {
    decision = { action: 'confirm', reason: 'the upstream changed its tools and they are being re-read' };
  }
  // Rule of Two: untrusted data flowing into a state change needs a person, whatever a rule says; so does
  // any state change once the session is tainted as a whole (gateway/taint.ts). Anything the classifier
  // does not prove read-only is a state change.
  const taint = decision.classification?.kind !== 'read-only' && decision.action !== 'deny' ? taintText(deps.taint.check(params.arguments)) : undefined;
  if (taint) {
    decision = {
      ...decision,
      action: 'confirm',
      reason: `taint: ${taint.slice(9)}${decision.action === 'allow' ? ` (overrides ${decision.reason})` : ''}`,
      taint,
    };
  }
  // A dry run forwards only what passes as a read on definitions that are not being re-read (a rule
  // that allows a tool does not make it a read); everything else is recorded, never executed.
  const recorded = deps.dryRun && (recordsInDryRun(decision) || deps.catalogue.isChanged(tool.upstream));
  // Only a call the classifier proves read-only is a read: a write that a rule allows is a gated call,
  // on disk before it is sent (executeAllowed), whatever audit.reads says.
  if (decision.action === 'allow' && decision.classification?.kind === 'read-only' && !recorded) return forwardRead(deps, tool, params, ctx, decision.reason);
  // One call of a tool at a time, confirmation and execution included; other tools are not held up.
  const chosen = tool;
  return deps.interlock.exclusive(tool.exposed, () => gated(deps, chosen, params, ctx, decision));
}

async function gated(
  deps: PipelineDeps,
  tool: CatalogueTool,
  params: Record<string, unknown>,
  ctx: CallContext,
  decision: ReturnType<typeof decide>,
): Promise<Result> {
  let callId: string = randomUUID();
  const args = params.arguments ?? {};
  let base = { call_id: callId, tool: tool.exposed };
  const verdictOf = (v: Omit<Verdict, 'call_id' | 'args_sha256'>, sha = ''): Verdict => ({ ...v, call_id: callId, args_sha256: sha });
  if (!isPlainObject(args)) {
    await deps.audit.appendDurable({ event: 'decision', ...base, action: 'deny', reason: 'arguments are not a JSON object' }).catch(() => {});
    const v = verdictOf({ outcome: 'denied', reason: 'arguments must be a JSON object', retry_safe: true });
    return errorResult(denialText(tool.exposed, v.reason), v, tool.hasOutputSchema);
  }
  // Fix the arguments once: the bytes hashed are the bytes shown, approved and sent.
  let argsCanonical: string;
  try {
    argsCanonical = canonicalJson(args);
  } catch (err) {
    await deps.audit.appendDurable({ event: 'decision', ...base, action: 'deny', reason: 'arguments have no canonical form' }).catch(() => {});
    const v = verdictOf({
      outcome: 'denied',
      reason: `the arguments cannot be put in canonical form (${(err as Error).message.slice(0, 80)})`,
      retry_safe: true,
    });
    return errorResult(denialText(tool.exposed, v.reason), v, tool.hasOutputSchema);
  }
  let call: ToolCall = {
    callId,
    tool: tool.exposed,
    upstream: tool.upstream.name,
    upstreamTool: tool.upstreamTool,
    args: JSON.parse(argsCanonical) as Record<string, unknown>,
    argsCanonical,
    argsSha256: sha256Hex(argsCanonical),
  };
  const sha = call.argsSha256;
  // The concrete effect, when the arguments allow one, is what a person reads first on every channel.
  const { plain, summary } = summaryOf(call, decision.taint);
  const deny = (reason: string, extra: Partial<Verdict> = {}) => {
    const v = verdictOf({ outcome: 'denied', reason, retry_safe: true, ...extra }, sha);
    return errorResult(denialText(tool.exposed, reason), v, tool.hasOutputSchema);
  };
  // A 2026-07-28 call that comes back with the answer to its approval question (an allowed call asked none).
  if (decision.action !== 'allow' && carriesAnswer(ctx.mrtr)) {
    const answered = await answeredInClient(deps, tool, call, ctx.mrtr, decision);
    if (!answered.ok) return deny(answered.reason);
    callId = answered.callId;
    base = { call_id: callId, tool: tool.exposed };
    call = { ...call, callId };
    return execute(deps, tool, call, ctx, answered.approval, verdictOf);
  }
  // The same call again from this session while its question is open: it continues that wait.
  const retried = decision.action === 'confirm' ? deps.holds.find(tool.exposed, sha) : undefined;
  if (retried) {
    call = retried.call;
    callId = call.callId;
    base = { call_id: callId, tool: tool.exposed };
  }
  try {
    if (retried) await deps.audit.appendDurable({ event: 'call_retried', ...base });
    else await logReceipt(deps, call, deps.clientName(), decision, { dry_run: deps.dryRun || undefined });
  } catch (err) {
    return deny(`the audit log cannot be written (${(err as Error).message})`);
  }
  if (decision.action === 'deny') return deny(`denied by ${decision.reason}`);
  if (deps.dryRun) return answerDryRun(deps, tool, call, decision, plain);
  const block = deps.interlock.blockOf(tool.exposed);
  if (block) return unlock(deps, tool, call, block, ctx, verdictOf);
  // A write that a rule allows: nobody is asked; its receipt and decision are on disk already.
  if (decision.action === 'allow') return executeAllowed(deps, tool, call, ctx, decision.rule ?? decision.reason, verdictOf);

  // A file write or edit shows what it would change (read through the upstream's own read tool).
  const diff = retried ? undefined : await diffPreview({ catalogue: deps.catalogue, policy: deps.policy, timeoutMs: deps.executionTimeoutMs }, tool, call.args);
  const request = { call, summary, deadlineMs: deps.clock.nowMs() + deps.confirmTimeoutMs, ...describeRisk(decision.classification, call), diff };
  if (!retried && ctx.mrtr && canAskInClient(ctx.mrtr, request) === true) {
    const asked = await askInClient(ctx.mrtr, { ...request, client: deps.clientName() });
    try {
      await deps.audit.appendDurable({ event: 'input_required', ...base, until: new Date(request.deadlineMs).toISOString() });
    } catch (err) {
      return deny(`the audit log cannot be written (${(err as Error).message})`);
    }
    return asked;
  }
  const got = await awaitApproval(deps, ctx, request, retried);
  if (got.kind === 'pending') return pendingResult(deps, tool, got.hold, verdictOf);
  if (got.kind === 'lapsed') return deny('the approval lapsed before this call came back for it (confirm.timeout_seconds); call again to ask again');
  const approval = got.approval;
  if (got.kind === 'cancelled') {
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution' }).catch(() => {});
    return deny('cancelled by the client');
  }
  return execute(deps, tool, call, ctx, approval, verdictOf);
}

/**
 * Logs and checks the answer a 2026-07-28 call came back with. A refused answer is logged as a call of
 * its own (received, refused, nothing sent); an accepted one continues the call it answers.
 */
async function answeredInClient(
  deps: PipelineDeps,
  tool: CatalogueTool,
  call: ToolCall,
  round: InClientRound,
  decision: ReturnType<typeof decide>,
): Promise<{ ok: true; callId: string; approval: Approval } | { ok: false; reason: string }> {
  const r = await redeemAnswer(round, { tool: tool.exposed, argsSha256: call.argsSha256 }, deps.clientName());
  try {
    if (!r.ok) {
      await deps.audit.appendDurable({
        event: 'call_received',
        call_id: call.callId,
        tool: tool.exposed,
        upstream: call.upstream,
        upstream_tool: call.upstreamTool,
        args_sha256: call.argsSha256,
        client: oneLine(deps.clientName()).slice(0, 100),
      });
      await deps.audit.appendDurable({ event: 'input_refused', call_id: call.callId, tool: tool.exposed, reason: r.reason });
      return r;
    }
    const base = { call_id: r.callId, tool: tool.exposed };
    await deps.audit.appendDurable({ event: 'input_answered', ...base });
    // What changed while the client's user decided is applied: a deny rule or a blocked tool wins.
    if (decision.action === 'deny') return { ok: false, reason: `denied by ${decision.reason}` };
    if (deps.interlock.blockOf(tool.exposed))
      return { ok: false, reason: `${tool.exposed} was blocked after the question was asked; call again to ask a person to unlock it` };
    const a = r.approval;
    await deps.audit.appendDurable({
      event: 'approval',
      ...base,
      approved: a.kind === 'approved',
      channel: a.channel,
      actor: a.actor,
      trust: a.trust,
      reason: a.kind === 'denied' ? a.reason : undefined,
    });
    return r;
  } catch (err) {
    return { ok: false, reason: `the audit log cannot be written (${(err as Error).message})` };
  }
}
