/**
 * Step `confirm`: who approves this call. A write that a rule allows needs nobody (its receipt and
 * decision are on disk already); a replay is approved by the operator's `--yes` unless untrusted data
 * flowed into it; anything else asks a person: in the client itself when a 2026-07-28 client can show the
 * question (`input_required`), else through the broker's channels with a hold that can outlive the
 * request (answered `pending` after `confirm.hold_seconds`; the same call again continues the wait).
 * A file write or edit shows what it would change (read through the upstream's own read tool).
 */

import { oneLine } from '../../../confirm/visible.js';
import { diffPreview } from '../../diff-preview.js';
import { askInClient, canAskInClient } from '../../mrtr.js';
import { awaitApproval, describeRisk, preparePreview, summaryOf } from '../ask.js';
import type { FixedState, Step } from '../context.js';
import { approvalEntry } from '../entries.js';
import { denied, type Outcome } from '../outcome.js';
import { awaitingUser } from '../pending-answer.js';
import { disclosureOf } from './placeholders.js';

export const confirm: Step<FixedState> = async (s) => {
  const { deps, tool, call, decision, ctx } = s;
  const base = { call_id: call.callId, tool: tool.exposed };
  const deny = (reason: string) => denied({ call_id: call.callId, args_sha256: call.argsSha256, reason });
  if (decision.action === 'allow') {
    const rule = decision.rule ?? decision.reason;
    s.byRule = rule;
    // Nobody was asked: the receipt says so (method rule) and names the one check, the rule that matched.
    const evidence = { method: 'rule' as const, decidedAtMs: deps.clock.nowMs(), checks: [{ name: 'rule_matched', ok: true, detail: `rule "${rule}"` }] };
    s.approval = { kind: 'approved', channel: 'rule', actor: `rule "${rule}"`, trust: 'rule', evidence };
    deps.metrics.decided('rule', 'approved');
    return undefined;
  }
  const replay = s.input.kind === 'replay' ? s.input : undefined;
  if (replay?.yes && !decision.taint) {
    // The operator's blanket yes: the receipt names it (method operator) and the check it passed (no taint).
    const evidence = replay.yes.evidence ?? {
      method: 'operator' as const,
      decidedAtMs: deps.clock.nowMs(),
      checks: [
        { name: 'operator_yes', ok: true, detail: `lookfirst promote --yes, replay of ${replay.callId}` },
        { name: 'not_tainted', ok: true, detail: 'no untrusted data flowed into the recorded call' },
      ],
    };
    s.approval = { kind: 'approved', ...replay.yes, evidence };
    try {
      await deps.audit.appendDurable(approvalEntry(base, s.approval));
    } catch (err) {
      return deny(`the audit log cannot be written (${(err as Error).message})`);
    }
    return undefined;
  }
  // One session cannot bury a person in questions (nor grow the shared store and every page without bound).
  if (!s.retried && deps.holds.count >= MAX_OPEN_QUESTIONS)
    return deny(
      `this session already has ${deps.holds.count} questions waiting for a person (at most ${MAX_OPEN_QUESTIONS}); wait for them to be decided or to time out, then call again`,
    );
  // lookfirst_confirm acts on a decision already taken: it never opens a question of its own.
  if (ctx.confirming && !s.retried)
    return deny(
      'no call is waiting under this pending_id for this client (it ran, was denied, lapsed, or never existed): nothing was run; make the call again to ask again',
    );
  const { summary } = summaryOf(call, decision.taint, tool.declared);
  // The diff of what would be written: the real values where placeholders go back (masked again to show).
  const diff = s.retried
    ? undefined
    : await diffPreview({ catalogue: deps.catalogue, policy: deps.policy, timeoutMs: deps.executionTimeoutMs }, tool, s.resolved?.args ?? call.args);
  const disclosure = disclosureOf(s);
  const said = disclosure ? oneLine(`${disclosure} · ${summary}`) : summary;
  const prepared = await preparePreview(deps, {
    call,
    summary: replay ? `REPLAY of dry-run call ${replay.callId} · ${said}` : said,
    deadlineMs: deps.clock.nowMs() + deps.confirmTimeoutMs,
    ...describeRisk(decision.classification, call),
    diff,
    user: deps.user,
  });
  if (!prepared.ok) {
    await deps.audit.appendDurable({ event: 'cancelled', ...base, stage: 'before_execution', reason: prepared.reason }).catch(() => {});
    return deny(prepared.reason);
  }
  const request = prepared.req;
  // Pending mode answers at once: the client is not asked to hold a question open either.
  if (!s.retried && deps.confirmMode !== 'pending' && ctx.mrtr && canAskInClient(ctx.mrtr, request) === true) {
    const asked = await askInClient(ctx.mrtr, { ...request, client: deps.clientName() });
    try {
      await deps.audit.appendDurable({ event: 'input_required', ...base, until: new Date(request.deadlineMs).toISOString() });
    } catch (err) {
      return deny(`the audit log cannot be written (${(err as Error).message})`);
    }
    return { kind: 'asked', result: asked };
  }
  const got = await awaitApproval(deps, ctx, request, s.retried);
  if (got.kind === 'pending') {
    if (!replay) return deps.confirmMode === 'pending' ? awaitingUser(s, got.hold, request) : pendingOutcome(s, got.hold);
    // A promote waits for its person; it has no retry to come back with.
    deps.holds.withdraw(got.hold);
    return deny('nobody decided in time');
  }
  if (got.kind === 'elsewhere') {
    const reason = `this approved call was claimed by another gate replica, which runs it there (call ${call.callId}); it was not run here`;
    return {
      kind: 'refused',
      verdict: { outcome: 'denied', reason, retry_safe: false, call_id: call.callId, args_sha256: call.argsSha256 },
      text: `lookfirst: ${tool.exposed} was NOT run by this request: ${reason}. Do not call it again unless it should be done a second time.`,
    };
  }
  if (got.kind === 'lapsed')
    return deny(replay ? 'the approval lapsed' : 'the approval lapsed before this call came back for it (confirm.timeout_seconds); call again to ask again');
  if (got.kind === 'cancelled') {
    const stopped = deps.holds.isStopping;
    await deps.audit
      .appendDurable({ event: 'cancelled', ...base, stage: 'before_execution', reason: stopped ? 'the gate stopped' : undefined })
      .catch(() => {});
    if (stopped)
      return deny(
        deps.holds.keepsQuestions
          ? 'the gate stopped while this call waited for a person; its question stays open until its deadline: call again with the same arguments (after the restart, or on another replica) to collect the decision'
          : 'the gate stopped while this call waited for a person; the question was withdrawn: call again once it is back to ask again',
      );
    return deny(replay ? 'cancelled' : 'cancelled by the client');
  }
  s.approval = got.approval;
  return undefined;
};

