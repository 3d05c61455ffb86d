/**
 * Builders of the audit entries that several steps write (audit/events.ts gives every kind its fields):
 * the `approval` of a decision, in one shape whoever decided, and the `call_received` that opens a call's
 * record.
 */
import type { AuditFieldsOf } from '../../audit/events.js';
import { oneLine } from '../../confirm/visible.js';
import type { Approval, ToolCall } from '../../types.js';
import type { CallState } from './context.js';

/**
 * The `approval` entry of a decision a person (or a rule, or the operator's `--yes`) made on a call.
 * @param purpose set when the question was not the call itself: accepting a definition, unlocking a tool.
 * @param approved defaults to whether the approval approves (an unlock cancelled meanwhile passes false).
 */
export function approvalEntry(
  call: { call_id: string; tool: string },
  approval: Approval,
  purpose?: 'definition' | 'unlock',
  approved = approval.kind === 'approved',
): AuditFieldsOf<'approval'> {
  return {
    event: 'approval',
    call_id: call.call_id,
    tool: call.tool,
    purpose,
    approved,
    channel: approval.channel,
    actor: approval.actor,
    trust: approval.trust,
    comment: approval.comment === undefined ? undefined : oneLine(approval.comment),
    reason: approval.kind === 'denied' ? approval.reason : undefined,
    replica: approval.replica,
  };
}

/**
 * The `call_received` entry: what was asked (tool, where it goes, the arguments' SHA-256) and by whom.
 * @param client the client's name as it gave it (shown on one line, at most 100 characters).
 */
export function receivedEntry(call: ToolCall, client: string, mark: { dry_run?: boolean; replay_of?: string } = {}): AuditFieldsOf<'call_received'> {
  return {
    event: 'call_received',
    call_id: call.callId,
    tool: call.tool,
    upstream: call.upstream,
    upstream_tool: call.upstreamTool,
    args_sha256: call.argsSha256,
    client: oneLine(client).slice(0, 100),
    ...mark,
  };
}

/**
 * The `placeholders_resolved` entry: which placeholders' real values a call sends, and where: ids and
 * kinds, never values. Durable for an execution (written before `execution_started`), behind for a read.
 * @param callId the gated call's id; undefined for a read (which has none).
 * @returns the promise of the durable write, or undefined for a read.
 */
export function resolvedEntry(s: CallState, callId: string | undefined): Promise<void> | undefined {
  const r = s.resolved;
  const tool = s.tool;
  if (!r || !tool) return undefined;
  const fields: AuditFieldsOf<'placeholders_resolved'> = {
    event: 'placeholders_resolved',
    call_id: callId,
    tool: tool.exposed,
    upstream: tool.upstream.name,
    placeholders: r.placeholders.map((p) => `${p.label}_${p.id}`).join(','),
  };
  if (callId === undefined) {
    s.deps.audit.appendLater(fields);
    return undefined;
  }
  return s.deps.audit.appendDurable(fields);
}
