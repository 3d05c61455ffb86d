/**
 * Pass-through for everything besides tools: resources, resource templates, prompts, completions and
 * logging. With one upstream, requests and results go through raw, except list cursors. List results are
 * concatenated upstream by upstream behind a cursor of the gate's own ({upstream index, upstream cursor,
 * short hashes of the upstream's cursors seen so far in this walk}); a cursor the upstream gave before
 * in the same walk (a cycle) ends that upstream's pages at once, so a client that follows nextCursor
 * always comes to an end. With several upstreams, prompt names get the `<upstream>__` prefix, and
 * resource URIs are routed to the upstream that listed them (else to each upstream in turn until one has
 * the URI).
 */
import { createHash } from 'node:crypto';
import type { Result, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { MAX_PAGES } from './catalogue.js';
import { isPlainObject } from './raw.js';
import type { ForwardOptions, Upstream } from './upstream.js';
import { ErrorCode, WireError } from './wire-error.js';

type Capability = 'resources' | 'prompts' | 'completions' | 'logging';

/** Sees what an upstream sends back (its answer, its progress, its error as `{ error }`). */
export type Seen = (upstream: Upstream, payload: unknown) => void;
type Opts = ForwardOptions & { seen?: Seen };

/** One request to one upstream; what comes back is shown to `seen` first. */
async function ask(u: Upstream, method: string, params: Record<string, unknown> | undefined, opts: Opts): Promise<Result> {
  const { seen, ...rest } = opts;
  if (!seen) return u.request(method, params, rest);
  const relay = rest.onprogress;
  const onprogress = relay
    ? (p: Record<string, unknown>) => {
        seen(u, p);
        relay(p);
      }
    : undefined;
  try {
    const result = await u.request(method, params, { ...rest, onprogress });
    seen(u, result);
    return result;
  } catch (err) {
    const e = err as { message?: unknown; data?: unknown };
    seen(u, { error: { message: e?.message, data: e?.data } });
    throw err;
  }
}

/** Routes non-tool requests to upstreams. */
export class Forwarder {
  private readonly uriOwner = new Map<string, Upstream>();
  private readonly promptOwner = new Map<string, { upstream: Upstream; name: string }>();

  constructor(
    private readonly upstreams: readonly Upstream[],
    /** Operator messages (a cursor cycle that was cut). */
    private readonly warn: (message: string) => void = () => {},
  ) {}

  private get single(): Upstream | undefined {
    return this.upstreams.length === 1 ? this.upstreams[0] : undefined;
  }

  private having(cap: Capability): Upstream[] {
    return this.upstreams.filter((u) => u.capabilities?.[cap] !== undefined);
  }

  /**
   * Forwards one request.
   * @param seen called with each upstream's answer, progress message or error before the client gets it
   *   (taint: gateway/taint-principals.ts).
   * @throws WireError MethodNotFound for methods the gate does not forward (allow-list), or the upstream's error.
   */
  async forward(method: string, params: Record<string, unknown> | undefined, opts: ForwardOptions, seen?: Seen): Promise<Result> {
    return this.route(method, params, seen ? { ...opts, seen } : opts);
  }

  private async route(method: string, params: Record<string, unknown> | undefined, opts: Opts): Promise<Result> {
    switch (method) {
      case 'resources/list':
        return this.list(method, 'resources', 'resources', params, opts);
      case 'resources/templates/list':
        return this.list(method, 'resources', 'resourceTemplates', params, opts);
      case 'prompts/list':
        return this.list(method, 'prompts', 'prompts', params, opts);
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return this.byUri(method, params, opts);
      case 'prompts/get':
        return this.byPrompt(method, params, opts);
      case 'completion/complete':
        return this.complete(params, opts);
      case 'logging/setLevel':
        await Promise.all(this.having('logging').map((u) => ask(u, method, params, opts)));
        return {};
      default:
        throw new WireError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
  }

  private async list(method: string, cap: Capability, key: string, params: Record<string, unknown> | undefined, opts: Opts): Promise<Result> {
    const one = this.single;
    const sources = one ? [one] : this.having(cap);
    const { u, c, s } = decodeCursor(params?.cursor, sources.length);
    const upstream = sources[u];
    if (!upstream) return { [key]: [] };
    const { cursor: _cursor, ...others } = params ?? {};
    const sent = c === undefined ? (one && Object.keys(others).length > 0 ? others : undefined) : { ...(one ? others : {}), cursor: c };
    const result = await ask(upstream, method, sent, opts);
    let items = Array.isArray(result[key]) ? (result[key] as unknown[]) : [];
    if (key === 'resources') this.remember(upstream, items);
    if (key === 'prompts' && !one) {
      items = items.map((p) => {
        if (!isPlainObject(p) || typeof p.name !== 'string') return p;
        const exposed = `${upstream.name}__${p.name}`;
        this.promptOwner.set(exposed, { upstream, name: p.name });
        return { ...p, name: exposed };
      });
    }
    let next: string | undefined;
    if (typeof result.nextCursor === 'string') {
      const h = cursorHash(result.nextCursor);
      if (s.includes(h)) this.warn(`upstream ${upstream.name}: ${method} gave a cursor it had given before; its list ends there`);
      else if (s.length >= MAX_PAGES) this.warn(`upstream ${upstream.name}: ${method} has more than ${MAX_PAGES} pages; its list ends there`);
      else next = encodeCursor(u, result.nextCursor, [...s, h]);
    }
    if (next === undefined && u + 1 < sources.length) next = encodeCursor(u + 1);
    const { nextCursor: _drop, ...rest } = result;
    return next === undefined ? { ...rest, [key]: items } : { ...rest, [key]: items, nextCursor: next };
  }

  private remember(upstream: Upstream, items: unknown): void {
    if (!Array.isArray(items)) return;
    for (const r of items) if (isPlainObject(r) && typeof r.uri === 'string') this.uriOwner.set(r.uri, upstream);
  }

  private async byUri(method: string, params: Record<string, unknown> | undefined, opts: Opts): Promise<Result> {
    const one = this.single;
    if (one) return ask(one, method, params, opts);
    const uri = typeof params?.uri === 'string' ? params.uri : undefined;
    if (uri === undefined) throw new WireError(ErrorCode.InvalidParams, `${method} needs a string "uri"`);
    const owner = this.uriOwner.get(uri);
    if (owner) return ask(owner, method, params, opts);
    let last: unknown = new WireError(-32002, `Resource not found: ${uri}`);
    for (const u of this.having('resources')) {
      try {
        const result = await ask(u, method, params, opts);
        this.uriOwner.set(uri, u);
        return result;
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  private async byPrompt(method: string, params: Record<string, unknown> | undefined, opts: Opts): Promise<Result> {
    const one = this.single;
    if (one) return ask(one, method, params, opts);
    const name = typeof params?.name === 'string' ? params.name : '';
    const route = this.promptOwner.get(name) ?? this.splitPrompt(name);
    if (!route) throw new WireError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    return ask(route.upstream, method, { ...params, name: route.name }, opts);
  }

  /** Before the client has listed prompts, map a prefixed name by the known upstream names (longest first). */
  private splitPrompt(name: string): { upstream: Upstream; name: string } | undefined {
    const byLength = [...this.upstreams].sort((a, b) => b.name.length - a.name.length);
    const upstream = byLength.find((u) => name.startsWith(`${u.name}__`));
    return upstream ? { upstream, name: name.slice(upstream.name.length + 2) } : undefined;
  }

  private async complete(params: Record<string, unknown> | undefined, opts: Opts): Promise<Result> {
    const one = this.single;
    if (one) return ask(one, 'completion/complete', params, opts);
    const ref = isPlainObject(params?.ref) ? params.ref : {};
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
      const route = this.promptOwner.get(ref.name) ?? this.splitPrompt(ref.name);
      if (!route) throw new WireError(ErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`);
      return ask(route.upstream, 'completion/complete', { ...params, ref: { ...ref, name: route.name } }, opts);
    }
    const uri = typeof ref.uri === 'string' ? ref.uri : '';
    const owner = this.uriOwner.get(uri) ?? this.having('completions')[0];
    if (!owner) return { completion: { values: [] } };
    return ask(owner, 'completion/complete', params, opts);
  }
}

/** Capabilities the gate offers the client: the union of its upstreams', tools always (tasks never). */
export function unionCapabilities(upstreams: readonly Upstream[]): ServerCapabilities {
  const caps: ServerCapabilities = { tools: { listChanged: true } };
  for (const u of upstreams) {
    const c = u.capabilities;
    if (!c) continue;
    if (c.resources)
      caps.resources = {
        subscribe: caps.resources?.subscribe || c.resources.subscribe || undefined,
        listChanged: caps.resources?.listChanged || c.resources.listChanged || undefined,
      };
    if (c.prompts) caps.prompts = { listChanged: caps.prompts?.listChanged || c.prompts.listChanged || undefined };
    if (c.completions) caps.completions = {};
    if (c.logging) caps.logging = {};
  }
  return JSON.parse(JSON.stringify(caps)) as ServerCapabilities;
}

/** Short hash of an upstream cursor (64 bits, base64url): what the gate's cursor keeps of those seen. */
function cursorHash(cursor: string): string {
  return createHash('sha256').update(cursor, 'utf8').digest().subarray(0, 8).toString('base64url');
}

function encodeCursor(u: number, c?: string, s: string[] = []): string {
  return Buffer.from(JSON.stringify(c === undefined ? { u } : { u, c, s }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: unknown, count: number): { u: number; c?: string; s: string[] } {
  if (cursor === undefined) return { u: 0, s: [] };
  try {
    const v = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8')) as { u?: unknown; c?: unknown; s?: unknown };
    const s = v.s === undefined ? [] : v.s;
    const hashes = Array.isArray(s) && s.length <= MAX_PAGES && s.every((h) => typeof h === 'string' && /^[A-Za-z0-9_-]{11}$/.test(h));
    if (typeof v.u === 'number' && Number.isInteger(v.u) && v.u >= 0 && v.u < count && (v.c === undefined || typeof v.c === 'string') && hashes) {
      return v.c === undefined ? { u: v.u, s: [] } : { u: v.u, c: v.c, s: s as string[] };
    }
  } catch {
    // fall through to the error below
  }
  throw new WireError(ErrorCode.InvalidParams, 'Invalid cursor');
}
