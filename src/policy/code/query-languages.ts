/**
 * Query languages besides SQL, GraphQL and Cypher, named by a tool's schema. npm has no sound parser
 * for them, so only their plain read forms are read-only (issue 12: "otherwise only the plain read forms
 * are read-only, and everything else is a mutation"). Pure.
 * - SPARQL 1.1: a query form (SELECT, ASK, CONSTRUCT, DESCRIBE) after PREFIX/BASE, with none of SPARQL
 *   1.1 Update's operations anywhere (W3C SPARQL 1.1 Update, section 3).
 * - Kusto (KQL): a query has no control command (a statement that starts with `.`, Kusto docs
 *   "Management commands") and no `evaluate` of a plug-in (which may run code).
 * - PromQL, LogQL, jq, JSONPath, JMESPath, XPath: languages without any operation that writes.
 */
import { type CodeJudgement, MAX_CODE_CHARS } from './verdict.js';

/** The languages of this file. */
export type OtherQueryLanguage = 'sparql' | 'kql' | 'read-only query';

const SPARQL_UPDATE = /^(insert|delete|load|clear|create|drop|copy|move|add|with)$/;

/** SPARQL text with strings, IRIs and comments taken out. */
function sparqlCode(text: string): string {
  return text
    .replace(/"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, ' "" ')
    .replace(/<[^<>"{}|^`\\\s]*>/g, ' <> ')
    .replace(/#[^\n\r]*/g, ' ');
}

/** Judges a SPARQL request. */
export function judgeSparql(text: string): CodeJudgement {
  if (text.length > MAX_CODE_CHARS) return { kind: 'write', risk: 'medium', why: `SPARQL longer than ${MAX_CODE_CHARS} characters is not read` };
  const words = (sparqlCode(text).match(/[A-Za-z_][\w-]*(?::[\w-]*)?/g) ?? []).map((w) => w.toLowerCase());
  let k = 0;
  while (words[k] === 'prefix' || words[k] === 'base') k += words[k] === 'prefix' ? 2 : 1;
  if (!/^(select|ask|construct|describe)$/.test(words[k] ?? ''))
    return { kind: 'write', risk: 'medium', why: `SPARQL that opens with ${(words[k] ?? 'nothing').toUpperCase()}, not a query` };
  const update = words.find((w) => SPARQL_UPDATE.test(w));
  if (update)
    return { kind: 'write', risk: update === 'drop' || update === 'clear' || update === 'delete' ? 'high' : 'medium', why: `SPARQL ${update.toUpperCase()}` };
  return { kind: 'read', language: 'SPARQL' };
}

/** Judges a Kusto (KQL) query. */
export function judgeKql(text: string): CodeJudgement {
  if (text.length > MAX_CODE_CHARS) return { kind: 'write', risk: 'medium', why: `KQL longer than ${MAX_CODE_CHARS} characters is not read` };
  const code = text.replace(/"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\/\/[^\n\r]*/g, ' "" ');
  if (/(^|[;\n\r])\s*\./.test(code)) return { kind: 'write', risk: 'medium', why: 'KQL control command (a statement that starts with ".")' };
  if (/\bevaluate\b/i.test(code)) return { kind: 'write', risk: 'medium', why: 'KQL evaluate runs a plug-in' };
  return { kind: 'read', language: 'KQL' };
}
