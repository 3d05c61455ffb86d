/**
 * Asking a person about a held call: what every channel shows beside it (risk, look-alike words, who
 * asked), and progress notifications to the client while the person decides.
 */
import type { ApprovalRequest } from '../confirm/channel.js';
import { findLookalikes } from '../confirm/lookalike.js';
import { riskOf } from '../policy/risk.js';
import type { Approval, ToolCall } from '../types.js';
import type { CallContext, PipelineDeps } from './call.js';
import type { CatalogueTool } from './catalogue.js';
import { withKeepalive } from './keepalive.js';

/** Risk, look-alikes and who asked: what every channel shows beside the call. */
export function describeRisk(tool: CatalogueTool, call: ToolCall): Pick<ApprovalRequest, 'risk' | 'riskReason' | 'lookalikes'> {
  const { risk, reason } = riskOf(tool.annotations);
  return { risk, riskReason: reason, lookalikes: findLookalikes(call.tool, call.args) };
}

/** Asks through the broker, with progress notifications to the client while the person decides. */
export function askPerson(deps: PipelineDeps, ctx: CallContext, req: ApprovalRequest): Promise<Approval> {
  const full: ApprovalRequest = { ...req, client: deps.clientName() };
  const what = req.purpose === 'unlock' ? `to unlock ${req.call.tool}` : `to approve ${req.call.tool}`;
  return withKeepalive(ctx.progress, deps.progressMs, deps.confirmTimeoutMs, `lookfirst: waiting for a person ${what}`, () =>
    deps.broker.confirm(full, ctx.signal),
  );
}
