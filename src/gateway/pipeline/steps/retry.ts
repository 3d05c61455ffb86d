/**
 * Step `retry`: the same call again from this session (same tool, same args_sha256) while its question
 * is open continues that wait, under the first call's id (gateway/hold.ts).
 */
import type { FixedState, Step } from '../context.js';

export const retry: Step<FixedState> = async (s) => {
  if (s.input.kind !== 'live' || s.decision.action !== 'confirm') return undefined;
  const held = await s.deps.holds.findShared(s.tool.exposed, s.call.argsSha256);
  if (held) {
    s.retried = held;
    // The question's call id, the retry's own arguments: they hash to the same args_sha256 (the hold's key),
    // so what runs is what this request sent and what the person was shown, never a stored copy.
    s.call = { ...s.call, callId: held.call.callId };
  }
  return undefined;
};
