/**
 * Code in argument values, read only by real parsers: is this value code, and does it only read?
 *
 * - A field that holds code by its name or the tool's schema (code/fields.ts) is parsed in its
 *   languages; read-only only when a parser accepts it and says so, and a value no parser accepts is
 *   a mutation.
 * - Any other string is parsed when it opens like SQL, GraphQL or Cypher; when a parser accepts it,
 *   its verdict counts as if the field were named for code. A text no parser accepts stays text.
 * - Several languages or dialects: every parser that accepts the value is asked; the strictest wins.
 * Pure; one parse per language per value that holds code.
 */
import type { Risk } from '../../types.js';
import { judgeCypher, looksLikeCypher } from './cypher.js';
import type { CodeHint } from './fields.js';
import { judgeGraphql, looksLikeGraphql } from './graphql.js';
import { judgeKql, judgeSparql } from './query-languages.js';
import { judgeShell } from './shell.js';
import { ALL_DIALECTS, CALL_PARSE_MS, judgeSql } from './sql.js';
import type { ParseTime } from './sql-worker.js';
import { type CodeJudgement, type CodeLanguage, stricter } from './verdict.js';

export { type CodeHint, nameHint, type ToolCodeHints, toolCodeHints } from './fields.js';
export type { CodeJudgement, CodeLanguage, SqlDialect } from './verdict.js';
export { judgeCypher, judgeGraphql, judgeShell, judgeSql };

/** First words of SQL statements (PostgreSQL, MySQL, SQLite, SQL Server and BigQuery grammars). */
const SQL_STATEMENT_WORDS = new Set(
  `select with values table insert update delete merge upsert replace drop create alter truncate grant revoke
  call exec execute begin start commit rollback savepoint release copy explain set reset do show describe desc
  pragma vacuum analyze analyse lock unlock load install uninstall attach detach refresh reindex cluster notify
  listen unlisten prepare deallocate declare fetch move close discard checkpoint comment security reassign
  import export handler kill shutdown flush purge optimize repair rename use cache bulk backup restore
  summarize pivot unpivot from abort end checksum undrop`.split(/\s+/),
);

