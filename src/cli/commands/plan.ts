/**
 * `lookfirst plan [CALLS.json] [--tools TOOLS.json] [--json]`: the Mutation Plan of a list of tool calls,
 * executing nothing. Input: a JSON array of `{ "name", "arguments" }` (from the file, or stdin when no
 * file is given); optionally a `tools/list` result (`{ "tools": [...] }`, or the array) whose definitions
 * (descriptions, schemas, annotations) and names (namespace prefixes) the classifier then uses, as the
 * gate would.
 */
import { readFileSync } from 'node:fs';
import { oneLine } from '../../confirm/visible.js';
import { LookfirstError } from '../../errors.js';
import { classifyCall, namespacePrefixes, type ToolCodeHints, type ToolDefinitionLike } from '../../policy/classify.js';
import { toolCodeHints } from '../../policy/code/index.js';
import { effectOf } from '../../policy/effect.js';
import type { ToolAnnotations } from '../../types.js';
import { paint } from '../output.js';

/** One line of the plan, as `--json` prints it. */
export interface PlanEntry {
  name: string;
  kind: 'read-only' | 'mutation';
  risk: 'low' | 'medium' | 'high';
  /** The concrete effect, or the tool and its arguments when nothing concrete can be said. */
  effect: string;
  reasons: string[];
}

/** Options of the command. */
export interface PlanOptions {
  tools?: string;
  json?: boolean;
}

function readJson(path: string | undefined, what: string): unknown {
  let text: string;
  // Reading a terminal would wait for typing (or fail with EAGAIN): a person ran `plan` with nothing to plan.
  if ((path === undefined || path === '-') && process.stdin.isTTY)
    throw new LookfirstError(
      'USAGE',
      `no ${what} given: pass a file (lookfirst plan calls.json) or pipe JSON in (echo '[{"name":"write_file","arguments":{}}]' | lookfirst plan)`,
    );
  try {
    text = path === undefined || path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  } catch (err) {
    throw new LookfirstError('USAGE', `cannot read ${what} ${path ?? '(stdin)'}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new LookfirstError('USAGE', `${what} ${path ?? '(stdin)'} is not JSON: ${(err as Error).message}`);
  }
}

/**
 * Classifies each call and describes its effect.
 * @throws LookfirstError USAGE naming the file and the item when the input has the wrong shape.
 */
export function buildPlan(calls: unknown, tools: unknown, source = 'calls'): PlanEntry[] {
  if (!Array.isArray(calls)) throw new LookfirstError('USAGE', `${source} must be a JSON array of { "name", "arguments" } objects`);
  const list = Array.isArray(tools)
    ? tools
    : tools && typeof tools === 'object' && Array.isArray((tools as { tools?: unknown }).tools)
      ? (tools as { tools: unknown[] }).tools
      : undefined;
  if (tools !== undefined && list === undefined)
    throw new LookfirstError('USAGE', '--tools must be a tools/list result ({ "tools": [ … ] }) or an array of tool definitions');
  const annotations = new Map<string, ToolAnnotations | undefined>();
  const hints = new Map<string, ToolCodeHints>();
  const definitions = new Map<string, ToolDefinitionLike>();
  for (const t of list ?? [])
    if (t && typeof t === 'object' && typeof (t as { name?: unknown }).name === 'string') {
      annotations.set((t as { name: string }).name, (t as { annotations?: ToolAnnotations }).annotations);
      hints.set((t as { name: string }).name, toolCodeHints(t as Record<string, unknown>));
      definitions.set((t as { name: string }).name, t as ToolDefinitionLike);
    }
  const prefixes = namespacePrefixes([...annotations.keys()]);
  return calls.map((c, i) => {
    if (!c || typeof c !== 'object' || typeof (c as { name?: unknown }).name !== 'string')
      throw new LookfirstError('USAGE', `${source}: item ${i + 1} needs a string "name"`);
    const { name, arguments: args } = c as { name: string; arguments?: unknown };
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      throw new LookfirstError('USAGE', `${source}: item ${i + 1} ("${oneLine(name).slice(0, 60)}"): "arguments" must be an object`);
    const cls = classifyCall(name, args ?? {}, annotations.get(name), prefixes, hints.get(name), definitions.get(name));
    const effect = effectOf(name, args ?? {}) ?? `${name} ${JSON.stringify(args ?? {})}`;
    return { name, kind: cls.kind, risk: cls.risk, effect, reasons: cls.reasons };
  });
}

/** Runs the command; returns the exit code (0: the plan was printed). */
export async function planCommand(file: string | undefined, opts: PlanOptions): Promise<number> {
  const calls = readJson(file, 'calls');
  const tools = opts.tools ? readJson(opts.tools, '--tools') : undefined;
  const plan = buildPlan(calls, tools, file ?? 'stdin');
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
    return 0;
  }
  const out = process.stdout;
  out.write(`${paint(out, 'bold', 'Mutation Plan')} (nothing is executed)\n`);
  plan.forEach((p, i) => {
    const mark = p.kind === 'read-only' ? paint(out, 'green', '✔ read-only') : paint(out, p.risk === 'high' ? 'red' : 'yellow', `⚠ mutation (${p.risk})`);
    out.write(`${String(i + 1).padStart(3)}. ${mark}  ${oneLine(p.name)}: ${oneLine(p.effect).slice(0, 200)}\n`);
    out.write(`${paint(out, 'dim', `       ${p.reasons.map((r) => oneLine(r)).join('; ')}`)}\n`);
  });
  const mutations = plan.filter((p) => p.kind === 'mutation');
  const high = mutations.filter((p) => p.risk === 'high').length;
  out.write(
    `${plan.length} call${plan.length === 1 ? '' : 's'}: ${plan.length - mutations.length} read-only, ${mutations.length} mutation${mutations.length === 1 ? '' : 's'}${high ? ` (${high} high risk)` : ''}; by the classifier alone (the rules in a config may allow or deny a call), each mutation would wait for a person's approval\n`,
  );
  return 0;
}
