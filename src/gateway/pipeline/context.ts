/**
 * The pipeline's leaf: what every step needs from the gate (`PipelineDeps`), what it needs from the
 * request (`CallContext`), and the one per-call state object the steps read and fill in order
 * (`CallState`). Every step imports this file and nothing imports a step but gateway/pipeline/run.ts.
 */

import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { AppendedEntry, AuditLog } from '../../audit/writer.js';
import type { Clock } from '../../clock.js';
import type { ConfirmBroker } from '../../confirm/broker.js';
import type { EvidenceLedger } from '../../confirm/evidence-ledger.js';
import type { RedactHook } from '../../confirm/redact.js';
import type { CallDecision } from '../../policy/decide.js';
import type { Policy } from '../../policy/evaluate.js';
import type { PrivacySession } from '../../privacy/filter.js';
import type { ResolvedPlaceholder } from '../../privacy/vault.js';
import type { Approval, CheckResult, Decider, ToolCall } from '../../types.js';
import type { Catalogue, CatalogueTool } from '../catalogue.js';
import type { DryRunBudget } from '../dry-run-budget.js';
import type { Hold, Holds } from '../hold.js';
import type { Interlock } from '../interlock.js';
import type { GateMetrics } from '../metrics.js';
import type { InClientRound } from '../mrtr.js';
import type { TaintMemory } from '../taint.js';
import type { CallSpan, TraceContext } from '../tracing.js';
import type { ForwardOptions } from '../upstream.js';
import type { Outcome } from './outcome.js';

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
  /** Dry run: record every call but allowed reads, answer it as not executed (steps/record.ts). */
  dryRun: boolean;
  /** The gate run's budget of recorded argument bytes (shared by its sessions). */
  dryRunBudget: DryRunBudget;
  /** This session's placeholders (privacy filter on): previews are masked, arguments resolved. */
  privacy?: PrivacySession;
  /** The operator's redaction hook (`redact.hook`): masks each preview before anyone sees it. */
  redact?: RedactHook;
  /** Where signed receipts of executed calls go (`audit.receipts`; absent: each is logged as `receipt_failed`). */
  receiptsDir?: string;
  /** Whose calls this session makes (confirm.device.users by principal, else default_user): cards go to this user's devices. */
  user?: string;
  /**
   * `wait`: a held call waits for its decision (answering `pending` after `holdMs`); `pending`: it answers
   * at once `pending_user_confirmation`, and `lookfirst_confirm` runs it (gateway/pipeline/confirm-pending.ts).
   */
  confirmMode: 'wait' | 'pending';
  /** Where the evidence of a decision is checked before execution (absent: the gate has no shared store to keep it). */
  evidence?: EvidenceLedger;
  /** The gate's metrics (gateway/metrics.ts; the no-op when `metrics` is off). */
  metrics: GateMetrics;
}

/** A gate run's recording budget (bytes), shared by its client sessions and replicas (gateway/dry-run-budget.ts). */
export type { DryRunBudget };

/** The parts of the SDK's request context the pipeline uses. */
export interface CallContext {
  signal: AbortSignal;
  /** Sends a progress notification to the client with the client's own token. */
  progress?: ForwardOptions['onprogress'];
  /** 2026-07-28 requests: the approval question goes back as `input_required` (gateway/mrtr.ts). */
  mrtr?: InClientRound;
  /**
   * Set by `lookfirst_confirm`: the call may run only on a decision already taken (it never asks), and
   * the evidence it names (`evidence_ref`, or the decision's own when absent) must pass every check.
   */
  confirming?: { evidenceRef?: string };
  /** The call's trace span (tracing on): the steps worth seeing run in child spans (gateway/pipeline/run.ts). */
  span?: CallSpan;
}

/** A call recorded by a dry run, replayed by `lookfirst promote` (audit/ledger.ts `RecordedCall`). */
export interface ReplayInput extends Omit<ToolCall, 'callId'> {
  kind: 'replay';
  /** The recorded call's id (the new call's `replay_of`). */
  callId: string;
  /** SHA-256 of the definition the dry run saw. */
  definitionSha?: string;
  /** Untrusted data that flowed into it during the dry run. */
  taint?: string;
  /** The operator's blanket approval (`promote --yes`), never for a tainted call. */
  yes?: Decider;
}

/** What a run starts from: a client's `tools/call` params, or a recorded call to replay. */
export type CallInput = { kind: 'live'; params: Record<string, unknown> } | ReplayInput;

/** One call's state, filled in by the steps in order (gateway/pipeline/run.ts). */
export interface CallState {
  readonly deps: PipelineDeps;
  readonly ctx: CallContext;
  readonly input: CallInput;
  /** lookup */
  tool?: CatalogueTool;
  /** decide (and taint) */
  decision?: CallDecision;
  /** fix: the arguments fixed by canonical JSON and SHA-256 (its callId may change: a retry, an answer). */
  call?: ToolCall;
  /** retry: this session's open question for the same call, continued. */
  retried?: Hold;
  /** confirm: who approved (a person, a rule, the operator's --yes). */
  approval?: Approval;
  /** confirm: the approval was a rule's (no person): unclear outcomes do not block the tool. */
  byRule?: string;
  /** placeholders: the arguments with real values put back, and which placeholders were (ids and kinds). */
  resolved?: { args: Record<string, unknown>; placeholders: ResolvedPlaceholder[]; ask: boolean };
  /** evidence (before execute): the named checks run on the evidence of the approval, for the receipt. */
  checks?: CheckResult[];
  /** The running step's span (tracing on, gateway/pipeline/run.ts): the upstream request carries it in `_meta`. */
  trace?: TraceContext;
  /** execute: the upstream's answer. */
  result?: Result;
  /** receipt (call_received) and execute/readback: where the call's entries landed, for its signed receipt. */
  entries?: {
    received?: AppendedEntry;
    executed?: AppendedEntry & { event: 'executed' | 'execution_failed'; outcome: 'ok' | 'upstream_error' | 'unknown' };
  };
}

/** A call state whose tool, decision and fixed call are known (every step after `fix`). */
export type FixedState = CallState & Required<Pick<CallState, 'tool' | 'decision' | 'call'>>;

/**
 * One step: reads and fills the state; returns an outcome to end the call there, or undefined to go on.
 * A step never builds a wire result: gateway/pipeline/outcome.ts does, once.
 */
export type Step<S extends CallState = CallState> = (s: S) => Promise<Outcome | undefined>;
