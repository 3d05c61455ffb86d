/**
 * Seeing what a running gate does: its Prometheus endpoint (`metrics:`) and its OpenTelemetry traces
 * (`tracing:`), started for `lookfirst serve` by the composition root (cli/gate.ts). prom-client and the
 * OpenTelemetry packages are imported here, dynamically, only when their section is enabled: a gate with
 * both off loads neither, and its calls meet only the no-op implementations (gateway/metrics.ts,
 * gateway/tracing.ts).
 */
import type { Config } from '../config/load.js';
import { LOOPBACK } from '../config/schema.js';
import { type GateMetrics, noMetrics } from '../gateway/metrics.js';
import { type GateTracer, noTracer } from '../gateway/tracing.js';
import type { MetricsEndpoint } from '../web/metrics-endpoint.js';

/** The gate's metrics and tracer, and how to stop them. */
export interface Observability {
  metrics: GateMetrics;
  tracer: GateTracer;
  /** The metrics endpoint, when it listens. */
  endpoint?: MetricsEndpoint;
  /** Stops the endpoint and sends the spans still buffered. Never throws. */
  close(): Promise<void>;
}

/** Nothing observed: the no-ops. */
export const unobserved: Observability = { metrics: noMetrics, tracer: noTracer, close: async () => {} };

/**
 * Starts what the config enables, and says where on `log` (stderr).
 * @param version the gate's version (the spans' `service.version`).
 * @throws LookfirstError `WEB_UNAVAILABLE` when the metrics port cannot be bound (nothing is left running).
 */
export async function startObservability(config: Config, version: string, log: (line: string) => void): Promise<Observability> {
  const m = config.metrics;
  const t = config.tracing;
  if (!m?.enabled && !t?.enabled) return unobserved;
  let metrics: GateMetrics = noMetrics;
  let endpoint: MetricsEndpoint | undefined;
  let closeMetrics = () => {};
  if (m?.enabled) {
    const { createPromMetrics } = await import('../gateway/metrics-prom.js');
    const { startMetricsEndpoint } = await import('../web/metrics-endpoint.js');
    const prom = createPromMetrics({ process: m.process });
    try {
      endpoint = await startMetricsEndpoint({ host: m.host, port: m.port, source: prom });
    } catch (err) {
      prom.close();
      throw err;
    }
    metrics = prom;
    closeMetrics = () => prom.close();
    log(`metrics at ${endpoint.url} (Prometheus text format)`);
    if (!LOOPBACK.has(m.host))
      log(
        `warning: metrics.host ${m.host} is off loopback: whoever reaches port ${endpoint.port} reads the gate's counts and upstream names (no token is asked)`,
      );
  }
  let tracer: GateTracer = noTracer;
  if (t?.enabled) {
    try {
      const { createOtelTracer } = await import('../gateway/tracing-otel.js');
      tracer = await createOtelTracer({ endpoint: t.otlpEndpoint, serviceName: t.serviceName, version });
    } catch (err) {
      await endpoint?.close();
      closeMetrics();
      throw err;
    }
    log(`tracing: spans of each tools/call go to ${t.otlpEndpoint} (OTLP/HTTP), as service "${t.serviceName}"`);
  }
  return {
    metrics,
    tracer,
    endpoint,
    async close() {
      await endpoint?.close().catch(() => {});
      closeMetrics();
      await tracer.close().catch(() => {});
    },
  };
}
