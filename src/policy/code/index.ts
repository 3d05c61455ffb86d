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
import { judgeShell } from './shell.js';
import { ALL_DIALECTS, judgeSql } from './sql.js';
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
  const t = text.slice(0, 4000).replace(/^(?:[\s(;\ufeff]+|--[^\n]*(\n|$)|#[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)+/, '');
  return (/^[A-Za-z_]+/.exec(t)?.[0] ?? '').toLowerCase();
}

const NAMES: Record<CodeLanguage, string> = { sql: 'SQL', graphql: 'GraphQL', cypher: 'Cypher', shell: 'a shell command' };

function judgeIn(language: CodeLanguage, text: string, hint: CodeHint | undefined): CodeJudgement {
  if (language === 'sql') return judgeSql(text, hint?.dialects ?? ALL_DIALECTS);
  if (language === 'graphql') return judgeGraphql(text);
  if (language === 'cypher') return judgeCypher(text);
  return judgeShell(text);
}

/**
 * How much code one call may make the gate parse (characters, summed over values and languages):
 * parsing is synchronous, so without a bound one call full of SQL-looking strings could stall the gate.
 */
export const CODE_BUDGET_CHARS = 64_000;

/** What is left of one call's parsing budget; create one per call with `{ chars: CODE_BUDGET_CHARS }`. */
export interface CodeBudget {
  chars: number;
}

/**
 * Judges one string argument.
 * @param hint what the field's name or the tool's schema says of it; undefined for a plain field.
 * @param budget the call's parsing budget, spent here; once spent, any further code is a mutation.
 * @returns a mutation's risk and reason, or undefined when the value only reads or is not code.
 */
export function judgeValue(
  text: string,
  hint: CodeHint | undefined,
  budget: CodeBudget = { chars: CODE_BUDGET_CHARS },
): { risk: Risk; why: string } | undefined {
  let verdict: CodeJudgement | undefined;
  const unparsed: string[] = [];
  const ask = (language: CodeLanguage) => {
    budget.chars -= text.length;
    if (budget.chars < 0) {
      const spent: CodeJudgement = {
        kind: 'write',
        risk: 'medium',
        why: `the call carries more code than the gate reads in one call (${CODE_BUDGET_CHARS} characters)`,
      };
      verdict = verdict ? stricter(verdict, spent) : spent;
      return;
    }
    const j = judgeIn(language, text, hint);
    if (j.kind === 'unparsed') unparsed.push(j.why);
    else verdict = verdict ? stricter(verdict, j) : j;
  };
  if (hint?.strict) {
    for (const l of hint.languages) ask(l);
    if (!verdict)
      return {
        risk: 'medium',
        why: `not readable as ${hint.languages.map((l) => NAMES[l]).join(' or ')}, so it could do anything (${unparsed[0] ?? 'no parser accepts it'})`,
      };
  } else {
    const lead = leadWord(text);
    if (SQL_STATEMENT_WORDS.has(lead)) ask('sql');
    if (looksLikeGraphql(text)) ask('graphql');
    if (looksLikeCypher(text)) ask('cypher');
  }
  const v = verdict as CodeJudgement | undefined;
  return v?.kind === 'write' ? { risk: v.risk, why: v.why } : undefined;
}
