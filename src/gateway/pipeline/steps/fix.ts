/**
 * Step `fix`: the arguments are fixed once, by RFC 8785 canonical JSON and SHA-256: the bytes hashed are
 * the bytes shown, approved and sent. Arguments that are not a JSON object, or have no canonical form,
 * end the call here (logged, nothing sent).
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../../../audit/canonical.js';
import type { ToolCall } from '../../../types.js';
import type { CatalogueTool } from '../../catalogue.js';
import { isPlainObject } from '../../raw.js';
import type { CallState, Step } from '../context.js';
import { denied } from '../outcome.js';

export const fix: Step = async (s: CallState) => {
  const tool = s.tool;
  if (!tool) throw new Error('fix: no tool (the lookup step runs first)');
  if (s.input.kind === 'replay') {
    s.call = recordedCall(tool, s.input);
    return undefined;
  }
  const callId = randomUUID();
  const base = { call_id: callId, tool: tool.exposed };
  const args = s.input.params.arguments ?? {};
  if (!isPlainObject(args)) {
    await s.deps.audit.appendDurable({ event: 'decision', ...base, action: 'deny', reason: 'arguments are not a JSON object' }).catch(() => {});
    return denied({ call_id: callId, args_sha256: '', reason: 'arguments must be a JSON object' });
  }
  let argsCanonical: string;
  try {
    argsCanonical = canonicalJson(args);
  } catch (err) {
    await s.deps.audit.appendDurable({ event: 'decision', ...base, action: 'deny', reason: 'arguments have no canonical form' }).catch(() => {});
    return denied({
      call_id: callId,
      args_sha256: '',
      reason: `the arguments cannot be put in canonical form (${(err as Error).message.slice(0, 80)})`,
    });
  }
  s.call = {
    callId,
    tool: tool.exposed,
    upstream: tool.upstream.name,
    upstreamTool: tool.upstreamTool,
    args: JSON.parse(argsCanonical) as Record<string, unknown>,
    argsCanonical,
    argsSha256: sha256Hex(argsCanonical),
  };
  return undefined;
};

/** A recorded call as the gate sends it now, under a new call id: exactly the recorded arguments. */
export function recordedCall(
  tool: Pick<CatalogueTool, 'exposed' | 'upstream' | 'upstreamTool'>,
  rec: Pick<ToolCall, 'args' | 'argsCanonical' | 'argsSha256'>,
): ToolCall {
  return {
    callId: randomUUID(),
    tool: tool.exposed,
    upstream: tool.upstream.name,
    upstreamTool: tool.upstreamTool,
    args: rec.args,
    argsCanonical: rec.argsCanonical,
    argsSha256: rec.argsSha256,
  };
}
