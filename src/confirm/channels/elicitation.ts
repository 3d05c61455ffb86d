/**
 * Confirmation inside the client: MCP elicitation (spec 2025-06-18+, `elicitation/create`, form mode).
 * Used only when the client declared the capability, the config allows it, and the arguments' canonical
 * JSON fits in 800 characters: arguments are never cut, a longer call goes to the next channel.
 * The form has one required boolean, `approve`; only `accept` with `approve: true` approves.
 * An error from the client (e.g. -32601: capability declared but no handler) means "could not ask".
 * @see https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation
 */
import { type Clock, systemClock } from '../../clock.js';
import type { Evidence } from '../../types.js';
import type { ApprovalRequest, ChannelAnswer, ConfirmChannel } from '../channel.js';
import { lookalikeLines } from '../lookalike.js';
import { oneLine, showHidden, showHiddenInJson } from '../visible.js';

/** Longest argument JSON shown in an elicitation message (characters). */
export const ELICITATION_MAX_ARGS_CHARS = 800;

/** The form lookfirst asks for: one required boolean `approve`, the flat primitive subset every client renders. */
export interface ApproveSchema {
  type: 'object';
  properties: { approve: { type: 'boolean'; title: string; description: string } };
  required: ['approve'];
}

/** The form of a call's question. */
export const APPROVE_SCHEMA: ApproveSchema = approveSchemaFor('execute');

/**
 * The form of a question, worded for what a yes does: runs the call, only unlocks its tool (the call
 * itself does not run), or accepts a tool's new definition (the call is then decided as usual).
 */
export function approveSchemaFor(purpose: ApprovalRequest['purpose']): ApproveSchema {
  const [title, description] =
    purpose === 'unlock'
      ? ['Unlock this tool?', 'Only an explicit yes unlocks it. This call itself does not run.']
      : purpose === 'definition'
        ? ['Accept this definition?', 'Only an explicit yes accepts it; the call is then decided as usual.']
        : ['Approve this call?', 'Only an explicit yes executes it.'];
  return { type: 'object', properties: { approve: { type: 'boolean', title, description } }, required: ['approve'] };
}

/** What the gateway lends this channel: the client connection. */
export interface ElicitationPort {
  /** Whether the connected client declared form elicitation. */
  clientSupportsForm(): boolean;
  /** Client name from `initialize` (for `approved_by`). */
  clientName(): string;
  /** Sends `elicitation/create` and returns the raw result. */
  elicit(params: { message: string; requestedSchema: ApproveSchema }, signal: AbortSignal, timeoutMs: number): Promise<{ action?: unknown; content?: unknown }>;
}

/** Builds the message a person reads in the client. */
export function elicitationMessage(req: ApprovalRequest): string {
  return [
    req.purpose === 'unlock'
      ? `lookfirst asks you to UNLOCK ${oneLine(req.call.tool)} (tool ${oneLine(req.call.upstreamTool)} on upstream ${req.call.upstream}). Approving does not run this call.`
      : req.purpose === 'definition'
        ? `lookfirst asks you to ACCEPT A NEW DEFINITION of ${oneLine(req.call.tool)} (tool ${oneLine(req.call.upstreamTool)} on upstream ${req.call.upstream}). The definition is shown below as the arguments.`
        : `lookfirst holds a call to ${oneLine(req.call.tool)} (tool ${oneLine(req.call.upstreamTool)} on upstream ${req.call.upstream}) until you decide.`,
    ...(req.risk ? [`Risk: ${req.risk}${req.riskReason ? ` (${req.riskReason})` : ''}. Asked by ${oneLine(req.client ?? 'the client')}.`] : []),
    ...lookalikeLines(req.lookalikes ?? []).map((l) => `WARNING ${l}`),
    req.summary,
    `Arguments (sha256 ${req.call.argsSha256.slice(0, 16)}…):`,
    showHiddenInJson(req.call.argsCanonical),
    ...(req.diff ? ['What the file would become (unified diff):', showHidden(req.diff)] : []),
  ].join('\n');
}

/** The elicitation channel; `clock` is the time source for the deadline (tests inject one). */
export function createElicitationChannel(port: ElicitationPort, enabled: boolean, clock: Clock = systemClock): ConfirmChannel {
  return {
    name: 'elicitation',
    availability(req) {
      if (!enabled) return 'disabled in the config';
      if (!port.clientSupportsForm()) return 'the client did not declare elicitation';
      if (req.call.argsCanonical.length > ELICITATION_MAX_ARGS_CHARS) {
        return `arguments are ${req.call.argsCanonical.length} characters, more than ${ELICITATION_MAX_ARGS_CHARS} fit in a prompt`;
      }
      return true;
    },
    async ask(req, signal): Promise<ChannelAnswer> {
      let result: { action?: unknown; content?: unknown };
      try {
        // The broker's signal enforces the deadline; the request's own timeout is only a backstop behind it.
        result = await port.elicit(
          { message: elicitationMessage(req), requestedSchema: approveSchemaFor(req.purpose) },
          signal,
          Math.max(1, req.deadlineMs - clock.nowMs()) + 1000,
        );
      } catch (err) {
        if (signal.aborted || clock.nowMs() >= req.deadlineMs)
          return { kind: 'denied', channel: 'elicitation', reason: 'no decision before the confirmation timeout (confirm.timeout_seconds)' };
        return { kind: 'unavailable', reason: `the client could not show the prompt (${(err as Error).message})` };
      }
      // Trust `client`: the answer comes from the client, and an autonomous client can answer itself.
      const who = { channel: 'elicitation', actor: `elicitation:${oneLine(port.clientName()).slice(0, 64)}`, trust: 'client' } as const;
      const content = result.content as { approve?: unknown } | undefined;
      // For the receipt: the client's dialog answered this call's prompt (the arguments were fixed before it was asked).
      const evidence: Evidence = {
        method: 'elicitation',
        cardText: req.summary,
        decidedAtMs: clock.nowMs(),
        checks: [
          { name: 'in_client_answer', ok: true, detail: 'answered in the client (elicitation/create), trust client' },
          { name: 'action_unchanged', ok: true, detail: `args_sha256 ${req.call.argsSha256.slice(0, 12)}…, as shown in the prompt` },
        ],
      };
      if (result.action === 'accept' && content?.approve === true) return { kind: 'approved', ...who, evidence };
      const reason =
        result.action === 'accept' ? 'the person answered no' : result.action === 'decline' ? 'the person declined' : 'the person dismissed the prompt';
      return { kind: 'denied', ...who, reason };
    },
  };
}
