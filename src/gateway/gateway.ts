/**
 * The gateway: an MCP server toward the client, an MCP client toward each upstream, and the pipeline in
 * between. Upstreams are connected before the client-facing Server is built, because the SDK fixes a
 * server's capabilities at construction (shared notes). Upstream notifications reach the client only
 * after its `initialized`; a tools/list_changed re-reads the catalogue before it is relayed, so the gate
 * never decides on a definition older than what the client was told about.
 * Over 400 lines: serving a session (with its read fast path and its held questions' owner), routing its
 * requests and relaying upstream notifications share the sessions, the catalogue, the store and the taint
 * memories; the call itself is gateway/pipeline/, taint gateway/taint-principals.ts, a request under the
 * privacy filter gateway/privacy-route.ts.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitResultSchema, type JSONRPCMessage, type Notification, type Result } from '@modelcontextprotocol/sdk/types.js';
import type { AuditLog } from '../audit/writer.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load.js';
import { ConfirmBroker } from '../confirm/broker.js';
import type { ConfirmChannel, OutOfBandChannel } from '../confirm/channel.js';
import { createElicitationChannel } from '../confirm/channels/elicitation.js';
import { createEvidenceLedger, type EvidenceLedger } from '../confirm/evidence-ledger.js';
import type { PendingApprovals } from '../confirm/pending.js';
import type { RedactHook } from '../confirm/redact.js';
import { compilePolicy, type Policy, unmatchedRules } from '../policy/evaluate.js';
import type { PrivacyFilter } from '../privacy/filter.js';
import type { Store } from '../store/store.js';
import { Catalogue } from './catalogue.js';
import { DryRunBudget } from './dry-run-budget.js';
import { FastPath } from './fast-path.js';
import { Forwarder, unionCapabilities } from './forward.js';
import { auditedHolds } from './hold.js';
import { Interlock } from './interlock.js';
import { type CallOutcome, type GateMetrics, noMetrics } from './metrics.js';
import type { InClientRound } from './mrtr.js';
import { recipientsOf, trackSubscription } from './notify-scope.js';
import { ToolPins } from './pins.js';
import { CONFIRM_TOOL, confirmPending, confirmToolDefinition } from './pipeline/confirm-pending.js';
import type { PipelineDeps } from './pipeline/context.js';
import { type Outcome, verdictOfOutcome } from './pipeline/outcome.js';
import { handleToolCall } from './pipeline/run.js';
import { MAX_RECORDED_RUN_BYTES } from './pipeline/steps/record.js';
import { routeMasked } from './privacy-route.js';
import { idKey, isPlainObject, RAW_RESULT } from './raw.js';
import type { Replicas } from './replicas.js';
import { createSelfApprovalNotice, declaresFormElicitation } from './self-approval.js';
import { holdsOwner, isAuthenticated, type Session, userOf } from './session.js';
import { TaintMemory, untrustedTest } from './taint.js';
import { PrincipalTaint } from './taint-principals.js';
import { rememberResource } from './tool-result.js';
import { type GateTracer, noTracer } from './tracing.js';
import type { HttpFrontTransport } from './transport/http-front.js';
import { type InProcessUpstream, Upstream } from './upstream.js';
import { UpstreamQuestions } from './upstream-questions.js';
import { ErrorCode, plainMessage, toWireError, WireError } from './wire-error.js';

/** Client-to-server notifications the gate passes to every upstream. */
const FORWARDED_NOTIFICATIONS = new Set(['notifications/roots/list_changed']);

export type { Session } from './session.js';

