/**
 * An upstream's questions to the client during a call (`elicitation/create`, `sampling/createMessage`).
 * The gate has one connection per upstream for all clients, so a question carries no client: it goes to
 * the one client with a request in flight (on stdio, the only client), on that request's stream. When
 * that is ambiguous, or the client cannot be asked, it is refused. Refusals are logged at most once a
 * second: a hostile upstream can send thousands.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { createRefusalLog } from '../audit/throttle.js';
import type { AuditLog } from '../audit/writer.js';
import type { Session } from './session.js';
import type { Upstream } from './upstream.js';
import { ErrorCode, plainMessage, WireError } from './wire-error.js';

/** Relays upstream questions to the client they belong to. */
export class UpstreamQuestions {
  private readonly refusals = createRefusalLog((line, suppressed) => {
    const [upstream, method, reason] = line.includes('\u0000') ? line.split('\u0000') : [undefined, undefined, line];
    this.audit.appendLater({ event: 'upstream_request', upstream, method, outcome: 'refused', reason, suppressed: suppressed || undefined });
  });

  /**
   * @param sessions the gate's connected client sessions.
   * @param remember keeps what the upstream asks in the taint memory of the client it is relayed to
   *   (gateway/taint-principals.ts), before it is relayed.
   */
  constructor(
    private readonly audit: AuditLog,
    private readonly sessions: () => Iterable<Session>,
    private readonly remember: (target: Session, upstream: Upstream, method: string, params: unknown) => void = () => {},
  ) {}

  /**
   * An upstream asks the client something during a call (elicitation, sampling). It goes to the one
   * client with a request in flight (on stdio: the only client); when that is ambiguous, or the client
   * cannot be asked, it is refused. The question is labelled as the upstream's: it is not the gate's
   * approval, and its answer goes back to the upstream only.
   * @throws WireError when it is refused.
   */
  async relay(upstream: Upstream, method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Result> {
    const refuse = (code: number, why: string): never => {
      this.refusals.record(`${upstream.name}\u0000${method.slice(0, 60)}\u0000${why}`);
      throw new WireError(code, `lookfirst: ${why}`);
    };
    if (method !== 'elicitation/create' && method !== 'sampling/createMessage')
      return refuse(ErrorCode.MethodNotFound, `Method not found: ${method.slice(0, 60)}`);
    const all = [...this.sessions()];
    const busy = all.filter((s) => s.inflight > 0);
    const target = busy.length === 1 ? busy[0] : busy.length === 0 && all.length === 1 ? all[0] : undefined;
    if (!target) return refuse(ErrorCode.InternalError, `cannot tell which client "${upstream.name}" is asking (${busy.length} have calls in flight)`);
    if (!target.ask) return refuse(ErrorCode.MethodNotFound, 'the client (2026-07-28) cannot be asked by an upstream through the gate');
    this.remember(target, upstream, method, params);
    let forwarded = params;
    if (method === 'elicitation/create' && typeof params?.message === 'string') {
      // Labelled at both ends: a question padded with blank lines cannot push the label out of sight.
      const label = `asked by upstream "${upstream.name}", not a lookfirst approval`;
      forwarded = { ...params, message: `[${label}] ${params.message}\n[end of the question ${label}]` };
    }
    try {
      const result = await target.ask(method, forwarded, signal);
      this.audit.appendLater({ event: 'upstream_request', upstream: upstream.name, method, outcome: 'relayed' });
      return result;
    } catch (err) {
      return refuse(typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : ErrorCode.InternalError, plainMessage(err));
    }
  }

  /** Writes the count of refusals not yet logged (at shutdown). */
  flush(): void {
    this.refusals.flush();
  }
}
