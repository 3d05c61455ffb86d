/**
 * The confirmation channel interfaces. A channel shows a held tool call to a human and carries back what
 * they decided. The agent can never answer: channels reach a person (the client's own UI via
 * elicitation, the local web page, a webhook receiver, the gate's terminal), and an approval binds the
 * call id and the exact args_sha256 shown.
 */
import type { Approval, Risk, ToolCall } from '../types.js';
import type { Lookalike } from './lookalike.js';

/** What a channel shows: the call, a one-line summary, the full arguments, and what to beware of. */
export interface ApprovalRequest {
  call: ToolCall;
  /** One line a person can read, e.g. `write_file path="notes/a.txt" content="hello"`; hidden characters escaped. */
  summary: string;
  /** Absolute deadline (ms since epoch); past it, the request is denied. */
  deadlineMs: number;
  /** What approving does: run the call (default), or only unlock its blocked tool. */
  purpose?: 'execute' | 'unlock' | 'definition';
  /** The client's name from `initialize` (who asked); shown, never trusted. */
  client?: string;
  /** Whose call it is (confirm.device.users by principal, else default_user): its cards go to this user's paired devices only. */
  user?: string;
  risk?: Risk;
  riskReason?: string;
  /** Words in the tool name or arguments that mix scripts; every channel shows them as a warning. */
  lookalikes?: Lookalike[];
  /** For a file write or edit: a unified diff of what it would change (gateway/diff-preview.ts). */
  diff?: string;
}

/** A channel's answer: a human decision, or "could not ask" (the broker tries the next channel). */
export type ChannelAnswer = Approval | { kind: 'unavailable'; reason: string };

/**
 * A channel that asks and waits for its own answer, inside the client's connection (elicitation).
 * Tried first, one at a time.
 */
export interface ConfirmChannel {
  /** Short name used in `approved_by` and in the audit log (`elicitation`). */
  readonly name: string;
  /** Whether this channel can take the request now; a string says why not. Must not block. */
  availability(req: ApprovalRequest): true | string;
  /**
   * Asks and waits. Must settle when `signal` aborts (timeout or the client's cancellation) and withdraw
   * the question from wherever it is shown.
   */
  ask(req: ApprovalRequest, signal: AbortSignal): Promise<ChannelAnswer>;
}

/**
 * A channel outside the client (web page, webhook, terminal). All available ones show a held call at
 * the same time; the first decision through any of them wins (PendingApprovals.decide), and the others
 * withdraw the question when `signal` aborts.
 */
export interface OutOfBandChannel {
  readonly name: string;
  /** Whether this channel can show the request now; a string says why not (and what to enable). */
  availability(req: ApprovalRequest): true | string;
  /**
   * Shows the request. Resolves `true` once shown (the decision comes back through the pending queue),
   * or a reason when it could not be shown (receiver down, no terminal). Must not throw.
   */
  present(req: ApprovalRequest, signal: AbortSignal): Promise<true | string>;
}
