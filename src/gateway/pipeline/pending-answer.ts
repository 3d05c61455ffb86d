/**
 * The answer of pending mode (`confirm.mode: pending`): a held call returns at once, not run, with what
 * the person is shown and the id under which `lookfirst_confirm` runs it once they have confirmed. It is
 * an error result (`isError: true`), so that a strict client accepts it whatever the tool's output schema
 * says (shared notes: clients validate structuredContent only on success).
 */
import type { ApprovalRequest } from '../../confirm/channel.js';
import type { Hold } from '../hold.js';
import type { FixedState } from './context.js';
import type { Outcome } from './outcome.js';

/** Name of the gate's own tool that runs a confirmed pending call (listed only in pending mode). */
export const CONFIRM_TOOL = 'lookfirst_confirm';

/** Where a pending call is shown, in words. */
const CHANNEL_WORDS: Record<string, string> = {
  web: 'the approval web page',
  webhook: 'the webhook receiver',
  terminal: "the gate's terminal",
  device: "the user's paired device",
};

/**
 * What a pending call returns: `{ status: "pending_user_confirmation", pending_id, preview }`.
 * `preview` holds what the person is shown: tool, summary, risk and its reason, the diff, args_sha256,
 * until when (ISO 8601) and where.
 */
export interface PendingAnswer {
  status: 'pending_user_confirmation';
  pending_id: string;
  preview: {
    tool: string;
    summary: string;
    risk: string;
    risk_reason?: string;
    diff?: string;
    args_sha256: string;
    expires_at: string;
    shown_on: string[];
  };
}

/** The outcome of a held call in pending mode: not run; `lookfirst_confirm` runs it after the person's yes. */
export async function awaitingUser(s: FixedState, hold: Hold, req: ApprovalRequest): Promise<Outcome> {
  const { deps, tool } = s;
  const until = new Date(hold.deadlineMs).toISOString();
  await deps.audit
    .appendDurable({ event: 'approval_pending', call_id: hold.call.callId, tool: tool.exposed, channels: hold.channels.join(','), until })
    .catch(() => {});
  const answer: PendingAnswer = {
    status: 'pending_user_confirmation',
    pending_id: hold.call.callId,
    preview: {
      tool: tool.exposed,
      summary: req.summary,
      risk: req.risk ?? 'high',
      risk_reason: req.riskReason || undefined,
      diff: req.diff,
      args_sha256: hold.call.argsSha256,
      expires_at: until,
      shown_on: hold.channels,
    },
  };
  const where = hold.channels.map((c) => CHANNEL_WORDS[c] ?? c).join(', ') || 'no channel';
  return {
    kind: 'refused',
    verdict: {
      outcome: 'pending',
      reason: `waiting for the user to confirm it on ${where} (open until ${until})`,
      retry_safe: true,
      pending_until: until,
      pending_on: hold.channels,
      call_id: hold.call.callId,
      args_sha256: hold.call.argsSha256,
    },
    structured: answer as unknown as Record<string, unknown>,
    text: `lookfirst: ${tool.exposed} has NOT been executed: it waits for the user to confirm it on ${where} (open until ${until}). Nothing has run. Once they have confirmed, call ${CONFIRM_TOOL} with {"pending_id": "${hold.call.callId}"} (and "evidence_ref" if their device showed one); it runs the call once, only if every check passes.\n${JSON.stringify(answer)}`,
  };
}
