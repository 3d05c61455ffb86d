/**
 * The classifier: is a tool call read-only or a mutation, how risky, and why. Pure.
 *
 * - Name (policy/words.ts): split into words; deny wins (any mutating word anywhere makes a mutation);
 *   read-only only when clearly so; unknown means mutation.
 * - Arguments only make a verdict stricter: an HTTP method field, SQL that mutates anywhere in it, a shell
 *   command that redirects or runs anything but a known reader, an operation field naming a mutation.
 * - Annotations are the upstream's untrusted hints, applied asymmetrically: whatever says "more dangerous"
 *   is believed (`destructiveHint: true` → high; `readOnlyHint: false` → mutation); `readOnlyHint: true`
 *   lowers a verdict only when the name holds no mutating word and the arguments reveal nothing.
 */
import type { Classification, Risk, ToolAnnotations } from '../types.js';
import {
  AMBIGUOUS,
  CONJUNCTIONS,
  DESTRUCTIVE,
  GIT_READ,
  METHOD_FIELDS,
  MUTATING,
  OPERATION_FIELDS,
  OUTBOUND,
  READ_NOUNS,
  READ_VERBS,
  SHELL_DESTRUCTIVE,
  SHELL_FIELDS,
  SHELL_READ,
  SQL_DESTRUCTIVE,
  SQL_FIELDS,
  SQL_LEADS,
  SQL_MUTATING,
} from './words.js';

export type { Classification };

/** The verdict on a name alone; `benign` when it is a mutation only because nothing says read-only. */
export interface NameVerdict extends Classification {
  benign: boolean;
}

const RANK: Record<Risk, number> = { low: 0, medium: 1, high: 2 };
const higher = (a: Risk, b: Risk): Risk => (RANK[a] >= RANK[b] ? a : b);

/**
 * Splits a tool name into lower-case words: on `_ - . : /` and spaces, at camelCase humps and at digits
 * (`getFileInfo` → get, file, info; `list_v2Items` → list, v, 2, items).
 */
export function splitName(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/(\d+)/g, ' $1 ')
    .split(/[\s_\-.:/]+/u)
    .map((w) => w.toLowerCase())
    .filter(Boolean);
}

/** Whether a word means anything to the classifier (then it is never taken for a namespace prefix). */
function known(word: string): boolean {
  return DESTRUCTIVE.has(word) || OUTBOUND.has(word) || MUTATING.has(word) || AMBIGUOUS.has(word) || READ_VERBS.has(word) || READ_NOUNS.has(word);
}

/**
 * Namespace prefixes of one upstream's tools: a first word shared by at least three tools (or by every
 * tool of a smaller catalogue of two or more) that is not itself a known verb (`browser_click`,
 * `browser_snapshot` → `browser`).
 */
