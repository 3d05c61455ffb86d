/**
 * Pending approvals for out-of-band channels (the local web page now; a paired phone or a webhook later):
 * a held call waits here until a person decides through one of them, the timeout passes, or the client
 * cancels. A decision must name both the call id and the args_sha256 that was shown: a decision about
 * different arguments is refused, so an approval can never be moved onto another call.
 * In memory for now; the planned store interface will hold it so several gate replicas can share it.
 */
import type { ToolCall } from '../types.js';
import type { ApprovalRequest, ChannelAnswer, ConfirmChannel } from './channel.js';

/** What an approver sees of a pending call. */
export interface PendingView {
  callId: string;
  tool: string;
  upstream: string;
  summary: string;
  argsCanonical: string;
  argsSha256: string;
  /** When the call started waiting (ms since epoch). */
  sinceMs: number;
  deadlineMs: number;
}

/** Outcome of a decision attempt: `ok`, or why it was refused. */
export type DecideResult = { ok: true } | { ok: false; reason: string };

interface Entry {
  view: PendingView;
  settle: (answer: ChannelAnswer) => void;
}

/** The queue of calls waiting for an out-of-band decision. */
export class PendingApprovals {
  private readonly items = new Map<string, Entry>();

  /** Calls waiting now, oldest first. */
  list(): PendingView[] {
    return [...this.items.values()].map((e) => e.view);
  }

  /**
   * Records a person's decision.
   * @param channel who decided, e.g. `web`; `actor` their name as given.
   * @returns `ok: false` when the call is not pending (decided, timed out, cancelled) or the hash differs.
   */
  decide(callId: string, argsSha256: string, approve: boolean, channel: string, actor: string): DecideResult {
    const entry = this.items.get(callId);
    if (!entry) return { ok: false, reason: 'this call is no longer waiting (decided, timed out, or cancelled by the client)' };
    if (entry.view.argsSha256 !== argsSha256) return { ok: false, reason: 'the arguments shown are not the arguments held; reload the page' };
    this.items.delete(callId);
    entry.settle(
      approve
        ? { kind: 'approved', channel, actor: `${channel}:${actor}` }
        : { kind: 'denied', channel, actor: `${channel}:${actor}`, reason: `denied on the ${channel} page by ${actor}` },
    );
    return { ok: true };
  }

  /** A confirmation channel backed by this queue. `enabled` false makes it report unavailable. */
  channel(name: string, enabled: boolean, disabledHint: string): ConfirmChannel {
    return {
      name,
      availability: () => (enabled ? true : disabledHint),
      ask: (req, signal) => this.wait(req, signal, name),
    };
  }

  private wait(req: ApprovalRequest, signal: AbortSignal, name: string): Promise<ChannelAnswer> {
    const call: ToolCall = req.call;
    return new Promise((resolve) => {
      const onAbort = () => {
        this.items.delete(call.callId);
        resolve({ kind: 'denied', channel: name, reason: 'withdrawn: timeout or client cancellation' });
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.items.set(call.callId, {
        view: {
          callId: call.callId,
          tool: call.tool,
          upstream: call.upstream,
          summary: req.summary,
          argsCanonical: call.argsCanonical,
          argsSha256: call.argsSha256,
          sinceMs: Date.now(),
          deadlineMs: req.deadlineMs,
        },
        settle: (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
    });
  }
}
