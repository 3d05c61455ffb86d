/**
 * The read fast path: a `tools/call` that the policy allows is forwarded as raw JSON-RPC, and the
 * upstream's response goes back with only its id changed. It skips the SDK's server and client request
 * machinery, which on a trivial call costs more than the gate's whole decision (measured: bench/).
 *
 * Only the simplest case takes it: the client is initialized, the tool is in the catalogue and pinned, the
 * decision is `allow` AND the classifier proves the call read-only (a write that a rule allows is logged
 * as a write before it is sent: gateway/execute.ts), the tool is not an untrusted source (its answer must
 * be remembered for taint, which only gateway/tool-result.ts does), the upstream is connected, and the call
 * asks for no progress notifications. Everything else
 * (writes, unknown tools, progress) goes the SDK path through call.ts, with the same decision. The fast
 * path keeps the SDK path's promises: cancellation reaches the upstream under the upstream's id and a late
 * answer is dropped (BR-02); a lost connection or a timeout answers with a JSON-RPC error; the read is
 * logged behind the answer.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AuditLog } from '../audit/writer.js';
import { decideCall } from '../policy/decide.js';
import type { Policy } from '../policy/evaluate.js';
import type { PrivacySession } from '../privacy/filter.js';
import { placeholderIdsIn } from '../privacy/mask.js';
import { type Catalogue, classifyTool } from './catalogue.js';
import type { GateMetrics } from './metrics.js';
import { withheldWhy } from './privacy-route.js';
import { isPlainObject } from './raw.js';
import { isUntrusted } from './tool-result.js';
import type { RawReply, Upstream } from './upstream.js';

/** What the fast path needs. */
export interface FastPathDeps {
  catalogue: Catalogue;
  policy: Policy;
  audit: AuditLog;
  logReads: boolean;
  /** A dry-run session: routes as the pipeline does (policy/decide.ts). */
  dryRun: boolean;
  /** Untrusted-source tools: their results must be read for taint, so they take the SDK path. */
  untrusted: (tool: string) => boolean;
  /** The session's placeholders (privacy filter on): answers are masked before they go; calls carrying placeholders take the SDK path. */
  privacy?: PrivacySession;
  /** Sends a message to the client. */
  send: (m: JSONRPCMessage) => Promise<void>;
  /** Counts the read and times its upstream (the no-op when metrics are off). */
  metrics: GateMetrics;
  /**
   * Told when a fast-path call starts and ends: while it runs, the session counts as busy with it, so an
   * upstream's question during the call (sampling, elicitation) reaches this client on that call's stream.
   */
  busy?: (id: string | number, running: boolean) => void;
}

/** Routes allowed reads around the SDK. */
export class FastPath {
  private readonly inflight = new Map<string | number, { upstream: Upstream; upstreamId: string }>();

  constructor(private readonly deps: FastPathDeps) {}

