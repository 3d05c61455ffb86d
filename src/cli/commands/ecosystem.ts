/**
 * `lookfirst ecosystem [DIR…] [--json]`: scores the classifier against captured tool catalogues, in three
 * views, and exits 2 when any tool that writes is judged read-only in any view.
 *
 * - A DIR is one set: one JSON file per server (`{ slug, serverInfo?, tools: [Tool…] }`, tools as
 *   `tools/list` gave them), and optionally `labels/<slug>.tsv` (`tool<TAB>read|write<TAB>note`), the
 *   labels each tool was given from its documentation, blind to its annotations
 *   (test/catalogues/LABELLING.md). Without a labels file, a tool's own `label` field ("read" or "write")
 *   counts, and without that its declared boolean `readOnlyHint` (the Foreguard method); a tool with none
 *   of these is not scored.
 * - Views: `names` (the tool names alone, as a client that shows only names would judge them; namespace
 *   prefixes come from the server's other names); `catalogue` (names, descriptions and schemas, without
 *   annotations); `annotated` (the whole definition, annotations applied as the gate applies them).
 * - Agreement: the verdict (read-only or mutation) equals the label. A false negative is a write judged
 *   read-only (it would pass unseen: must be 0); a false positive is a read judged a mutation (it costs
 *   a person a question).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oneLine } from '../../confirm/visible.js';
import { LookfirstError } from '../../errors.js';
import { combine, judgeTool, namespacePrefixes, type ToolDefinitionLike } from '../../policy/classify.js';
import type { ToolAnnotations } from '../../types.js';
import { paint } from '../output.js';

/** The three ways a catalogue is judged. */
export const VIEWS = ['names', 'catalogue', 'annotated'] as const;
export type View = (typeof VIEWS)[number];

const VIEW_TITLE: Record<View, string> = {
  names: 'names only',
  catalogue: 'catalogue without annotations',
  annotated: 'catalogue with annotations',
};

/** The score of one server (or a total) in one view. */
export interface Score {
  tools: number;
  scoreable: number;
  agree: number;
  falseNegatives: string[];
  falsePositives: string[];
}

/** One server's scores in every view, and where its truth came from. */
export interface ServerScore {
  server: string;
  version: string;
  truth: 'labels' | 'readOnlyHint' | 'none';
  views: Record<View, Score>;
}

/** One set (a folder of catalogues) and its servers. */
export interface SetScore {
  set: string;
  dir: string;
  servers: ServerScore[];
  totals: Record<View, Score>;
}

interface Tool extends ToolDefinitionLike {
  label?: unknown;
}

interface Catalogue {
  slug: string;
  version: string;
  tools: Tool[];
  labels?: Map<string, 'read' | 'write'>;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new LookfirstError('USAGE', `${file} is not JSON: ${(err as Error).message}`);
  }
}

/** Reads `labels/<slug>.tsv`: one `tool<TAB>read|write[<TAB>note]` per line. */
function readLabels(file: string): Map<string, 'read' | 'write'> {
  const out = new Map<string, 'read' | 'write'>();
  readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (!line.trim() || line.startsWith('#')) return;
      const [tool, label] = line.split('\t');
      if (!tool || (label !== 'read' && label !== 'write'))
        throw new LookfirstError('USAGE', `${file}:${i + 1}: expected "tool<TAB>read|write<TAB>note", got ${JSON.stringify(line.slice(0, 80))}`);
      if (out.has(tool)) throw new LookfirstError('USAGE', `${file}:${i + 1}: "${tool}" is labelled twice`);
      out.set(tool, label);
    });
  return out;
}

