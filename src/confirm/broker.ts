/**
 * The confirmation broker: tries channels in the configured order under one shared timeout.
 * A timeout is a denial; a client's cancellation is a denial that also withdraws the question; when no
 * channel can ask, the call is denied with a message naming the channel to enable. Fail closed: any error
 * in a channel is a denial, never an approval.
 */
import type { Approval } from '../types.js';
import type { ApprovalRequest, ChannelAnswer, ConfirmChannel } from './channel.js';

/** What to tell the user when no channel could ask: only the fixes that would have helped this call. */
export function hintFor(skipped: readonly string[]): string {
  const fixes: string[] = [];
  if (skipped.some((s) => s.startsWith('web:'))) fixes.push('enable the local web page (confirm.web.enabled: true)');
  if (skipped.some((s) => s.startsWith('elicitation: disabled'))) fixes.push('turn on confirm.elicitation');
  if (skipped.some((s) => s.startsWith('elicitation: the client'))) fixes.push('use a client that supports MCP elicitation');
  return fixes.length > 0 ? `to fix: ${fixes.join(', or ')}` : 'check the confirm section of the config';
}

/** Runs the channels for one held call. */
export class ConfirmBroker {
  constructor(private readonly channels: readonly ConfirmChannel[]) {}

  /**
   * Asks the first channel that can take the request; falls through to the next only when a channel
   * reports it could not ask (e.g. the client refused elicitation with -32601).
   * @param signal the client's cancellation of the tool call.
   * @returns never throws: every failure is a `denied` Approval with a reason.
   */
  async confirm(req: ApprovalRequest, signal: AbortSignal): Promise<Approval> {
    const remaining = req.deadlineMs - Date.now();
    const timeout = AbortSignal.timeout(Math.max(0, remaining));
    const both = AbortSignal.any([signal, timeout]);
    const skipped: string[] = [];
    for (const channel of this.channels) {
      if (both.aborted) break;
      const can = channel.availability(req);
      if (can !== true) {
        skipped.push(`${channel.name}: ${can}`);
        continue;
      }
      let answer: ChannelAnswer;
      try {
        answer = await channel.ask(req, both);
      } catch (err) {
        return { kind: 'denied', channel: channel.name, reason: `the ${channel.name} channel failed (${(err as Error).message})` };
      }
      // Past the timeout or the client's cancel, whatever the channel says is a denial that says why.
      if (both.aborted) return aborted(signal, channel.name);
      if (answer.kind !== 'unavailable') return answer;
      skipped.push(`${channel.name}: ${answer.reason}`);
    }
    if (both.aborted) return aborted(signal, 'none');
    return {
      kind: 'denied',
      channel: 'none',
      reason: `no confirmation channel could ask a person (${skipped.join('; ') || 'none configured'}); ${hintFor(skipped)}`,
    };
  }
}

function aborted(clientSignal: AbortSignal, channel: string): Approval {
  if (clientSignal.aborted) return { kind: 'denied', channel, reason: 'cancelled by the client before a decision' };
  return { kind: 'denied', channel, reason: 'nobody decided before the confirmation timeout (confirm.timeout_seconds)' };
}
