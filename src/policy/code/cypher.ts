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
  /^(create|merge|set|delete|detach|remove|foreach|call|load|drop|alter|grant|deny|revoke|start|stop|terminate|rename|enable|insert|finish|periodic|commit|transactions|deallocate|reallocate|dryrun|nodetach)$/;

const READ_OPENERS = /^(match|optional|with|unwind|return|show)$/;

/** The code of a Cypher text with strings, quoted names and comments taken out (replaced by a space). */
function codeOf(text: string): string | undefined {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '/' && text[i + 1] === '/') {
      // Neo4j's lexer ends a line comment at CR as well as LF; ending it at any line break is never laxer.
      while (i < text.length && !/[\n\r\u0085\u2028\u2029]/.test(text[i] as string)) i++;
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
  // Neo4j counts more characters as white space than JavaScript's \s does (U+001C–U+001F among them).
  return out.replace(/[\p{Cc}\p{Cf}\p{Z}]/gu, ' ');
}

/** Built-in procedures that only report (Neo4j 5 Operations Manual, "Procedures"); CALL of any other is a mutation. */
const READ_PROCEDURES = new Set([
  'db.labels',
  'db.relationshipTypes',
  'db.propertyKeys',
  'db.schema.visualization',
  'db.schema.nodeTypeProperties',
  'db.schema.relTypeProperties',
  'db.info',
  'db.ping',
  'dbms.components',
]);

/** Names called with a namespace (`ns.fn(`), found on tokens in one linear pass, with whether CALL precedes each. */
function namespacedCalls(code: string): { name: string; called: boolean }[] {
  const tokens = code.match(/[\p{L}_][\p{L}\p{N}_]*|\S/gu) ?? [];
  const out: { name: string; called: boolean }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!/^[\p{L}_]/u.test(tokens[i] as string) || tokens[i - 1] === '.') continue;
    let j = i;
    const parts = [tokens[i] as string];
    while (tokens[j + 1] === '.' && /^[\p{L}_]/u.test(tokens[j + 2] ?? '')) {
      parts.push(tokens[j + 2] as string);
      j += 2;
    }
    if (parts.length > 1 && tokens[j + 1] === '(') out.push({ name: parts.join('.'), called: (tokens[i - 1] ?? '').toLowerCase() === 'call' });
    i = j;
  }
  return out;
}

/** Judges a Cypher query. */
export function judgeCypher(text: string): CodeJudgement {
  if (text.length > MAX_CODE_CHARS) return { kind: 'write', risk: 'medium', why: `Cypher longer than ${MAX_CODE_CHARS} characters is not read` };
  const code = codeOf(text);
  if (code === undefined) return { kind: 'unparsed', why: 'Cypher: an unterminated string, name or comment' };
  const calls = namespacedCalls(code);
  const foreign = calls.find((c) => !(c.called && READ_PROCEDURES.has(c.name)));
  if (foreign)
    return { kind: 'write', risk: 'medium', why: `Cypher calls ${foreign.name.slice(0, 60)}, a namespaced (user-defined or plug-in) function or procedure` };
  // Words, skipping property keys and labels (`n.set`, `:Delete`), which are names, not clauses.
  const words = [...code.matchAll(/(^|[^.:\p{L}\p{N}_$])([\p{L}_][\p{L}\p{N}_]*)/gu)].map((m) => (m[2] as string).toLowerCase());
  let k = 0;
  while (k < words.length && /^(explain|profile|cypher)$/.test(words[k] as string)) {
    k++;
    if (words[k - 1] === 'cypher') while (k < words.length && code.includes(`${words[k]}=`) && !READ_OPENERS.test(words[k] as string)) k += 2;
  }
  // CALL is a read only when every CALL names a reporting procedure.
  const callsRead = calls.filter((c) => c.called).length === words.filter((x) => x === 'call').length;
  // `USE graph` names the database the rest runs on; what follows must itself be a read.
  while (words[k] === 'use') k += 2;
  if (!READ_OPENERS.test(words[k] ?? '') && !(words[k] === 'call' && callsRead))
    return { kind: 'write', risk: 'medium', why: `Cypher that opens with ${(words[k] ?? 'nothing').toUpperCase()}, not a read` };
  const bad = words.find((w) => NOT_READ.test(w) && !(w === 'call' && callsRead));
  if (bad) return { kind: 'write', risk: bad === 'delete' || bad === 'detach' || bad === 'drop' ? 'high' : 'medium', why: `Cypher ${bad.toUpperCase()}` };
  return { kind: 'read', language: 'Cypher' };
}

/** Whether a text looks like Cypher: after comments it opens with a clause keyword, and holds a node pattern `(n:Label)`. */
export function looksLikeCypher(text: string): boolean {
  const head = text.slice(0, 2000).replace(/^(?:\s+|\/\/[^\n\r]*|\/\*[\s\S]*?\*\/)+/, '');
  return (
    /^(match|optional|merge|create|unwind|with|call|profile|explain|cypher|load|foreach|detach|return|use|insert)\b/i.test(head) &&
    /\((?:\s*[\p{L}_`][\p{L}\p{N}_`]*)?\s*[:){]/u.test(head)
  );
}