function load(dir: string): Catalogue[] {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
  } catch (err) {
    throw new LookfirstError('USAGE', `cannot read the catalogue folder ${dir}: ${(err as Error).message}`);
  }
  if (files.length === 0) throw new LookfirstError('USAGE', `no catalogues (*.json) in ${dir}`);
  return files.map((f) => {
    const data = readJson(join(dir, f)) as { slug?: unknown; serverInfo?: { name?: unknown; version?: unknown }; tools?: unknown };
    if (!Array.isArray(data.tools)) throw new LookfirstError('USAGE', `${join(dir, f)} has no "tools" array`);
    const file = join(dir, f);
    // The slug names the labels file: a plain name only, never a path (`../x`).
    const slug = typeof data.slug === 'string' && /^[\w.-]{1,100}$/.test(data.slug) && !data.slug.startsWith('.') ? data.slug : f.replace(/\.json$/, '');
    const labelsFile = join(dir, 'labels', `${slug}.tsv`);
    const labels = existsSync(labelsFile) ? readLabels(labelsFile) : undefined;
    const tools: Tool[] = [];
    const names = new Set<string>();
    data.tools.forEach((t, i) => {
      const tool = t as Tool | null;
      if (typeof tool?.name !== 'string') throw new LookfirstError('USAGE', `${file}: tool ${i + 1} has no string "name"`);
      if (names.has(tool.name)) throw new LookfirstError('USAGE', `${file}: the tool "${tool.name}" is listed twice`);
      if (tool.label !== undefined && tool.label !== 'read' && tool.label !== 'write')
        throw new LookfirstError('USAGE', `${file}: tool "${tool.name}" has "label": ${JSON.stringify(tool.label).slice(0, 40)}; use "read" or "write"`);
      names.add(tool.name);
      tools.push(tool);
    });
    if (labels) {
      const missing = tools.filter((t) => !labels.has(t.name)).map((t) => t.name);
      if (missing.length)
        throw new LookfirstError('USAGE', `${labelsFile} has no label for ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ' …' : ''}`);
      // A label for a tool the catalogue no longer lists is stale (the server was captured again).
      const stale = [...labels.keys()].filter((n) => !names.has(n));
      if (stale.length)
        throw new LookfirstError(
          'USAGE',
          `${labelsFile} labels ${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ' …' : ''}, which ${file} does not list: remove those lines or capture the server again`,
        );
    }
    return { slug, version: `${data.serverInfo?.name ?? '?'} ${data.serverInfo?.version ?? '?'}`, tools, labels };
  });
}

const emptyScore = (): Score => ({ tools: 0, scoreable: 0, agree: 0, falseNegatives: [], falsePositives: [] });

/** The verdict on one tool in one view: true when judged read-only. */
export function judgedReadOnly(tool: ToolDefinitionLike, prefixes: ReadonlySet<string>, view: View): boolean {
  if (view === 'names') return judgeTool({ name: tool.name }, prefixes).kind === 'read-only';
  const verdict = judgeTool({ ...tool, annotations: undefined }, prefixes);
  if (view === 'catalogue') return verdict.kind === 'read-only';
  const annotations = tool.annotations && typeof tool.annotations === 'object' ? (tool.annotations as ToolAnnotations) : undefined;
  return combine(verdict, undefined, annotations).kind === 'read-only';
}

/** Scores every catalogue of one set. */
export function scoreSet(dir: string): SetScore {
  const servers = load(dir).map((c): ServerScore => {
    const prefixes = namespacePrefixes(c.tools.map((t) => t.name));
    const truthOf = (t: Tool): boolean | undefined => {
      const label = c.labels?.get(t.name) ?? (t.label === 'read' || t.label === 'write' ? t.label : undefined);
      if (label) return label === 'read';
      if (c.labels) return undefined;
      const hint = t.annotations?.readOnlyHint;
      return typeof hint === 'boolean' ? hint : undefined;
    };
    const views = {} as Record<View, Score>;
    for (const view of VIEWS) {
      const s = emptyScore();
      s.tools = c.tools.length;
      for (const t of c.tools) {
        const reads = truthOf(t);
        if (reads === undefined) continue;
        s.scoreable++;
        const judged = judgedReadOnly(t, prefixes, view);
        if (judged === reads) s.agree++;
        else if (judged) s.falseNegatives.push(`${c.slug}::${t.name}`);
        else s.falsePositives.push(`${c.slug}::${t.name}`);
      }
      views[view] = s;
    }
    const labelled = c.labels !== undefined || c.tools.some((t) => t.label === 'read' || t.label === 'write');
    return { server: c.slug, version: c.version, truth: labelled ? 'labels' : views.names.scoreable > 0 ? 'readOnlyHint' : 'none', views };
  });
  const totals = {} as Record<View, Score>;
  for (const view of VIEWS)
    totals[view] = servers.reduce((a, s) => {
      const x = s.views[view];
      return {
        tools: a.tools + x.tools,
        scoreable: a.scoreable + x.scoreable,
        agree: a.agree + x.agree,
        falseNegatives: [...a.falseNegatives, ...x.falseNegatives],
        falsePositives: [...a.falsePositives, ...x.falsePositives],
      };
    }, emptyScore());
  return { set: basename(dir), dir, servers, totals };
}

