/**
 * Asking a person about a held call: what every channel shows beside it (risk, look-alike words, who
 * asked), progress notifications to the client while the person decides, and the hold that lets the
 * question outlive the request (gateway/hold.ts).
 */
import type { ApprovalRequest } from '../../confirm/channel.js';
import { findLookalikes } from '../../confirm/lookalike.js';
import { summarizeCall } from '../../confirm/summary.js';
import { oneLine } from '../../confirm/visible.js';
import { effectOf } from '../../policy/effect.js';
import type { Approval, Classification, ToolCall } from '../../types.js';
import { type DeclaredTool, declaredPreviewText } from '../declared.js';
import type { Hold } from '../hold.js';
import { withKeepalive } from '../keepalive.js';
import type { CallContext, PipelineDeps } from './context.js';

/** Risk (the classifier's, with its reasons), look-alikes: what every channel shows beside the call. */
export function describeRisk(classification: Classification | undefined, call: ToolCall): Pick<ApprovalRequest, 'risk' | 'riskReason' | 'lookalikes'> {
  return {
    risk: classification?.risk ?? 'high',
    riskReason: classification ? classification.reasons.slice(0, 3).join('; ') : 'not classified',
    lookalikes: findLookalikes(call.tool, call.args),
  };
}

/**
 * What a person reads first about a call: its concrete effect when the arguments allow one
 * (`write_file: writes 16 bytes to /srv/a.txt`), else the tool and its arguments (`plain`); `summary`
 * leads with the taint warning when untrusted data flows into it.
 */
export function summaryOf(call: ToolCall, taint?: string, declared?: DeclaredTool): { plain: string; summary: string } {
  // A write of the library's in-process upstream (`declared`, from the catalogue): the author's own
  // preview, or the generic summary with why it is missing (gateway/declared.ts); the question is asked either way.
  const own = declared && declaredPreviewText(declared, call.args);
  const generic = () => {
    const effect = effectOf(call.upstreamTool, call.args);
    return effect ? oneLine(`${call.tool}: ${effect}`) : summarizeCall(call.tool, call.args);
  };
  const plain = !own ? generic() : 'text' in own ? oneLine(`${call.tool}: ${own.text}`) : oneLine(`${generic()} (${own.note})`);
  return { plain, summary: taint ? oneLine(`${taint} · ${plain}`) : plain };
}

/**
 * A preview as every channel may show it: what came from an upstream (the diff) masked by the privacy
 * filter, in this session's placeholders; then the operator's redaction hook (confirm/redact.ts).
 * @returns the request to show, or why the call is denied (the hook failed, or placeholders could not be stored).
 */
export async function preparePreview(deps: PipelineDeps, req: ApprovalRequest): Promise<{ ok: true; req: ApprovalRequest } | { ok: false; reason: string }> {
  let out: ApprovalRequest = { ...req, client: req.client ?? deps.clientName() };
  const privacy = deps.privacy;
  if (privacy) {
    try {
      // Upstream words: the diff of the target, the risk reason (it quotes the tool's description), and
      // the summary of a definition or unlock question (a definition's text, an upstream's error). The
      // summary of a call is the agent's own arguments, which the person must see as they are.
      const mask = (t: string | undefined) => (t === undefined ? Promise.resolve(undefined) : privacy.maskText(t));
      // What the agent itself wrote in the arguments stays readable in the diff (the person approves it).
      const own = stringsOf(out.call.args).join('\u0000');
      out = {
        ...out,
        diff: out.diff === undefined ? undefined : await privacy.maskText(out.diff, (v) => own.includes(v)),
        riskReason: await mask(out.riskReason),
        summary: out.purpose === 'definition' || out.purpose === 'unlock' ? await privacy.maskText(out.summary) : out.summary,
      };
    } catch (err) {
      return { ok: false, reason: `the privacy filter could not store the preview's placeholders (${(err as Error).message}); nothing was shown or run` };
    }
  }
  return deps.redact ? deps.redact(out) : { ok: true, req: out };
}

/** Asks through the broker, with progress notifications to the client while the person decides. */
export async function askPerson(deps: PipelineDeps, ctx: CallContext, req: ApprovalRequest): Promise<Approval> {
  const prepared = await preparePreview(deps, req);
  if (!prepared.ok) return { kind: 'denied', channel: 'gate', reason: prepared.reason };
  const full = prepared.req;
  const what = req.purpose === 'unlock' ? `to unlock ${req.call.tool}` : `to approve ${req.call.tool}`;
  return withKeepalive(
    ctx.progress,
    deps.progressMs,
    deps.confirmTimeoutMs,
    `lookfirst: waiting for a person ${what}`,
    () => deps.broker.confirm(full, ctx.signal),
    deps.clock,
  );
}

/** What came of waiting for a person in one request. */
export type ApprovalWait =
  | { kind: 'decided'; approval: Approval }
  | { kind: 'pending'; hold: Hold }
  /** The request was cancelled (or the gate stopped): the question was withdrawn, or kept (gateway/hold.ts `stop`). */
  | { kind: 'cancelled' }
  /** Approved, but the approval expired before this request could claim it: nothing runs. */
  | { kind: 'lapsed' }
  /** Another gate replica claimed the decided call first: it ran (or runs) there, not here. */
  | { kind: 'elsewhere' };

/**
 * Waits for a person's decision on `call` in this request: opens a hold (or re-attaches to `existing`),
 * then waits for the decision, for `confirm.hold_seconds` once the question is out of band, or for the
 * request's cancellation. A decided hold is claimed by this request (no other can run it); a cancelled
 * request withdraws the question everywhere.
 */
export async function awaitApproval(deps: PipelineDeps, ctx: CallContext, req: ApprovalRequest, existing: Hold | undefined): Promise<ApprovalWait> {
  const hold =
    existing ?? deps.holds.open(req.call, req.deadlineMs, (signal, hooks) => deps.broker.confirm({ ...req, client: deps.clientName() }, signal, hooks));
  const what = `to approve ${req.call.tool}`;
  const waited = await withKeepalive(
    ctx.progress,
    deps.progressMs,
    deps.confirmTimeoutMs,
    `lookfirst: waiting for a person ${what}`,
    () => deps.holds.wait(hold, ctx.signal, deps.holdMs),
    deps.clock,
  );
  if (waited === 'pending') return { kind: 'pending', hold };
  if (waited === 'cancelled') {
    deps.holds.withdraw(hold);
    // A withdrawn question settles at once (its entry is written first); a kept one is not waited for.
    if (!(deps.holds.isStopping && deps.holds.keepsQuestions)) await hold.decided;
    return { kind: 'cancelled' };
  }
  const approval = await hold.decided;
  // A decision counts only while its hold is open: one that lapsed (or whose session closed) meanwhile runs nothing.
  // Only an approval can lapse: a denial (nobody decided in time included) is told as it is.
  const claim = await deps.holds.take(hold);
  if (claim === 'elsewhere') return { kind: 'elsewhere' };
  if (claim === 'lapsed') return approval.kind === 'approved' ? { kind: 'lapsed' } : { kind: 'decided', approval };
  return { kind: 'decided', approval };
}

/** Every string in JSON-like data (values, not keys), depth-first. */
function stringsOf(v: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof v === 'string') out.push(v);
  else if (depth < 64 && typeof v === 'object' && v !== null) for (const x of Object.values(v)) stringsOf(x, out, depth + 1);
  return out;
}
