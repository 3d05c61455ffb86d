/**
 * Cypher (Neo4j, openCypher, GQL) in arguments. npm has no sound, maintained Cypher parser, so only the
 * plain read forms are read-only: a query that opens with a reading clause (MATCH, OPTIONAL MATCH, WITH,
 * UNWIND, RETURN, SHOW, USE; EXPLAIN, PROFILE or CYPHER options before it), holds none of the
 * grammar's updating or administrative clause keywords, and calls no namespaced function (in Neo4j every
 * user-defined function and procedure has a namespace). Everything else is a mutation. Pure.
 * @see openCypher 9 grammar (clauses), Neo4j Cypher Manual "Clauses" and "User-defined functions".
 */
import { type CodeJudgement, MAX_CODE_CHARS } from './verdict.js';

/** The clause keywords of Cypher that do not read (openCypher 9, Neo4j 5 administration commands). */
const NOT_READ =
  /^(create|merge|set|delete|detach|remove|foreach|call|load|drop|alter|grant|deny|revoke|start|stop|terminate|rename|enable|insert|finish|periodic|commit|transactions)$/;

const READ_OPENERS = /^(match|optional|with|unwind|return|show|use)$/;

/** The code of a Cypher text with strings, quoted names and comments taken out (replaced by a space). */
function codeOf(text: string): string | undefined {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      i = end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' && c !== '`' ? 2 : 1;
      if (i >= text.length) return undefined;
      i++;
      out += ' x ';
      continue;
    } else {
      out += c;
      i++;
      continue;
    }
    out += ' ';
  }
  return out;
}

/** Judges a Cypher query. */
export function judgeCypher(text: string): CodeJudgement {
  if (text.length > MAX_CODE_CHARS) return { kind: 'write', risk: 'medium', why: `Cypher longer than ${MAX_CODE_CHARS} characters is not read` };
  const code = codeOf(text);
  if (code === undefined) return { kind: 'unparsed', why: 'Cypher: an unterminated string, name or comment' };
  if (/[\p{L}_][\p{L}\p{N}_]*\s*\.\s*[\p{L}_][\p{L}\p{N}_.\s]*\(/u.test(code))
    return { kind: 'write', risk: 'medium', why: 'Cypher calls a namespaced (user-defined or plug-in) function' };
  // Words, skipping property keys and labels (`n.set`, `:Delete`), which are names, not clauses.
  const words = [...code.matchAll(/(^|[^.:\p{L}\p{N}_$])([\p{L}_][\p{L}\p{N}_]*)/gu)].map((m) => (m[2] as string).toLowerCase());
  let k = 0;
  while (k < words.length && /^(explain|profile|cypher)$/.test(words[k] as string)) {
    k++;
    if (words[k - 1] === 'cypher') while (k < words.length && code.includes(`${words[k]}=`) && !READ_OPENERS.test(words[k] as string)) k += 2;
  }
  if (!READ_OPENERS.test(words[k] ?? ''))
    return { kind: 'write', risk: 'medium', why: `Cypher that opens with ${(words[k] ?? 'nothing').toUpperCase()}, not a read` };
  const bad = words.find((w) => NOT_READ.test(w));
  if (bad) return { kind: 'write', risk: bad === 'delete' || bad === 'detach' || bad === 'drop' ? 'high' : 'medium', why: `Cypher ${bad.toUpperCase()}` };
  return { kind: 'read', language: 'Cypher' };
}

/** Whether a text looks like Cypher: it opens with a clause keyword and holds a node pattern `(n:Label)`. */
export function looksLikeCypher(text: string): boolean {
  return (
    /^\s*(match|optional|merge|create|unwind|with|call|profile|explain|cypher|load|foreach|detach|return|use)\b/i.test(text) &&
    /\(\s*[\p{L}_`]*\s*(:\s*[\p{L}_`]|\)|\{)/u.test(text)
  );
}
