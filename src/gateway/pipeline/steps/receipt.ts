/**
 * Step `receipt`: the two entries that open a gated call's record, each on disk before the call goes on:
 * `call_received` (what was asked, by whom; a dry run or a replay marked) and `decision`. A retry that
 * continues an open question writes `call_retried` instead. No entry, no call: a log that cannot be
 * written denies it.
 */
import type { FixedState, Step } from '../context.js';
import { receivedEntry } from '../entries.js';
import { denied } from '../outcome.js';

export const receipt: Step<FixedState> = async (s) => {
  const { deps, call, decision } = s;
  const base = { call_id: call.callId, tool: call.tool };
  try {
    if (s.retried) await deps.audit.appendDurable({ event: 'call_retried', ...base, args_sha256: call.argsSha256 });
    else {
      const replay = s.input.kind === 'replay';
      const received = await deps.audit.appendDurable(
        receivedEntry(call, replay ? 'lookfirst promote' : deps.clientName(), {
          dry_run: !replay && deps.dryRun ? true : undefined,
          replay_of: s.input.kind === 'replay' ? s.input.callId : undefined,
        }),
      );
      // When it was proposed, for its signed receipt (steps/sign-receipt.ts).
      s.entries = { ...s.entries, received };
      await deps.audit.appendDurable({
        event: 'decision',
        ...base,
        action: decision.action,
        reason: decision.reason,
        rule: decision.rule,
        kind: decision.classification?.kind,
        risk: decision.classification?.risk,
      });
    }
  } catch (err) {
    return denied({ call_id: call.callId, args_sha256: call.argsSha256, reason: `the audit log cannot be written (${(err as Error).message})` });
  }
  if (decision.action === 'deny') {
    deps.metrics.decided(decision.rule === undefined ? 'gate' : 'rule', 'denied');
    return denied({
      call_id: call.callId,
      args_sha256: call.argsSha256,
      reason: `denied by ${decision.reason}${s.input.kind === 'replay' ? ' (--yes never overrides a deny rule)' : ''}`,
    });
  }
  return undefined;
};
