/**
 * `lookfirst ecosystem [DIR] [--json]`: scores the classifier against captured tool catalogues (one JSON
 * file per server: `{ slug, serverInfo, tools: [{ name, annotations }] }`), the way the Foreguard report
 * scores its own: only tools that declare a boolean `readOnlyHint` are scoreable; agreement is the verdict
 * equal to the hint; a false negative is a tool declared `readOnlyHint: false` judged read-only (must stay
 * 0: exit 2 otherwise); a false positive is the reverse (safe: it costs a confirmation). Two figures: by
 * name alone (a catalogue has no arguments), and with annotations applied as the gate applies them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oneLine } from '../../confirm/visible.js';
import { LookfirstError } from '../../errors.js';
import { classifyCall, classifyName, namespacePrefixes } from '../../policy/classify.js';
import type { ToolAnnotations } from '../../types.js';
import { paint } from '../output.js';

/** The score of one catalogue under one method. */
export interface Score {
  tools: number;
  scoreable: number;
  agree: number;
  falseNegatives: string[];
  falsePositives: string[];
}

/** One server's scores. */
export interface ServerScore {
  server: string;
  version: string;
  byName: Score;
  withAnnotations: Score;
}

interface Catalogue {
  slug: string;
  version: string;
  tools: { name: string; annotations?: ToolAnnotations }[];
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
    let data: { slug?: unknown; serverInfo?: { name?: unknown; version?: unknown }; tools?: unknown };
    try {
      data = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    } catch (err) {
      throw new LookfirstError('USAGE', `${join(dir, f)} is not JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(data.tools)) throw new LookfirstError('USAGE', `${join(dir, f)} has no "tools" array`);
    const tools = data.tools.filter((t): t is { name: string; annotations?: ToolAnnotations } => typeof t?.name === 'string');
    return {
      slug: typeof data.slug === 'string' ? data.slug : f.replace(/\.json$/, ''),
      version: `${data.serverInfo?.name ?? '?'} ${data.serverInfo?.version ?? '?'}`,
      tools,
    };
  });
}

/** Scores every catalogue in `dir`. */
export function scoreCatalogues(dir: string): ServerScore[] {
  return load(dir).map((c) => {
    const prefixes = namespacePrefixes(c.tools.map((t) => t.name));
    const score = (judge: (t: Catalogue['tools'][number]) => 'read-only' | 'mutation'): Score => {
      const s: Score = { tools: c.tools.length, scoreable: 0, agree: 0, falseNegatives: [], falsePositives: [] };
      for (const t of c.tools) {
        const hint = t.annotations?.readOnlyHint;
        if (typeof hint !== 'boolean') continue;
        s.scoreable++;
        const readOnly = judge(t) === 'read-only';
        if (readOnly === hint) s.agree++;
        else if (readOnly) s.falseNegatives.push(`${c.slug}::${t.name}`);
        else s.falsePositives.push(`${c.slug}::${t.name}`);
      }
      return s;
    };
    return {
      server: c.slug,
      version: c.version,
      byName: score((t) => classifyName(t.name, prefixes).kind),
      withAnnotations: score((t) => classifyCall(t.name, {}, t.annotations, prefixes).kind),
    };
  });
}

function total(scores: Score[]): Score {
  return scores.reduce(
    (a, s) => ({
      tools: a.tools + s.tools,
      scoreable: a.scoreable + s.scoreable,
      agree: a.agree + s.agree,
      falseNegatives: [...a.falseNegatives, ...s.falseNegatives],
      falsePositives: [...a.falsePositives, ...s.falsePositives],
    }),
    { tools: 0, scoreable: 0, agree: 0, falseNegatives: [], falsePositives: [] },
  );
}

const pct = (s: Score) => (s.scoreable === 0 ? 'n/a' : `${((100 * s.agree) / s.scoreable).toFixed(1)}%`);

/** The report as text (also what the golden test pins). */
export function formatReport(servers: ServerScore[]): string {
  const lines: string[] = [];
  for (const [title, key] of [
    ['by name alone', 'byName'],
    ['with annotations, as the gate applies them', 'withAnnotations'],
  ] as const) {
    lines.push(`lookfirst classifier vs declared readOnlyHint: ${title}`, '');
    lines.push(`${'server'.padEnd(22)}${'tools'.padStart(6)}${'scored'.padStart(8)}${'agree'.padStart(7)}${'FN'.padStart(5)}${'FP'.padStart(5)}`);
    for (const s of servers) {
      const x = s[key];
      lines.push(
        `  ${oneLine(s.server).padEnd(20)}${String(x.tools).padStart(6)}${String(x.scoreable).padStart(8)}${String(x.agree).padStart(7)}${String(x.falseNegatives.length).padStart(5)}${String(x.falsePositives.length).padStart(5)}`,
      );
    }
    const t = total(servers.map((s) => s[key]));
    lines.push(
      `  ${'TOTAL'.padEnd(20)}${String(t.tools).padStart(6)}${String(t.scoreable).padStart(8)}${String(t.agree).padStart(7)}${String(t.falseNegatives.length).padStart(5)}${String(t.falsePositives.length).padStart(5)}`,
      '',
      `agreement ${pct(t)} of ${t.scoreable} scoreable tools (${t.tools - t.scoreable} of ${t.tools} carry no readOnlyHint and are excluded)`,
      `false negatives: ${t.falseNegatives.length}${t.falseNegatives.length ? ` (${t.falseNegatives.join(', ')})` : ''}`,
      `false positives (${t.falsePositives.length}, the safe direction):${t.falsePositives.length ? `\n  ${t.falsePositives.join('\n  ')}` : ' none'}`,
      '',
    );
  }
  lines.push('captured from:', ...servers.map((s) => `  ${oneLine(s.server).padEnd(20)} ${oneLine(s.version)}`));
  return `${lines.join('\n')}\n`;
}

/** Runs the command; exit 2 when any mutating tool is judged read-only by name. */
export async function ecosystemCommand(dir: string | undefined, opts: { json?: boolean }): Promise<number> {
  const servers = scoreCatalogues(dir ?? fileURLToPath(new URL('../../../test/catalogues/npm', import.meta.url)));
  const fn = servers.reduce((n, s) => n + s.byName.falseNegatives.length + s.withAnnotations.falseNegatives.length, 0);
  if (opts.json) process.stdout.write(`${JSON.stringify(servers, null, 2)}\n`);
  else {
    const text = formatReport(servers);
    process.stdout.write(fn > 0 ? text.replace(/false negatives: [1-9]\d*/g, (m) => paint(process.stdout, 'red', m)) : text);
  }
  return fn > 0 ? 2 : 0;
}
