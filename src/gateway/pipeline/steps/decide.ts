/**
 * Step `decide`: the one decision (policy/decide.ts) on the call's tool and arguments: a rule, else the
 * classifier; definitions being re-read; taint. A replayed call is always asked (`promote`), unless a
 * deny rule stops it; what untrusted data flowed into it, during its dry run or from this promote's
 * earlier replays, is shown and never covered by `--yes`.
 */
import { decideCall } from '../../../policy/decide.js';
import { classifyTool } from '../../catalogue.js';
import type { CallState, Step } from '../context.js';
import { disclosureOf } from './placeholders.js';
import { liveTaint } from './taint.js';

export const decide: Step = async (s: CallState) => {
  const { deps, input } = s;
  const tool = s.tool;
  if (!tool) throw new Error('decide: no tool (the lookup step runs first)');
  const args = input.kind === 'live' ? input.params.arguments : input.args;
  const classification = classifyTool(tool, args);
  if (input.kind === 'live') {
    s.decision = decideCall({
      policy: deps.policy,
      tool: tool.exposed,
      classification,
      definitionsChanging: deps.catalogue.isChanged(tool.upstream),
      dryRun: deps.dryRun,
      taintOf: () => liveTaint(s, args),
      disclosure: s.resolved?.ask ? disclosureOf(s) : undefined,
    });
    return undefined;
  }
  const ruled = decideCall({ policy: deps.policy, tool: tool.exposed, classification, definitionsChanging: false, dryRun: false });
  if (ruled.action === 'deny') {
    s.decision = { ...ruled, route: 'gated' };
    return undefined;
  }
  const live = classification.kind !== 'read-only' ? liveTaint(s, args) : undefined;
  s.decision = {
    ...ruled,
    action: 'confirm',
    route: 'gated',
    reason: live ? `taint: ${live.replace(/^TAINTED: /, '')}` : `a replayed call is approved one by one (${ruled.reason})`,
    taint: input.taint ?? live,
  };
  return undefined;
};
