/**
 * What the gate tells its traces (`tracing:` in lookfirst.yaml): one span per `tools/call`, with a child
 * span for each step worth seeing (classify, hold, forward, read-back). Like the metrics
 * (gateway/metrics.ts), it is an interface injected where the gate is built, and the OpenTelemetry
 * implementation (gateway/tracing-otel.ts) is imported only when tracing is on: with it off, a call
 * carries no span and the pipeline runs its steps as before.
 *
 * A span carries the tool's name, its upstream and how the call ended; never its arguments, the
 * principal or a token.
 * @see https://www.w3.org/TR/trace-context/ (W3C Trace Context: `traceparent`, `tracestate`)
 * @see MCP SEP-414: `traceparent`, `tracestate` and `baggage` are reserved, unprefixed keys of `params._meta`.
 */
import type { CallOutcome } from './metrics.js';

/**
 * W3C trace context naming a span, as it travels in a request's `_meta` (MCP SEP-414): `traceparent`
 * (`00-<trace id>-<span id>-<flags>`) and, when the trace has one, `tracestate`.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** The span of one `tools/call`. */
export interface CallSpan {
  /**
   * Runs `fn` inside a child span named `name`; the child ends when `fn` settles (an error marks it).
   * @param fn given the child span's trace context, which the step sends upstream in the request's
   *   `_meta`, so that the upstream's own spans become children of the gate's `forward` (W3C Trace
   *   Context §3: an intermediary that records a span passes on its own parent-id).
   * @returns what `fn` returns, unchanged.
   */
  child<T>(name: string, fn: (trace: TraceContext | undefined) => Promise<T>): Promise<T>;
  /** Ends the call's span with how it ended. Only the first call counts. */
  end(outcome: CallOutcome, upstream?: string): void;
}

/** The gate's tracer. */
export interface GateTracer {
  readonly enabled: boolean;
  /**
   * Starts the span of one `tools/call`.
   * @param meta the request's `_meta` as the client sent it: a valid `traceparent` there (with its
   *   `tracestate`) makes the span its child; anything else starts a new trace.
   * @param tool the tool name the client asked for (a span attribute, cut to 128 characters).
   * @returns undefined when tracing is off.
   */
  startCall(meta: unknown, tool: unknown): CallSpan | undefined;
  /** Sends what is still buffered and stops (at most a few seconds). */
  close(): Promise<void>;
}

/** Tracing off. */
export const noTracer: GateTracer = Object.freeze({
  enabled: false,
  startCall: () => undefined,
  close: async () => {},
});
