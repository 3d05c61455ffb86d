/**
 * An allowed read on the SDK path (the fast path, gateway/fast-path.ts, takes the simplest ones raw):
 * forwarded as the client sent it, its audit entry written behind it (never waits for disk), and, for an
 * untrusted-source tool, its result remembered for taint (gateway/tool-result.ts). Only a call the
 * classifier proves read-only comes here: a write that a rule allows is a gated call.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { CatalogueTool } from '../../catalogue.js';
import { callTool } from '../../tool-result.js';
import type { TraceContext } from '../../tracing.js';
import { ErrorCode, WireError } from '../../wire-error.js';
import type { CallContext, CallState, PipelineDeps, Step } from '../context.js';
import { resolvedEntry } from './placeholders.js';

/** Step `read`: a call the decision routes as a read is forwarded and ends here. */
export const read: Step = async (s: CallState) => {
  if (s.decision?.route !== 'read' || s.input.kind !== 'live' || !s.tool) return undefined;
  // With the real values behind this session's placeholders (steps/placeholders.ts); logged as the agent sent it.
  const params = s.resolved ? { ...s.input.params, arguments: s.resolved.args } : s.input.params;
  if (s.resolved) resolvedEntry(s, undefined);
  return { kind: 'forwarded', result: await forwardRead(s.deps, s.tool, params, s.ctx, s.decision.reason, s.input.params.arguments, s.trace) };
};

/**
 * Forwards one allowed read.
 * @throws WireError RequestTimeout when the upstream does not answer in time, or the upstream's error.
 */
async function forwardRead(
  deps: PipelineDeps,
  tool: CatalogueTool,
  params: Record<string, unknown>,
  ctx: CallContext,
  reason: string,
  asSent: unknown,
  trace: TraceContext | undefined,
): Promise<Result> {
  const forward = tool.exposed === tool.upstreamTool ? params : { ...params, name: tool.upstreamTool };
  let isError: boolean | string = false;
  try {
    // Proven read-only (policy/decide.ts): if its HTTP session ends before the upstream takes it, it may go once more.
    const result = await callTool(deps, tool, forward, { signal: ctx.signal, onprogress: ctx.progress, readOnly: true, trace });
    isError = result.isError === true;
    return result;
  } catch (err) {
    isError = (err as Error).message;
    // The same words as the fast path's timeout, whichever path the read took.
    if ((err as { code?: unknown }).code === ErrorCode.RequestTimeout && !ctx.signal.aborted)
      throw new WireError(ErrorCode.RequestTimeout, `upstream "${tool.upstream.name}" did not answer within ${tool.upstream.config.timeoutMs} ms`);
    throw err;
  } finally {
    if (deps.logReads) {
      // args_sha256 is computed by the audit worker from the arguments posted beside the entry.
      deps.audit.appendLater(
        {
          event: 'read',
          tool: tool.exposed,
          upstream: tool.upstream.name,
          upstream_tool: tool.upstreamTool,
          reason,
          outcome: isError === false ? 'ok' : isError === true ? 'upstream_error' : 'failed',
          error: typeof isError === 'string' ? isError : undefined,
        },
        asSent ?? {},
      );
    }
  }
}
