/**
 * The gate's metrics in Prometheus form (prom-client), in a registry of the gate's own: never the
 * library's global one, so a program that embeds the gate (the library) and has its own metrics sees
 * no names it did not register, and two gates in one process do not collide. Loaded by cli/gate.ts only
 * when `metrics.enabled` is true. Durations are measured with the monotonic clock (src/clock.ts), in
 * seconds, as Prometheus names them. Labels: see gateway/metrics.ts for why they are bounded.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type MonoClock, systemMonoClock } from '../clock.js';
import { type CallOutcome, type GateMetrics, toDecisionChannel } from './metrics.js';

/** Prefix of every metric the gate registers. */
export const METRIC_PREFIX = 'lookfirst_';

/** Buckets of the time a person takes to decide (seconds): from a quick tap to the hour a question may stay open. */
const DECISION_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 45, 60, 120, 300, 600, 1800, 3600];
/** Buckets of an upstream request (seconds): a local read in a millisecond to a minute's timeout. */
const UPSTREAM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Buckets of a durable audit append (seconds): an fdatasync on a quick disk to a slow network one. */
const AUDIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The gate's Prometheus metrics: the `GateMetrics` the gate calls, and the registry `/metrics` serves. */
export interface PromMetrics extends GateMetrics {
  readonly registry: Registry;
  /** The exposition text of every metric (Prometheus text format 0.0.4). */
  scrape(): Promise<string>;
  /** The Content-Type of {@link scrape}'s text. */
  readonly contentType: string;
  /** Stops the default metrics' event-loop monitor and clears the registry. */
  close(): void;
}

/** Options of {@link createPromMetrics}. */
export interface PromMetricsOptions {
  /** Also the process metrics prom-client collects (CPU, memory, event-loop lag, handles), prefixed `lookfirst_`. */
  process?: boolean;
  mono?: MonoClock;
}

/** Builds the gate's metrics in a registry of their own. */
export function createPromMetrics(opts: PromMetricsOptions = {}): PromMetrics {
  const mono = opts.mono ?? systemMonoClock;
  const registry = new Registry();
  const calls = new Counter({
    name: `${METRIC_PREFIX}tool_calls_total`,
    help: 'tools/call requests the gate answered, by how they ended and by upstream (config name; empty when no tool was found)',
    labelNames: ['outcome', 'upstream'] as const,
    registers: [registry],
  });
  const decisions = new Counter({
    name: `${METRIC_PREFIX}decisions_total`,
    help: 'Decisions on held calls, by the channel that decided (a rule, a person on a channel, a timeout) and the decision',
    labelNames: ['channel', 'decision'] as const,
    registers: [registry],
  });
  const decisionSeconds = new Histogram({
    name: `${METRIC_PREFIX}decision_seconds`,
    help: 'Time from asking a person to their decision (or the timeout), in seconds',
    labelNames: ['channel', 'decision'] as const,
    buckets: DECISION_BUCKETS,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: `${METRIC_PREFIX}upstream_request_seconds`,
    help: 'Time an upstream took to answer a tools/call the gate sent for a client, in seconds',
    labelNames: ['upstream', 'method', 'outcome'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers: [registry],
  });
  const auditSeconds = new Histogram({
    name: `${METRIC_PREFIX}audit_append_seconds`,
    help: 'Time of a durable audit log append (queued, signed, written and fdatasynced by the audit worker), in seconds',
    labelNames: ['outcome'] as const,
    buckets: AUDIT_BUCKETS,
    registers: [registry],
  });
  let heldCount: () => number = () => 0;
  new Gauge({
    name: `${METRIC_PREFIX}held_calls`,
    help: 'Calls waiting for a person to decide now (this gate process)',
    registers: [registry],
    collect() {
      this.set(heldCount());
    },
  });
  if (opts.process) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

  return {
    enabled: true,
    registry,
    contentType: registry.contentType,
    callEnded(outcome: CallOutcome, upstream: string | undefined) {
      calls.inc({ outcome, upstream: upstream ?? '' });
    },
    upstreamStarted(upstream: string, method: string) {
      const t0 = mono.monoMs();
      let done = false;
      return (ok: boolean) => {
        if (done) return;
        done = true;
        upstreamSeconds.observe({ upstream, method: method === 'tools/call' ? method : 'other', outcome: ok ? 'ok' : 'error' }, (mono.monoMs() - t0) / 1000);
      };
    },
    decided(channel: string, decision: 'approved' | 'denied', waitedMs?: number) {
      const labels = { channel: toDecisionChannel(channel), decision };
      decisions.inc(labels);
      if (waitedMs !== undefined) decisionSeconds.observe(labels, Math.max(0, waitedMs) / 1000);
    },
    auditAppended(ms: number, ok: boolean) {
      auditSeconds.observe({ outcome: ok ? 'ok' : 'failed' }, ms / 1000);
    },
    heldFrom(count: () => number) {
      heldCount = count;
    },
    scrape: () => registry.metrics(),
    close() {
      registry.clear();
    },
  };
}
