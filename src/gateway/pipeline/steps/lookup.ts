/**
 * Step `lookup`: finds the tool the call names in the catalogue, reading the catalogue once more when it
 * is not there (the client may know a tool from a list_changed the gate has not read yet). A replay must
 * still lead to the same upstream tool it was recorded against.
 */
import { ErrorCode, WireError } from '../../wire-error.js';
import type { CallState, Step } from '../context.js';
import { denied } from '../outcome.js';

/**
 * @throws WireError InvalidParams for a live call without a string name or of an unknown tool (a
 *   JSON-RPC error, spec §tools), naming the upstream when the name would be one of a down upstream's
 *   (Catalogue.unreachableFor); a replay of an unknown tool ends as a denial instead.
 */
export const lookup: Step = async (s: CallState) => {
  const name = s.input.kind === 'live' ? s.input.params.name : s.input.tool;
  if (typeof name !== 'string') throw new WireError(ErrorCode.InvalidParams, 'tools/call needs a string "name"');
  let tool = s.deps.catalogue.get(name);
  if (!tool) {
    await s.deps.catalogue.refreshAll();
    tool = s.deps.catalogue.get(name);
  }
  if (s.input.kind === 'live') {
    if (!tool) {
      // The tools of an upstream that never came up were never listed: say which one is down, not "unknown".
      const down = s.deps.catalogue.unreachableFor(name);
      if (down)
        throw new WireError(
          ErrorCode.InvalidParams,
          `Tool ${name} is not available: ${down.reason}. Nothing was run; the gate starts upstream "${down.upstream}" again on the next call (at most once a second).`,
        );
      throw new WireError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    s.tool = tool;
    return undefined;
  }
  const rec = s.input;
  const recorded = { call_id: rec.callId, args_sha256: rec.argsSha256 };
  if (!tool) return denied({ ...recorded, reason: `${rec.tool} is not offered by any upstream now` });
  // The name must still lead to the same upstream tool: a renamed or re-pointed config is not the recording.
  if (tool.upstream.name !== rec.upstream || tool.upstreamTool !== rec.upstreamTool)
    return denied({
      ...recorded,
      reason: `${rec.tool} now leads to ${tool.upstream.name}'s "${tool.upstreamTool}", not ${rec.upstream}'s "${rec.upstreamTool}" as recorded`,
    });
  s.tool = tool;
  return undefined;
};