  /**
   * Takes a message from the client if it belongs on the fast path.
   * @returns true when handled here; false to leave it to the SDK server.
   */
  handle(m: JSONRPCMessage): boolean {
    if (!('method' in m)) return false;
    if (m.method === 'notifications/cancelled') return this.cancel(m.params);
    if (m.method !== 'tools/call' || !('id' in m)) return false;
    const params = m.params;
    if (!isPlainObject(params) || typeof params.name !== 'string') return false;
    if (isPlainObject(params._meta) && params._meta.progressToken !== undefined) return false;
    if (this.inflight.has(m.id)) return false;
    // Placeholders are resolved (or refused) by the pipeline's own step (pipeline/steps/placeholders.ts).
    const privacy = this.deps.privacy;
    if (privacy && hasPlaceholders(params.arguments)) return false;
    const tool = this.deps.catalogue.get(params.name);
    if (!tool?.upstream.connected) return false;
    if (this.deps.catalogue.pinStatus(tool).kind !== 'pinned') return false;
    // The pipeline's own decision (policy/decide.ts); a dry run forwards reads the same way.
    const decision = decideCall({
      policy: this.deps.policy,
      tool: tool.exposed,
      classification: classifyTool(tool, params.arguments),
      definitionsChanging: this.deps.catalogue.isChanged(tool.upstream),
      dryRun: this.deps.dryRun,
    });
    // Only reads of trusted tools: an untrusted answer must be remembered for taint (gateway/tool-result.ts).
    if (decision.route !== 'read' || isUntrusted(this.deps, tool)) return false;

    const forward = tool.exposed === tool.upstreamTool ? params : { ...params, name: tool.upstreamTool };
    const clientId = m.id;
    this.deps.busy?.(clientId, true);
    const answered = this.deps.metrics.upstreamStarted(tool.upstream.name, 'tools/call');
    const upstreamId = tool.upstream.sendRaw(
      'tools/call',
      forward,
      (reply) => {
        if (!this.inflight.delete(clientId)) return;
        this.deps.busy?.(clientId, false);
        answered(reply.kind === 'response');
        if (this.deps.metrics.enabled) this.deps.metrics.callEnded(readFailed(reply) ? 'read_failed' : 'read', tool.upstream.name);
        const answer = toClient(clientId, reply);
        if (!privacy) void this.deps.send(answer).catch(() => {});
        else
          void maskAnswer(privacy, answer)
            .catch((err: unknown) => withheld(clientId, err))
            .then((m) => this.deps.send(m))
            .catch(() => {});
        if (this.deps.logReads) {
          const outcome =
            reply.kind === 'failed'
              ? 'failed'
              : isPlainObject(reply.message.result) && reply.message.result.isError === true
                ? 'upstream_error'
                : reply.message.error
                  ? 'failed'
                  : 'ok';
          this.deps.audit.appendLater(
            {
              event: 'read',
              tool: tool.exposed,
              upstream: tool.upstream.name,
              upstream_tool: tool.upstreamTool,
              reason: decision.reason,
              outcome,
              // The same text the SDK path logs for a failed read (pipeline/steps/read.ts).
              error: reply.kind === 'failed' ? reply.error.message : errorText(reply.message.error),
            },
            params.arguments ?? {},
          );
        }
        // Proven read-only (above): if its HTTP session ends before the upstream takes it, it may go once more.
      },
      { readOnly: true },
    );
    if (upstreamId === undefined) {
      this.deps.busy?.(clientId, false);
      return false;
    }
    this.inflight.set(clientId, { upstream: tool.upstream, upstreamId });
    return true;
  }

  /** A client cancel for a fast-path call: forward it under the upstream's id; no answer is sent. */
  private cancel(params: unknown): boolean {
    if (!isPlainObject(params)) return false;
    const id = params.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    const entry = this.inflight.get(id);
    if (!entry) return false;
    this.inflight.delete(id);
    this.deps.busy?.(id, false);
    entry.upstream.cancelRaw(entry.upstreamId, typeof params.reason === 'string' ? params.reason : 'cancelled by the client');
    return true;
  }
}

/** Masks a JSON-RPC answer's result or error, never its envelope (the id is the client's own). */
async function maskAnswer(privacy: PrivacySession, answer: JSONRPCMessage): Promise<JSONRPCMessage> {
  const a = answer as { result?: unknown; error?: unknown };
  if (a.result !== undefined) return { ...answer, result: await privacy.mask('tools/call', a.result) } as JSONRPCMessage;
  if (a.error !== undefined) return { ...answer, error: await privacy.mask('tools/call', a.error) } as JSONRPCMessage;
  return answer;
}

/** The message of a JSON-RPC error, when it has one. */
function errorText(error: unknown): string | undefined {
  return isPlainObject(error) && typeof error.message === 'string' ? error.message : undefined;
}

/** Whether arguments carry anything placeholder-like (cheap: the pipeline decides what it is). */
function hasPlaceholders(args: unknown): boolean {
  const { ids, attempts } = placeholderIdsIn(args);
  return ids.size + attempts > 0;
}

/** The answer when the privacy filter cannot store its placeholders: the result is withheld (a read: nothing ran). */
function withheld(id: string | number, err: unknown): JSONRPCMessage {
  const message = `lookfirst withheld the answer: ${withheldWhy(err)}; this read changed nothing, so it can be retried`;
  return { jsonrpc: '2.0', id, error: { code: -32603, message } } as JSONRPCMessage;
}

function toClient(id: string | number, reply: RawReply): JSONRPCMessage {
  if (reply.kind === 'failed') return { jsonrpc: '2.0', id, error: { code: reply.error.code, message: reply.error.message } } as JSONRPCMessage;
  return { ...reply.message, jsonrpc: '2.0', id } as unknown as JSONRPCMessage;
}

/** Whether a read's reply is a failure for the metrics: no answer, a JSON-RPC error, or an error result. */
function readFailed(reply: RawReply): boolean {
  return reply.kind === 'failed' || reply.message.error !== undefined || (isPlainObject(reply.message.result) && reply.message.result.isError === true);
}
