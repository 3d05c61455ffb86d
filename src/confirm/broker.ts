/**
 * The confirmation broker. Under one shared timeout, it first tries the in-client channel (elicitation);
 * when that cannot ask, it shows the call on every available out-of-band channel at once (web page,
 * webhook, terminal) and takes the first decision from any of them. A timeout is a denial; the client's
 * cancellation is a denial that withdraws the question everywhere; when no channel can ask, the call is
 * denied with a message naming what to enable. Fail closed: any error in a channel is a denial or
 * "could not ask", never an approval. A denial nobody made (a timeout, a cancellation, no channel) has
 * channel `none` and no actor: only a person's decision names a channel and an actor, so that the log,
 * `tail`, `stats` and the metrics never count it as a person's "no".
 */
import { type Clock, systemClock } from '../clock.js';
import type { Approval } from '../types.js';
import type { ApprovalRequest, ChannelAnswer, ConfirmChannel, OutOfBandChannel } from './channel.js';
import { CONFIRM_TIMEOUT, type PendingApprovals } from './pending.js';
import { TIMED_OUT } from './pending-types.js';

/** What to tell the user when no channel could ask: only the fixes that would have helped this call. */
export function hintFor(skipped: readonly string[]): string {
  const fixes: string[] = [];
  if (skipped.some((s) => s.startsWith('web: disabled'))) fixes.push('enable the local web page (confirm.web.enabled: true)');
  if (skipped.some((s) => s.startsWith('webhook:') && !s.startsWith('webhook: not configured'))) fixes.push('check that the webhook receiver is up');
  if (skipped.some((s) => s.startsWith('terminal: no'))) fixes.push('run lookfirst serve from a terminal for confirm.terminal');
  if (skipped.some((s) => s.startsWith('elicitation: disabled'))) fixes.push('turn on confirm.elicitation');
  if (skipped.some((s) => s.startsWith('elicitation: the client'))) fixes.push('use a client that supports MCP elicitation');
  return fixes.length > 0 ? `to fix: ${fixes.join(', or ')}` : 'check the confirm section of the config';
}

/** Channels and queue of one gate. */
export interface BrokerChannels {
  /** Asked one after another, first (elicitation). */
  inClient: readonly ConfirmChannel[];
  /** Shown all at once when no in-client channel could ask. */
  outOfBand: readonly OutOfBandChannel[];
  pending: PendingApprovals;
}

/** Optional observers of one confirmation. */
export interface BrokerHooks {
  /** Called when the call goes to the out-of-band channels (named), i.e. the client is not asked itself. */
  outOfBand?: (channels: string[]) => void;
}

/** Runs the channels for one held call. */
export class ConfirmBroker {
  /**
   * @param clock the time source for the deadline (tests inject one).
   * @param stopped aborted when the gate stops: a call still waiting for a person no longer keeps the
   *   process alive (its question outlives the process in a shared store, or it was withdrawn), so a
   *   stopping gate exits at once instead of at the last deadline.
   */
  constructor(
    private readonly channels: BrokerChannels,
    private readonly clock: Clock = systemClock,
    private readonly stopped?: AbortSignal,
  ) {}

  /**
   * Asks a person about one held call.
   * @param signal the client's cancellation of the tool call.
   * @returns never throws: every failure is a `denied` Approval with a reason.
   */
  async confirm(req: ApprovalRequest, signal: AbortSignal, hooks: BrokerHooks = {}): Promise<Approval> {
    const approval = await this.ask(req, signal, hooks);
    this.channels.pending.recordDecision({
      callId: req.call.callId,
      tool: req.call.tool,
      summary: req.summary,
      purpose: req.purpose ?? 'execute',
      decision: approval.kind === 'approved' ? 'approved' : decisionWord(approval.reason),
      actor: approval.actor,
      comment: approval.comment,
    });
    return approval;
  }

  private async ask(req: ApprovalRequest, signal: AbortSignal, hooks: BrokerHooks): Promise<Approval> {
    // A referenced timer (AbortSignal.timeout is unreferenced): a call waiting for a person keeps the
    // process alive until its deadline, and the timer is cleared as soon as the call is decided.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(CONFIRM_TIMEOUT), Math.max(0, req.deadlineMs - this.clock.nowMs()));
    const release = () => timer.unref();
    if (this.stopped?.aborted) release();
    else this.stopped?.addEventListener('abort', release, { once: true });
    try {
      return await this.askUntil(req, signal, AbortSignal.any([signal, timeout.signal]), hooks);
    } finally {
      clearTimeout(timer);
      this.stopped?.removeEventListener('abort', release);
    }
  }

