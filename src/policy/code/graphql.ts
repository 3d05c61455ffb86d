/**
 * GraphQL in arguments, judged by the reference parser (`graphql`, GraphQL spec October 2021, section 2
 * "Language"). Read-only only when every definition in the document is a `query` operation or a
 * fragment; a mutation, a subscription or anything else (type system definitions, which no server
 * executes) is a mutation; a text the parser refuses is `unparsed`. Pure.
 */
import { Kind, parse } from 'graphql';
import { type CodeJudgement, MAX_CODE_CHARS } from './verdict.js';

/** Most tokens the parser reads before it gives up (a bound on work for hostile documents). */
const MAX_TOKENS = 50_000;

/** Judges a GraphQL document. */
export function judgeGraphql(text: string): CodeJudgement {
  if (text.length > MAX_CODE_CHARS) return { kind: 'write', risk: 'medium', why: `GraphQL longer than ${MAX_CODE_CHARS} characters is not read` };
  let doc: ReturnType<typeof parse>;
  try {
    doc = parse(text, { noLocation: true, maxTokens: MAX_TOKENS });
  } catch (e) {
    return { kind: 'unparsed', why: `GraphQL: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}` };
  }
  for (const def of doc.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) continue;
    if (def.kind === Kind.OPERATION_DEFINITION) {
      if (def.operation === 'query') continue;
      const name = def.name ? ` ${def.name.value}` : '';
      return { kind: 'write', risk: def.operation === 'mutation' ? 'high' : 'medium', why: `GraphQL ${def.operation}${name}` };
    }
    return { kind: 'write', risk: 'medium', why: `GraphQL ${def.kind}, not a query` };
  }
  return { kind: 'read', language: 'GraphQL' };
}

/** Whether a text opens like a GraphQL document (after comments and commas, which GraphQL ignores). */
export function looksLikeGraphql(text: string): boolean {
  const t = text.replace(/^(?:[\s,\ufeff]+|#[^\n\r]*)+/, '');
  return /^(\{|(query|mutation|subscription|fragment)\b)/.test(t);
}
