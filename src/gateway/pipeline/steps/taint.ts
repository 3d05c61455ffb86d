/**
 * Step `taint` (Rule of Two): untrusted data flowing into a state change needs a person, whatever a rule
 * says (gateway/taint.ts keeps what untrusted sources returned in this session). Asked by the decision
 * (policy/decide.ts) only for a call that is not proven read-only and not denied, so reads cost nothing.
 * A replay also carries the taint its dry run saw.
 */
import { taintText } from '../../taint.js';
import type { CallState } from '../context.js';

/** The words of the untrusted data that flows into the call's arguments now, if any (`TAINTED: …`). */
export function liveTaint(s: CallState, args: unknown): string | undefined {
  return taintText(s.deps.taint.check(args));
}
