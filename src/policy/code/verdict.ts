/**
 * What a parser says about one piece of code found in a tool call's arguments. Pure.
 *
 * Fail closed: code that no parser of its language accepts is a `write`, never "probably fine".
 */
import type { Risk } from '../../types.js';

/** The languages whose code the gate reads in argument values. */
export type CodeLanguage = 'sql' | 'graphql' | 'shell' | 'cypher' | 'sparql' | 'kql' | 'read-only query';

/** SQL dialects the gate can parse: PostgreSQL with its own parser, the others with node-sql-parser. */
export type SqlDialect = 'postgresql' | 'mysql' | 'mariadb' | 'sqlite' | 'transactsql' | 'bigquery' | 'snowflake';

/**
 * A parser's judgement of one text:
 * - `read`: parsed, and every part of it only reads;
 * - `write`: parsed (or refused) and judged a mutation, with its risk and a reason a person can read;
 * - `unparsed`: no parser of the language accepts it (`why` says which and where); the caller decides
 *   whether that makes it a mutation (a field named for code) or plain text (content detection).
 */
export type CodeJudgement = { kind: 'read'; language: string } | { kind: 'write'; risk: Risk; why: string } | { kind: 'unparsed'; why: string };

/** The stricter of two judgements: write > unparsed > read. */
export function stricter(a: CodeJudgement, b: CodeJudgement): CodeJudgement {
  const rank = (j: CodeJudgement) => (j.kind === 'write' ? (j.risk === 'high' ? 4 : j.risk === 'medium' ? 3 : 2) : j.kind === 'unparsed' ? 1 : 0);
  return rank(b) > rank(a) ? b : a;
}

/** Longest code text that is parsed (characters); longer code is a mutation, since it is not read. */
export const MAX_CODE_CHARS = 100_000;
