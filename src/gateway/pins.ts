/**
 * Pinned tool definitions (against a "rug pull": a tool that changes what it says or does after it was
 * trusted). On first sight of an upstream, the gate pins a SHA-256 of each tool's definition (name,
 * title, description, input and output schemas, annotations; RFC 8785 canonical JSON). Pins persist
 * beside the audit log (`<log>.pins.json`), so a restart is no escape. A tool whose definition differs
 * from its pin, or a tool that appears after the upstream was first pinned, is held whatever the rules
 * say until a person accepts the new definition (gateway/definitions.ts).
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
   * Records what an upstream lists now. The first time an upstream is seen, every tool is pinned.
   * @returns the tools whose definition differs from their pin, and the tools that are new.
   */
  observe(upstream: string, tools: readonly Record<string, unknown>[]): { changed: string[]; added: string[] } {
    const known = this.pins[upstream];
    if (!known) {
      this.pins[upstream] = Object.fromEntries(tools.map((t) => [String(t.name), { sha: definitionSha(t), definition: pinnedPart(t) }]));
      this.save();
      return { changed: [], added: [] };
    }
    const changed: string[] = [];
    const added: string[] = [];
    for (const t of tools) {
      const pin = known[String(t.name)];
      if (!pin) added.push(String(t.name));
      else if (pin.sha !== definitionSha(t)) changed.push(String(t.name));
    }
    return { changed, added };
  }

  /** Where a tool stands; `sha` is its current definition's. */
  status(upstream: string, tool: string, sha: string): PinStatus {
    const known = this.pins[upstream];
    // An upstream never pinned (it was down at start) is pinned by observe() when first listed.
    if (!known) return { kind: 'pinned' };
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
