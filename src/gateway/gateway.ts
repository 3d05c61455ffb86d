/**
 * The gateway: an MCP server toward the client, an MCP client toward each upstream, and the pipeline in
 * between. Upstreams are connected before the client-facing Server is built, because the SDK fixes a
 * server's capabilities at construction (shared notes). Upstream notifications reach the client only
 * after its `initialized`; a tools/list_changed re-reads the catalogue before it is relayed, so the gate
 * never decides on a definition older than what the client was told about.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ElicitResultSchema,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type Notification,
  type Result,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuditLog } from '../audit/writer.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load.js';
import { ConfirmBroker } from '../confirm/broker.js';
import type { OutOfBandChannel } from '../confirm/channel.js';
import { createElicitationChannel } from '../confirm/channels/elicitation.js';
import type { PendingApprovals } from '../confirm/pending.js';
import { oneLine } from '../confirm/visible.js';
import { compilePolicy, type Policy, unmatchedRules } from '../policy/evaluate.js';
import type { Verdict } from '../types.js';
import { handleToolCall, type PipelineDeps } from './call.js';
import { Catalogue } from './catalogue.js';
import { FastPath } from './fast-path.js';
import { Forwarder, unionCapabilities } from './forward.js';
import { Holds } from './hold.js';
import { Interlock } from './interlock.js';
import { isPlainObject } from './raw.js';
import { Upstream } from './upstream.js';
import { plainMessage, toWireError } from './wire-error.js';

type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A map key for a JSON-RPC id that keeps 1 and "1" apart. */
function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** Client-to-server notifications the gate passes to every upstream. */
const FORWARDED_NOTIFICATIONS = new Set(['notifications/roots/list_changed']);

/** What a gateway is built from. */
export interface GatewayOptions {
  config: Config;
  audit: AuditLog;
  clock: Clock;
  /** Queue behind the out-of-band channels (web page, webhook, terminal). */
  pending: PendingApprovals;
  /** Channels outside the client, shown all at once when elicitation cannot ask (none: only elicitation). */
  outOfBand?: OutOfBandChannel[];
  /** Operator messages (stderr in the CLI; never stdout, which is the protocol channel). */
  log: (message: string) => void;
  version: string;
}

/** A running gate. */
export class Gateway {
  readonly upstreams: Upstream[];
  readonly catalogue: Catalogue;
  private readonly forwarder: Forwarder;
  private readonly policy: Policy;
  /** Blocked tools and per-tool serialization, rebuilt from the audit log at start. */
  readonly interlock: Interlock;
  private server: Server | undefined;
  private ready = false;
  /** Ids of the client's requests in progress (both paths). */
  private readonly activeIds = new Set<string>();
  /** Holds of each client session, withdrawn when the gate closes. */
  private readonly sessions = new Set<Holds>();
  /** Gated calls in progress, so that shutdown can wait for their audit entries. */
  private readonly gatedCalls = new Set<Promise<Result>>();

  constructor(private readonly opts: GatewayOptions) {
    this.upstreams = opts.config.upstreams.map(
      (c) =>
        new Upstream(c, {
          notification: (u, n) => this.onUpstreamNotification(u, n),
          log: opts.log,
          // A restarted server may list other tools: re-read them, then tell the client (BR-20).
          reconnected: (u) => void this.onUpstreamNotification(u, { method: 'notifications/tools/list_changed' }),
        }),
    );
    this.catalogue = new Catalogue(this.upstreams, opts.log);
    this.forwarder = new Forwarder(this.upstreams);
    this.policy = compilePolicy(opts.config.rules);
    this.interlock = new Interlock(opts.audit.blockedAtOpen);
    for (const [tool, b] of this.interlock.list())
      opts.log(`warning: ${tool} is blocked since ${new Date(b.sinceMs).toISOString()}: ${b.reason}. Its next call asks a person to unlock it.`);
  }

