/**
 * The gate's face toward 2026-07-28 clients (stateless protocol: `server/discover`, no handshake, the
 * client's identity and capabilities in each request's `_meta` envelope). The official SDK's v2 server
 * serves the protocol: `serveStdio` on stdio, `createMcpHandler` over HTTP, each with a fresh low-level
 * `Server` from `factory()`; every request it does not answer itself goes to the same pipeline as a 2025
 * request (gateway.route). 2025 clients keep the v1 path (docs/decisions/0005).
 *
 * Sessions: the protocol has none, but holds, retries and request states need one. On stdio the
 * connection is the session. Over HTTP it is the principal (the bearer token, or "anyone on loopback")
 * together with the client name the request claims; two clients with different names never share holds.
A principal holds at most 64 such sessions (256 in all); making room closes only its own least recently
used one without a question open, so made-up names cannot push out, or lock out, another principal.
 * Taint memory is the principal's, never a claimed name's: every session of a principal shares one, and
 * so do its 2025 sessions (gateway/taint-principals.ts), so a client that claims a new name, or switches
 * protocol generation, keeps what it read from untrusted sources. A claimed
 * identity (name, version) that changes for a principal is logged (`client_identity_changed`) and warned
 * about.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Notification, Result } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, type McpServerFactory, ProtocolError, Server } from '@modelcontextprotocol/server';
import type { AuditLog } from '../audit/writer.js';
import { type Clock, systemClock } from '../clock.js';
import { oneLine } from '../confirm/visible.js';
import { type Store, StoreError } from '../store/store.js';
import { unionCapabilities } from './forward.js';
import type { Gateway, Session } from './gateway.js';
import type { PipelineDeps } from './pipeline/context.js';
import { isPlainObject } from './raw.js';
import { RequestStates } from './request-state.js';
import type { TaintMemory } from './taint.js';
import { toWireError } from './wire-error.js';

/** Most 2026-07-28 HTTP sessions (principal × client name) kept at once, all principals together. */
const MAX_SESSIONS = 256;
/**
 * Most 2026-07-28 sessions of one principal (each claimed client name is one, and each may hold questions
 * open): past it the principal's own least recently used session without a question open is closed.
 */
const MAX_SESSIONS_PER_PRINCIPAL = 64;
/** A 2026-07-28 HTTP session with no request for this long is closed, in ms. */
const SESSION_IDLE_MS = 30 * 60_000;

/** Most `client_identity_changed` entries written for one principal; past it, one more says so. */
const MAX_IDENTITY_CHANGES_LOGGED = 100;

/** What belongs to a principal whatever name it claims: its taint memory and the identity it last claimed. */
interface Principal {
  taint: TaintMemory;
  client?: { name: string; version: string };
  changesLogged: number;
}

/** One 2026-07-28 session: the gate's session plus the identity it was first seen with. */
interface ModernSession {
  key: string;
  /** The principal at the transport level (never the claimed name): whose cap it counts against. */
  principal: string;
  /** Requests of this session being handled: it is not closed to make room while one is. */
  busy: number;
  session: Session;
  deps: PipelineDeps;
  detach: () => void;
  client?: { name: string; version: string };
  lastSeenMs: number;
}

/** What the front needs besides the gateway. */
export interface ModernFrontOptions {
  gateway: Gateway;
  audit: AuditLog;
  /** `confirm.elicitation`. */
  elicitation: boolean;
  /** `confirm.timeout_seconds` in ms: the longest life of a request state. */
  confirmTimeoutMs: number;
  log: (line: string) => void;
  version: string;
  /** Where request states' key and nonces, and the session salt, are shared with other replicas. */
  store?: Store;
  clock?: Clock;
}

/** Serves 2026-07-28 clients through the gate. */
export class ModernFront {
  private readonly states: RequestStates;
  private readonly sessions = new Map<string, ModernSession>();
  /** Per principal (stdio, the bearer token's digest, or anyone on loopback): kept while the gate runs. */
  private readonly principals = new Map<string, Principal>();
  /** Hides tokens in session keys (the key travels, signed but readable, in request states). */
  private salt = randomBytes(16);
  private readonly clock: Clock;

  constructor(private readonly opts: ModernFrontOptions) {
    this.clock = opts.clock ?? systemClock;
    this.states = new RequestStates(opts.confirmTimeoutMs, { store: opts.store, clock: this.clock });
  }

  /**
   * Loads what replicas must agree on: the request-state key, and the salt of session keys (a state
   * minted on one replica names a session another replica must recognise).
   * @throws StoreError when the store cannot be read or written.
   */
  async ready(): Promise<void> {
    await this.states.ready();
    const store = this.opts.store;
    if (!store) return;
    await store.putIfAbsent('secret', 'session-salt', randomBytes(16).toString('base64'));
    const rec = await store.get<unknown>('secret', 'session-salt');
    const salt = typeof rec?.value === 'string' ? Buffer.from(rec.value, 'base64') : undefined;
    if (!salt || salt.length < 16)
      throw new StoreError('STORE_CORRUPT', "the store's secret/session-salt is not 16 bytes of base64: delete that record and restart the gates");
    this.salt = salt;
  }

