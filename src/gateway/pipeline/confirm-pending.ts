/**
 * `lookfirst_confirm` (pending mode, docs/decisions/0018): runs a held call that answered
 * `pending_user_confirmation`, once a person has decided it. Anyone may call it, the agent included: it
 * never asks a question and never approves anything itself. It re-enters the pipeline as the identical
 * call (the hold binds tool and args_sha256), so the decision, the before-execution checks (steps/
 * evidence.ts: invented, foreign or replayed evidence is refused by name), the execution, the read-back
 * and the receipt are the ones every call gets.
 */
import type { Result, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { PendingApprovals } from '../../confirm/pending.js';
import { isPlainObject } from '../raw.js';
import type { CallContext, PipelineDeps } from './context.js';
import { type Outcome, toResult } from './outcome.js';
import { CONFIRM_TOOL } from './pending-answer.js';
import { run } from './run.js';

export { CONFIRM_TOOL } from './pending-answer.js';

const CALL_ID = /^[0-9a-f-]{36}$/;
/** How long a decision just taken may take to be logged before lookfirst_confirm acts on it (ms). */
const SETTLE_WAIT_MS = 5000;

/** The tool's definition as `tools/list` shows it (pending mode only). */
export function confirmToolDefinition(): Tool {
  return {
    name: CONFIRM_TOOL,
    title: 'Run a call the user confirmed',
    description:
      'Runs a tool call that lookfirst answered with status "pending_user_confirmation", after the user confirmed it on their paired device or another approval channel. It runs the call once, only if every named check passes (the evidence exists, is for this card, is unused, the action is unchanged and not expired). Before the user decides, or with invented or reused evidence, nothing runs and the failed check is named.',
    inputSchema: {
      type: 'object',
      properties: {
        pending_id: { type: 'string', description: 'The pending_id of the pending_user_confirmation answer.' },
        evidence_ref: { type: 'string', description: "The evidence reference the user's device showed (ev_…); omit it to use the decision's own." },
      },
      required: ['pending_id'],
      additionalProperties: false,
    },
    annotations: { title: 'Run a call the user confirmed', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  };
}

/**
 * Handles a `lookfirst_confirm` call.
 * @param params the `tools/call` params as the client sent them.
 * @returns the wire result (the confirmed call's own result with its verdict, or why nothing ran) and its outcome.
 */
export async function confirmPending(
  deps: PipelineDeps,
  params: Record<string, unknown>,
  ctx: CallContext,
  pending: PendingApprovals,
): Promise<{ result: Result; outcome: Outcome }> {
  const args = isPlainObject(params.arguments) ? params.arguments : {};
  const id = args.pending_id;
  const ref = args.evidence_ref;
  // A refusal here did nothing to the call: its verdict names no call (the gate records a verdict's
  // outcome in the page's history under its call id, and an agent's idle lookfirst_confirm must not turn
  // "executed" or "approved" there into "denied"). The call it was about is in the structured answer.
  const refuse = (check: string, detail: string, callId = '', sha = '', stillPending = false) => {
    const reason = `the confirmation check ${check} failed: ${detail}`;
    const outcome: Outcome = {
      kind: 'refused',
      verdict: {
        outcome: stillPending ? 'pending' : 'denied',
        reason,
        retry_safe: true,
        call_id: '',
        args_sha256: '',
      },
      structured: callId ? { failed_check: check, pending_id: callId, args_sha256: sha } : { failed_check: check },
      text: `lookfirst: ${CONFIRM_TOOL} ran nothing: ${reason}.`,
    };
    return { result: toResult(outcome, undefined), outcome };
  };
  if (typeof id !== 'string' || !CALL_ID.test(id)) return refuse('card_set_open', 'pending_id must be the id a pending_user_confirmation answer gave (a UUID)');
  if (ref !== undefined && (typeof ref !== 'string' || ref.length === 0 || ref.length > 80))
    return refuse('evidence_exists', 'evidence_ref must be the reference the device showed (ev_ and 16 hex digits), or left out');
  const hold = await deps.holds.findByCallId(id);
  if (!hold) {
    // Another client's call: its fate is not this caller's to learn.
    const ended = deps.holds.asked(id) ? pending.ended(id) : undefined;
    // What became of an approval (ran, lapsed) is in the page's history; without it, both are possible.
    const after = ended && pending.history().find((h) => h.callId === id)?.outcome;
    const why = ended
      ? ended.kind === 'decided'
        ? ended.approved
          ? `it was approved, and that approval ${after ? `ended: ${after}` : 'was used already or lapsed (confirm.timeout_seconds)'}`
          : 'it was denied'
        : ended.kind === 'timed out'
          ? 'nobody decided before confirm.timeout_seconds'
          : 'it was withdrawn'
      : 'no such call is waiting for this client';
    return refuse('card_set_open', `${why}; nothing was run (make the call again to ask again)`, id);
  }
  // Decided a moment ago: the decision is being written to the log; wait for it rather than refuse.
  if (!hold.settled && pending.ended(id)) await Promise.race([hold.decided, new Promise((r) => setTimeout(r, SETTLE_WAIT_MS).unref())]);
  if (!hold.settled)
    return refuse(
      'evidence_exists',
      'the user has not decided yet: nothing was run; ask them to confirm the card on their device, then call lookfirst_confirm again',
      hold.call.callId,
      hold.call.argsSha256,
      true,
    );
  // Evidence that is not this decision's is refused before the pipeline claims the decision: a wrong
  // or invented reference must not spend the person's yes (the pipeline checks everything again).
  const own = hold.settled.evidence?.ref;
  if (typeof ref === 'string' && ref !== own && hold.settled.kind === 'approved') {
    const record = await deps.evidence?.find(ref).catch(() => undefined);
    return record
      ? refuse('evidence_for_card_set', 'this evidence was given for another card, not for this call', hold.call.callId, hold.call.argsSha256)
      : refuse('evidence_exists', `no evidence is recorded under ${JSON.stringify(ref.slice(0, 40))}`, hold.call.callId, hold.call.argsSha256);
  }
  const { outcome, state } = await run(
    deps,
    { kind: 'live', params: { name: hold.call.tool, arguments: hold.call.args } },
    { ...ctx, confirming: { evidenceRef: typeof ref === 'string' ? ref : undefined } },
  );
  return { result: toResult(outcome, state.tool), outcome };
}