/** The first word of a text after white space, comments and opening parentheses, in lower case. */
function leadWord(text: string): string {
  const t = text.slice(0, 4000).replace(/^(?:[\s(;\ufeff\u200b-\u200d\u2060]+|--[^\n\r]*|#[^\n\r]*|\/\*[\s\S]*?\*\/)+/, '');
  // A comment the simple skip above may misread (PostgreSQL nests /* */) leaves text that is still tried.
  if (/^\s*(--|#|\/\*)/.test(text) && !/^[A-Za-z_]/.test(t)) return 'select';
  return (/^[A-Za-z_]+/.exec(t)?.[0] ?? '').toLowerCase();
}

/** SQL statement words that write, for text no parser reads. */
const WRITING_SQL_WORDS = new Set(
  'insert update delete merge upsert replace drop create alter truncate grant revoke call exec execute copy do set reset lock vacuum load attach detach rename'.split(
    ' ',
  ),
);
/** What makes a text that opens with a writing word look like a statement rather than a sentence. */
const SQL_SHAPE = /[;()=*]|\b(from|into|table|set|where|values|returning|database|schema|user|role|index|view|column|limit)\b/i;

const looksWriting = (why: string): CodeJudgement => ({ kind: 'write', risk: 'medium', why });

/** A GraphQL text without its leading comments, commas and white space. */
function graphqlHead(text: string): string {
  return text.slice(0, 4000).replace(/^(?:[\s,\ufeff]+|#[^\n\r]*)+/, '');
}

const NAMES: Record<CodeLanguage, string> = {
  sql: 'SQL',
  graphql: 'GraphQL',
  cypher: 'Cypher',
  shell: 'a shell command',
  sparql: 'SPARQL',
  kql: 'KQL',
  'read-only query': 'a query',
};

function judgeIn(language: CodeLanguage, text: string, hint: CodeHint | undefined, budget: CodeBudget): CodeJudgement {
  if (language === 'sql') return judgeSql(text, hint?.dialects ?? ALL_DIALECTS, budget.sqlTime);
  if (language === 'graphql') return judgeGraphql(text);
  if (language === 'cypher') return judgeCypher(text);
  if (language === 'sparql') return judgeSparql(text);
  if (language === 'kql') return judgeKql(text);
  if (language === 'read-only query') return { kind: 'read', language: 'a read-only query language' };
  return judgeShell(text);
}

/**
 * How much code one call may make the gate parse (characters, summed over values and languages):
 * parsing is synchronous, so without a bound one call full of SQL-looking strings could stall the gate.
 */
export const CODE_BUDGET_CHARS = 64_000;

/**
 * What is left of one call's parsing budget: characters, and node-sql-parser's time (ms). Create one
 * per call with `newCodeBudget()`.
 */
export interface CodeBudget {
  chars: number;
  /** Shell is parsed on the gate's thread (about 0.1 ms per 10 characters): its own, smaller budget. */
  shellChars: number;
  sqlTime: ParseTime;
}

/** How many characters of shell one call may make the gate parse. */
export const SHELL_BUDGET_CHARS = 16_000;

/** A fresh budget for one call. */
export function newCodeBudget(): CodeBudget {
  return { chars: CODE_BUDGET_CHARS, shellChars: SHELL_BUDGET_CHARS, sqlTime: { ms: CALL_PARSE_MS } };
}

/**
 * Judges one string argument.
 * @param hint what the field's name or the tool's schema says of it; undefined for a plain field.
 * @param budget the call's parsing budget, spent here; once spent, any further code is a mutation.
 * @returns a mutation's risk and reason, or undefined when the value only reads or is not code.
 */
export function judgeValue(text: string, hint: CodeHint | undefined, budget: CodeBudget = newCodeBudget()): { risk: Risk; why: string } | undefined {
  let verdict: CodeJudgement | undefined;
  const unparsed: string[] = [];
  const ask = (language: CodeLanguage, code = text) => {
    budget.chars -= code.length;
    if (language === 'shell') budget.shellChars -= code.length;
    if (budget.chars < 0 || budget.shellChars < 0) {
      const spent: CodeJudgement = {
        kind: 'write',
        risk: 'medium',
        why: `the call carries more code than the gate reads in one call (${CODE_BUDGET_CHARS} characters)`,
      };
      verdict = verdict ? stricter(verdict, spent) : spent;
      return;
    }
    const j = judgeIn(language, code, hint, budget);
    if (j.kind === 'unparsed') unparsed.push(j.why);
    else verdict = verdict ? stricter(verdict, j) : j;
  };
  // A condition (`where`, `filter`) runs inside a query: judge it where it runs.
  const askFragment = () => ask('sql', `SELECT * FROM t WHERE ${text}`);
  if (text.includes('\0')) return { risk: 'medium', why: 'holds a NUL character, where a parser may stop reading' };
  if (hint?.strict && hint.fragment === 'condition' && hint.languages.includes('sql')) {
    askFragment();
    if (!verdict) return { risk: 'medium', why: `not readable as an SQL condition, so it could do anything (${unparsed[0] ?? 'no parser accepts it'})` };
  } else if (hint?.strict) {
    for (const l of hint.languages) ask(l);
    if (!verdict)
      return {
        risk: 'medium',
        why: `not readable as ${hint.languages.map((l) => NAMES[l]).join(' or ')}, so it could do anything (${unparsed[0] ?? 'no parser accepts it'})`,
      };
  }
  // A field whose language was parsed is judged in that language (the upstream runs it as such). Any
  // other text, and a field said to hold a language the gate does not parse, is also read by every
  // parser that accepts it: a field described as PromQL cannot hide a DROP TABLE.
  if (hint?.strict && verdict && !hint.languages.includes('read-only query')) {
    const v = verdict as CodeJudgement;
    return v.kind === 'write' ? { risk: v.risk, why: v.why } : undefined;
  }
  const asked = hint?.strict ? new Set(hint.languages) : new Set<CodeLanguage>();
  if (!hint?.strict && hint?.fragment === 'condition') askFragment();
  const lead = leadWord(text);
  const sqlLike = !asked.has('sql') && SQL_STATEMENT_WORDS.has(lead);
  const graphqlLike = !asked.has('graphql') && looksLikeGraphql(text);
  const cypherLike = !asked.has('cypher') && looksLikeCypher(text);
  const refusedBefore = unparsed.length;
  let tried = 0;
  for (const [like, language] of [
    [sqlLike, 'sql'],
    [graphqlLike, 'graphql'],
    [cypherLike, 'cypher'],
  ] as const)
    if (like) {
      ask(language);
      tried++;
    }
  // Text shaped like a writing statement that no parser of any language reads is held: "could not tell" is not "read".
  if (tried > 0 && unparsed.length - refusedBefore === tried && (!hint?.strict || !verdict)) {
    if (sqlLike && WRITING_SQL_WORDS.has(lead) && SQL_SHAPE.test(text))
      verdict = looksWriting(`opens like a ${lead.toUpperCase()} statement that no SQL parser reads`);
    else if (graphqlLike && /^(mutation|subscription)\b/.test(graphqlHead(text)))
      verdict = looksWriting('opens like a GraphQL mutation that the parser does not read');
    else if (cypherLike) verdict = looksWriting('looks like Cypher that cannot be read');
  }
  // A statement after a semicolon (`1=1; DELETE FROM users` in a filter) is judged on its own.
  for (const segment of text.split(';').slice(1, 21)) if (SQL_STATEMENT_WORDS.has(leadWord(segment))) ask('sql', segment);
  const v = verdict as CodeJudgement | undefined;
  return v?.kind === 'write' ? { risk: v.risk, why: v.why } : undefined;
}
