/**
 * Every audit event the gate writes, with its fields: a map from the event kind to the fields it carries
 * (besides the envelope `v`, `seq`, `ts`, `prev`, `sig`), so that a writer cannot misspell a kind or a
 * field. Builders for the entries written in several places are in gateway/pipeline/entries.ts. The bytes are pinned by
 * test/audit-format.test.ts, which also checks that every kind here has a pinned example.
 * Optional fields left undefined are not written (canonical JSON drops them: audit/canonical.ts).
 */
import type { Trust } from '../types.js';

type Call = { call_id: string; tool: string };
type Text = string | undefined;

/** Event kind → its fields. */
export interface AuditEventFields {
  gate_started: { version: string; pid: number; upstreams: string; dry_run?: boolean; promote?: string; session?: number; replica?: string };
  gate_stopped: { reason: string };
  read: {
    tool: string;
    upstream: string;
    upstream_tool: string;
    reason: string;
    outcome: 'ok' | 'upstream_error' | 'failed';
    error?: Text;
    args_sha256?: string;
  };
  call_received: Call & {
    upstream: string;
    upstream_tool: string;
    args_sha256: string;
    client: string;
    dry_run?: boolean;
    replay_of?: string;
  };
  decision: Call & { action: 'allow' | 'confirm' | 'deny'; reason: string; rule?: Text; kind?: Text; risk?: Text };
  approval: Call & {
    purpose?: 'definition' | 'unlock';
    approved: boolean;
    channel: string;
    actor?: Text;
    trust?: Trust;
    comment?: Text;
    reason?: Text;
    /** The replica whose page or webhook took the decision (replicas sharing a store). */
    replica?: Text;
    /** How it was decided (`tap`, `voice`, `page`, …) and its evidence reference, when the channel gave them. */
    method?: Text;
    evidence?: Text;
    /** The named checks the decision passed, comma-separated (the receipt has each with its detail). */
    checks?: Text;
  };
  approval_pending: Call & { channels: string; until: string };
  approval_lapsed: Call & { actor?: Text; reason: string };
  call_retried: Call & { args_sha256?: string };
  input_required: Call & { until: string };
  input_answered: Call;
  input_refused: Call & { reason: string };
  client_identity_changed: { from: string; to: string; further_changes_not_logged?: boolean };
  upstream_request: { upstream?: Text; method?: Text; outcome: 'refused' | 'relayed'; reason?: Text; suppressed?: number };
  definition_changed: { upstream: string; tool: string; how: string; sha256: string };
  definition_accepted: Call & { upstream: string; sha256: string; actor?: Text };
  dry_run_recorded: Call & { upstream: string; upstream_tool: string; args_sha256: string; args: string; definition_sha256?: Text; taint?: Text };
  executed: Call & { outcome: 'ok' | 'upstream_error' };
  execution_failed: Call & { outcome: 'unknown'; reason: string };
  readback: Call & { outcome: 'ok' | 'failed' | 'unclear' | 'none'; detail?: Text };
  execution_started: Call;
  execution_resolved: Call;
  execution_blocked: Call & { reason: string };
  execution_unblocked: Call & { blocked_call: string; actor?: Text };
  cancelled: Call & { stage: 'before_execution' | 'waiting'; reason?: Text };
  web_refused: { reason: string; suppressed?: number };
  /** A call refused for placeholders this session was not given (privacy filter): nothing ran. */
  placeholder_refused: { call_id: string; tool: string; upstream: string; args_sha256?: Text; unknown: number; locked: boolean; reason: string };
  /** Which placeholders' real values a call sends (ids and kinds, never values); no call_id for a read. */
  placeholders_resolved: { call_id?: Text; tool: string; upstream: string; placeholders: string };
  /** A signed receipt of an executed call was written (audit/receipts.ts): SHA-256 (hex) of its file's bytes. */
  receipt_issued: Call & { receipt_sha256: string };
  /** An executed call's receipt could not be written (the call ran all the same). */
  receipt_failed: Call & { reason: string };
}

/** Every event kind. */
export type AuditEvent = keyof AuditEventFields;

/** One entry's fields, as a writer passes them: the kind and exactly its fields. */
export type AuditFieldsOf<K extends AuditEvent> = { event: K } & AuditEventFields[K];

/** Any entry's fields. */
export type TypedAuditFields = { [K in AuditEvent]: AuditFieldsOf<K> }[AuditEvent];

/** The kinds, for tests that must cover every one (test/audit-format.test.ts). */
export const AUDIT_EVENTS: readonly AuditEvent[] = [
  'gate_started',
  'gate_stopped',
  'read',
  'call_received',
  'decision',
  'approval',
  'approval_pending',
  'approval_lapsed',
  'call_retried',
  'input_required',
  'input_answered',
  'input_refused',
  'client_identity_changed',
  'upstream_request',
  'definition_changed',
  'definition_accepted',
  'dry_run_recorded',
  'executed',
  'execution_failed',
  'readback',
  'execution_started',
  'execution_resolved',
  'execution_blocked',
  'execution_unblocked',
  'cancelled',
  'web_refused',
  'placeholder_refused',
  'placeholders_resolved',
  'receipt_issued',
  'receipt_failed',
];
