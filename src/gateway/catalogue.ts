/**
 * The tool catalogue: every upstream tool under the name the client sees, with the upstream's own
 * definition (annotations, outputSchema, _meta: nothing is dropped, only the name changes when there are
 * several upstreams). Decisions read annotations from here, fetched by the gate itself, never from what
 * the client sends. Calls route through this table, never by splitting names on "__".
 */
import { type Classification, classifyArgs, combine, judgeTool, type NameVerdict, namespacePrefixes, type ToolCodeHints } from '../policy/classify.js';
import { toolCodeHints } from '../policy/code/index.js';
import type { ToolAnnotations } from '../types.js';
import { type DeclaredTool, declaredClassification } from './declared.js';
import { definitionSha, type PinStatus, type ToolPins } from './pins.js';
import { isPlainObject } from './raw.js';
import type { Upstream } from './upstream.js';
import { plainMessage } from './wire-error.js';

/** One tool as the gate knows it. */
export interface CatalogueTool {
  /** Name the client sees. */
  exposed: string;
  upstream: Upstream;
  /** Name the upstream knows. */
  upstreamTool: string;
  /** The upstream's definition with `name` set to the exposed name. */
  definition: Record<string, unknown>;
  annotations: ToolAnnotations | undefined;
  /** The tool declares an outputSchema: the client validates structuredContent against it. */
  hasOutputSchema: boolean;
  /**
   * The classifier's verdict on the upstream's definition (name, description, schemas; annotations are
   * applied per call), with the upstream's namespace prefixes: computed once per listing.
   */
  toolVerdict: NameVerdict;
  /** The upstream's own definition (its name) and the SHA-256 of its pinned part (gateway/pins.ts). */
  upstreamDefinition: Record<string, unknown>;
  definitionSha: string;
  /**
   * The server author's own declaration (the library's in-process upstream only, never from the wire):
   * it replaces the classifier's verdict and gives the card text and the read-back (gateway/declared.ts).
   */
  declared?: DeclaredTool;
}

/** Which fields of a tool hold code, computed once per definition object (a new listing makes new ones). */
const codeHints = new WeakMap<object, ToolCodeHints>();

/**
 * Recent verdicts per catalogued tool, by the arguments' JSON: a call that the fast path looked at and
 * left to the pipeline, or a repeated poll, parses its code once. Bounded per tool; a tool object that
 * a new listing replaces takes its verdicts with it.
 */
const recent = new WeakMap<CatalogueTool, Map<string, Classification>>();
const RECENT_PER_TOOL = 64;
const RECENT_MAX_KEY = 64 * 1024;

/** The classifier's verdict on one call of a catalogued tool (name and code fields cached, arguments read once). */
export function classifyTool(tool: CatalogueTool, args: unknown): Classification {
  // The author's declaration is the verdict: it is their own server (not cached: risk(args) may read state).
  if (tool.declared) return declaredClassification(tool.declared, args);
  let hints = codeHints.get(tool.upstreamDefinition);
  if (!hints) {
    hints = toolCodeHints(tool.upstreamDefinition, tool.upstream.name);
    codeHints.set(tool.upstreamDefinition, hints);
  }
  if (args === undefined) return combine(tool.toolVerdict, undefined, tool.annotations);
  let key: string | undefined;
  try {
    key = JSON.stringify(args);
  } catch {
    key = undefined;
  }
  const seen = recent.get(tool);
  const cached = key !== undefined ? seen?.get(key) : undefined;
  if (cached) return cached;
  const verdict = combine(tool.toolVerdict, classifyArgs(args, hints), tool.annotations);
  if (key !== undefined && key.length <= RECENT_MAX_KEY) {
    const map = seen ?? new Map<string, Classification>();
    if (!seen) recent.set(tool, map);
    if (map.size >= RECENT_PER_TOOL) map.delete(map.keys().next().value as string);
    map.set(key, verdict);
  }
  return verdict;
}

/** Largest number of tools/list pages fetched from one upstream (guards against an endless cursor chain). */
export const MAX_PAGES = 1000;

/**
 * Fetches every page of a paged list from one upstream (`tools/list` and the like), in order. Paging
 * stops at once when the upstream answers with a cursor it gave before (any earlier one, not only the
 * last: a cycle), and after `MAX_PAGES` pages; either is reported through `warn`, and the pages read so
 * far are returned.
 * @throws whatever the upstream request throws.
 */
