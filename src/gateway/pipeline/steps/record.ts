/**
 * Dry run (`serve --dry-run`, `dry_run: true`): reads are forwarded for real, and every call that would
 * change something (anything but an allowed read-only call) is recorded in the audit log and answered
 * as not executed, in words and in `_meta.lookfirst`, so the agent can carry on with its plan. Nothing
 * reaches the upstream. The audit log is the ledger: a `dry_run_recorded` entry is the one place the log
 * keeps a call's arguments (canonical JSON, bound by `args_sha256`), because `lookfirst promote` replays
 * them later through the normal policy and a person's approval (gateway/pipeline/run.ts, `replay`).
 * Step `record`: the dry run's execute step; the call ends here.
 */
import { oneLine } from '../../../confirm/visible.js';
import type { Verdict } from '../../../types.js';
import { summaryOf } from '../ask.js';
import type { FixedState, Step } from '../context.js';
import { denied, type Outcome } from '../outcome.js';

/**
 * Largest arguments a dry run records (bytes they take in the log line, where the canonical JSON is a
 * string and escaped again: 1 MiB). A bigger call is refused rather than recorded without what it needs
 * to be replayed.
 */
export const MAX_RECORDED_ARGS_BYTES = 1024 * 1024;
/**
 * Most bytes of arguments one gate run records (64 MiB), so that an agent cannot grow the log past what
 * `verify-log` and `promote` read; past it, calls are refused.
 */
export const MAX_RECORDED_RUN_BYTES = 64 * 1024 * 1024;

/**
 * Records one call of a dry-run session and answers it, without executing it. The `call_received` and
 * `decision` entries are already written by the pipeline.
 * @returns a success result marked `outcome: dry_run` (for a tool with an outputSchema, carrying the
 *   smallest structuredContent the schema admits; an error result when none passes), or a denial when the arguments are too large to
 *   record or the audit log cannot be written.
 */
export const record: Step<FixedState> = async (s): Promise<Outcome | undefined> => {
  const { deps, tool, call, decision } = s;
  if (decision.route !== 'record') return undefined;
  const preview = summaryOf(call, decision.taint, tool.declared).plain;
  const verdict = (v: Omit<Verdict, 'call_id' | 'args_sha256'>): Verdict => ({ ...v, call_id: call.callId, args_sha256: call.argsSha256 });
  const deny = (reason: string) => denied({ call_id: call.callId, args_sha256: call.argsSha256, reason });
  const size = Buffer.byteLength(JSON.stringify(call.argsCanonical), 'utf8');
  if (size > MAX_RECORDED_ARGS_BYTES)
    return deny(`dry run: its arguments (${size} bytes in the log) are larger than the ${MAX_RECORDED_ARGS_BYTES} bytes a dry run records for replay`);
  if (!(await deps.dryRunBudget.take(size)))
    return deny(
      `dry run: this run has recorded ${MAX_RECORDED_RUN_BYTES - deps.dryRunBudget.left()} bytes of arguments, near the ${MAX_RECORDED_RUN_BYTES} a run records; stop it, promote what it recorded, and start another`,
    );
  try {
    await deps.audit.appendDurable({
      event: 'dry_run_recorded',
      call_id: call.callId,
      tool: tool.exposed,
      upstream: call.upstream,
      upstream_tool: call.upstreamTool,
      args_sha256: call.argsSha256,
      args: call.argsCanonical,
      // The definition it was recorded under: a replay on another definition asks a person first.
      definition_sha256: tool.definitionSha,
      taint: decision.taint,
    });
  } catch (err) {
    return deny(`the audit log cannot be written (${(err as Error).message})`);
  }
  const text = `lookfirst DRY RUN: ${tool.exposed} was NOT executed. This session is a dry run: the call was recorded (call ${call.callId}) and nothing was sent to "${call.upstream}". It would have done: ${oneLine(preview).slice(0, 300)}. Carry on as if it had succeeded; a person reviews the recorded calls and can replay them for real with \`lookfirst promote\`.`;
  const v = verdict({ outcome: 'dry_run', reason: 'dry run: recorded, not executed', retry_safe: true });
  return { kind: 'not-executed', verdict: v, text };
};
