/**
 * Pinned tool definitions (against a "rug pull": a tool that changes what it says or does after it was
 * trusted). On first sight of an upstream, the gate pins a SHA-256 of each tool's definition (name,
 * title, description, input and output schemas, annotations; RFC 8785 canonical JSON). A tool whose
 * definition differs from its pin, or a tool that appears after the upstream was first pinned, is held
 * whatever the rules say until a person accepts the new definition (gateway/definitions.ts).
 *
 * Pins live in the store (src/store), so every gate replica on one store holds the same pins and a
 * restart is no escape: kind `pin`, key `<upstream>/<tool, URI-encoded>` (a NUL separator cannot be stored
 * by PostgreSQL; upstream names hold no `/`), value `{ sha, definition }`; and kind
 * `pin-upstream`, key `<upstream>`: the upstream's first listing is pinned. Reads are synchronous, from a
 * cache kept fresh by the store's change notifications (a pin accepted on one replica reaches the others);
 * `sync()` re-reads it all. The older pins file (`<log>.pins.json`) is read at start and imported once for
 * each upstream the store has no pins for; it is never deleted, and it is still written while the store is
 * an in-memory one (which keeps nothing across a restart).
 *
 * The first successful listing pins, even an empty one: an upstream that lists nothing at first (still
 * starting, or waiting to be trusted) gets no "first sight" later. When two replicas see an upstream first
 * at once, the first pin of each tool wins and the other replica reports its own listing's differences.
 * Every further change seen within one process is reported, not only the first: `observe` reports a tool
 * each time its definition differs from both its pin and the definition seen before (A→B, then B→C, are
 * two reports).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { canonicalJson, sha256Hex } from '../audit/canonical.js';
import { LookfirstError } from '../errors.js';
import { createMemoryStore } from '../store/memory/memory.js';
import type { Store } from '../store/store.js';
import { StoreFeed } from './store-feed.js';

/** The parts of a tool definition that are pinned. */
export function pinnedPart(definition: Record<string, unknown>): Record<string, unknown> {
  const { name, title, description, inputSchema, outputSchema, annotations } = definition;
  return JSON.parse(JSON.stringify({ name, title, description, inputSchema, outputSchema, annotations })) as Record<string, unknown>;
}

/** SHA-256 (hex) of a definition's pinned part. */
export function definitionSha(definition: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(pinnedPart(definition)));
}

/** One tool's pin, as stored. */
export interface Pin {
  sha: string;
  /** The pinned part, kept to show a person what changed. */
  definition: Record<string, unknown>;
}

/** A tool's standing against its pin. */
export type PinStatus = { kind: 'pinned' } | { kind: 'changed'; previous: Record<string, unknown> } | { kind: 'new' };

/** Store kind of one tool's pin (key `<upstream>/<tool, URI-encoded>`, value {@link Pin}). */
export const PIN_KIND = 'pin';
/** Store kind of "this upstream's first listing is pinned" (key: the upstream's name). */
export const PINNED_UPSTREAM_KIND = 'pin-upstream';

/** Options of {@link ToolPins}. */
export interface ToolPinsOptions {
  /** Where pins live; default a fresh in-memory store, with the pins file written as today. */
  store?: Store;
}

/** The pins of one gate, by upstream and the upstream's tool name; shared by the replicas on one store. */
export class ToolPins {
  /** The cache the synchronous reads answer from. */
  private readonly pins = new Map<string, Map<string, Pin>>();
  /** Upstreams whose first listing is pinned. */
  private readonly marked = new Set<string>();
  /** Per upstream and tool: the SHA-256 of the definition seen last in this process (not persisted). */
  private readonly seen = new Map<string, string>();
  /** What the pins file held at construction (imported once per upstream the store has no pins for). */
  private readonly filed: Record<string, Record<string, Pin>>;
  private readonly store: Store;
  /** True while the store keeps nothing across a restart: the pins file is then written as well. */
  private readonly writesFile: boolean;
  /** The store was passed in: other processes (or instances) may change it, so its changes are followed. */
  private readonly shared: boolean;
  private readonly pinFeed: StoreFeed<Pin>;
  private readonly markFeed: StoreFeed<unknown>;
  private started: Promise<void> | undefined;