/** How one request reaches the pipeline, whichever protocol generation it came in. */
export interface RouteContext {
  signal: AbortSignal;
  /** The client's progress token, when it gave one. */
  progress?: (p: Record<string, unknown>) => void;
  /** 2026-07-28 requests: in-client approval by `input_required`. */
  mrtr?: InClientRound;
  /** The session the request came in on (counted busy while it runs). */
  session?: Session;
  /** The request's `_meta` where the front keeps it apart from `params` (2026-07-28): its trace context. */
  meta?: unknown;
}

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
  /** Where the gate's state lives, shared with other replicas (default: memory, this process only). */
  store?: Store;
  /** This replica among those sharing the store (gateway/replicas.ts). */
  replicas?: Replicas;
  /** The privacy filter (`privacy:`): what the client reads is masked, placeholders resolved in calls. */
  privacy?: PrivacyFilter;
  /** The operator's redaction hook (`redact.hook`). */
  redact?: RedactHook;
  /**
   * Upstreams that live in this process, by upstream name (the library's `createGatedServer`): reached
   * through their own transport, with their author's trusted declarations. `lookfirst serve` has none.
   */
  inProcess?: ReadonlyMap<string, InProcessUpstream>;
  /** The `serverInfo` clients see (default `lookfirst` and `version`): the library serves as the author's server. */
  serverInfo?: { name: string; version: string };
  /** The gate's metrics (`metrics:`); default the no-op. */
  metrics?: GateMetrics;
  /** The gate's tracer (`tracing:`); default none. */
  tracer?: GateTracer;
}

/** A running gate. */
export class Gateway {
  readonly upstreams: Upstream[];
  readonly catalogue: Catalogue;
  private readonly forwarder: Forwarder;
  private readonly policy: Policy;
  /** Blocked tools and per-tool serialization: in the store, seeded from the audit log at start. */
  interlock: Interlock;
  /** Connected client sessions (one on stdio; one per MCP session over HTTP). */
  private readonly sessions = new Set<Session>();
  /** Sessions' holds being withdrawn after a disconnect, so that shutdown waits for their entries. */
  private readonly closing = new Set<Promise<void>>();
  /** Untrusted-source tools (`taint.untrusted`): their results taint a session. */
  private readonly untrusted: (tool: string) => boolean;
  /** Relays an upstream's questions to the client they belong to. */
  private readonly questions: UpstreamQuestions;
  /**
   * Bytes of arguments this run may still record in a dry run (pipeline/steps/record.ts). It bounds what
   * this replica's log holds for `promote`, so it is this process's own (a memory store), not shared.
   */
  private readonly dryRunBudget = new DryRunBudget(MAX_RECORDED_RUN_BYTES);
  /** Set once the gate stops: sessions attached from then on keep their shared questions too. */
  private isStopping = false;
  /** Aborted by stopping(): calls still waiting for a person stop keeping the process alive (confirm/broker.ts). */
  private readonly stopSignal = new AbortController();
  /** Gated calls in progress, so that shutdown can wait for their audit entries. */
  private readonly gatedCalls = new Set<Promise<unknown>>();
  /** Taint memory per authenticated principal, and what untrusted upstreams relay (gateway/taint-principals.ts). */
  readonly taint: PrincipalTaint;
  /** Where decisions' evidence is checked before execution (confirm/evidence-ledger.ts). */
  private readonly evidence: EvidenceLedger | undefined;
  private readonly metrics: GateMetrics;
  private readonly tracer: GateTracer;

  /** Call with each connecting client's name and `elicitation` capability: warns of self-approval once per gate (self-approval.ts). */
  readonly noteElicitingClient: (clientName: string, elicitation: unknown) => void;