  private async askUntil(req: ApprovalRequest, signal: AbortSignal, both: AbortSignal, hooks: BrokerHooks): Promise<Approval> {
    const skipped: string[] = [];
    for (const channel of this.channels.inClient) {
      if (both.aborted) return aborted(signal, []);
      const can = channel.availability(req);
      if (can !== true) {
        skipped.push(`${channel.name}: ${can}`);
        continue;
      }
      let answer: ChannelAnswer;
      try {
        answer = await channel.ask(req, both);
      } catch (err) {
        // A failure is no person's "no": channel `none`, as every denial nobody made (the reason names the channel).
        return { kind: 'denied', channel: 'none', reason: `the ${channel.name} channel failed (${(err as Error).message})` };
      }
      // Past the timeout or the client's cancel, whatever the channel says is a denial that says why
      // (a person's own "no" stands: it was theirs).
      if (both.aborted && !isPersonsDenial(answer)) return aborted(signal, [channel.name]);
      if (answer.kind !== 'unavailable') return answer;
      skipped.push(`${channel.name}: ${answer.reason}`);
    }
    if (both.aborted) return aborted(signal, []);
    const ready: OutOfBandChannel[] = [];
    for (const channel of this.channels.outOfBand) {
      const can = channel.availability(req);
      if (can === true) ready.push(channel);
      else skipped.push(`${channel.name}: ${can}`);
    }
    if (ready.length === 0) return nobody(skipped);
    hooks.outOfBand?.(ready.map((c) => c.name));
    const answer = await this.outOfBand(req, ready, both, skipped);
    if (answer.kind === 'unavailable') return nobody(skipped);
    if (answer.kind === 'denied' && both.aborted && !isPersonsDenial(answer))
      return aborted(
        signal,
        ready.filter((c) => !skipped.some((why) => why.startsWith(`${c.name}: `))).map((c) => c.name),
      );
    return answer;
  }

  /** Shows the call on every ready channel and waits for the first decision (or for all to fail). */
  private async outOfBand(req: ApprovalRequest, ready: OutOfBandChannel[], both: AbortSignal, skipped: string[]): Promise<ChannelAnswer> {
    const done = new AbortController();
    const shown = AbortSignal.any([both, done.signal]);
    const held = this.channels.pending.hold(
      req,
      ready.map((c) => c.name),
      both,
    );
    let failed = 0;
    for (const channel of ready) {
      const fail = (why: string) => {
        skipped.push(`${channel.name}: ${why}`);
        // Not shown there, so not decidable there: the webhook endpoint takes only calls it delivered.
        this.channels.pending.dropChannel(req.call.callId, channel.name);
        if (++failed === ready.length) held.withdraw('no channel could show it');
      };
      channel.present(req, shown).then(
        (r) => (r === true ? undefined : fail(r)),
        (err: unknown) => fail(`failed (${(err as Error).message})`),
      );
    }
    try {
      return await held.answer;
    } finally {
      done.abort();
    }
  }
}

function nobody(skipped: string[]): Approval {
  return {
    kind: 'denied',
    channel: 'none',
    reason: `no confirmation channel could ask a person (${skipped.join('; ') || 'none configured'}); ${hintFor(skipped)}`,
  };
}

/** A "no" a person gave: it names who (every channel's decision does; a timeout or withdrawal names nobody). */
const isPersonsDenial = (a: ChannelAnswer): boolean => a.kind === 'denied' && a.actor !== undefined;

/**
 * The denial of a call nobody decided on before the client cancelled it or its deadline passed. Channel
 * `none` and no actor (the channels it was shown on are named in the reason): a person did not decide it,
 * and the log must not say one did (observe/decisions.ts reads it as `cancelled` or `timed out`). The
 * reasons' first words are kept as older logs have them, since readers of old logs match on them.
 */
function aborted(clientSignal: AbortSignal, shownOn: readonly string[]): Approval {
  const where = shownOn.length > 0 ? `; it was shown on ${shownOn.join(', ')}` : '';
  if (clientSignal.aborted) return { kind: 'denied', channel: 'none', reason: `cancelled by the client before a decision${where}` };
  return { kind: 'denied', channel: 'none', reason: `${TIMED_OUT}${where}` };
}

function decisionWord(reason: string): string {
  if (reason.startsWith('cancelled by the client')) return 'withdrawn';
  if (reason.startsWith('nobody decided')) return 'timed out';
  if (reason.startsWith('no confirmation channel')) return 'not shown';
  return 'denied';
}