/** The answer when nobody decided within confirm.hold_seconds: not run, still asked, how to keep waiting. */
async function pendingOutcome(s: FixedState, hold: import('../../hold.js').Hold): Promise<Outcome> {
  const { deps, tool } = s;
  const until = new Date(hold.deadlineMs).toISOString();
  const where = hold.channels.map((c) => CHANNEL_WORDS[c] ?? c).join(', ');
  await deps.audit
    .appendDurable({ event: 'approval_pending', call_id: hold.call.callId, tool: tool.exposed, channels: hold.channels.join(','), until })
    .catch(() => {});
  const reason = `waiting for a person to approve it on ${where} (open until ${until})`;
  return {
    kind: 'refused',
    verdict: {
      outcome: 'pending',
      reason,
      retry_safe: true,
      pending_until: until,
      pending_on: hold.channels,
      call_id: hold.call.callId,
      args_sha256: hold.call.argsSha256,
    },
    text: `lookfirst: ${tool.exposed} has NOT been executed yet: it is ${reason}. Nothing has run. Call ${tool.exposed} again with exactly the same arguments to keep waiting for the decision (it runs once, if approved); other arguments make a new request.`,
  };
}

/** Most questions one client session may have open at once (decided but unclaimed ones included). */
export const MAX_OPEN_QUESTIONS = 16;

const CHANNEL_WORDS: Record<string, string> = { web: 'the approval web page', webhook: 'the webhook receiver', terminal: "the gate's terminal" };
