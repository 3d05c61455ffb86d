/**
 * The one way a client's `tools/call` reaches an upstream and its answer comes back: every path that
 * returns an upstream's result to a client (an allowed read, a rule-allowed write, an approved call, a call
 * run after an unlock or an in-client answer, a dry run's read, a promote replay) calls {@link callTool},
 * so none can forget taint. The result of an untrusted-source tool is remembered whole (content,
 * structuredContent, resource contents, embedded resources, links), and so are the error an untrusted
 * upstream answers with and the progress messages it sends during the call, since they reach the agent too.
 *
 * A resource that such a result linked to or embedded is the untrusted source too: its contents, read
 * later with `resources/read`, are remembered by {@link rememberResource} (gateway.route).
 *
 * The raw read fast path (gateway/fast-path.ts) never takes an untrusted-source tool, so its answers
 * never need remembering. Calls the gate makes for itself (a diff preview's read, a read-back) are not
 * returned to the client and do not come here.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { CatalogueTool } from './catalogue.js';
import type { GateMetrics } from './metrics.js';
import { isPlainObject } from './raw.js';
import type { TaintMemory } from './taint.js';
import type { TraceContext } from './tracing.js';
import type { ForwardOptions } from './upstream.js';

/** What the exit needs: the session's taint memory and which tools are untrusted sources. */
export interface ResultDeps {
  taint: TaintMemory;
  untrusted: (tool: string) => boolean;
  /** Times the upstream's answer (gateway/metrics.ts); absent: not timed. */
  metrics?: GateMetrics;
}

/**
 * Sends one `tools/call` to the tool's upstream and remembers an untrusted source's answer.
 * @param params the params as they go upstream (name and arguments).
 * @throws the upstream's error, or a timeout, unchanged (remembered first when the tool is untrusted).
 */
export async function callTool(deps: ResultDeps, tool: CatalogueTool, params: Record<string, unknown>, opts: ForwardOptions): Promise<Result> {
  // Progress messages reach the client too: an untrusted tool's are remembered before they are relayed.
  const relay = opts.onprogress;
  const onprogress =
    relay && isUntrusted(deps, tool)
      ? (p: Record<string, unknown>) => {
          void rememberResult(deps, tool, p);
          relay(p);
        }
      : relay;
  const answered = deps.metrics?.upstreamStarted(tool.upstream.name, 'tools/call');
  try {
    const result = await tool.upstream.request('tools/call', withTrace(params, opts.trace), { ...opts, onprogress });
    answered?.(true);
    // Remembered (on every replica) before the client sees it.
    await rememberResult(deps, tool, result);
    return result;
  } catch (err) {
    answered?.(false);
    const e = err as { message?: unknown; data?: unknown };
    await rememberResult(deps, tool, { error: { message: e?.message, data: e?.data } });
    throw err;
  }
}

/**
 * The params with the gate's span as their `_meta` trace context (MCP SEP-414), every other `_meta` key
 * as it was; unchanged when tracing is off. The client's own `traceparent` is replaced, not kept beside
 * it: the gate's span is the client span's child, so the trace stays one chain.
 */
function withTrace(params: Record<string, unknown>, trace: TraceContext | undefined): Record<string, unknown> {
  if (trace === undefined) return params;
  const { traceparent: _p, tracestate: _s, ...meta } = isPlainObject(params._meta) ? params._meta : {};
  return { ...params, _meta: { ...meta, ...trace } };
}

/**
 * Whether a tool is an untrusted source: `taint.untrusted` matches its exposed name OR the name its
 * upstream gives it (with several upstreams `browser_navigate` is exposed as `web__browser_navigate`;
 * a pattern written for either must not silently miss).
 */
export function isUntrusted(deps: Pick<ResultDeps, 'untrusted'>, tool: Pick<CatalogueTool, 'exposed' | 'upstreamTool'>): boolean {
  return deps.untrusted(tool.exposed) || deps.untrusted(tool.upstreamTool);
}

/**
 * Remembers what an untrusted-source tool returned (the whole of it) in the session's taint memory;
 * nothing for other tools.
 */
export async function rememberResult(deps: ResultDeps, tool: Pick<CatalogueTool, 'exposed' | 'upstreamTool'>, result: unknown): Promise<void> {
  // A store that refuses the record taints the principal as a whole (gateway/taint.ts): nothing to add here.
  if (isUntrusted(deps, tool)) await deps.taint.record(tool.exposed, result).catch(() => {});
}

/**
 * Remembers a resource's contents (`resources/read`) when an untrusted tool's result linked to it or
 * embedded it in this session: reading it is reading that untrusted source.
 */
export function rememberResource(deps: Pick<ResultDeps, 'taint'>, uri: unknown, result: unknown): void {
  const tool = typeof uri === 'string' ? deps.taint.linkedFrom(uri) : undefined;
  if (tool !== undefined) deps.taint.record(tool, result);
}
