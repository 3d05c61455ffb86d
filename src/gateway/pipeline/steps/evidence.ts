/**
 * Step `evidence`: before an approved call executes, the evidence of its decision is checked by name
 * (docs/decisions/0018): `evidence_exists`, `evidence_for_card_set`, `action_unchanged`, `not_expired`,
 * and last `evidence_unused`, which takes the evidence's use marker (atomic in every store: of two
 * executions racing on one decision, on any replicas, one runs). Every check is recorded
 * (`CallState.checks`, for the receipt); one that fails denies the call before anything is sent.
 *
 * It runs for a decision that left evidence in the store (a paired device's) and for every call that
 * `lookfirst_confirm` runs (pending mode), whatever channel decided it: there the caller, possibly the
 * agent itself, names the evidence, and invented or replayed evidence must be refused by name.
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
  const failed = checks.find((c) => !c.ok);
  if (!failed) return undefined;
  const reason = `the confirmation check ${failed.name} failed: ${failed.detail ?? 'no detail'}`;
  await deps.audit.appendDurable({ event: 'cancelled', call_id: call.callId, tool: tool.exposed, stage: 'before_execution', reason }).catch(() => {});
  return denied({ call_id: call.callId, args_sha256: call.argsSha256, reason: `${reason}; nothing was run` });
};

/** The before-execution checks, in order; the use marker is taken only when all the others pass. */
async function runChecks(s: FixedState, ref: string | undefined, given: string | undefined): Promise<CheckResult[]> {
  const { deps, call } = s;
  const ledger = deps.evidence;
  const approval = s.approval as NonNullable<FixedState['approval']> & { kind: 'approved' };
  const now = deps.clock.nowMs();
  const named = given ?? ref;
  const record = named && ledger ? await ledger.get(named) : undefined;
  const out: CheckResult[] = [];
  // What the decision itself is evidence of: its own record (a device's), or, without one, the channel's decision.
  if (given !== undefined && given !== ref && !record)
    out.push({ name: 'evidence_exists', ok: false, detail: `no evidence is recorded under ${JSON.stringify(given.slice(0, 40))}` });
  else if (ref && !record) out.push({ name: 'evidence_exists', ok: false, detail: 'the evidence of this decision is no longer in the store' });
  else out.push({ name: 'evidence_exists', ok: true, detail: ref ? `evidence ${named}` : `the decision on the ${approval.channel} channel` });
  if (given !== undefined && given !== ref)
    out.push({
      name: 'evidence_for_card_set',
      ok: false,
      detail: record ? 'this evidence was given for another card, not for this call' : 'the evidence named is not this decision’s',
    });
  else if (record) {
    const setOk = record.setId === undefined || !ledger ? true : await ledger.setHolds(record.setId, call.callId);
    const ok = record.callId === call.callId && record.approve && setOk;
    out.push({
      name: 'evidence_for_card_set',
      ok,
      detail: ok
        ? `card set ${record.setId ?? '(none)'}`
        : record.callId !== call.callId
          ? 'the evidence is for another call'
          : 'the card set does not hold this call',
    });
  } else out.push({ name: 'evidence_for_card_set', ok: true, detail: 'no card set: decided on a channel without cards' });
  const unchanged = !record || record.argsSha256 === call.argsSha256;
  out.push({
    name: 'action_unchanged',
    ok: unchanged,
    detail: unchanged ? `args_sha256 ${call.argsSha256.slice(0, 12)}…` : 'the arguments changed since the card was shown',
  });
  const until = record?.expiresAtMs ?? s.retried?.deadlineMs;
  const fresh = until === undefined || now <= until;
  out.push({ name: 'not_expired', ok: fresh, detail: until === undefined ? 'decided in this request' : `valid until ${new Date(until).toISOString()}` });
  if (out.some((c) => !c.ok)) {
    out.push({ name: 'evidence_unused', ok: false, detail: 'not tried: an earlier check failed (the evidence stays unused)' });
    return out;
  }
  const marker = named ?? `call:${call.callId}`;
  const first = ledger ? await ledger.use(marker, Math.max(60_000, (until ?? now) - now + 60_000)) : true;
  out.push({ name: 'evidence_unused', ok: first, detail: first ? 'first use' : 'this evidence was used before: a decision runs its call once' });
  return out;
}