  /**
   * A server factory for the SDK's serving entries.
   * @param principal who is calling at the transport level: `stdio`, or the principal the HTTP endpoint
   *   authenticated (the same name its 2025 sessions have: they share the taint memory).
   * @param hooks.settled called when a request's handler has ended (answered or cancelled).
   */
  factory(principal: (ctx: Parameters<McpServerFactory>[0]) => string, hooks: { settled?: (id: string | number) => void } = {}): McpServerFactory {
    return (ctx) => {
      const instructions = this.opts.gateway.upstreams
        .map((u) => u.instructions)
        .filter(Boolean)
        .join('\n\n');
      const server = new Server(
        { name: 'lookfirst', version: this.opts.version },
        { capabilities: unionCapabilities(this.opts.gateway.upstreams) as never, instructions: this.opts.gateway.instructionsShown(instructions) },
      );
      const who = principal(ctx);
      server.fallbackRequestHandler = async (request, rctx): Promise<Result> => {
        const envelope = (rctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
        const session = this.sessionFor(who, envelope, server);
        const params = isPlainObject(request.params) ? request.params : undefined;
        const meta = rctx.mcpReq._meta as Record<string, unknown> | undefined;
        const token = meta?.progressToken;
        const progress =
          token === undefined
            ? undefined
            : (p: Record<string, unknown>) =>
                void rctx.mcpReq.notify({ method: 'notifications/progress', params: { ...p, progressToken: token } } as never).catch(() => {});
        const caps = envelope[CLIENT_CAPABILITIES_META_KEY];
        const elicitation = isPlainObject(caps) && isPlainObject(caps.elicitation) ? caps.elicitation : undefined;
        this.opts.gateway.noteElicitingClient(session.client?.name ?? 'client', elicitation);
        session.busy++;
        try {
          return await this.opts.gateway.route(
            request.method,
            params,
            {
              signal: rctx.mcpReq.signal,
              progress,
              session: session.session,
              // Its trace context (`traceparent`, `tracestate`) for the call's span, when tracing is on.
              meta,
              mrtr: {
                session: session.key,
                // Form mode is declared as `elicitation.form` (a bare `elicitation: {}` also means form).
                canElicit: elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined),
                enabled: this.opts.elicitation,
                inputResponses: rctx.mcpReq.inputResponses,
                requestState: rctx.mcpReq.requestState(),
                states: this.states,
              },
            },
            session.deps,
          );
        } catch (err) {
          const wire = toWireError(err) as { code: number; message: string; data?: unknown };
          throw new ProtocolError(wire.code, wire.message, wire.data);
        } finally {
          session.busy--;
          // A cancelled request gets no response: its id is free again only once its handler has ended.
          hooks.settled?.(request.id);
        }
      };
      server.fallbackNotificationHandler = async (n) => {
        if (n.method !== 'notifications/roots/list_changed') this.opts.log(`dropped a client notification "${n.method.slice(0, 60)}"`);
        else await Promise.all(this.opts.gateway.upstreams.map((u) => u.notify(n as never)));
      };
      server.onerror = (err) => this.opts.log(`client connection (2026-07-28): ${err.message}`);
      return server;
    };
  }

  /** Digest of a bearer token (or any principal string), never the token itself. */
  principalOf(secret: string): string {
    return createHash('sha256').update(this.salt).update(secret).digest('base64url').slice(0, 22);
  }

  /**
   * Relays upstream change notifications to 2026 HTTP clients once per notification (their subscription
   * streams share one bus, so per-session relaying would repeat them).
   * @returns a function that stops relaying.
   */
  relayTo(publish: (n: Notification) => void): () => void {
    const deps = this.opts.gateway.pipelineDeps([], () => 'client');
    return this.opts.gateway.attach({
      ready: true,
      activeIds: new Set(),
      holds: deps.holds,
      notify: async (n) => publish(this.opts.gateway.shownToAll(n)),
      close: async () => {},
      inflight: 0,
    });
  }

  /** Closes every 2026 session (withdrawing its holds). */
  closeAll(): void {
    for (const s of this.sessions.values()) s.detach();
    this.sessions.clear();
  }

