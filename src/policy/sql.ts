/**
 * SQL (and the query languages that look like it: Cypher, MySQL's dialect, Postgres's) read for the
 * classifier: does a text change state anywhere in it? One left-to-right scan per dialect removes what
 * hides text (strings, quoted names, comments, dollar quotes), and the strictest dialect's verdict wins.
 * Split out of classify.ts, which calls it for argument strings. Pure.
 */
import type { Risk } from '../types.js';
import { higher } from './rank.js';
import { SQL_DESTRUCTIVE, SQL_LEADS, SQL_MUTATING, SQL_READ_LEADS, SQL_SIDE_EFFECT_FUNCTIONS } from './words.js';

/**
 * How one SQL dialect reads the characters that hide text: `#` comments (MySQL; in Postgres `#` is XOR),
 * backslash escapes in every string (MySQL) or only in `E'…'` (Postgres), `--` a comment only before
 * whitespace (MySQL), `$tag$` quotes (Postgres; in MySQL `$x$` is an identifier).
 */
interface Dialect {
  hashComments: boolean;
  backslashes: boolean;
  dashNeedsSpace: boolean;
  dollarQuotes: boolean;
}

/**
 * The dialects every SQL text is read in; the strictest verdict wins, so that text one database runs
 * cannot hide behind another's comment or quoting rules.
 */
const DIALECTS: readonly Dialect[] = [
  { hashComments: false, backslashes: false, dashNeedsSpace: false, dollarQuotes: true },
  { hashComments: true, backslashes: true, dashNeedsSpace: true, dollarQuotes: false },
  { hashComments: true, backslashes: false, dashNeedsSpace: false, dollarQuotes: true },
];

/**
 * SQL as a sequence of words, with string literals, quoted identifiers, comments and dollar-quoted bodies
 * removed in one left-to-right scan (so a `--` inside a string cannot hide what follows it), as `d` reads
 * them. MySQL's executable comments (`/*! … *​/`) are kept as code.
 */
function sqlWords(text: string, d: Dialect = DIALECTS[0] as Dialect): string[] {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === '-' && next === '-' && (!d.dashNeedsSpace || /\s/.test(text[i + 2] ?? ' '))) {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '#' && d.hashComments) {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      if (text[i + 2] === '!') {
        i += 3;
        continue;
      }
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 2;
    } else if (c === "'") {
      const escapes = d.backslashes || (/[eE]/.test(text[i - 1] ?? '') && !/\w/.test(text[i - 2] ?? ''));
      i++;
      while (i < n) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === "'" && text[i + 1] === "'") i += 2;
        else if (text[i] === "'") break;
        else i++;
      }
      i++;
      out += ' x ';
    } else if (c === '"' && d.backslashes) {
      // MySQL (default mode) and Cypher read "…" as a string with backslash escapes.
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      out += ' x ';
    } else if (c === '"' || c === '`') {
      const close = text.indexOf(c, i + 1);
      i = close < 0 ? n : close + 1;
      out += ' ident ';
    } else if (c === '$' && d.dollarQuotes && !/[\p{L}\p{N}_$]/u.test(text[i - 1] ?? '')) {
      const tag = /^\$([A-Za-z_]\w*)?\$/.exec(text.slice(i));
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        i = close < 0 ? n : close + tag[0].length;
        out += ' x ';
      } else {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out.toLowerCase().match(/[a-z_][a-z_0-9]*/g) ?? [];
}

/** Whether a text opens like SQL (its first word is an SQL lead). */
export function sqlLead(text: string): boolean {
  return SQL_LEADS.has(sqlWords(text.slice(0, 2000))[0] ?? '');
}

/**
 * Whether a text is SQL that changes state anywhere in it: DML, DDL, privileges, session writes, and
 * functions with effects (`pg_terminate_backend(…)`, `dblink_exec(…)`, `nextval(…)`). In a field named
 * for SQL (`strict`), a statement that does not open like a read (`SELECT`, `WITH`, `SHOW`, …) is a
 * mutation whatever it says; elsewhere text that does not open like SQL is not judged.
 */
export function sqlVerdict(text: string, strict = false): { risk: Risk; why: string } | undefined {
  let worst: { risk: Risk; why: string } | undefined;
  for (const d of DIALECTS) {
    const v = sqlVerdictIn(text, strict, d);
    if (v && (!worst || higher(worst.risk, v.risk) !== worst.risk)) worst = v;
    if (worst?.risk === 'high') break;
  }
  return worst;
}

function sqlVerdictIn(text: string, strict: boolean, d: Dialect): { risk: Risk; why: string } | undefined {
  const words = sqlWords(text, d);
  const first = words[0] ?? '';
  if (!SQL_LEADS.has(first) && !strict) return undefined;
  if (strict && words.length > 0 && !SQL_READ_LEADS.has(first) && !SQL_MUTATING.has(first))
    return { risk: 'medium', why: `opens with ${first.toUpperCase()}, not a read` };
  const found = words.filter((w) => SQL_MUTATING.has(w));
  const destructive = found.find((w) => SQL_DESTRUCTIVE.has(w));
  if (found.length > 0) return { risk: destructive ? 'high' : 'medium', why: `contains ${String(destructive ?? found[0]).toUpperCase()}` };
  const fn = SQL_SIDE_EFFECT_FUNCTIONS.exec(words.join(' ').replace(/ \(/g, '('));
  if (fn || SQL_SIDE_EFFECT_FUNCTIONS.test(text)) return { risk: 'high', why: `calls a function with effects (${(fn?.[1] ?? 'see text').slice(0, 40)})` };
  if (first === 'pragma' && /=/.test(text)) return { risk: 'medium', why: 'sets a PRAGMA' };
  return undefined;
}
