/**
 * The real run of `lookfirst promote`: a gate without a client, whose pipeline replays the session's
 * recorded calls in order (gateway/replay.ts). A call an earlier promote sent and that did not end cleanly
 * is settled first: a person who has looked at the target unlocks its tool, and only then does the
 * replay go past it. The first call that is refused or does not run cleanly stops the replay.
 */
import { userInfo } from 'node:os';
import type { RecordedCall } from '../../audit/ledger.js';
import type { AuditLog } from '../../audit/writer.js';
import type { Config } from '../../config/load.js';
import { replayRecorded, settleUnclear } from '../../gateway/replay.js';
import { createGate } from '../gate.js';
import type { PromoteLine, PromoteReport } from './promote-view.js';

/** A line the replay goes through: a call to send, one a deny rule refuses (logged, and it stops the replay), or one to settle. */
export const toSend = (l: PromoteLine): boolean => l.status === 'would_replay' || l.status === 'would_refuse' || l.status === 'sent_unclear';

/** Where a person can answer, in words, from the config (the channels promote starts). */
export function approvers(config: Config): string {
  const c = config.confirm;
  const where = [c.terminal ? 'this terminal' : '', c.web.enabled ? 'the approval page' : '', c.webhook ? 'the webhook receiver' : ''].filter(Boolean);
  return where.length > 0 ? where.join(', ') : 'no channel (none is enabled)';
}

/**
 * Replays the lines to send, in order, updating each line with what came of it.
 * @param calls the session's recorded calls, index for index with `report.lines`.
 * @returns the exit code: 0 when every line ended executed or already replayed, else 2.
 */
export async function runReplay(
  config: Config,
  audit: AuditLog,
  report: PromoteReport,
  calls: RecordedCall[],
  opts: { yes?: boolean; json?: boolean },
): Promise<number> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let stopReason = 'promote finished';
  const gate = await createGate({
    config,
    audit,
    started: { promote: report.log, session: report.session?.start_seq },
    noChannel: opts.yes
      ? 'note: no confirmation channel is enabled: --yes approves the calls, but a tainted call, a changed definition or a blocked tool needs a person and stops the replay'
      : undefined,
  });
  const { gateway } = gate;
  try {
    // One request per call, waiting for its person up to confirm.timeout_seconds (no "pending" answer).
    const deps = { ...gateway.pipelineDeps([], () => 'lookfirst promote'), holdMs: config.confirm.timeoutMs + 1000 };
    const yes = opts.yes
      ? { channel: 'promote', actor: `promote:${userInfo().username}`, trust: 'local-terminal' as const, comment: 'promote --yes' }
      : undefined;
    const ctx = { signal: abort.signal };
    const todo = report.lines.filter(toSend).length;
    let n = 0;
    let stopped = false;
    for (const [i, rec] of calls.entries()) {
      const line = report.lines[i] as PromoteLine;
      if (!toSend(line)) continue;
      if (stopped || abort.signal.aborted) {
        if (line.status !== 'sent_unclear') line.status = 'not_replayed';
        line.reason = abort.signal.aborted ? 'promote was interrupted' : 'an earlier call did not complete, and this one may depend on it';
        continue;
      }
      n++;
      const person = line.status === 'sent_unclear' || !yes || rec.taint;
      if (!opts.json)
        process.stderr.write(
          `lookfirst: [${n}/${todo}] ${line.status === 'sent_unclear' ? 'UNLOCK after an unclear replay: ' : ''}${line.preview}${person ? ` (waiting for a person on ${approvers(config)})` : ''}\n`,
        );
      if (line.status === 'sent_unclear') {
        const { verdict, text } = await settleUnclear(deps, rec, line.replay_call_id ?? rec.callId, ctx);
        if (verdict.outcome === 'unblocked') {
          line.status = 'already_replayed';
          line.reason = `sent by an earlier promote; ${verdict.reason}`;
        } else {
          line.reason = `${line.reason}; ${text || verdict.reason}`;
          stopped = true;
        }
        continue;
      }
      const { verdict, text, risk } = await replayRecorded(deps, rec, { yes }, ctx);
      line.replay_call_id = verdict.call_id;
      if (risk) line.risk = risk;
      const clean = verdict.outcome === 'executed' && !verdict.blocked && (verdict.readback === 'ok' || verdict.readback === 'none');
      line.status = verdict.outcome === 'executed' ? (clean ? 'executed' : 'unclear') : 'refused';
      line.readback = verdict.readback;
      line.reason =
        verdict.outcome !== 'executed'
          ? text || verdict.reason
          : verdict.upstream_error
            ? `${verdict.reason}. The upstream said: ${text.slice(0, 300)}`
            : verdict.reason;
      if (!clean) stopped = true;
    }
    if (abort.signal.aborted) stopReason = 'promote interrupted';
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await gate.close(stopReason);
  }
  return report.lines.every((l) => l.status === 'executed' || l.status === 'already_replayed') ? 0 : 2;
}
