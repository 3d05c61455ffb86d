/**
 * `lookfirst promote`'s side of the pipeline: a call a dry run recorded is replayed for real by the same
 * run as a live call (gateway/pipeline/run.ts `replay`), and a recorded call that an earlier promote sent
 * without a clean end is settled by a person unlocking its tool first.
 */
import type { RecordedCall } from '../audit/ledger.js';
import type { Decider, Risk, Verdict } from '../types.js';
import type { CallContext, PipelineDeps } from './pipeline/context.js';
import { type Outcome, toResult } from './pipeline/outcome.js';
import { run } from './pipeline/run.js';
import { recordedCall } from './pipeline/steps/fix.js';
import { unlock } from './pipeline/unlock.js';

/** How a replay is approved: `yes` is the operator's blanket approval (`promote --yes`). */
export interface ReplayOptions {
  yes?: Decider;
}

/** What came of replaying one recorded call: the verdict (as a live call would get) and the result's text. */
export interface ReplayOutcome {
  verdict: Verdict;
  text: string;
  /** The classifier's risk, with the upstream's annotations, once the call was judged. */
  risk?: Risk;
}

/**
 * Replays one recorded call, for real, through the same steps as a live call: the definition must still
 * be the pinned one and the recorded one (else a person accepts it first), a deny rule wins, a blocked
 * tool is unlocked by a person first, and every replayed call is approved one by one (the operator's
 * `--yes` never covers a tainted call). Its `call_received` names the recorded call in `replay_of`, which
 * is how a second promote knows not to send it again (audit/ledger.ts).
 * @param ctx the signal cancels a wait for a person (nothing then runs) or an execution in progress.
 * @returns the verdict: `executed` (with its read-back) or `denied` (nothing was sent, and why).
 */
export async function replayRecorded(deps: PipelineDeps, rec: RecordedCall, opts: ReplayOptions, ctx: CallContext): Promise<ReplayOutcome> {
  const { outcome, state } = await run(
    deps,
    {
      kind: 'replay',
      callId: rec.callId,
      tool: rec.tool,
      upstream: rec.upstream,
      upstreamTool: rec.upstreamTool,
      args: rec.args,
      argsCanonical: rec.argsCanonical,
      argsSha256: rec.argsSha256,
      definitionSha: rec.definitionSha,
      taint: rec.taint,
      yes: opts.yes,
    },
    ctx,
  );
  return { ...described(outcome, state.tool, rec), risk: state.decision?.classification?.risk };
}

/**
 * A recorded call that an earlier promote sent and that did not end cleanly: a person who has looked at
 * the target unlocks its tool, and only then may the replay go on past it. Asked whether or not this
 * gate's interlock knows of the block (the replay may be recorded in another log than this config's).
 * Nothing is sent; `--yes` cannot answer this.
 * @param sentAs the call id the earlier promote sent it under (named in the unlock, so that it settles it).
 * @returns `unblocked` when a person unlocked the tool, else the denial.
 */
export async function settleUnclear(deps: PipelineDeps, rec: RecordedCall, sentAs: string, ctx: CallContext): Promise<ReplayOutcome> {
  const tool = deps.catalogue.get(rec.tool);
  if (!tool)
    return described(
      {
        kind: 'denied',
        verdict: {
          outcome: 'denied',
          reason: `${rec.tool} is not offered by any upstream now, so it cannot be unlocked`,
          call_id: rec.callId,
          args_sha256: rec.argsSha256,
          retry_safe: true,
        },
      },
      undefined,
      rec,
    );
  const known = deps.interlock.blockOf(rec.tool);
  const block = {
    sinceMs: known?.sinceMs ?? deps.clock.nowMs(),
    reason: `an earlier promote sent this recorded call (call ${sentAs}) and it did not end cleanly${known ? `: ${known.reason}` : ''}`,
    callId: sentAs,
  };
  return described(await unlock(deps, recordedCall(tool, rec), block, ctx), tool, rec);
}

/** The verdict and the words of an outcome, as promote prints them. */
function described(outcome: Outcome, tool: Parameters<typeof toResult>[1], rec: RecordedCall): ReplayOutcome {
  const verdict: Verdict =
    'verdict' in outcome ? outcome.verdict : { outcome: 'denied', reason: 'no verdict', call_id: rec.callId, args_sha256: rec.argsSha256 };
  // A denial is told by its reason alone (promote prints the verdict beside it).
  if (outcome.kind === 'denied') return { verdict, text: verdict.reason };
  const content = (toResult(outcome, tool).content as { type: string; text?: string }[] | undefined) ?? [];
  return { verdict, text: content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join(' ') };
}
