/**
 * Pinned tool definitions (against a "rug pull": a tool that changes what it says or does after it was
 * trusted). On first sight of an upstream, the gate pins a SHA-256 of each tool's definition (name,
 * title, description, input and output schemas, annotations; RFC 8785 canonical JSON). Pins persist
 * beside the audit log (`<log>.pins.json`), so a restart is no escape. A tool whose definition differs
 * from its pin, or a tool that appears after the upstream was first pinned, is held whatever the rules
 * say until a person accepts the new definition (gateway/definitions.ts).
 *
 * The first successful listing pins, even an empty one: an upstream that lists nothing at first (still
 * starting, or waiting to be trusted) gets no "first sight" later. Every further change seen within one
 * process is reported, not only the first: `observe` reports a tool each time its definition differs
 * from both its pin and the definition seen before (A→B, then B→C, are two reports).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { canonicalJson, sha256Hex } from '../audit/canonical.js';
import { LookfirstError } from '../errors.js';

/** The parts of a tool definition that are pinned. */
export function pinnedPart(definition: Record<string, unknown>): Record<string, unknown> {
  const { name, title, description, inputSchema, outputSchema, annotations } = definition;
  return JSON.parse(JSON.stringify({ name, title, description, inputSchema, outputSchema, annotations })) as Record<string, unknown>;
}

/** SHA-256 (hex) of a definition's pinned part. */
export function definitionSha(definition: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(pinnedPart(definition)));
}

interface Pin {
  sha: string;
  /** The pinned part, kept to show a person what changed. */
  definition: Record<string, unknown>;
}

/** A tool's standing against its pin. */
export type PinStatus = { kind: 'pinned' } | { kind: 'changed'; previous: Record<string, unknown> } | { kind: 'new' };

/** The pins of one gate, by upstream and the upstream's tool name. */
export class ToolPins {
  private pins: Record<string, Record<string, Pin>> = {};
  /** Per upstream and tool: the SHA-256 of the definition seen last in this process (not persisted). */
  private readonly seen = new Map<string, string>();

  /**
   * @param path the pins file; read now.
   * @throws LookfirstError PINS when the file exists but cannot be read or is not a pins file (fail closed:
   *   the gate does not start on pins it cannot trust).
   */
  constructor(readonly path: string) {
    if (!existsSync(path)) return;
    try {
      const data = JSON.parse(readFileSync(path, 'utf8')) as { v?: unknown; upstreams?: unknown };
      if (data.v !== 1 || typeof data.upstreams !== 'object' || data.upstreams === null) throw new Error('not a lookfirst pins file (v 1)');
      this.pins = data.upstreams as Record<string, Record<string, Pin>>;
    } catch (err) {
      throw new LookfirstError(
        'PINS',
        `cannot read the tool pins ${path}: ${(err as Error).message}. Restore it from a backup, or delete it to pin every tool afresh (the next start trusts what the upstreams say then).`,
      );
    }
  }

  /**
   * Records what an upstream lists now (a successful listing, possibly empty). The first time an upstream
   * is seen, every tool is pinned, and an empty listing pins "no tools".
   * @returns the tools whose definition differs from their pin, and the tools that are new, each only when
   *   its definition differs from the one this process saw before (every distinct change is reported once).
   */
  observe(upstream: string, tools: readonly Record<string, unknown>[]): { changed: string[]; added: string[] } {
    const known = this.pins[upstream];
    if (!known) {
      this.pins[upstream] = Object.fromEntries(tools.map((t) => [String(t.name), { sha: definitionSha(t), definition: pinnedPart(t) }]));
      this.save();
      for (const t of tools) this.seen.set(seenKey(upstream, String(t.name)), definitionSha(t));
      return { changed: [], added: [] };
    }
    const changed: string[] = [];
    const added: string[] = [];
    for (const t of tools) {
      const name = String(t.name);
      const sha = definitionSha(t);
      const key = seenKey(upstream, name);
      const before = this.seen.get(key);
      this.seen.set(key, sha);
      const pin = known[name];
      if (pin?.sha === sha || before === sha) continue;
      if (!pin) added.push(name);
      else changed.push(name);
    }
    return { changed, added };
  }

  /** True once an upstream has been pinned (a successful listing, even an empty one). */
  has(upstream: string): boolean {
    return this.pins[upstream] !== undefined;
  }

  /** Where a tool stands; `sha` is its current definition's. */
  status(upstream: string, tool: string, sha: string): PinStatus {
    const known = this.pins[upstream];
    // Every successful listing is observed (and so pinned) before its tools can be called: a tool of an
    // upstream with no pins at all is a state that should not exist, so it is treated as new (fail closed).
    if (!known) return { kind: 'new' };
    const pin = known[tool];
    if (!pin) return { kind: 'new' };
    return pin.sha === sha ? { kind: 'pinned' } : { kind: 'changed', previous: pin.definition };
  }

  /** The pinned part of a tool's definition (annotations included), if it is pinned. */
  definition(upstream: string, tool: string): Record<string, unknown> | undefined {
    return this.pins[upstream]?.[tool]?.definition;
  }

  /** Pins a definition a person accepted. */
  accept(upstream: string, definition: Record<string, unknown>): void {
    const known = this.pins[upstream] ?? {};
    known[String(definition.name)] = { sha: definitionSha(definition), definition: pinnedPart(definition) };
    this.pins[upstream] = known;
    this.save();
  }

  private save(): void {
    // Written whole and renamed into place: a crash leaves the old pins or the new ones, never half.
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ v: 1, upstreams: this.pins }, null, 1)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}

function seenKey(upstream: string, tool: string): string {
  return `${upstream}\u0000${tool}`;
}