  /**
   * @param path the older pins file; read now (imported into the store by `ready`).
   * @param opts `store`: where pins live (default a fresh in-memory store).
   * @throws LookfirstError PINS when the file exists but cannot be read or is not a pins file (fail closed:
   *   the gate does not start on pins it cannot trust).
   */
  constructor(
    readonly path: string,
    opts: ToolPinsOptions = {},
  ) {
    this.shared = opts.store !== undefined;
    this.store = opts.store ?? createMemoryStore();
    this.writesFile = this.store.kind === 'memory';
    this.filed = readPinsFile(path);
    this.pinFeed = new StoreFeed<Pin>(this.store, PIN_KIND, {
      accept: (key) => key.includes('/'),
      apply: (key, pin) => this.applyPin(key, pin),
    });
    this.markFeed = new StoreFeed<unknown>(this.store, PINNED_UPSTREAM_KIND, {
      apply: (upstream, v) => (v === undefined ? this.marked.delete(upstream) : this.marked.add(upstream)),
    });
    // Until `ready`, the reads answer from the file (as before the store): the same view for the default store.
    for (const [upstream, tools] of Object.entries(this.filed)) {
      this.markFeed.set(upstream, true);
      for (const [tool, pin] of Object.entries(tools)) this.pinFeed.set(pinKey(upstream, tool), pin);
    }
  }

  /**
   * Loads the store's pins, imports the pins file for each upstream the store has none for, and follows
   * other replicas' changes. Idempotent; `observe` and `accept` await it. Call it before serving.
   * @throws StoreError when the store cannot be read or written (a later call retries).
   */
  ready(): Promise<void> {
    this.started ??= this.start().catch((err: unknown) => {
      this.started = undefined;
      throw err;
    });
    return this.started;
  }

  private async start(): Promise<void> {
    if (this.shared) {
      this.pinFeed.follow();
      this.markFeed.follow();
    }
    // The import comes first, so the reads never pass through a moment without the file's pins.
    const inStore = new Set((await this.store.list(PINNED_UPSTREAM_KIND)).map((r) => r.key));
    for (const r of await this.store.list(PIN_KIND)) inStore.add(r.key.slice(0, r.key.indexOf('/')));
    for (const [upstream, tools] of Object.entries(this.filed)) {
      if (inStore.has(upstream)) continue;
      for (const [tool, pin] of Object.entries(tools)) await this.pinFirst(upstream, tool, pin);
      await this.markPinned(upstream);
    }
    await this.sync();
  }

  /** Re-reads every pin from the store (a fresh view before a decision that matters). @throws StoreError */
  async sync(): Promise<void> {
    await this.pinFeed.loadAll();
    await this.markFeed.loadAll();
  }

  /** Stops following the store's changes (a store this object opened itself is closed). */
  async close(): Promise<void> {
    this.pinFeed.close();
    this.markFeed.close();
    if (!this.shared) await this.store.close();
  }

  /**
   * Records what an upstream lists now (a successful listing, possibly empty). The first time an upstream
   * is seen, every tool is pinned, and an empty listing pins "no tools".
   * @returns the tools whose definition differs from their pin, and the tools that are new, each only when
   *   its definition differs from the one this process saw before (every distinct change is reported once).
   * @throws StoreError when a first sight cannot be pinned in the store (its tools must then not be offered).
   */
  async observe(upstream: string, tools: readonly Record<string, unknown>[]): Promise<{ changed: string[]; added: string[] }> {
    await this.ready();
    if (!this.marked.has(upstream)) {
      // First sight here. Another replica may pin the same upstream at the same moment: the first pin of
      // each tool wins, and the comparison below reports where this listing differs from it.
      for (const t of tools) await this.pinFirst(upstream, String(t.name), { sha: definitionSha(t), definition: pinnedPart(t) });
      await this.markPinned(upstream);
      this.saveFile();
    }
    const known = this.pins.get(upstream);
    const changed: string[] = [];
    const added: string[] = [];
    for (const t of tools) {
      const name = String(t.name);
      const sha = definitionSha(t);
      const key = pinKey(upstream, name);
      const before = this.seen.get(key);
      this.seen.set(key, sha);
      const pin = known?.get(name);
      if (pin?.sha === sha || before === sha) continue;
      if (!pin) added.push(name);
      else changed.push(name);
    }
    return { changed, added };
  }

  /** True once an upstream has been pinned (a successful listing, even an empty one). */
  has(upstream: string): boolean {
    return this.marked.has(upstream);
  }