  /**
   * Connects every upstream (one that fails is reported and retried on use; the gate starts anyway),
   * reads the tool catalogue, and warns about rules that match no tool.
   */
  async start(): Promise<void> {
    await Promise.all(
      this.upstreams.map((u) =>
        u.connect().catch((err: unknown) => this.opts.log(`warning: ${plainMessage(err)}; its tools are missing until it can be reached`)),
      ),
    );
    await Promise.all(this.upstreams.filter((u) => u.connected).map((u) => this.catalogue.refresh(u)));
    const names = this.catalogue.all().map((t) => t.exposed);
    const down = this.upstreams.filter((u) => !u.connected).map((u) => u.name);
    for (const pattern of unmatchedRules(this.policy, names)) {
      const line = this.opts.config.rules.find((r) => r.pattern === pattern)?.line;
      const known =
        down.length > 0
          ? `tools of ${down.join(', ')} are unknown until it answers`
          : `tools: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}`;
      this.opts.log(`warning: rule "${pattern}"${line ? ` (line ${line})` : ''} matches no tool; check the name (${known})`);
    }
  }

  /** Serves one client on a transport (stdio in the CLI). */
  async serve(transport: Transport): Promise<Server> {
    const server = this.buildServer();
    this.server = server;
    await server.connect(transport);
    const fast = new FastPath({
      catalogue: this.catalogue,
      policy: this.policy,
      audit: this.opts.audit,
      logReads: this.opts.config.audit.reads,
      send: (m) => transport.send(m),
    });
    // A request id may not be reused while its request is in progress: the SDK keeps one abort handle per
    // id, so a second request with the same id would take the first one's cancellation (and its
    // withdrawal at disconnect) away from it. Such a request is refused.
    const sdkSend = transport.send.bind(transport);
    transport.send = (m, options) => {
      if (!('method' in m) && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number')) this.activeIds.delete(idKey(m.id));
      return sdkSend(m, options);
    };
    // Allowed reads skip the SDK server once the client is initialized; everything else goes through it.
    const sdkOnMessage = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
      if ('method' in m && 'id' in m) {
        const key = idKey(m.id);
        if (this.activeIds.has(key)) {
          const error = { code: -32600, message: `Invalid Request: id ${JSON.stringify(m.id)} is already used by a request in progress` };
          void sdkSend({ jsonrpc: '2.0', id: m.id, error } as JSONRPCMessage).catch(() => {});
          return;
        }
        this.activeIds.add(key);
      }
      // The SDK runs oninitialized a microtask later; a call in the same chunk must already see it.
      if ('method' in m && m.method === 'notifications/initialized' && !('id' in m)) this.ready = true;
      const cancelled = 'method' in m && m.method === 'notifications/cancelled' ? (m.params as { requestId?: unknown } | undefined)?.requestId : undefined;
      if (this.ready && fast.handle(m)) {
        if (typeof cancelled === 'string' || typeof cancelled === 'number') this.activeIds.delete(idKey(cancelled));
        return;
      }
      (sdkOnMessage as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(m, extra);
    };
    return server;
  }

  /**
   * Closes the client connection, waits (at most 5 s) for gated calls to finish writing how they ended
   * (a held call is aborted: it is denied, never executed), then stops every upstream.
   */
  async close(): Promise<void> {
    for (const u of this.upstreams) u.shutdown();
    await this.server?.close().catch(() => {});
    const drained = Promise.allSettled([...this.gatedCalls, ...[...this.sessions].map((h) => h.closeAll('the client disconnected'))]);
    await Promise.race([drained, new Promise((r) => setTimeout(r, 5000).unref())]);
    await Promise.all(this.upstreams.map((u) => u.close()));
  }

  private buildServer(): Server {
    const instructions = this.upstreams
      .map((u) => u.instructions)
      .filter(Boolean)
      .join('\n\n');
    const server = new Server(
      { name: 'lookfirst', version: this.opts.version },
      { capabilities: unionCapabilities(this.upstreams), instructions: instructions || undefined },
    );
    // Forward the client's log level to the upstreams instead of answering it locally.
    server.removeRequestHandler('logging/setLevel');
    const elicitation = createElicitationChannel(
      {
        clientSupportsForm: () => {
          const e = server.getClientCapabilities()?.elicitation as Record<string, unknown> | undefined;
          // A bare `elicitation: {}` means form mode (spec 2025-11-25); `{ url: {} }` alone does not.
          return e !== undefined && (e.form !== undefined || e.url === undefined);
        },
        clientName: () => server.getClientVersion()?.name ?? 'client',
        elicit: (params, signal, timeoutMs) => server.request({ method: 'elicitation/create', params }, ElicitResultSchema, { signal, timeout: timeoutMs }),
      },
      this.opts.config.confirm.elicitation,
    );
    const broker = new ConfirmBroker({ inClient: [elicitation], outOfBand: this.opts.outOfBand ?? [], pending: this.opts.pending });
    const deps: PipelineDeps = {
      catalogue: this.catalogue,
      policy: this.policy,
      broker,
      audit: this.opts.audit,
      clock: this.opts.clock,
      confirmTimeoutMs: this.opts.config.confirm.timeoutMs,
      executionTimeoutMs: this.opts.config.execution.timeoutMs,
      interlock: this.interlock,
      logReads: this.opts.config.audit.reads,
      clientName: () => server.getClientVersion()?.name ?? 'client',
      progressMs: this.opts.config.confirm.progressMs,
      holdMs: this.opts.config.confirm.holdMs,
      holds: new Holds({
        logApproval: (call, a) =>
          this.opts.audit.appendDurable({
            event: 'approval',
            call_id: call.callId,
            tool: call.tool,
            approved: a.kind === 'approved',
            channel: a.channel,
            actor: a.actor,
            trust: a.trust,
            comment: a.comment === undefined ? undefined : oneLine(a.comment),
            reason: a.kind === 'denied' ? a.reason : undefined,
          }),
        logLapse: async (call, a, reason) => {
          await this.opts.audit.appendDurable({ event: 'approval_lapsed', call_id: call.callId, tool: call.tool, actor: a.actor, reason });
          this.opts.pending.recordOutcome(call.callId, 'lapsed (approved, never claimed)');
        },
      }),
    };
    this.sessions.add(deps.holds);
    server.fallbackRequestHandler = async (request, extra): Promise<Result> => {
      try {
        return await this.dispatch(request, extra, deps);
      } finally {
        // A cancelled request gets no response, so its id is released here.
        this.activeIds.delete(idKey(request.id));
      }
    };
    // Client notifications are allow-listed: anything else, a `tools/call` sent without an id above all,
    // would reach upstreams undecided. Cancellation and progress are handled before this point.
    server.fallbackNotificationHandler = async (n) => {
      if (FORWARDED_NOTIFICATIONS.has(n.method)) await Promise.all(this.upstreams.map((u) => u.notify(n)));
      else
        this.opts.log(
          `dropped a client notification "${n.method.slice(0, 60)}"${n.method === 'tools/call' ? ' (a tools/call without an id is never executed)' : ''}`,
        );
    };
    server.oninitialized = () => {
      this.ready = true;
    };
    server.onerror = (err) => this.opts.log(`client connection: ${err.message}`);
    return server;
  }

  /** Routes one client request that the SDK server did not answer itself. */
  private async dispatch(request: JSONRPCRequest, extra: RequestExtra, deps: PipelineDeps): Promise<Result> {
    const params = isPlainObject(request.params) ? request.params : undefined;
    const token = isPlainObject(params?._meta) ? params._meta.progressToken : undefined;
    const progress =
      token === undefined
        ? undefined
        : (p: Record<string, unknown>) =>
            void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } } as never).catch(() => {});
    try {
      if (request.method === 'tools/call') {
        const call = handleToolCall(deps, params ?? {}, { signal: extra.signal, progress });
        this.gatedCalls.add(call);
        const result = await call.finally(() => this.gatedCalls.delete(call));
        const v = (result._meta as { lookfirst?: Verdict } | undefined)?.lookfirst;
        if (v) this.opts.pending.recordOutcome(v.call_id, v.outcome, v.readback);
        return result;
      }
      if (request.method === 'tools/list') {
        await this.catalogue.refreshAll();
        return { tools: this.catalogue.all().map((t) => t.definition) };
      }
      return await this.forwarder.forward(request.method, params, { signal: extra.signal, onprogress: progress });
    } catch (err) {
      throw toWireError(err);
    }
  }

  private async onUpstreamNotification(upstream: Upstream, n: Notification): Promise<void> {
    if (n.method === 'notifications/tools/list_changed') {
      this.catalogue.markChanged(upstream);
      await this.catalogue.refresh(upstream);
    }
    if (!this.ready || !this.server) return;
    try {
      await this.server.notification(n as never);
    } catch (err) {
      this.opts.log(`upstream ${upstream.name}: notification ${n.method} not relayed (${(err as Error).message})`);
    }
  }
}
