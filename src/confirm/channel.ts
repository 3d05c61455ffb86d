/**
 * The confirmation channel interface. A channel shows a held tool call to a human and returns what they
 * decided. The agent can never answer: channels reach a person (the client's own UI via elicitation, the
 * local web page, later a paired phone), and an approval binds the call id and the exact args_sha256 shown.
 */
import type { Approval, ToolCall } from '../types.js';

/** What a channel shows: the call, a one-line summary, and the full arguments. */
export interface ApprovalRequest {
  call: ToolCall;
  /** One line a person can read, e.g. `write_file path="notes/a.txt" content="hello" (5 chars)`. */
  summary: string;
  /** Absolute deadline (ms since epoch); past it, the request is denied. */
  deadlineMs: number;
  /** What approving does: run the call (default), or only unlock its blocked tool. */
  purpose?: 'execute' | 'unlock';
}

/** A channel's answer: a human decision, or "could not ask" (the broker tries the next channel). */
export type ChannelAnswer = Approval | { kind: 'unavailable'; reason: string };

/** One way of asking a human. */
export interface ConfirmChannel {
  /** Short name used in `approved_by` and in the audit log (`elicitation`, `web`). */
  readonly name: string;
  /**
   * Whether this channel can take the request now; a string says why not (shown when no channel can).
   * Must not block.
   */
  availability(req: ApprovalRequest): true | string;
  /**
   * Asks and waits. Must settle when `signal` aborts (timeout or the client's cancellation) and withdraw
   * the question from wherever it is shown.
   */
  ask(req: ApprovalRequest, signal: AbortSignal): Promise<ChannelAnswer>;
}