  /** Where a tool stands; `sha` is its current definition's. */
  status(upstream: string, tool: string, sha: string): PinStatus {
    // Every successful listing is observed (and so pinned) before its tools can be called: a tool of an
    // upstream with no pins at all is a state that should not exist, so it is treated as new (fail closed).
    if (!this.marked.has(upstream)) return { kind: 'new' };
    const pin = this.pins.get(upstream)?.get(tool);
    if (!pin) return { kind: 'new' };
    return pin.sha === sha ? { kind: 'pinned' } : { kind: 'changed', previous: pin.definition };
  }

  /** The pinned part of a tool's definition (annotations included), if it is pinned. */
  definition(upstream: string, tool: string): Record<string, unknown> | undefined {
    return this.pins.get(upstream)?.get(tool)?.definition;
  }

  /**
   * Pins a definition a person accepted, for every replica. Await it: the acceptance holds only once it
   * resolves.
   * @throws StoreError when the store cannot record it (nothing is pinned, here or elsewhere).
   */
  accept(upstream: string, definition: Record<string, unknown>): Promise<void> {
    const done = this.acceptNow(upstream, definition);
    // A caller that does not await must not crash the process; one that awaits still gets the error.
    done.catch(() => {});
    return done;
  }

  private async acceptNow(upstream: string, definition: Record<string, unknown>): Promise<void> {
    await this.ready();
    const key = pinKey(upstream, String(definition.name));
    const pin: Pin = { sha: definitionSha(definition), definition: pinnedPart(definition) };
    await this.store.put(PIN_KIND, key, pin);
    this.pinFeed.set(key, pin);
    await this.markPinned(upstream);
    this.saveFile();
  }

  /** Pins a tool unless a pin exists (then the cache takes that one). */
  private async pinFirst(upstream: string, tool: string, pin: Pin): Promise<void> {
    const key = pinKey(upstream, tool);
    if (await this.store.putIfAbsent(PIN_KIND, key, pin)) this.pinFeed.set(key, pin);
    else await this.pinFeed.load(key);
  }

  private async markPinned(upstream: string): Promise<void> {
    await this.store.putIfAbsent(PINNED_UPSTREAM_KIND, upstream, true);
    this.markFeed.set(upstream, true);
  }

  private applyPin(key: string, pin: Pin | undefined): void {
    const cut = key.indexOf('/');
    const upstream = key.slice(0, cut);
    let tool: string;
    try {
      tool = decodeURIComponent(key.slice(cut + 1));
    } catch {
      return; // not a key this gate writes: no pin comes of it (its tool stays held as new)
    }
    const known = this.pins.get(upstream) ?? new Map<string, Pin>();
    if (pin === undefined || typeof pin?.sha !== 'string') known.delete(tool);
    else known.set(tool, pin);
    if (known.size > 0) this.pins.set(upstream, known);
    else this.pins.delete(upstream);
  }

  /** Writes the pins file while the store is an in-memory one (which keeps nothing across a restart). */
  private saveFile(): void {
    if (!this.writesFile) return;
    const upstreams: Record<string, Record<string, Pin>> = {};
    for (const u of this.marked) upstreams[u] = {};
    for (const [u, tools] of this.pins) upstreams[u] = Object.fromEntries(tools);
    // Written whole and renamed into place: a crash leaves the old pins or the new ones, never half.
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ v: 1, upstreams }, null, 1)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}

/** A pin's store key (a tool name may hold any character; an upstream name never holds `/`). */
function pinKey(upstream: string, tool: string): string {
  return `${upstream}/${encodeURIComponent(tool)}`;
}

/**
 * Reads the older pins file; empty when there is none.
 * @throws LookfirstError PINS when it exists but cannot be read or is not a pins file.
 */
function readPinsFile(path: string): Record<string, Record<string, Pin>> {
  if (!existsSync(path)) return {};
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as { v?: unknown; upstreams?: unknown };
    if (data.v !== 1 || typeof data.upstreams !== 'object' || data.upstreams === null) throw new Error('not a lookfirst pins file (v 1)');
    return data.upstreams as Record<string, Record<string, Pin>>;
  } catch (err) {
    throw new LookfirstError(
      'PINS',
      `cannot read the tool pins ${path}: ${(err as Error).message}. Restore it from a backup, or delete it to pin every tool afresh (the next start trusts what the upstreams say then).`,
    );
  }
}
