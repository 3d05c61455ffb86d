/**
 * Step `decide`: the one decision (policy/decide.ts) on the call's tool and arguments: a rule, else the
 * classifier; definitions being re-read; taint. A replayed call is always asked (`promote`), unless a
 * deny rule stops it; what untrusted data flowed into it, during its dry run or from this promote's
 * earlier replays, is shown and never covered by `--yes`.
 */
import { randomUUID } from 'node:crypto';
import { decideCall } from '../../../policy/decide.js';
import { classifyTool } from '../../catalogue.js';
import { declaredArgsProblem } from '../../declared.js';
import type { CallState, Step } from '../context.js';
import { denied, type Outcome } from '../outcome.js';
import { disclosureOf } from './placeholders.js';
import { liveTaint } from './taint.js';

/**
 * The taint words quote the untrusted value they found: under the privacy filter they quote its
 * placeholder instead (what the agent saw), since they reach the person, the client and the log.
 */
async function maskTaint(s: CallState): Promise<Outcome | undefined> {
  const d = s.decision;
  if (!s.deps.privacy || !d?.taint) return undefined;
  try {
    s.decision = { ...d, taint: await s.deps.privacy.maskText(d.taint), reason: await s.deps.privacy.maskText(d.reason) };
    return undefined;
  } catch (err) {
    return denied({
      call_id: randomUUID(),
      args_sha256: '',
      reason: `the privacy filter could not store its placeholders (${(err as Error).message}); nothing was run`,
    });
  }
}

/** Why a declared write whose arguments its own schema refuses is denied, and what to do. */
const misfitReason = (tool: string, problem: string) =>
  `the server's own schema for ${tool}: the arguments do not fit (${problem}); nothing to approve, fix the arguments and call again`;

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
      // Against the real values: untrusted data the agent only saw as placeholders still flows in.
      taintOf: () => liveTaint(s, s.resolved?.args ?? args),
      disclosure: s.resolved?.ask ? disclosureOf(s) : undefined,
    });
    // A write of the server's own (library) whose arguments its schema refuses: refused before any question.
    const misfit = tool.declared && declaredArgsProblem(tool.declared, args);
    if (misfit)
      s.decision = {
        ...s.decision,
        action: 'deny',
        route: 'gated',
        rule: undefined,
        reason: misfitReason(tool.exposed, misfit),
      };
    return maskTaint(s);
  }
  const ruled = decideCall({ policy: deps.policy, tool: tool.exposed, classification, definitionsChanging: false, dryRun: false });
  if (ruled.action === 'deny') {
    s.decision = { ...ruled, route: 'gated' };
    return undefined;
  }
  const replayMisfit = tool.declared && declaredArgsProblem(tool.declared, args);
  if (replayMisfit) {
    s.decision = { ...ruled, action: 'deny', route: 'gated', rule: undefined, reason: misfitReason(tool.exposed, replayMisfit) };
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
