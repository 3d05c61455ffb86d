/**
 * The pipeline of one `tools/call`, as an ordered list of steps (each in steps/<name>.ts, one signature:
 * gateway/pipeline/context.ts). A step ends the call by returning an `Outcome`; only
 * gateway/pipeline/outcome.ts turns that into a wire result.
 *
 * A read (allowed, and proven read-only by the classifier) is forwarded and logged behind. Anything else
 * is a gated call: its arguments are fixed once, every entry is on disk before the next step, a denial
 * never reaches the upstream, and exactly the arguments that were approved are sent, once. Any doubt
 * (unknown tool, bad arguments, audit failure, cancellation) means the call is not executed.
 *
 * The same run serves three inputs: a client's call (`runCall`), a dry run (the `record` step ends it
 * instead of confirm and execute), and `lookfirst promote`'s replay of a recorded call (`replay`: the same
 * steps, asked one by one, no retry and no in-client question).
 */

import { StoreError } from '../../store/store.js';
import type { CallContext, CallInput, CallState, FixedState, PipelineDeps, Step } from './context.js';
import { denied, type Outcome, toResult } from './outcome.js';
import { answered } from './steps/answered.js';
import { confirm } from './steps/confirm.js';
import { decide } from './steps/decide.js';
import { evidence } from './steps/evidence.js';
import { execute } from './steps/execute.js';
import { fix } from './steps/fix.js';
import { interlock } from './steps/interlock.js';
import { lookup } from './steps/lookup.js';
import { pins } from './steps/pins.js';
import { placeholders } from './steps/placeholders.js';
import { read } from './steps/read.js';
import { readback } from './steps/readback.js';
import { receipt } from './steps/receipt.js';
import { record } from './steps/record.js';
import { retry } from './steps/retry.js';
import { signReceipt } from './steps/sign-receipt.js';

/** Until the call is known and decided; a read ends here. */
const DECIDE: Step[] = [lookup, placeholders, pins, decide, read];
/** A gated call, one at a time per tool in a session (the question included). */
const HOLD: Step<FixedState>[] = [retry, receipt, record, interlock, confirm];
/** The execution, in the gate-wide order of its tool. */
const EXECUTE: Step<FixedState>[] = [evidence, execute, readback];

/**
 * Runs one call through the pipeline.
 * @throws WireError InvalidParams for a live call of an unknown tool or without a name (a JSON-RPC error).
 * @returns how it ended.
 */
export async function run(deps: PipelineDeps, input: CallInput, ctx: CallContext): Promise<{ outcome: Outcome; state: CallState }> {
  const s: CallState = { deps, ctx, input };
  const early = await steps(s, DECIDE);
  if (early) return { outcome: early, state: s };
  const tool = s.tool as NonNullable<CallState['tool']>;
  const outcome = await deps.interlock.exclusive(tool.exposed, () => gated(s));
  return { outcome, state: s };
}

async function gated(s: CallState): Promise<Outcome> {
  const fixed = await steps(s, [fix]);
  if (fixed) return fixed;
  const f = s as FixedState;
  // A call that comes back with its answer was asked already: it goes straight to execution.
  const done = (await steps(f, [answered])) ?? (f.approval ? undefined : await steps(f, HOLD));
  if (done) return done;
  let started = false;
  try {
    const out = await f.deps.interlock.executing(f.tool.exposed, () => {
      started = true;
      return steps(f, EXECUTE);
    });
    if (!out) throw new Error('the pipeline ended without an outcome (the readback step ends every call)');
    // Every executed call's signed receipt, whichever way it ended (never throws, never changes the outcome).
    await signReceipt(f, out);
    return out;
  } catch (err) {
    // The tool's execution order could not be taken from the store: nothing was sent (fail closed).
    if (started || !(err instanceof StoreError)) throw err;
    await f.deps.audit
      .appendDurable({ event: 'cancelled', call_id: f.call.callId, tool: f.tool.exposed, stage: 'before_execution', reason: 'state store unavailable' })
      .catch(() => {});
    return denied({
      call_id: f.call.callId,
      args_sha256: f.call.argsSha256,
      reason: `the shared state store cannot be reached (${err.message}); nothing was run`,
    });
  }
}

/** The steps a trace shows, each as a child span of the call's (gateway/tracing.ts), by the name it shows. */
const SPANS = new Map<Step<never>, string>([
  [decide, 'classify'],
  [read, 'forward'],
  [confirm, 'hold'],
  [execute, 'forward'],
  [readback, 'read-back'],
]);

async function steps<S extends CallState>(s: S, list: readonly Step<S>[]): Promise<Outcome | undefined> {
  const span = s.ctx.span;
  for (const step of list) {
    // The read step looks at every call; only a read it forwards is a span.
    const name = span && (step !== read || s.decision?.route === 'read') ? SPANS.get(step as Step<never>) : undefined;
    const out =
      span && name
        ? await span.child(name, (trace) => {
            s.trace = trace;
            return step(s).finally(() => {
              s.trace = undefined;
            });
          })
        : await step(s);
    if (out) return out;
  }
  return undefined;
}

/**
 * Handles one client `tools/call` and answers it on the wire.
 * @param params the request params exactly as the client sent them.
 * @throws WireError InvalidParams for an unknown tool or a missing name (JSON-RPC error, spec §tools).
 * @returns the wire result (allowed reads: the upstream's, untouched), the outcome it came from, and the
 *   tool's upstream (config name; absent when the call ended before its tool was known).
 */
export async function handleToolCall(
  deps: PipelineDeps,
  params: Record<string, unknown>,
  ctx: CallContext,
): Promise<{ result: ReturnType<typeof toResult>; outcome: Outcome; upstream?: string }> {
  const { outcome, state } = await run(deps, { kind: 'live', params }, ctx);
  return { result: toResult(outcome, state.tool), outcome, upstream: state.tool?.upstream.name };
}
