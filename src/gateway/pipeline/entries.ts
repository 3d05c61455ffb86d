/**
 * Builders of the audit entries that several steps write (audit/events.ts gives every kind its fields):
 * the `approval` of a decision, in one shape whoever decided, and the `call_received` that opens a call's
 * record.
 */
import type { AuditFieldsOf } from '../../audit/events.js';
import { oneLine } from '../../confirm/visible.js';
import type { Approval, ToolCall } from '../../types.js';

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
    method: approval.evidence?.method,
    evidence: approval.evidence?.ref,
    // Names only: the details (which may quote a transcript or a path) live in the receipt.
    checks: approval.evidence?.checks.length ? approval.evidence.checks.map((c) => `${c.name}${c.ok ? '' : ':FAILED'}`).join(',') : undefined,
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
