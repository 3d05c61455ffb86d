/**
 * Step `pins`: a call to a tool whose definition changed since it was pinned (or that appeared after its
 * upstream was pinned) first asks a person to accept the new definition, whatever the rules say; so does
 * a replay whose recorded definition is not the one offered now. The question shows what changed.
 * Accepting pins the definition and the call goes on under the normal policy (a write then asks again);
 * declining, a timeout or a cancel runs nothing. One question per tool at a time in a session: a second
 * call waiting behind it finds the definition pinned and goes on.
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../../../audit/canonical.js';
import { oneLine } from '../../../confirm/visible.js';
import type { ToolCall } from '../../../types.js';
import type { CatalogueTool } from '../../catalogue.js';
import { describeChange } from '../../definitions.js';
import { type PinStatus, pinnedPart } from '../../pins.js';
import { askPerson } from '../ask.js';
import type { CallContext, CallState, PipelineDeps, Step } from '../context.js';
import { approvalEntry } from '../entries.js';
import { denied, type Outcome } from '../outcome.js';

/**
 * Why a definition needs a person: it changed since pinned, it is new, or (a replayed dry-run call) it is
 * not the one the call was recorded under, of which only the SHA-256 was kept.
 */
export type DefinitionDoubt = Exclude<PinStatus, { kind: 'pinned' }> | { kind: 'recorded' };

export const pins: Step = async (s: CallState) => {
  const tool = s.tool as CatalogueTool;
  const doubt = (): DefinitionDoubt | undefined => {
    const pin = s.deps.catalogue.pinStatus(tool);
    if (pin.kind !== 'pinned') return pin;
    // A replay: the definition must also be the one the dry run saw (the pins file may be another config's).
    if (s.input.kind === 'replay' && s.input.definitionSha !== tool.definitionSha) return { kind: 'recorded' };
    return undefined;
  };
  const first = doubt();
  if (!first) return undefined;
  if (first.kind === 'recorded') return acceptDefinition(s.deps, tool, first, s.ctx);
  return s.deps.interlock.exclusive(tool.exposed, () => {
    const now = doubt();
    return now ? acceptDefinition(s.deps, tool, now, s.ctx) : Promise.resolve(undefined);
  });
};

/**
 * Asks a person to accept the tool's definition as it is now.
 * @returns undefined when accepted (the call goes on), else the denial to answer with.
 */
export async function acceptDefinition(deps: PipelineDeps, tool: CatalogueTool, status: DefinitionDoubt, ctx: CallContext): Promise<Outcome | undefined> {
  const current = pinnedPart(tool.upstreamDefinition);
  const argsCanonical = canonicalJson(current);
  const call: ToolCall = {
    callId: randomUUID(),
    tool: tool.exposed,
    upstream: tool.upstream.name,
    upstreamTool: tool.upstreamTool,
    args: current,
    argsCanonical,
    argsSha256: sha256Hex(argsCanonical),
  };
  const change =
    status.kind === 'recorded'
      ? `it is not the definition the dry run recorded this call under (only that one's SHA-256 was kept); it now says: ${JSON.stringify(String(current.description ?? '')).slice(0, 300)}`
      : describeChange(status.kind === 'changed' ? status.previous : undefined, current);
  const summary = oneLine(
    `DEFINITION ${status.kind === 'new' ? 'NEW' : 'CHANGED'} ${tool.exposed}: ${change}. Accepting pins this definition; the call then goes through the normal policy.`,
  );
  const base = { call_id: call.callId, tool: tool.exposed };
  const approval = await askPerson(deps, ctx, {
    call,
    summary,
    deadlineMs: deps.clock.nowMs() + deps.confirmTimeoutMs,
    purpose: 'definition',
    risk: 'high',
    riskReason: 'the tool is not what was trusted before',
  });
  const accepted = approval.kind === 'approved' && !ctx.signal.aborted;
  try {
    await deps.audit.appendDurable(approvalEntry(base, approval, 'definition', accepted));
    if (accepted) {
      await deps.catalogue.pins?.accept(tool.upstream.name, tool.upstreamDefinition);
      await deps.audit.appendDurable({
        event: 'definition_accepted',
        ...base,
        upstream: tool.upstream.name,
        sha256: tool.definitionSha,
        actor: approval.actor,
      });
      return undefined;
    }
  } catch (err) {
    return denied({ reason: `the audit log cannot be written (${(err as Error).message})`, call_id: call.callId, args_sha256: '' });
  }
  const reason = `the definition of ${tool.exposed} ${status.kind === 'new' ? 'is new' : 'changed'} and was not accepted (${approval.kind === 'denied' ? approval.reason : 'cancelled'}): ${change}`;
  return denied({ reason, call_id: call.callId, args_sha256: '' });
}