  constructor(private readonly opts: GatewayOptions) {
    this.noteElicitingClient = createSelfApprovalNotice(opts.config.confirm, opts.log);
    this.metrics = opts.metrics ?? noMetrics;
    this.tracer = opts.tracer ?? noTracer;
    this.metrics.heldFrom(() => this.heldNow());
    this.questions = new UpstreamQuestions(
      opts.audit,
      () => this.sessions,
      (s, u, method, params) => this.taint.relayed(this.taint.memoriesOf([s]), u, method, params),
    );
    this.untrusted = untrustedTest(opts.config.taint.untrusted);
    this.evidence = opts.store && createEvidenceLedger(opts.store, opts.clock);
    this.taint = new PrincipalTaint(() => this.catalogue.all(), this.untrusted, opts.store);
    this.upstreams = opts.config.upstreams.map(
      (c) =>
        new Upstream(
          c,
          {
            notification: (u, n) => this.onUpstreamNotification(u, n),
            log: opts.log,
            request: (u, method, params, signal) => this.questions.relay(u, method, params, signal),
            // A restarted server may list other tools: re-read them, then tell the client (BR-20).
            reconnected: (u) => void this.onUpstreamNotification(u, { method: 'notifications/tools/list_changed' }),
          },
          undefined,
          opts.inProcess?.get(c.name),
        ),
    );
    // The catalogue reports each distinct definition once per process (gateway/pins.ts), so every later
    // change is logged too, while repeated listings of the same one are not.
    this.catalogue = new Catalogue(
      this.upstreams,
      opts.log,
      new ToolPins(`${opts.config.audit.logPath}.pins.json`, { store: opts.store }),
      (u, tool, how, sha256) => {
        opts.log(
          `warning: the definition of ${u.name}'s tool "${tool}" ${how === 'new' ? 'is new since the upstream was pinned' : 'changed since it was pinned'}; its next call asks a person to accept it`,
        );
        opts.audit.appendLater({ event: 'definition_changed', upstream: u.name, tool, how, sha256 });
      },
    );
    this.forwarder = new Forwarder(this.upstreams, opts.log);
    this.policy = compilePolicy(opts.config.rules);
    this.interlock = new Interlock(opts.audit.blockedAtOpen);
  }

