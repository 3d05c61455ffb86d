/**
 * The shapes of the pending-approvals queue (confirm/pending.ts) that the page, the webhook endpoint and
 * the broker read: a question as an approver sees it, the history, how a question ended.
 */
import type { Risk } from '../types.js';
import type { Lookalike } from './lookalike.js';

/** What an approver sees of a pending call. */
export interface PendingView {
  callId: string;
  tool: string;
  upstream: string;
  purpose: 'execute' | 'unlock' | 'definition';
  summary: string;
  argsCanonical: string;
  argsSha256: string;
  client: string;
  /** Whose call it is: only this user's paired devices show it as a card and may decide it. */
  user?: string;
  risk: Risk;
  riskReason: string;
  lookalikes: Lookalike[];
  /** Unified diff of a file write or edit, when one could be made. */
  diff?: string;
  /** Channels showing it now, e.g. `["web", "webhook"]`. */
  channels: string[];
  /** When the call started waiting (ms since epoch). */
  sinceMs: number;
  deadlineMs: number;
}

/** A decided (or lapsed) call, newest first in `history()`. */
export interface HistoryItem {
  callId: string;
  tool: string;
  summary: string;
  purpose: 'execute' | 'unlock' | 'definition';
  /** `approved`, `denied`, `timed out`, `withdrawn` (client cancelled), `not shown` (no channel could). */
  decision: string;
  actor?: string;
  comment?: string;
  atMs: number;
  /** Filled in after execution: `executed`, `denied`, …, and the read-back outcome. */
  outcome?: string;
  readback?: string;
}

/** Outcome of a decision attempt: `ok`, or why it was refused and whether the call exists at all. */
export type DecideResult = { ok: true } | { ok: false; reason: string; status: 'gone' | 'mismatch' };

/**
 * How a call that no longer waits ended, as a late decision is told: `decided` (a replayed or second
 * decision), `timed out` (nobody decided in time), `withdrawn` (the client cancelled or went away, or no
 * channel could show it).
 */
export type EndedHow = { kind: 'decided'; by: string; approved: boolean } | { kind: 'timed out' } | { kind: 'withdrawn'; reason: string };

/** Why a question nobody decided in time was denied, in the words every channel and the log use. */
export const TIMED_OUT = 'nobody decided before the confirmation timeout (confirm.timeout_seconds)';

/** The abort reason the broker gives when the confirmation timeout passes (tells a timeout from a cancel). */
export const CONFIRM_TIMEOUT = 'confirm.timeout_seconds';

/** A change the page streams: the full state is cheap to resend and never goes out of order. */
export type PendingListener = () => void;
