/**
 * After-step `signReceipt`: every executed gated call leaves a signed receipt (audit/receipt.ts) in
 * `audit.receipts`, linked to its `executed` (or `execution_failed`) entry, and the log records
 * `receipt_issued` with the receipt's SHA-256. It covers any approval: a person's on any channel (the
 * channel's `Decider.evidence`), the operator's `promote --yes`, and a write a rule allowed (method `rule`,
 * check `rule_matched`). Allowed reads never get here (they end in the `read` step), and dry runs and
 * denials leave no receipt: only a call whose execution entry was written gets one.
 *
 * Where it runs: gateway/pipeline/run.ts calls it once with the outcome of the EXECUTE steps, instead of
 * from inside execute.ts and readback.ts. Both of them end calls on several paths (ok, upstream error,
 * unknown outcome, an outcome that could not be logged); one call after them covers all of them, and those
 * steps only note where their entry landed (`CallState.entries`).
 *
 * Privacy: under the privacy filter, the receipt's free text (card shown, transcript, check details) is
 * masked with labels as the audit log's is (`privacy.forLog`): a receipt holds no private value the log
 * would not.
 *
 * Posture: the call has run; a receipt that cannot be written must not undo or hide that. So this never
 * throws and never changes the outcome: a failure is logged as `receipt_failed` and said to the operator.
 */
import { isoOf, type ReceiptBody, receiptIdOf } from '../../../audit/receipt.js';
import { writeReceipt } from '../../../audit/receipts.js';
import type { CheckResult, Evidence } from '../../../types.js';
import type { FixedState } from '../context.js';
import type { Outcome } from '../outcome.js';

/**
 * Issues the receipt of an executed call, if it executed (a written `executed`/`execution_failed` entry).
 * Never throws; failures are logged (`receipt_failed`) and warned.
 */
export async function signReceipt(s: FixedState, out: Outcome): Promise<void> {
  const approval = s.approval;
  const entry = s.entries?.executed;
  if (approval?.kind !== 'approved') return;
  const base = { call_id: s.call.callId, tool: s.tool.exposed };
  const fail = async (reason: string) => {
    s.deps.audit.warn(`receipt: no receipt for call ${s.call.callId} (${s.tool.exposed}): ${reason}`);
    await s.deps.audit.appendDurable({ event: 'receipt_failed', ...base, reason }).catch(() => {});
  };
  // It ran (execution_started is on disk), but its outcome entry could not be written: nothing to link to.
  if (!entry) {
    if (s.result || out.kind === 'executed' || (out.kind === 'refused' && out.verdict.outcome === 'executed'))
      await fail('its executed entry could not be written to the audit log, so there is nothing to link a receipt to');
    return;
  }
  const dir = s.deps.receiptsDir;
  if (!dir) return fail('no receipts folder is configured (audit.receipts)');
  try {
    const body = receiptBody(s, entry, out);
    const issued = writeReceipt(dir, body, (bytes) => s.deps.audit.signDetached(bytes).sig);
    await s.deps.audit.appendDurable({ event: 'receipt_issued', ...base, receipt_sha256: issued.sha256 });
  } catch (err) {
    await fail((err as Error).message);
  }
}

/** The receipt's signed body, from the call's state, its approval's evidence and its entries. */
function receiptBody(s: FixedState, entry: NonNullable<NonNullable<FixedState['entries']>['executed']>, out: Outcome): ReceiptBody {
  const approval = s.approval as NonNullable<FixedState['approval']> & { kind: 'approved' };
  const ev = evidenceOf(s);
  const checks: CheckResult[] = [...ev.checks, ...(s.checks ?? [])];
  const verdict = 'verdict' in out ? out.verdict : undefined;
  // A receipt is public evidence (0644, shown by anyone's `receipt show`): its free text (the card shown,
  // the words heard, what each check found) is masked as the audit log masks its own, under the privacy
  // filter. The card text the person read may hold a private value (a path with an e-mail address in it).
  const privacy = s.deps.privacy;
  const mask = (t: string | undefined) => (t === undefined || !privacy ? t : privacy.forLog(t));
  return {
    v: 1,
    type: 'lookfirst-receipt',
    id: receiptIdOf(s.call.callId, entry.hash),
    call_id: s.call.callId,
    who: {
      channel: approval.channel,
      actor: approval.actor,
      trust: approval.trust,
      user: ev.user,
      device: ev.device,
      replica: approval.replica,
    },
    what: {
      tool: s.tool.exposed,
      upstream: s.call.upstream,
      upstream_tool: s.call.upstreamTool,
      args_sha256: s.call.argsSha256,
      shown: mask(ev.cardText),
    },
    when: {
      proposed: proposedAtOf(s),
      shown: ev.shownAtMs === undefined ? undefined : isoOf(ev.shownAtMs),
      confirmed: isoOf(ev.decidedAtMs),
      executed: isoOf(entry.ts),
    },
    how: {
      method: ev.method,
      evidence_ref: ev.ref,
      card_set: ev.cardSet,
      transcript: mask(ev.transcript),
      audio_sha256: ev.audioSha256,
      first: ev.first && {
        method: ev.first.method,
        transcript: mask(ev.first.transcript),
        audio_sha256: ev.first.audioSha256,
        confirmed: isoOf(ev.first.decidedAtMs),
      },
    },
    checks: checks.map((c) => (c.detail === undefined ? c : { ...c, detail: mask(c.detail) })),
    outcome: { executed: entry.outcome, readback: verdict?.readback },
    audit: { seq: entry.seq, entry_sha256: entry.hash, event: entry.event },
    key: s.deps.audit.keyName,
  };
}

/**
 * When the call was first proposed: a call run by a retry or by lookfirst_confirm (pending mode) came in
 * with an earlier request, whose held call keeps that time (gateway/hold.ts `proposedAtMs`); this request's
 * own `call_received` is only the retry's. Without either, the receipt says nothing rather than guess.
 */
function proposedAtOf(s: FixedState): string | undefined {
  if (s.retried) return isoOf(s.retried.proposedAtMs);
  return s.entries?.received ? isoOf(s.entries.received.ts) : undefined;
}

/**
 * The approval's evidence. A channel that gives none (an older or third-party channel) is described by
 * what the approval says, with no checks claimed: a receipt never invents a check that did not run.
 */
function evidenceOf(s: FixedState): Evidence {
  const approval = s.approval as NonNullable<FixedState['approval']> & { kind: 'approved' };
  if (approval.evidence) return approval.evidence;
  const decidedAtMs = s.entries?.received?.ts ?? s.entries?.executed?.ts ?? s.deps.clock.nowMs();
  if (s.byRule) return { method: 'rule', decidedAtMs, checks: [{ name: 'rule_matched', ok: true, detail: `rule "${s.byRule}"` }] };
  return { method: METHOD_OF[approval.channel] ?? 'operator', decidedAtMs, checks: [] };
}

const METHOD_OF: Record<string, Evidence['method']> = {
  web: 'page',
  webhook: 'webhook',
  terminal: 'terminal',
  elicitation: 'elicitation',
  promote: 'operator',
  rule: 'rule',
};