  private sessionFor(principal: string, envelope: Record<string, unknown>, server: Server): ModernSession {
    const info = envelope[CLIENT_INFO_META_KEY];
    const client = isPlainObject(info)
      ? { name: oneLine(String(info.name ?? 'client')).slice(0, 100), version: oneLine(String(info.version ?? '')).slice(0, 40) }
      : undefined;
    const owner = this.principalFor(principal, client);
    // On stdio the connection is the session; over HTTP the claimed name is part of it (holds), but not
    // of the taint memory, which is the principal's.
    const key =
      principal === 'stdio'
        ? 'stdio'
        : `${this.principalOf(principal)}:${createHash('sha256')
            .update(client?.name ?? '')
            .digest('base64url')
            .slice(0, 16)}`;
    let s = this.sessions.get(key);
    if (!s) {
      this.makeRoom(principal);
      const created: ModernSession = {
        key,
        principal,
        busy: 0,
        client,
        lastSeenMs: this.clock.nowMs(),
        session: undefined as never,
        deps: undefined as never,
        detach: () => {},
      };
      // Holds are shared by the principal and the client's claimed name (gateway/session.ts holdsOwner).
      // Placeholders are the session's: over HTTP its key, the same on every replica (privacy/vault.ts).
      created.deps = this.opts.gateway.pipelineDeps(
        [],
        () => created.client?.name ?? 'client',
        owner.taint,
        principal,
        principal === 'stdio' ? undefined : key,
      );
      created.session = {
        ready: true,
        activeIds: new Set(),
        holds: created.deps.holds,
        // Over HTTP, relayTo() sends change notifications once for all sessions.
        notify: async (n) => (principal === 'stdio' ? relayStdio(n, server) : undefined),
        close: async () => {},
        inflight: 0,
        taint: owner.taint,
      };
      created.detach = this.opts.gateway.attach(created.session);
      this.sessions.set(key, created);
      s = created;
    } else if (client) s.client = client;
    s.lastSeenMs = this.clock.nowMs();
    this.sessions.delete(key);
    this.sessions.set(key, s);
    return s;
  }

  /**
   * The principal's state, created on first sight; a claimed identity other than the one it claimed last
   * is logged (at most {@link MAX_IDENTITY_CHANGES_LOGGED} times per principal, then once more to say so).
   */
  private principalFor(principal: string, client: { name: string; version: string } | undefined): Principal {
    let p = this.principals.get(principal);
    if (!p) {
      p = { taint: this.opts.gateway.taint.of(principal), changesLogged: 0 };
      this.principals.set(principal, p);
    }
    if (client && p.client && (client.name !== p.client.name || client.version !== p.client.version)) {
      const from = `${p.client.name} ${p.client.version}`.trim();
      const to = `${client.name} ${client.version}`.trim();
      if (p.changesLogged < MAX_IDENTITY_CHANGES_LOGGED) {
        this.opts.log(
          `warning: the client of a 2026-07-28 session now claims to be "${to}" (was "${from}"); approvals show the new name, and it keeps the taint memory of the same principal`,
        );
        this.opts.audit.appendLater({ event: 'client_identity_changed', from, to });
      } else if (p.changesLogged === MAX_IDENTITY_CHANGES_LOGGED) {
        this.opts.log(
          `warning: a 2026-07-28 principal changed its claimed client identity ${MAX_IDENTITY_CHANGES_LOGGED} times; further changes are not logged`,
        );
        this.opts.audit.appendLater({ event: 'client_identity_changed', from, to, further_changes_not_logged: true });
      }
      p.changesLogged++;
    }
    if (client) p.client = client;
    return p;
  }

  /**
   * Closes sessions idle too long (anyone's) and, when `principal` is at its own cap or the gate at its
   * global one, the principal's own least recently used session: never another principal's. A session
   * with a question open (or a request being handled, which may open one) is never closed to make room:
   * that would withdraw a person's pending decision.
   * @throws ProtocolError when every session of the principal has a question open at its cap, or the gate
   *   is at its global cap and the principal has no session to give up.
   */
  private makeRoom(principal: string): void {
    const cutoff = this.clock.nowMs() - SESSION_IDLE_MS;
    // The Map is in order of last use: the idle ones come first.
    for (const [key, s] of this.sessions) {
      if (s.lastSeenMs >= cutoff) break;
      if (s.session.holds.count > 0 || s.busy > 0) continue;
      s.detach();
      this.sessions.delete(key);
    }
    const mine = [...this.sessions.values()].filter((s) => s.principal === principal);
    const overMine = mine.length >= MAX_SESSIONS_PER_PRINCIPAL;
    if (overMine || this.sessions.size >= MAX_SESSIONS) {
      const victim = mine.find((s) => s.session.holds.count === 0 && s.busy === 0);
      if (victim) {
        victim.detach();
        this.sessions.delete(victim.key);
      } else if (overMine)
        throw new ProtocolError(
          -32000,
          `these credentials already hold ${MAX_SESSIONS_PER_PRINCIPAL} 2026-07-28 client sessions (one per client name), each with a question open or a request in progress: reuse a client name, or wait until some are decided`,
        );
    }
    if (this.sessions.size >= MAX_SESSIONS)
      throw new ProtocolError(
        -32000,
        `too many 2026-07-28 client sessions (${MAX_SESSIONS}) with questions open, none of them yours to close; try again when some are decided`,
      );
  }
}

/** Change notifications to a 2026 client on stdio (its `subscriptions/listen` stream). */
async function relayStdio(n: Notification, server: Server): Promise<void> {
  if (n.method === 'notifications/tools/list_changed') await server.sendToolListChanged();
  else if (n.method === 'notifications/prompts/list_changed') await server.sendPromptListChanged();
  else if (n.method === 'notifications/resources/list_changed') await server.sendResourceListChanged();
  else if (n.method === 'notifications/resources/updated') await server.sendResourceUpdated(n.params as never);
}