export function namespacePrefixes(names: readonly string[]): Set<string> {
  const counts = new Map<string, number>();
  for (const n of names) {
    const first = splitName(n)[0];
    if (first !== undefined) counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  const out = new Set<string>();
  for (const [word, count] of counts) {
    if (known(word)) continue;
    if (count >= 3 || (names.length >= 2 && count === names.length)) out.add(word);
  }
  return out;
}

/** Classifies a tool by its name alone. */
export function classifyName(name: string, prefixes: ReadonlySet<string> = new Set()): NameVerdict {
  const all = splitName(name);
  let words = all;
  while (words.length > 1 && prefixes.has(words[0] as string)) words = words.slice(1);
  const lead = words[0] ?? '';
  const reads = READ_VERBS.has(lead);
  let risk: Risk = 'low';
  const reasons: string[] = [];
  let joined = false;
  for (const w of words) {
    if (CONJUNCTIONS.has(w)) joined = true;
    let r: Risk | undefined;
    if (DESTRUCTIVE.has(w) || OUTBOUND.has(w)) r = 'high';
    else if (MUTATING.has(w)) r = 'medium';
    else if (AMBIGUOUS.has(w) && !(reads && !joined) && !(w === lead && READ_VERBS.has(w))) r = AMBIGUOUS.get(w);
    if (r) {
      risk = higher(risk, r);
      reasons.push(`name word "${w}"`);
    }
  }
  if (reasons.length > 0) return { kind: 'mutation', risk, reasons, benign: false };
  if (reads) return { kind: 'read-only', risk: 'low', reasons: [`name starts with the read verb "${lead}"`], benign: true };
  const last = words[words.length - 1] ?? '';
  if (READ_NOUNS.has(last)) return { kind: 'read-only', risk: 'low', reasons: [`name ends in the report noun "${last}"`], benign: true };
  return { kind: 'mutation', risk: 'medium', reasons: [`nothing in the name "${name}" says read-only`], benign: true };
}

/** Most values the argument scan visits, and how deep: a huge or deep argument tree is cut there. */
const MAX_NODES = 10_000;
const MAX_DEPTH = 32;

/** A stricter verdict the arguments force, if any. */
export function classifyArgs(args: unknown): { risk: Risk; reasons: string[] } | undefined {
  let risk: Risk | undefined;
  const reasons: string[] = [];
  const hit = (r: Risk, why: string) => {
    risk = risk ? higher(risk, r) : r;
    if (reasons.length < 8) reasons.push(why);
  };
  let nodes = 0;
  const walk = (value: unknown, key: string, depth: number): void => {
    if (++nodes > MAX_NODES) return;
    if (typeof value === 'string') {
      inspectString(key, value, hit);
      return;
    }
    if (depth >= MAX_DEPTH || typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) for (const v of value) walk(v, key, depth + 1);
    else for (const [k, v] of Object.entries(value)) walk(v, k, depth + 1);
  };
  walk(args, '', 0);
  if (nodes > MAX_NODES) hit('medium', `arguments too large to inspect fully (over ${MAX_NODES} values)`);
  return risk ? { risk, reasons } : undefined;
}

/** Strong SQL openings recognised in any field, whatever its name. */
const SQL_ANYWHERE =
  /^\s*(insert\s+into|update\s+[\w."]+\s+set|delete\s+from|drop\s+(table|database|schema|index|view)|truncate\s|alter\s+table|merge\s+into)\b/i;

function inspectString(key: string, value: string, hit: (r: Risk, why: string) => void): void {
  const field = key || 'argument';
  if (METHOD_FIELDS.test(key)) {
    const m = value.trim().toUpperCase();
    if (m === 'DELETE') hit('high', `${field} is HTTP DELETE`);
    else if (m === 'POST' || m === 'PUT' || m === 'PATCH') hit('medium', `${field} is HTTP ${m}`);
  }
  if (SQL_FIELDS.test(key) || SQL_ANYWHERE.test(value)) {
    const sql = sqlVerdict(value);
    if (sql) hit(sql.risk, `${field} is SQL that ${sql.why}`);
  }
  if (SHELL_FIELDS.test(key)) {
    const sh = shellVerdict(value);
    if (sh) hit(sh.risk, `${field} ${sh.why}`);
  }
  if (OPERATION_FIELDS.test(key) && value.length <= 100) {
    const words = splitName(value);
    const destructive = words.find((w) => DESTRUCTIVE.has(w) || OUTBOUND.has(w));
    const mutating = words.find((w) => MUTATING.has(w) || AMBIGUOUS.has(w));
    if (destructive) hit('high', `${field} is "${value.slice(0, 40)}"`);
    else if (mutating) hit('medium', `${field} is "${value.slice(0, 40)}"`);
  }
}

/**
 * Whether a text is SQL that changes state anywhere in it: comments, string literals, quoted identifiers
 * and dollar-quoted bodies are removed first, then every word counts (`WITH x AS (DELETE …) SELECT`,
 * `SELECT 1; DROP TABLE t`, `EXPLAIN ANALYZE DELETE …`). Text that does not open like SQL is not judged.
 */
export function sqlVerdict(text: string): { risk: Risk; why: string } | undefined {
  const bare = text
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/--[^\n]*/g, ' ')
    .replace(/\$([A-Za-z_]*)\$[\s\S]*?(\$\1\$|$)/g, " '' ")
    .replace(/'(?:[^']|'')*('|$)/g, " '' ")
    .replace(/"(?:[^"]|"")*("|$)/g, ' ident ')
    .replace(/`[^`]*(`|$)/g, ' ident ');
  const words = bare.toLowerCase().match(/[a-z_]+/g) ?? [];
  if (!SQL_LEADS.has(words[0] ?? '')) return undefined;
  const found = words.filter((w) => SQL_MUTATING.has(w));
  if (found.length === 0) return undefined;
  const destructive = found.find((w) => SQL_DESTRUCTIVE.has(w));
  const first = destructive ?? found[0];
  return { risk: destructive ? 'high' : 'medium', why: `contains ${String(first).toUpperCase()}` };
}

/**
 * Whether a shell command changes anything: output redirected to a file, or any program that is not a
 * known reader (in every segment: `;`, `&&`, `||`, `|`, `$( )`, backquotes, new lines). Unknown programs
 * count as writers.
 */
export function shellVerdict(command: string): { risk: Risk; why: string } | undefined {
  const unquoted = command.replace(/'[^']*('|$)/g, " '' ").replace(/"(?:\\.|[^"\\])*("|$)/g, ' "" ');
  for (const m of unquoted.matchAll(/>>?(&?)\s*([^\s&|;<>()]*)/g)) {
    // `2>&1`, `>&2` duplicate a descriptor; `>/dev/null` discards: neither writes a file.
    if (m[1] === '&' || m[2] === '/dev/null' || m[2] === '') continue;
    return { risk: 'medium', why: 'redirects output to a file' };
  }
  let verdict: { risk: Risk; why: string } | undefined;
  const plain = unquoted.replace(/\d*[<>]>?&\d*-?/g, ' ').replace(/\d*>>?\s*\/dev\/null/g, ' ');
  for (const segment of plain.split(/;|&&|\|\||\||\n|\$\(|`|\(|\)|&/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    while (words.length > 0 && (/^\w+=/.test(words[0] as string) || ['time', 'nice', 'nohup', 'env', 'command', 'builtin'].includes(words[0] as string)))
      words.shift();
    const program = (words[0] ?? '').split('/').pop() ?? '';
    if (!program || program === "''" || program === '""') continue;
    let found: { risk: Risk; why: string } | undefined;
    if (program === 'git') {
      const sub = words.find((w, i) => i > 0 && !w.startsWith('-')) ?? '';
      if (!GIT_READ.has(sub)) found = { risk: 'medium', why: `runs git ${sub}`.trim() };
    } else if (program === 'find' && words.some((w) => w === '-delete' || w.startsWith('-exec') || w === '-ok')) {
      found = { risk: 'high', why: 'runs find with -delete or -exec' };
    } else if (program === 'sed' && words.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place'))) {
      found = { risk: 'medium', why: 'edits files in place (sed -i)' };
    } else if (SHELL_DESTRUCTIVE.has(program)) found = { risk: 'high', why: `runs ${program}` };
    else if (!SHELL_READ.has(program)) found = { risk: 'medium', why: `runs ${program.slice(0, 40)}` };
    if (found && (!verdict || RANK[found.risk] > RANK[verdict.risk])) verdict = found;
  }
  return verdict;
}

/**
 * Classifies one call: name, then arguments, then annotations as described above.
 * @param name the upstream's name of the tool (without the gate's `<upstream>__` prefix).
 * @param prefixes namespace prefixes of the tool's upstream (namespacePrefixes).
 */
export function classifyCall(name: string, args: unknown, annotations: ToolAnnotations | undefined, prefixes: ReadonlySet<string> = new Set()): Classification {
  return combine(classifyName(name, prefixes), args === undefined ? undefined : classifyArgs(args), annotations);
}

/** Applies argument findings and annotations to a name verdict (split out so a name verdict can be cached). */
export function combine(n: NameVerdict, a: ReturnType<typeof classifyArgs>, annotations: ToolAnnotations | undefined): Classification {
  let kind = n.kind;
  let risk = n.risk;
  const reasons = [...n.reasons];
  if (a) {
    kind = 'mutation';
    risk = higher(risk, a.risk);
    reasons.unshift(...a.reasons);
  }
  if (annotations?.destructiveHint === true) {
    kind = 'mutation';
    risk = 'high';
    reasons.unshift('annotations: destructiveHint');
  } else if (annotations?.readOnlyHint === false) {
    if (kind === 'read-only') risk = 'medium';
    kind = 'mutation';
    reasons.push('annotations: readOnlyHint false');
  } else if (annotations?.readOnlyHint === true) {
    if (kind === 'mutation' && n.benign && !a)
      return { kind: 'read-only', risk: 'low', reasons: ['annotations: readOnlyHint (the name and arguments show no change)'] };
    if (kind === 'mutation') reasons.push('annotations: readOnlyHint, not believed');
  }
  return { kind, risk, reasons };
}
