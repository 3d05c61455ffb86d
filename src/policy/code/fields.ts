/**
 * Which argument values are code, and in which language. Three sources, strongest first:
 * - the tool's inputSchema: a property whose `format` names a language, or whose description or title
 *   names a language and a kind of code ("The SQL query to run");
 * - the field's name: `sql`, `statement`, `command`, `script`, `cypher`, `graphql` (and `sqlQuery`,
 *   `graphql_query` …) always hold code; `query`, `q`, `filter`, `expression`, `where`, `code` hold code
 *   when the tool's description names a language, else only when a parser accepts the value;
 * - the value itself, for any string: see code/index.ts.
 * A field that holds code by name or schema is `strict`: a value no parser of its language accepts is a
 * mutation. Pure; computed once per tool definition.
 */
import type { CodeLanguage, SqlDialect } from './verdict.js';

/** What is known of one field: its languages, SQL dialects when named, and whether it must be code. */
export interface CodeHint {
  languages: readonly CodeLanguage[];
  /** SQL dialects named by the tool or the field; undefined when none is named (all are asked). */
  dialects?: readonly SqlDialect[];
  /** A field named or described as code: a value no parser accepts is a mutation. */
  strict: boolean;
  /** The value is a part of a statement, judged where it runs: a condition after WHERE. */
  fragment?: 'condition';
}

/** Code hints of one tool: per property name (at any depth of its inputSchema), and the tool's own. */
export interface ToolCodeHints {
  properties: ReadonlyMap<string, CodeHint>;
  /** Languages (and dialects) the tool's name, description or upstream names; applied to loose fields. */
  tool?: CodeHint;
}

const LANGUAGE_WORDS: readonly [CodeLanguage, RegExp][] = [
  [
    'sql',
    /\b(sql|postgres(ql)?|psql|mysql|mariadb|sqlite|t-?sql|sql server|mssql|bigquery|snowflake|duckdb|clickhouse|redshift|oracle|cockroach(db)?|supabase|timescale(db)?)\b/i,
  ],
  ['graphql', /\b(graphql|gql)\b/i],
  ['cypher', /\b(cypher|neo4j|opencypher|memgraph)\b/i],
  ['shell', /\b(shell|bash|zsh|terminal|command[- ]line)\b/i],
  ['sparql', /\bsparql\b/i],
  ['kql', /\b(kql|kusto)\b/i],
  ['read-only query', /\b(promql|logql|jq|jsonpath|jmespath|xpath)\b/i],
];

const DIALECT_WORDS: readonly [SqlDialect[], RegExp][] = [
  [['postgresql'], /\b(postgres(ql)?|psql|supabase|cockroach(db)?|redshift|timescale(db)?|pg)\b/i],
  [['mysql', 'mariadb'], /\b(mysql|mariadb)\b/i],
  [['sqlite'], /\bsqlite\d?\b/i],
  [['transactsql'], /\b(t-?sql|sql server|mssql|azure sql)\b/i],
  [['bigquery'], /\bbigquery\b/i],
  [['snowflake'], /\bsnowflake\b/i],
];

/** Nouns that say a described value is code, not a name or a setting. */
const CODE_NOUNS = /\b(quer(y|ies)|statements?|commands?|scripts?|code|expressions?|snippets?|documents?|operations?|mutations?|programs?|to (run|execute))\b/i;

/** Field names that always hold code, by their last word (singular), with their languages. */
const STRICT_NAMES: Record<string, readonly CodeLanguage[]> = {
  sql: ['sql'],
  statement: ['sql'],
  stmt: ['sql'],
  cypher: ['cypher'],
  graphql: ['graphql'],
  gql: ['graphql'],
  command: ['shell'],
  cmd: ['shell'],
  cmdline: ['shell'],
  exec: ['shell'],
  commandline: ['shell'],
  script: ['shell'],
  shell: ['shell'],
  bash: ['shell'],
  sh: ['shell'],
};
/** Field names that hold code when something names its language (else only when a parser accepts it). */
const LOOSE_NAMES = new Set([
  'query',
  'q',
  'filter',
  'expression',
  'expr',
  'where',
  'condition',
  'predicate',
  'code',
  'text',
  'string',
  'body',
  'input',
  'source',
  'src',
]);
/** Field names whose value is a condition inside a query (`WHERE <value>`). */
const CONDITION_NAMES = new Set(['where', 'condition', 'predicate', 'filter']);
/** Of the loose names, those that are code by name when the tool names a language. */
const CODE_IF_TOOL_SAYS = new Set(['query', 'q', 'filter', 'expression', 'expr', 'where', 'condition', 'predicate', 'code']);