export async function fetchAllPages(upstream: Upstream, method: string, key: string, warn: (message: string) => void): Promise<unknown[]> {
  const items: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await upstream.request(method, cursor === undefined ? undefined : { cursor });
    // A loop, not push(...page): a page of 130 000 items would overflow the stack ("Maximum call stack size exceeded").
    if (Array.isArray(result[key])) for (const item of result[key] as unknown[]) items.push(item);
    cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
    if (cursor === undefined) break;
    if (seen.has(cursor)) {
      warn(`upstream ${upstream.name}: ${method} gave a cursor it had given before (page ${page}); paging stopped there, with the items read so far`);
      break;
    }
    if (page >= MAX_PAGES) {
      warn(`upstream ${upstream.name}: ${method} has more than ${MAX_PAGES} pages; paging stopped there, with the items read so far`);
      break;
    }
    seen.add(cursor);
  }
  return items;
}

/** Tools of all upstreams, by exposed name. */
export class Catalogue {
  private readonly byUpstream = new Map<string, CatalogueTool[]>();
  private byName = new Map<string, CatalogueTool>();
  /** Per upstream: the number of the latest refresh started, so that an older one never lands last. */
  private readonly started = new Map<string, number>();
  /** Upstreams whose tools changed (list_changed, restart) and have not been re-read yet. */
  private readonly changed = new Set<string>();
  /** Upstreams whose latest listing failed with no connection open: why, in the upstream's own words. */
  private readonly down = new Map<string, string>();

  constructor(
    private readonly upstreams: readonly Upstream[],
    private readonly warn: (message: string) => void,
    /** Pinned definitions; without them nothing is held for a changed definition (tests of other parts). */
    readonly pins?: ToolPins,
    /** Told about each tool whose definition differs from its pin, or that is new, once per distinct definition. */
    private readonly onDefinition?: (upstream: Upstream, tool: string, how: 'changed' | 'new', sha256: string) => void,
  ) {}

  /** Where a tool stands against its pin (`pinned` when the gate keeps no pins). */
  pinStatus(tool: CatalogueTool): PinStatus {
    // The author's own tools change with their code, not behind their back: nothing to pin.
    if (tool.upstream.inProcess) return { kind: 'pinned' };
    return this.pins ? this.pins.status(tool.upstream.name, tool.upstreamTool, tool.definitionSha) : { kind: 'pinned' };
  }

  /** Several upstreams: names become `<upstream>__<tool>`. */
  get prefixed(): boolean {
    return this.upstreams.length > 1;
  }

  /** The name the client sees for an upstream's tool. */
  exposedName(upstream: string, tool: string): string {
    return this.prefixed ? `${upstream}__${tool}` : tool;
  }

  /** Looks up a tool by exposed name. */
  get(name: string): CatalogueTool | undefined {
    return this.byName.get(name);
  }

  /**
   * Which upstream a name that is not in the catalogue would belong to, when that upstream could not be
   * reached at its latest listing: with one upstream any name, with several a `<upstream>__` prefix (a
   * tool never listed cannot be known by name, so this is the most the gate can say). Undefined when
   * no such upstream is down: the name is then simply unknown.
   * @returns the upstream's name and why its listing failed (a sentence that already names it).
   */
  unreachableFor(name: string): { upstream: string; reason: string } | undefined {
    const candidates = this.prefixed ? this.upstreams.filter((u) => name.startsWith(`${u.name}__`)) : this.upstreams;
    for (const u of candidates) {
      const reason = this.down.get(u.name);
      if (reason !== undefined) return { upstream: u.name, reason };
    }
    return undefined;
  }

  /** All tools, upstreams in config order. */
  all(): CatalogueTool[] {
    return [...this.byName.values()];
  }

