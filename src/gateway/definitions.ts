/**
 * A call to a tool whose definition changed since it was pinned (or that appeared after its upstream was
 * pinned) first asks a person to accept the new definition, on the confirmation channels, whatever the
 * rules say. The question shows what changed. Accepting pins the new definition and the call continues
 * under the normal policy (a write then asks again); declining, a timeout or a cancel runs nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, sha256Hex } from '../audit/canonical.js';
import { oneLine } from '../confirm/visible.js';
import type { ToolCall } from '../types.js';
import { askPerson } from './ask.js';
import type { CallContext, PipelineDeps } from './call.js';
import type { CatalogueTool } from './catalogue.js';
import type { PinStatus } from './pins.js';
import { pinnedPart } from './pins.js';
import { denialText, errorResult } from './verdict.js';

/**
 * The part of two texts that differs, with a little of what surrounds it, so that a change at the end of
 * a long description is shown rather than cut off (`…same text «old» more… → …same text «new» more…`).
 */
export function differingPart(a: string, b: string, context = 40, most = 300): string {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  const show = (t: string) => {
    const mid = t.slice(start, t.length - end);
    const before = start > context ? `…${t.slice(start - context, start)}` : t.slice(0, start);
    const after = end > context ? `${t.slice(t.length - end, t.length - end + context)}…` : t.slice(t.length - end);
    return `${before}«${mid.length > most ? `${mid.slice(0, most - 1)}…` : mid}»${after}`;
  };
  return `${show(a)} → ${show(b)}`;
}

/** What changed between two pinned parts, field by field, in words. */
export function describeChange(previous: Record<string, unknown> | undefined, current: Record<string, unknown>): string {
  if (!previous) return 'a new tool, not seen when its upstream was first pinned';
  const parts: string[] = [];
  for (const key of ['title', 'description', 'inputSchema', 'outputSchema', 'annotations']) {
    const a = previous[key] === undefined ? undefined : canonicalJson(previous[key]);
    const b = current[key] === undefined ? undefined : canonicalJson(current[key]);
    if (a === b) continue;
    if (a === undefined || b === undefined) {
      const show = (v: string | undefined) => (v === undefined ? '(none)' : v.length > 200 ? `${v.slice(0, 199)}…` : v);
      parts.push(`${key}: ${show(a)} → ${show(b)}`);
    } else parts.push(`${key}: ${differingPart(a, b)}`);
  }
  return parts.length > 0 ? parts.join('; ') : 'the definition differs in a field not shown';
}

/**
 * Why a definition needs a person: it changed since pinned, it is new, or (a replayed dry-run call) it is
 * not the one the call was recorded under, of which only the SHA-256 was kept.
 */
export type DefinitionDoubt = Exclude<PinStatus, { kind: 'pinned' }> | { kind: 'recorded' };

/**
 * Asks a person to accept the tool's new definition.
 * @returns undefined when accepted (the call goes on), else the denial to answer with.
 */
export async function acceptDefinition(deps: PipelineDeps, tool: CatalogueTool, status: DefinitionDoubt, ctx: CallContext): Promise<Result | undefined> {
  const current = pinnedPart(tool.upstreamDefinition);
  const argsCanonical = canonicalJson(current);
  const call: ToolCall = {
    callId: randomUUID(),
    tool: tool.exposed,
    upstream: tool.upstream.name,
    upstreamTool: tool.upstreamTool,
    args: current,
    argsCanonical,
    argsSha256: sha256Hex(argsCanonical),
  };
  const change =
    status.kind === 'recorded'
      ? `it is not the definition the dry run recorded this call under (only that one's SHA-256 was kept); it now says: ${JSON.stringify(String(current.description ?? '')).slice(0, 300)}`
      : describeChange(status.kind === 'changed' ? status.previous : undefined, current);
  const summary = oneLine(
    `DEFINITION ${status.kind === 'new' ? 'NEW' : 'CHANGED'} ${tool.exposed}: ${change}. Accepting pins this definition; the call then goes through the normal policy.`,
  );
  const base = { call_id: call.callId, tool: tool.exposed };
  const approval = await askPerson(deps, ctx, {
    call,
    summary,
    deadlineMs: deps.clock.nowMs() + deps.confirmTimeoutMs,
    purpose: 'definition',
    risk: 'high',
    riskReason: 'the tool is not what was trusted before',
  });
  const accepted = approval.kind === 'approved' && !ctx.signal.aborted;
  try {
    await deps.audit.appendDurable({
      event: 'approval',
      ...base,
      purpose: 'definition',
      approved: accepted,
      channel: approval.channel,
      actor: approval.actor,
      trust: approval.trust,
      comment: approval.comment === undefined ? undefined : oneLine(approval.comment),
      reason: approval.kind === 'denied' ? approval.reason : undefined,
    });
    if (accepted) {
      deps.catalogue.pins?.accept(tool.upstream.name, tool.upstreamDefinition);
      await deps.audit.appendDurable({
        event: 'definition_accepted',
        ...base,
        upstream: tool.upstream.name,
        sha256: tool.definitionSha,
        actor: approval.actor,
      });
      return undefined;
    }
  } catch (err) {
    const reason = `the audit log cannot be written (${(err as Error).message})`;
    return errorResult(
      denialText(tool.exposed, reason),
      { outcome: 'denied', reason, retry_safe: true, call_id: call.callId, args_sha256: '' },
      tool.hasOutputSchema,
    );
  }
  const reason = `the definition of ${tool.exposed} ${status.kind === 'new' ? 'is new' : 'changed'} and was not accepted (${approval.kind === 'denied' ? approval.reason : 'cancelled'}): ${change}`;
  return errorResult(
    denialText(tool.exposed, reason),
    { outcome: 'denied', reason, retry_safe: true, call_id: call.callId, args_sha256: '' },
    tool.hasOutputSchema,
  );
}
