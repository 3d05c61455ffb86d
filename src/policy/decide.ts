/**
 * THE decision for one tool call: used by the pipeline (gateway/pipeline/steps/decide.ts, taint.ts) and
 * by the read fast path (gateway/fast-path.ts), so that a call is never judged two ways. Pure: no I/O,
 * no clock, no environment.
 *
 * Order (each can only make the decision stricter, except an explicit rule over the classifier):
 * 1. the policy (policy/evaluate.ts): a rule, else the classifier (read-only → allow, else confirm);
 * 2. definitions being re-read after the upstream said they changed: no read passes on old annotations;
 * 3. taint (Rule of Two): untrusted data flowing into a state change needs a person, whatever a rule says;
 * 4. privacy: real values that would go to an upstream under `resolve: ask` need a person, even for a read.
 * Then the route: only a call the classifier proves read-only AND that is allowed is a `read` (forwarded,
 * logged behind); a dry run `record`s everything else that is not denied; the rest is `gated`.
 */
import type { Classification, Decision } from '../types.js';
import { decide, type Policy } from './evaluate.js';

/** Where a decided call goes: forwarded as a read, recorded by a dry run, or through the gated steps. */
export type Route = 'read' | 'record' | 'gated';

/** A decision with its route. */
export interface CallDecision extends Decision {
  route: Route;
}

/** What the decision looks at. */
export interface DecisionInput {
  policy: Policy;
  /** The tool's exposed name (rules match it). */
  tool: string;
  classification: Classification;
  /** The upstream announced a tools/list_changed and its definitions are being re-read. */
  definitionsChanging: boolean;
  /** A dry-run session: what is not a read is recorded, never executed. */
  dryRun: boolean;
  /**
   * Looks for untrusted data in the arguments (gateway/taint.ts); asked only for a state change that is
   * not denied, so that reads cost nothing. Returns the words a person reads, `TAINTED: …`, or undefined.
   */
  taintOf?: () => string | undefined;
  /**
   * Real values behind placeholders that this call would send to an upstream under `resolve: ask`, in
   * words (gateway/pipeline/steps/placeholders.ts): a person decides, whatever a rule says.
   */
  disclosure?: string;
}

/**
 * Decides one call.
 * @returns the action (allow / confirm / deny), its reason, the classification, the taint when
 *   untrusted data flows in, and the route.
 */
export function decideCall(input: DecisionInput): CallDecision {
  let decision: Decision = decide(input.policy, input.tool, input.classification);
  if (decision.action === 'allow' && !decision.rule && input.definitionsChanging)
    decision = { ...decision, action: 'confirm', reason: 'the upstream changed its tools and they are being re-read' };
  if (decision.classification?.kind !== 'read-only' && decision.action !== 'deny') {
    const taint = input.taintOf?.();
    if (taint) decision = withTaint(decision, taint);
  }
  if (input.disclosure && decision.action !== 'deny')
    decision = {
      ...decision,
      action: 'confirm',
      reason: `privacy: ${input.disclosure}${decision.action === 'allow' ? ` (overrides ${decision.reason})` : ''}`,
    };
  return { ...decision, route: routeOf(decision, input) };
}

/**
 * A decision once untrusted data is known to flow into the call: a person decides, whatever a rule said.
 * @param taint the words from gateway/taint.ts (`TAINTED: …`).
 */
export function withTaint(decision: Decision, taint: string): Decision {
  return {
    ...decision,
    action: 'confirm',
    reason: `taint: ${taint.replace(/^TAINTED: /, '')}${decision.action === 'allow' ? ` (overrides ${decision.reason})` : ''}`,
    taint,
  };
}

/** Whether a decision lets the call through as a read: allowed, and proven read-only by the classifier. */
export function isRead(decision: Decision): boolean {
  return decision.action === 'allow' && decision.classification?.kind === 'read-only';
}

function routeOf(decision: Decision, input: Pick<DecisionInput, 'dryRun' | 'definitionsChanging'>): Route {
  if (input.dryRun && decision.action !== 'deny' && (!isRead(decision) || input.definitionsChanging)) return 'record';
  return isRead(decision) ? 'read' : 'gated';
}