  /**
   * Re-fetches one upstream's tools (all pages). On failure the upstream's tools are removed: the gate
   * never decides on a stale definition.
   */
  async refresh(upstream: Upstream): Promise<void> {
    const generation = (this.started.get(upstream.name) ?? 0) + 1;
    this.started.set(upstream.name, generation);
    const found: Omit<CatalogueTool, 'toolVerdict'>[] = [];
    let listed = false;
    try {
      const names = new Set<string>();
      for (const def of await fetchAllPages(upstream, 'tools/list', 'tools', this.warn)) {
        if (!isPlainObject(def) || typeof def.name !== 'string') continue;
        // A name listed twice: the first definition is the one used, so it is the one pinned.
        if (names.has(def.name)) {
          this.warn(`upstream ${upstream.name} lists the tool "${def.name}" more than once; the first definition is used`);
          continue;
        }
        names.add(def.name);
        found.push(this.entry(upstream, def));
      }
      listed = true;
    } catch (err) {
      this.warn(`upstream ${upstream.name}: cannot list its tools (${plainMessage(err)}); its tools are unavailable until it answers`);
      found.length = 0;
      // Only a failure with no connection is "not reachable"; an upstream that answers with an error is up.
      if (this.started.get(upstream.name) === generation) {
        if (upstream.connected) this.down.delete(upstream.name);
        else this.down.set(upstream.name, plainMessage(err));
      }
    }
    if (listed && this.started.get(upstream.name) === generation) this.down.delete(upstream.name);
    // A refresh that started before another one must not overwrite the newer definitions.
    if (this.started.get(upstream.name) !== generation) return;
    // Namespace prefixes are a property of the whole list: definitions are judged once all pages are in.
    const prefixes = namespacePrefixes(found.map((t) => t.upstreamTool));
    const tools: CatalogueTool[] = found.map((t) => ({ ...t, toolVerdict: judgeTool(t.upstreamDefinition as { name: string }, prefixes) }));
    // The first successful listing pins, even an empty one; a failed one pins nothing.
    if (this.pins && listed && !upstream.inProcess) {
      let seen: { changed: string[]; added: string[] };
      try {
        seen = await this.pins.observe(
          upstream.name,
          tools.map((t) => t.upstreamDefinition),
        );
      } catch (err) {
        // Tools that cannot be pinned are never offered (fail closed), as after a failed listing.
        this.warn(`upstream ${upstream.name}: cannot record its tool pins (${plainMessage(err)}); its tools are unavailable until they can be pinned`);
        seen = { changed: [], added: [] };
        tools.length = 0;
      }
      if (this.started.get(upstream.name) !== generation) return;
      const { changed, added } = seen;
      const shaOf = (name: string) => tools.find((t) => t.upstreamTool === name)?.definitionSha ?? '';
      for (const name of changed) this.onDefinition?.(upstream, name, 'changed', shaOf(name));
      for (const name of added) this.onDefinition?.(upstream, name, 'new', shaOf(name));
    }
    this.byUpstream.set(upstream.name, tools);
    this.changed.delete(upstream.name);
    this.rebuild();
  }

  /**
   * Marks an upstream's tools as changed until the next refresh lands: meanwhile its calls are not
   * decided on the old annotations (see `isChanged`).
   */
  markChanged(upstream: Upstream): void {
    this.changed.add(upstream.name);
  }

  /** True while the upstream said its tools changed and the gate has not re-read them yet. */
  isChanged(upstream: Upstream): boolean {
    return this.changed.has(upstream.name);
  }

  /** Re-fetches every upstream's tools, in parallel. */
  async refreshAll(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => this.refresh(u)));
  }

  private entry(upstream: Upstream, def: Record<string, unknown>): Omit<CatalogueTool, 'toolVerdict'> {
    const upstreamTool = def.name as string;
    const exposed = this.exposedName(upstream.name, upstreamTool);
    return {
      exposed,
      upstream,
      upstreamTool,
      definition: exposed === upstreamTool ? def : { ...def, name: exposed },
      annotations: isPlainObject(def.annotations) ? (def.annotations as ToolAnnotations) : undefined,
      hasOutputSchema: def.outputSchema !== undefined,
      upstreamDefinition: def,
      definitionSha: definitionSha(def),
      declared: upstream.inProcess?.declared.get(upstreamTool),
    };
  }

  private rebuild(): void {
    const next = new Map<string, CatalogueTool>();
    for (const u of this.upstreams) {
      for (const t of this.byUpstream.get(u.name) ?? []) {
        const taken = next.get(t.exposed);
        if (taken) {
          this.warn(`tool name "${t.exposed}" from upstream ${u.name} collides with one from ${taken.upstream.name}; the first one (config order) is kept`);
          continue;
        }
        next.set(t.exposed, t);
      }
    }
    this.byName = next;
  }
}
