/**
 * In-client approval on the 2026-07-28 protocol (spec basic/patterns/mrtr): there is no server-sent
 * `elicitation/create`. A held call answers `input_required` with the approval question and a sealed,
 * single-use request state (gateway/request-state.ts); the client asks its user and re-sends the call with
 * `inputResponses` and the state. Only an answer that comes back with a state this gate issued, for this
 * session, tool and arguments, before the deadline, and for the first time, counts. Answers that arrive
 * without such a state (a client pre-answering its own approval) are refused: nothing executes.
 */

import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { inputRequired } from '@modelcontextprotocol/server';
import type { ApprovalRequest } from '../confirm/channel.js';
import { approveSchemaFor, ELICITATION_MAX_ARGS_CHARS, elicitationMessage } from '../confirm/channels/elicitation.js';
import { oneLine } from '../confirm/visible.js';
import type { Approval, Evidence } from '../types.js';
import { isPlainObject } from './raw.js';
import { REFUSAL_WORDS, type RequestStates } from './request-state.js';

/** Key of the approval question in `inputRequests` / `inputResponses`. */
export const APPROVE_KEY = 'approve';

/** What a 2026-07-28 request brings to the pipeline. */
export interface InClientRound {
  /** The session the request belongs to (see gateway/modern.ts). */
  session: string;
  /** Whether the request's envelope declares form elicitation (`clientCapabilities.elicitation.form`). */
  canElicit: boolean;
  /** `confirm.elicitation` from the config. */
  enabled: boolean;
  /** Answers the client sent with this request (untrusted). */
  inputResponses?: Record<string, unknown>;
  /** The request state the client echoed (untrusted, as sent). */
  requestState?: unknown;
  states: RequestStates;
}

/** Whether this request carries an answer (or claims to). */
export function carriesAnswer(round: InClientRound | undefined): round is InClientRound {
  return round !== undefined && (round.requestState !== undefined || round.inputResponses !== undefined);
}

/** Whether the question can be asked in the client; else the reason (the out-of-band channels take it). */
export function canAskInClient(round: InClientRound, req: ApprovalRequest): true | string {
  if (!round.enabled) return 'elicitation: disabled in the config';
  if (!round.canElicit) return 'elicitation: the client did not declare form elicitation in its request';
  if (req.call.argsCanonical.length > ELICITATION_MAX_ARGS_CHARS)
    return `elicitation: arguments are ${req.call.argsCanonical.length} characters, more than ${ELICITATION_MAX_ARGS_CHARS} fit in a prompt`;
  return true;
}

/**
 * The `input_required` result that asks the client's user.
 * @returns the result and the state's expiry (ms since the epoch).
 */
export async function askInClient(round: InClientRound, req: ApprovalRequest): Promise<Result> {
  const requestState = await round.states.mint({
    session: round.session,
    tool: req.call.tool,
    argsSha256: req.call.argsSha256,
    callId: req.call.callId,
    expiresMs: req.deadlineMs,
  });
  return inputRequired({
    inputRequests: { [APPROVE_KEY]: inputRequired.elicit({ message: elicitationMessage(req), requestedSchema: approveSchemaFor(req.purpose) as never }) },
    requestState,
  }) as unknown as Result;
}

/** What an answer came to. */
export type Redeemed = { ok: true; callId: string; approval: Approval } | { ok: false; reason: string };

/**
 * Checks the answer this request carries against the call it came with. Only `accept` with
 * `approve: true` approves; decline, cancel, a missing or malformed answer are denials by the client.
 * @param nowMs when the answer arrived (ms since epoch, from the gate's clock): the receipt's confirmed time.
 */
export async function redeemAnswer(round: InClientRound, call: { tool: string; argsSha256: string }, clientName: string, nowMs: number): Promise<Redeemed> {
  if (round.requestState === undefined)
    return {
      ok: false,
      reason: 'the call carries answers (inputResponses) but no request state this gate issued: a client cannot pre-answer its own approval',
    };
  const r = await round.states.redeem(round.requestState, { session: round.session, tool: call.tool, argsSha256: call.argsSha256 });
  if (!r.ok) return { ok: false, reason: REFUSAL_WORDS[r.why] };
  const actor = `elicitation:${oneLine(clientName).slice(0, 80)}`;
  // Own properties only: a `__proto__` key must not supply the answer through the prototype.
  const responses = round.inputResponses;
  const answer = responses && Object.hasOwn(responses, APPROVE_KEY) ? responses[APPROVE_KEY] : undefined;
  const accepted = isPlainObject(answer) && answer.action === 'accept' && isPlainObject(answer.content) && answer.content.approve === true;
  // For the receipt: the answer came inside the client's own request, to the state issued for these arguments.
  const evidence: Evidence = {
    method: 'elicitation',
    decidedAtMs: nowMs,
    checks: [
      { name: 'in_client_answer', ok: true, detail: 'answered in the client (2026-07-28 input_required), trust client' },
      { name: 'action_unchanged', ok: true, detail: `args_sha256 ${call.argsSha256.slice(0, 12)}…, as in the request state` },
    ],
  };
  if (accepted) return { ok: true, callId: r.callId, approval: { kind: 'approved', channel: 'elicitation', actor, trust: 'client', evidence } };
  const action = isPlainObject(answer) && typeof answer.action === 'string' ? oneLine(answer.action).slice(0, 20) : 'no answer';
  return {
    ok: true,
    callId: r.callId,
    approval: { kind: 'denied', channel: 'elicitation', actor, trust: 'client', reason: `not approved in the client (${action})` },
  };
}