/** Lower-case words of a field name: `sqlQuery` → sql, query; `search_query` → search, query. */
function keyWords(key: string): string[] {
  return (
    key
      // `command_line`, `cmdLine` name one thing.
      .replace(/(command|cmd)[_\-\s]?line/gi, (_m, w: string) => `${w}line`)
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .split(/[^A-Za-z0-9]+/)
      .map((w) => w.toLowerCase())
      .filter(Boolean)
      .map((w) => (/^(command|statement|script|quer)(s|ies)$/.test(w) ? w.replace(/ies$/, 'y').replace(/s$/, '') : w))
  );
}

/** Languages and dialects a free text (a description, a title, a tool or upstream name) names. */
function languagesNamed(text: string): { languages: CodeLanguage[]; dialects?: SqlDialect[] } {
  const languages = LANGUAGE_WORDS.filter(([, re]) => re.test(text)).map(([l]) => l);
  const dialects = [...new Set(DIALECT_WORDS.filter(([, re]) => re.test(text)).flatMap(([d]) => d))];
  return dialects.length > 0 ? { languages, dialects } : { languages };
}

/** The hint a field's name gives, joined with the tool's; undefined when the field is not code by name. */
export function nameHint(key: string, tool: CodeHint | undefined): CodeHint | undefined {
  const words = keyWords(key);
  const last = words[words.length - 1] ?? '';
  const strict = STRICT_NAMES[last];
  if (strict) return { languages: strict, strict: true, ...(tool?.dialects ? { dialects: tool.dialects } : {}) };
  if (!LOOSE_NAMES.has(last)) return undefined;
  const fragment = CONDITION_NAMES.has(last) ? { fragment: 'condition' as const } : {};
  const named = words.slice(0, -1).flatMap((w) => STRICT_NAMES[w] ?? []);
  if (named.length > 0) return { languages: [...new Set(named)], strict: true, ...fragment, ...(tool?.dialects ? { dialects: tool.dialects } : {}) };
  if (tool && tool.languages.length > 0 && CODE_IF_TOOL_SAYS.has(last)) return { ...tool, strict: true, ...fragment };
  return { languages: ['sql', 'graphql', 'cypher'], strict: false, ...fragment, ...(tool?.dialects ? { dialects: tool.dialects } : {}) };
}

/**
 * Code hints of one tool definition (`description`, `inputSchema`) and the name of its upstream.
 * Walks the inputSchema's `properties` (and `items`, `anyOf`/`oneOf`/`allOf`) to a bounded depth.
 */
export function toolCodeHints(definition: Record<string, unknown>, upstreamName = ''): ToolCodeHints {
  const description = typeof definition.description === 'string' ? definition.description.slice(0, 4000) : '';
  const toolName = typeof definition.name === 'string' ? definition.name.replace(/[_\-.]/g, ' ') : '';
  const fromTool = languagesNamed(`${toolName} ${description}`);
  const fromUpstream = languagesNamed(upstreamName.replace(/[_\-.]/g, ' '));
  const dialects = fromTool.dialects ?? fromUpstream.dialects;
  // The shell is taken only from a property's own description: "Search the shell history" names no language of a `query`.
  const languages = (fromTool.languages.length > 0 ? fromTool.languages : fromUpstream.languages).filter((l) => l !== 'shell');
  const tool: CodeHint | undefined =
    languages.length > 0 || dialects ? { languages: languages.length > 0 ? languages : ['sql'], strict: false, ...(dialects ? { dialects } : {}) } : undefined;
  const properties = new Map<string, CodeHint>();
  const visit = (schema: unknown, depth: number): void => {
    if (depth > 8 || typeof schema !== 'object' || schema === null) return;
    const s = schema as Record<string, unknown>;
    for (const k of ['items', 'additionalProperties']) visit(s[k], depth + 1);
    for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[k])) for (const x of s[k] as unknown[]) visit(x, depth + 1);
    const props = s.properties;
    if (typeof props !== 'object' || props === null) return;
    for (const [name, p] of Object.entries(props as Record<string, unknown>)) {
      if (typeof p !== 'object' || p === null) continue;
      const prop = p as Record<string, unknown>;
      const text = ['description', 'title', 'format', 'contentMediaType']
        .map((k) => (typeof prop[k] === 'string' ? (prop[k] as string).slice(0, 2000) : ''))
        .join(' ');
      const named = languagesNamed(text);
      const format = typeof prop.format === 'string' ? languagesNamed(prop.format) : { languages: [] };
      if (format.languages.length > 0 || (named.languages.length > 0 && CODE_NOUNS.test(text)))
        properties.set(name, {
          languages: format.languages.length > 0 ? format.languages : named.languages,
          strict: true,
          ...((named.dialects ?? dialects) ? { dialects: named.dialects ?? dialects } : {}),
        });
      visit(prop, depth + 1);
    }
  };
  visit(definition.inputSchema, 0);
  return tool ? { properties, tool } : { properties };
}