const pct = (s: Score) => (s.scoreable === 0 ? 'n/a' : `${((100 * s.agree) / s.scoreable).toFixed(1)}%`);

/** The report of one set as text (what the golden test pins). */
export function formatReport(set: SetScore): string {
  const lines: string[] = [];
  const truth = new Set(set.servers.map((s) => s.truth));
  const against =
    truth.size === 1 && truth.has('labels')
      ? 'labels given blind to annotations'
      : truth.has('labels')
        ? "labels given blind to annotations where a server has them, else the server's declared readOnlyHint"
        : "the servers' declared readOnlyHint";
  lines.push(`lookfirst classifier on the ${set.set} catalogues: agreement with ${against}`, '');
  lines.push(`${'server'.padEnd(26)}${'tools'.padStart(6)}${'scored'.padStart(7)}${VIEWS.map((v) => v.padStart(16)).join('')}`);
  const cell = (x: Score) => `${x.agree}/${x.scoreable}${x.falseNegatives.length ? ` FN${x.falseNegatives.length}` : ''}`.padStart(16);
  for (const s of set.servers)
    lines.push(
      `  ${oneLine(s.server).padEnd(24)}${String(s.views.names.tools).padStart(6)}${String(s.views.names.scoreable).padStart(7)}${VIEWS.map((v) => cell(s.views[v])).join('')}`,
    );
  const t = set.totals;
  lines.push(`  ${'TOTAL'.padEnd(24)}${String(t.names.tools).padStart(6)}${String(t.names.scoreable).padStart(7)}${VIEWS.map((v) => cell(t[v])).join('')}`, '');
  for (const view of VIEWS) {
    const x = t[view];
    lines.push(
      `${VIEW_TITLE[view]}: agreement ${pct(x)} of ${x.scoreable} scored tools; false negatives: ${x.falseNegatives.length}${x.falseNegatives.length ? ` (${x.falseNegatives.join(', ')})` : ''}; false positives: ${x.falsePositives.length}`,
    );
  }
  if (t.names.tools > t.names.scoreable) lines.push(`(${t.names.tools - t.names.scoreable} of ${t.names.tools} tools have no label and are not scored)`);
  for (const view of VIEWS) {
    const x = t[view];
    if (x.falsePositives.length) lines.push('', `reads asked about (${VIEW_TITLE[view]}, the safe direction):`, ...x.falsePositives.map((f) => `  ${f}`));
  }
  lines.push('', 'captured from:', ...set.servers.map((s) => `  ${oneLine(s.server).padEnd(24)} ${oneLine(s.version)}`));
  return `${lines.join('\n')}\n`;
}

/** The sets the command scores without arguments: every folder of test/catalogues. */
function defaultSets(): string[] {
  const root = fileURLToPath(new URL('../../../test/catalogues', import.meta.url));
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(root, d.name))
      .sort();
  } catch {
    throw new LookfirstError('USAGE', `no catalogue folder given, and ${root} is not there: name one, e.g. lookfirst ecosystem ./catalogues`);
  }
}

/** Runs the command; exit 2 when any tool that writes is judged read-only in any view. */
export async function ecosystemCommand(dirs: string[], opts: { json?: boolean }): Promise<number> {
  const sets = (dirs.length ? dirs : defaultSets()).map(scoreSet);
  const fn = sets.reduce((n, s) => n + VIEWS.reduce((m, v) => m + s.totals[v].falseNegatives.length, 0), 0);
  if (opts.json) process.stdout.write(`${JSON.stringify(sets, null, 2)}\n`);
  else {
    const text = sets.map(formatReport).join('\n');
    process.stdout.write(fn > 0 ? text.replace(/false negatives: [1-9]\d*/g, (m) => paint(process.stdout, 'red', m)) : text);
  }
  return fn > 0 ? 2 : 0;
}