  /**
   * Connects every upstream (one that fails is reported and retried on use; the gate starts anyway),
   * reads the tool catalogue, and warns about rules that match no tool.
   */
  async start(): Promise<void> {
    await this.catalogue.pins?.ready();
    if (this.opts.store)
      this.interlock = await Interlock.open(this.opts.audit.blockedAtOpen, {
        store: this.opts.store,
        replicas: this.opts.replicas,
        // The execution, its read-back and the log writes around them, with room to spare.
        leaseMs: 2 * this.opts.config.execution.timeoutMs + 60_000,
      });
    for (const [tool, b] of this.interlock.list())
      this.opts.log(`warning: ${tool} is blocked since ${new Date(b.sinceMs).toISOString()}: ${b.reason}. Its next call asks a person to unlock it.`);
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
      // With one upstream the client sees the tools' own names; a rule written with the prefix misses them.
      const bare = /^[^_]+__(.+)$/.exec(pattern)?.[1];
      const only = this.upstreams.length === 1 ? this.upstreams[0]?.name : undefined;
      const wouldMatch =
        only !== undefined &&
        !unmatchedRules(
          this.policy,
          names.map((n) => `${only}__${n}`),
        ).includes(pattern);
      const hint = bare !== undefined && wouldMatch ? `; with one upstream tools are not prefixed: did you mean "${bare}"?` : '';
      this.opts.log(`warning: rule "${pattern}"${line ? ` (line ${line})` : ''} matches no tool; check the name (${known})${hint}`);
    }
  }

  /**
   * Serves one client session on a transport (stdio, or one Streamable HTTP session). Sessions share the
   * upstreams, the catalogue, the policy and the interlock; each has its own request ids and holds.
   * @param opts.fastPath route allowed reads around the SDK (default on; off while tracing is on, so that every call gets its span). Raw answers go back through the
   *   transport's `send` under the client's own request id, which is what a Streamable HTTP transport
   *   routes a response by (to the POST that carried the request), so HTTP sessions take it as stdio does.
   * @param opts.principal who authenticated (default `stdio`, the one client): its taint memory is shared
   *   with its other sessions, 2026-07-28 ones included.
   */
  async serve(transport: Transport, opts: { fastPath?: boolean; principal?: string } = {}): Promise<Server> {
    const taint = this.taint.of(opts.principal ?? 'stdio');
    /** Ids of this client's requests in progress. */
    const busy = new Set<string | number>();
    const session: Session = {
      ready: false,
      activeIds: new Set(),
      holds: undefined as never,
      // Over HTTP, on the stream of the one call in flight (not every client opens the standalone one).
      notify: async (n) => {
        const sent = session.privacy && n.params ? { ...n, params: await session.privacy.mask(n.method, n.params) } : n;
        await server.notification(sent as never, { relatedRequestId: busy.size === 1 ? [...busy][0] : undefined });
      },
      close: () => server.close(),
      inflight: 0,
      taint,
      subscriptions: new Set(),
      ask: async (method, params, signal) => {
        const caps = server.getClientCapabilities();
        const what = method === 'sampling/createMessage' ? 'sampling' : 'elicitation';
        if (!caps?.[what]) throw new WireError(ErrorCode.MethodNotFound, `the client did not declare ${what}`);
        // Over HTTP the question must travel on the stream of the call it belongs to (not every client
        // opens the standalone one); with one request in flight, that call is known.
        const related = busy.size === 1 ? [...busy][0] : undefined;
        // The upstream's question is masked like anything else the client reads; its answer goes back as given.
        const shown = session.privacy && params ? await session.privacy.mask(method, params) : params;
        return server.request({ method, params: shown } as never, RAW_RESULT as never, {
          signal,
          timeout: this.opts.config.confirm.timeoutMs,
          relatedRequestId: related,
        });
      },
    };

    const server = this.buildServer(session, busy, taint, opts.principal ?? 'stdio');
    const detach = this.attach(session);
    await server.connect(transport);
    const sdkOnClose = transport.onclose;
    transport.onclose = () => {
      sdkOnClose?.();
      detach();
    };
    // With tracing on, every call takes the SDK path, where its span is made (gateway/tracing.ts).
    const fast =
      opts.fastPath === false || this.tracer.enabled
        ? undefined
        : new FastPath({
            catalogue: this.catalogue,
            policy: this.policy,
            audit: this.opts.audit,
            logReads: this.opts.config.audit.reads,
            dryRun: this.opts.config.dryRun,
            untrusted: this.untrusted,
            privacy: session.privacy,
            metrics: this.metrics,
            send: (m) => transport.send(m),
            busy: (id, running) => {
              if (running) {
                busy.add(id);
                session.inflight++;
              } else if (busy.delete(id)) session.inflight--;
            },
          });
    // A request id may not be reused while its request is in progress: the SDK keeps one abort handle per
    // id, so a second request with the same id would take the first one's cancellation (and its
    // withdrawal at disconnect) away from it. Such a request is refused.
    const sdkSend = transport.send.bind(transport);
    transport.send = (m, options) => {
      if (!('method' in m) && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number')) session.activeIds.delete(idKey(m.id));
      return sdkSend(m, options);
    };
    // Allowed reads skip the SDK server once the client is initialized; everything else goes through it.
    const sdkOnMessage = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
      if ('method' in m && 'id' in m) {
        const key = idKey(m.id);
        if (session.activeIds.has(key)) {
          const error = { code: -32600, message: `Invalid Request: id ${JSON.stringify(m.id)} is already used by a request in progress` };
          // To the request that reused the id, never onto the answer stream of the one in progress.
          const past = (transport as Partial<Pick<HttpFrontTransport, 'sendPastOwnCalls'>>).sendPastOwnCalls?.bind(transport) ?? sdkSend;
          void past({ jsonrpc: '2.0', id: m.id, error } as JSONRPCMessage, { relatedRequestId: m.id }).catch(() => {});
          return;
        }
        session.activeIds.add(key);
      }
      // The SDK runs oninitialized a microtask later; a call in the same chunk must already see it.
      if ('method' in m && m.method === 'notifications/initialized' && !('id' in m)) session.ready = true;
      const cancelled = 'method' in m && m.method === 'notifications/cancelled' ? (m.params as { requestId?: unknown } | undefined)?.requestId : undefined;
      if (session.ready && fast?.handle(m)) {
        if (typeof cancelled === 'string' || typeof cancelled === 'number') session.activeIds.delete(idKey(cancelled));
        return;
      }
      (sdkOnMessage as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(m, extra);
    };
    return server;
  }

  /**
   * Closes every client session, waits (at most 5 s) for gated calls to finish writing how they ended
   * (a held call is aborted: it is denied, never executed), then stops every upstream.
   */
  /**
   * Marks the gate as stopping, before anything closes its sessions: a shared question then outlives this
   * process (for a restart, or another replica), where a closing session would otherwise withdraw it.
   */
  stopping(): void {
    this.isStopping = true;
    this.stopSignal.abort();
    for (const s of this.sessions) s.holds.stop();
  }

  async close(): Promise<void> {
    this.questions.flush();
    this.stopping();
    for (const u of this.upstreams) u.shutdown();
    const sessions = [...this.sessions];
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    const drained = Promise.allSettled([...this.gatedCalls, ...this.closing, ...sessions.map((s) => s.holds.closeAll('the gate stopped'))]);
    await Promise.race([drained, new Promise((r) => setTimeout(r, 5000).unref())]);
    await Promise.all(this.upstreams.map((u) => u.close()));
    this.interlock.close();
    this.taint.close();
    await this.catalogue.pins?.close();
  }

  private buildServer(session: Session, busy: Set<string | number>, taint: TaintMemory, principal: string): Server {
    const instructions = this.upstreams
      .map((u) => u.instructions)
      .filter(Boolean)
      .join('\n\n');
    const server = new Server(this.opts.serverInfo ?? { name: 'lookfirst', version: this.opts.version }, {
      capabilities: unionCapabilities(this.upstreams),
      instructions: this.instructionsShown(instructions),
    });
    // Forward the client's log level to the upstreams instead of answering it locally.
    server.removeRequestHandler('logging/setLevel');
    const elicitation = createElicitationChannel(
      {
        clientSupportsForm: () => declaresFormElicitation(server.getClientCapabilities()?.elicitation),
        clientName: () => server.getClientVersion()?.name ?? 'client',
        elicit: (params, signal, timeoutMs) => server.request({ method: 'elicitation/create', params }, ElicitResultSchema, { signal, timeout: timeoutMs }),
      },
      this.opts.config.confirm.elicitation,
    );
    const deps = this.pipelineDeps([elicitation], () => server.getClientVersion()?.name ?? 'client', taint, principal);
    session.holds = deps.holds;
    session.privacy = deps.privacy;
    server.fallbackRequestHandler = async (request, extra): Promise<Result> => {
      busy.add(request.id);
      try {
        const params = isPlainObject(request.params) ? request.params : undefined;
        const token = isPlainObject(params?._meta) ? params._meta.progressToken : undefined;
        const progress =
          token === undefined
            ? undefined
            : (p: Record<string, unknown>) =>
                void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } } as never).catch(() => {});
        return await this.route(request.method, params, { signal: extra.signal, progress, session }, deps);
      } finally {
        // A cancelled request gets no response, so its id is released here.
        session.activeIds.delete(idKey(request.id));
        busy.delete(request.id);
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
      session.ready = true;
      this.noteElicitingClient(server.getClientVersion()?.name ?? 'client', server.getClientCapabilities()?.elicitation);
    };
    server.onerror = (err) => this.opts.log(`client connection: ${err.message}`);
    return server;
  }

  /**
   * Builds the pipeline of one client session: its confirmation broker (in-client channels first, then
   * the gate's out-of-band channels) and its own holds.
   * @param taint the principal's taint memory (`taint.of`); a fresh one unless given (a promote run).
   *   The instructions of upstreams with untrusted tools are remembered in it: the client reads them.
   * @param principal who the session authenticated as: with a shared store, that principal's (and that
   *   client's: gateway/session.ts `holdsOwner`) identical
   *   retry on another replica takes this session's holds over (gateway/hold.ts).
   */
  pipelineDeps(
    inClient: ConfirmChannel[],
    clientName: () => string,
    taint: TaintMemory = new TaintMemory(),
    principal?: string,
    sessionKey?: string,
  ): PipelineDeps {
    const store = this.opts.store;
    for (const u of this.upstreams) if (u.instructions) this.taint.relayed([taint], u, 'instructions', u.instructions);
    const confirm = this.opts.config.confirm;
    // Pending mode answers at once: no question is held open inside the client's own request.
    const broker = new ConfirmBroker(
      {
        inClient: confirm.mode === 'pending' ? [] : inClient,
        outOfBand: this.opts.outOfBand ?? [],
        pending: this.opts.pending,
      },
      undefined,
      this.stopSignal.signal,
    );
    const privacy = this.opts.privacy?.session(principal ?? 'stdio', sessionKey);
    return {
      catalogue: this.catalogue,
      policy: this.policy,
      broker,
      // The session's entries see what it hides too (a value known only by its context, or one a call sent).
      audit: privacy ? this.opts.audit.withTextFilter((t) => privacy.forLog(t)) : this.opts.audit,
      clock: this.opts.clock,
      confirmTimeoutMs: this.opts.config.confirm.timeoutMs,
      executionTimeoutMs: this.opts.config.execution.timeoutMs,
      interlock: this.interlock.forSession(),
      logReads: this.opts.config.audit.reads,
      clientName,
      progressMs: this.opts.config.confirm.progressMs,
      holdMs: confirm.mode === 'pending' ? 0 : confirm.holdMs,
      confirmMode: confirm.mode,
      user: userOf(this.opts.config, principal),
      evidence: this.evidence,
      metrics: this.metrics,
      holds: auditedHolds(
        this.opts.audit,
        this.opts.pending,
        store && isAuthenticated(principal)
          ? {
              store,
              owner: () => holdsOwner(principal, clientName()) ?? '',
              replica: this.opts.replicas?.id ?? 'local',
              pending: this.opts.pending,
            }
          : undefined,
        this.opts.clock,
        this.metrics,
      ),
      taint,
      untrusted: this.untrusted,
      dryRun: this.opts.config.dryRun,
      dryRunBudget: this.dryRunBudget,
      privacy,
      redact: this.opts.redact,
      receiptsDir: this.opts.config.audit.receiptsDir,
    };
  }

  /** How many calls wait for a person now, over every session of this gate (the `held_calls` gauge). */
  heldNow(): number {
    let n = 0;
    for (const s of this.sessions) n += s.holds?.waiting ?? 0;
    return n;
  }

  /** A message for every client at once (no one session's placeholders fit all): private values as labels alone. */
  shownToAll<T>(value: T): T {
    return this.opts.privacy ? this.opts.privacy.forAll(value) : value;
  }

  /** The upstreams' instructions as a client reads them: each private value as its label alone (no session yet). */
  instructionsShown(text: string): string | undefined {
    if (!text) return undefined;
    return this.opts.privacy ? this.opts.privacy.forLog(text) : text;
  }

  /**
   * Keeps a session known to the gate: it receives upstream notifications and is closed (its holds
   * withdrawn) at shutdown.
   * @returns a function that forgets it and withdraws its holds.
   */
  attach(session: Session): () => void {
    this.sessions.add(session);
    if (this.isStopping) session.holds.stop();
    return () => {
      if (!this.sessions.delete(session)) return;
      const closing = session.holds.closeAll('the client disconnected');
      this.closing.add(closing);
      void closing.finally(() => this.closing.delete(closing));
    };
  }

  /**
   * Routes one client request to the pipeline (tools) or to the upstreams (everything else).
   * @throws WireError (JSON-RPC error) for unknown tools and methods, and upstream errors.
   */
  async route(method: string, params: Record<string, unknown> | undefined, ctx: RouteContext, deps: PipelineDeps): Promise<Result> {
    const privacy = deps.privacy;
    if (!privacy) return this.routeClear(method, params, ctx, deps);
    const resolveAll = this.upstreams.every((u) => (u.config.resolve ?? 'always') === 'always');
    return routeMasked(privacy, method, params, ctx, resolveAll, (m, p, c) => this.routeClear(m, p, c, deps));
  }

  private async routeClear(method: string, params: Record<string, unknown> | undefined, ctx: RouteContext, deps: PipelineDeps): Promise<Result> {
    const { signal, progress } = ctx;
    if (ctx.session) ctx.session.inflight++;
    try {
      if (method === 'tools/call') {
        const span = this.tracer.startCall(ctx.meta ?? params?._meta, params?.name);
        const confirming = deps.confirmMode === 'pending' && params?.name === CONFIRM_TOOL;
        const call: Promise<{ result: Result; outcome: Outcome; upstream?: string }> = confirming
          ? confirmPending(deps, params ?? {}, { signal, progress, span }, this.opts.pending)
          : handleToolCall(deps, params ?? {}, { signal, progress, mrtr: ctx.mrtr, span });
        this.gatedCalls.add(call);
        try {
          const { result, outcome, upstream } = await call.finally(() => this.gatedCalls.delete(call));
          const v = verdictOfOutcome(outcome);
          if (v) this.opts.pending.recordOutcome(v.call_id, v.outcome, v.readback);
          const ended = callOutcomeOf(outcome);
          this.metrics.callEnded(ended, upstream);
          span?.end(ended, upstream);
          return result;
        } catch (err) {
          this.metrics.callEnded('error', this.catalogue.get(String(params?.name))?.upstream.name);
          span?.end('error');
          throw err;
        }
      }
      if (method === 'tools/list') {
        await this.catalogue.refreshAll();
        const tools = this.catalogue.all();
        this.taint.relayedTools(deps.taint, tools);
        const listed = tools.map((t) => t.definition);
        // Pending mode: the gate's own tool that runs a confirmed call (it shadows an upstream tool of the same name).
        return { tools: deps.confirmMode === 'pending' ? [...listed.filter((t) => t.name !== CONFIRM_TOOL), confirmToolDefinition()] : listed };
      }
      // Whatever an upstream with untrusted tools answers (or reports as progress, or fails with) is
      // remembered before the client sees it: resources, prompts, completions (gateway/forward.ts).
      const result = await this.forwarder.forward(method, params, { signal, onprogress: progress }, (u, payload) =>
        this.taint.relayed([deps.taint], u, method, payload),
      );
      trackSubscription(ctx.session, method, params);
      // A resource an untrusted tool linked to is the untrusted source too (gateway/tool-result.ts).
      if (method === 'resources/read') rememberResource(deps, params?.uri, result);
      return result;
    } catch (err) {
      throw toWireError(err);
    } finally {
      if (ctx.session) ctx.session.inflight--;
    }
  }

  private async onUpstreamNotification(upstream: Upstream, n: Notification): Promise<void> {
    if (n.method === 'notifications/tools/list_changed') {
      this.catalogue.markChanged(upstream);
      await this.catalogue.refresh(upstream);
    }
    // Not every session: one principal must not see what another's calls caused (gateway/notify-scope.ts).
    const ready = recipientsOf(
      n,
      [...this.sessions].filter((s) => s.ready),
    );
    // Remembered before it is relayed, in the memory of every principal it reaches.
    this.taint.relayed(this.taint.memoriesOf(ready), upstream, n.method, n.params);
    for (const session of ready) {
      try {
        await session.notify(n);
      } catch (err) {
        this.opts.log(`upstream ${upstream.name}: notification ${n.method} not relayed (${(err as Error).message})`);
      }
    }
  }
}

/** How a call ended, as the metrics and the trace name it (gateway/metrics.ts `CallOutcome`). */
function callOutcomeOf(o: Outcome): CallOutcome {
  switch (o.kind) {
    case 'forwarded':
      return o.result.isError === true ? 'read_failed' : 'read';
    case 'asked':
      return 'asked';
    default:
      return o.verdict.outcome;
  }
}
