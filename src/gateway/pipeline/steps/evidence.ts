/**
 * Step `evidence`: before an approved call executes, the evidence of its decision is checked by name
 * (docs/decisions/0018): `evidence_exists`, `evidence_for_card_set`, `evidence_unused` (its single use,
 * spent atomically in every store: of two executions racing on one decision, on any replicas, one
 * runs), `action_unchanged`, `not_expired`. Every check is recorded (`CallState.checks`, for the
 * receipt); one that fails denies the call before anything is sent.
 *
 * It runs for a decision that left evidence in the store (a paired device's) and for every call that
 * `lookfirst_confirm` runs (pending mode), whatever channel decided it: there the caller, possibly the
 * agent itself, names the evidence, and invented, foreign or replayed evidence must be refused by name.
 */
import type { CheckResult } from '../../../types.js';
import type { FixedState, Step } from '../context.js';
import { denied } from '../outcome.js';

export const evidence: Step<FixedState> = async (s) => {
  const { deps, call, tool, ctx } = s;
  const approval = s.approval;
  if (approval?.kind !== 'approved') return undefined;
  const ref = approval.evidence?.ref;
  if (!ref && !ctx.confirming) return undefined;
  let checks: CheckResult[];
  try {
    checks = await runChecks(s, ref, ctx.confirming?.evidenceRef);
  } catch (err) {
    checks = [{ name: 'evidence_exists', ok: false, detail: `the state store cannot be read (${(err as Error).message})` }];
  }
  s.checks = checks;
  // When the use was not spent because another check failed, that other check is the one to name.
  const failed = checks.find((c) => !c.ok && c.name !== 'evidence_unused') ?? checks.find((c) => !c.ok);
  if (!failed) return undefined;
  const reason = `the confirmation check ${failed.name} failed: ${failed.detail ?? 'no detail'}`;
  await deps.audit.appendDurable({ event: 'cancelled', call_id: call.callId, tool: tool.exposed, stage: 'before_execution', reason }).catch(() => {});
  return denied({ call_id: call.callId, args_sha256: call.argsSha256, reason: `${reason}; nothing was run` });
};

async function runChecks(s: FixedState, ref: string | undefined, given: string | undefined): Promise<CheckResult[]> {
  const { deps, call } = s;
  const ledger = deps.evidence;
  if (!ledger) return [{ name: 'evidence_exists', ok: false, detail: 'this gate has no store to keep evidence in' }];
  if (given !== undefined && given !== ref) {
    // Evidence that is not this decision's: another card's, or none at all.
    const other = await ledger.find(given);
    return other
      ? [
          { name: 'evidence_exists', ok: true, detail: given },
          { name: 'evidence_for_card_set', ok: false, detail: 'this evidence was given for another card, not for this call' },
        ]
      : [{ name: 'evidence_exists', ok: false, detail: `no evidence is recorded under ${JSON.stringify(given.slice(0, 40))}` }];
  }
  if (ref) return ledger.check(ref, call.callId, call.argsSha256);
  // A decision on a channel without cards (page, webhook, terminal), run through lookfirst_confirm.
  const channel = (s.approval as { channel: string }).channel;
  const now = deps.clock.nowMs();
  const until = s.retried?.deadlineMs ?? now;
  const out: CheckResult[] = [
    { name: 'evidence_exists', ok: true, detail: `the decision on the ${channel} channel` },
    { name: 'evidence_for_card_set', ok: true, detail: 'no card set: decided on a channel without cards' },
    { name: 'action_unchanged', ok: true, detail: `the held call binds args_sha256 ${call.argsSha256.slice(0, 12)}…` },
    { name: 'not_expired', ok: now <= until, detail: `valid until ${new Date(until).toISOString()}` },
  ];
  if (out.some((c) => !c.ok)) return [...out, { name: 'evidence_unused', ok: false, detail: 'not spent: an earlier check failed' }];
  const first = await ledger.useDecision(call.callId, until - now + 60_000);
  return [...out, { name: 'evidence_unused', ok: first, detail: first ? 'first use' : 'this decision was used before: a decision runs its call once' }];
}
