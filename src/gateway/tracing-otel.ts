/**
 * The gate's traces with OpenTelemetry: a tracer provider of the gate's own (never registered as the
 * process's global one, and no context manager: each span's parent is passed explicitly), spans batched
 * to an OTLP/HTTP receiver as JSON. The OpenTelemetry packages are imported here, dynamically, and this
 * file is imported only when `tracing.enabled` is true (cli/gate.ts), so a gate without tracing loads none
 * of them.
 *
 * The client's trace context is read from the call's `_meta` (`traceparent`, `tracestate`: MCP SEP-414)
 * by the W3C propagator; a malformed value is ignored (the call starts a trace of its own), never a reason
 * to refuse the call. An exporter that cannot reach its receiver drops spans; it never slows or fails a call.
 * @see https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/ (the span's attribute names)
 */
import type { CallOutcome } from './metrics.js';
import type { CallSpan, GateTracer, TraceContext } from './tracing.js';

/** Options of {@link createOtelTracer}. */
export interface OtelTracerOptions {
  /** The receiver's traces URL, e.g. `http://127.0.0.1:4318/v1/traces`. */
  endpoint: string;
  serviceName: string;
  /** The gate's version (`service.version`). */
  version: string;
  /** Longest a batch of spans waits before it is sent (ms); default 1000. */
  flushMs?: number;
}

/** Longest tool name kept as a span attribute (characters). */
const MAX_TOOL_CHARS = 128;

/**
 * Builds the tracer.
 * @throws Error when the OpenTelemetry packages cannot be loaded (the gate does not start: it was asked to trace).
 */
export async function createOtelTracer(opts: OtelTracerOptions): Promise<GateTracer> {
  const [api, core, resources, sdk, exporterMod] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace } = api;
  const exporter = new exporterMod.OTLPTraceExporter({ url: opts.endpoint });
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.version }),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: opts.flushMs ?? 1000 })],
  });
  const tracer = provider.getTracer('lookfirst', opts.version);
  const propagator = new core.W3CTraceContextPropagator();

  const parentOf = (meta: unknown) => {
    if (typeof meta !== 'object' || meta === null) return ROOT_CONTEXT;
    const m = meta as Record<string, unknown>;
    const carrier: Record<string, string> = {};
    if (typeof m.traceparent === 'string') carrier.traceparent = m.traceparent;
    if (typeof m.tracestate === 'string') carrier.tracestate = m.tracestate;
    return carrier.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  };

  return {
    enabled: true,
    startCall(meta: unknown, tool: unknown): CallSpan {
      const name = typeof tool === 'string' ? tool.slice(0, MAX_TOOL_CHARS) : undefined;
      const parent = parentOf(meta);
      const span = tracer.startSpan(
        name === undefined ? 'tools/call' : `tools/call ${name}`,
        { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call', ...(name === undefined ? {} : { 'gen_ai.tool.name': name }) } },
        parent,
      );
      const inside = trace.setSpan(parent, span);
      let ended = false;
      return {
        async child<T>(childName: string, fn: (trace: TraceContext | undefined) => Promise<T>): Promise<T> {
          const c = tracer.startSpan(childName, { kind: SpanKind.INTERNAL }, inside);
          const carrier: Record<string, string> = {};
          propagator.inject(trace.setSpan(inside, c), carrier, defaultTextMapSetter);
          const context: TraceContext | undefined =
            carrier.traceparent === undefined
              ? undefined
              : { traceparent: carrier.traceparent, ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) };
          try {
            return await fn(context);
          } catch (err) {
            c.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message?.slice(0, 200) });
            throw err;
          } finally {
            c.end();
          }
        },
        end(outcome: CallOutcome, upstream?: string) {
          if (ended) return;
          ended = true;
          span.setAttribute('lookfirst.outcome', outcome);
          if (upstream !== undefined) span.setAttribute('lookfirst.upstream', upstream);
          if (outcome === 'error' || outcome === 'read_failed') span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    async close() {
      // Bounded: a receiver that is gone must not hold up the gate's stop.
      await Promise.race([provider.shutdown().catch(() => {}), new Promise((r) => setTimeout(r, 3000).unref())]);
    },
  };
}
