/**
 * Step `interlock`: a call of a tool that is blocked (its last execution could not be known to have done
 * what it should: gateway/interlock.ts) asks a person to unlock it instead of running. A live call ends
 * there (unlocking never runs the call that asked); a replay goes on to be asked as usual once a person
 * has unlocked the tool.
 */
import type { FixedState, Step } from '../context.js';
import { unlock } from '../unlock.js';

export const interlock: Step<FixedState> = async (s) => {
  const block = s.deps.interlock.blockOf(s.tool.exposed);
  if (!block) return undefined;
  const out = await unlock(s.deps, s.call, block, s.ctx);
  if (s.input.kind === 'replay' && out.kind === 'not-executed' && out.verdict.outcome === 'unblocked') return undefined;
  return out;
};
