/**
 * What the gate tells its metrics (`metrics:` in lookfirst.yaml): one small interface, injected where the
 * gate is built (cli/gate.ts), with a no-op default so that decision code stays free of it and a gate with
 * metrics off pays one empty call at each point, nothing more. The Prometheus implementation
 * (gateway/metrics-prom.ts) is loaded only when metrics are on.
 *
 * Labels are bounded by construction, because every distinct value is a time series held for the life of
 * the process: the upstream (a name from the operator's config), the outcome, the channel (mapped onto a
 * fixed list) and the request method (the gate's own requests). Never the tool name: tool names come from
 * upstreams, which may list thousands or rename them at every `tools/list_changed`, and an unknown tool's
 * name comes from the client; per-tool counts are in the audit log (`lookfirst stats`). Never arguments,
 * principals, tokens or anything a client sent.
 */

/** How a `tools/call` ended, as the calls counter labels it. */
export type CallOutcome =
  /** An allowed read, forwarded; `read_failed`: the upstream answered with an error or none came. */
  | 'read'
  | 'read_failed'
  /** A gated call ran (whatever its read-back found). */
  | 'executed'
  /** Nothing was sent: a rule, a person, a timeout, a failed check or the gate said no. */
  | 'denied'
  /** Not run yet: a person has not decided within `confirm.hold_seconds` (or pending mode). */
  | 'pending'
  /** Recorded by a dry run, not run. */
  | 'dry_run'
  /** A person unlocked a blocked tool; this call itself did not run. */
  | 'unblocked'
  /** A 2026-07-28 `input_required` result: the client asks its user. */
  | 'asked'
  /** The gate answered with a JSON-RPC error (an unknown tool, an upstream that failed a read). */
  | 'error';

/** Who decided a held call, as the decisions counter labels it (anything else is `other`). */
export const DECISION_CHANNELS = ['web', 'webhook', 'terminal', 'elicitation', 'device', 'rule', 'store', 'gate', 'none', 'other'] as const;

/** One of {@link DECISION_CHANNELS}. */
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];

/**
 * The gate's metrics. Every method is cheap and never throws: a metrics problem must never change what
 * the gate decides or does.
 */
export interface GateMetrics {
  /** False for the no-op: callers may skip work (reading a clock) that only metrics need. */
  readonly enabled: boolean;
  /**
   * A `tools/call` ended.
   * @param upstream the tool's upstream (config name); undefined when no tool was found.
   */
  callEnded(outcome: CallOutcome, upstream: string | undefined): void;
  /**
   * A request to an upstream starts.
   * @param method the gate's own request method (`tools/call`).
   * @returns a function to call once, when the answer (or the error) came.
   */
  upstreamStarted(upstream: string, method: string): (ok: boolean) => void;
  /**
   * A held call was decided.
   * @param channel the approval's channel (mapped onto {@link DECISION_CHANNELS}).
   * @param waitedMs from the question to the decision (ms); undefined when nobody waited (a rule).
   */
  decided(channel: string, decision: 'approved' | 'denied', waitedMs?: number): void;
  /** A durable audit append finished (ms, from the call to the worker's fdatasync acknowledgement). */
  auditAppended(ms: number, ok: boolean): void;
  /** Where the number of calls waiting for a person now is read from (at scrape time: nothing to keep up to date). */
  heldFrom(count: () => number): void;
}

const NOOP_END = (_ok: boolean): void => {};

/** Metrics off: every method does nothing. */
export const noMetrics: GateMetrics = Object.freeze({
  enabled: false,
  callEnded: () => {},
  upstreamStarted: () => NOOP_END,
  decided: () => {},
  auditAppended: () => {},
  heldFrom: () => {},
});

/** The channel as the decisions counter labels it: one of a fixed list, so a label never grows. */
export function toDecisionChannel(channel: string): DecisionChannel {
  return (DECISION_CHANNELS as readonly string[]).includes(channel) ? (channel as DecisionChannel) : 'other';
}
