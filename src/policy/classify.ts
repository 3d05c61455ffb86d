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
  CATEGORY_FIELDS,
  CONJUNCTIONS,
  DESTRUCTIVE,
  GIT_READ,
  METHOD_FIELDS,
  MUTATING,
  OBJECT_NOUNS,
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
  SQL_READ_LEADS,
  SQL_SIDE_EFFECT_FUNCTIONS,
  WEAK_READ_VERBS,
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
  // NFKC first: fullwidth or styled letters (`ｄｅｌｅｔｅ`, `𝖽𝖾𝗅𝖾𝗍𝖾`) are the words they look like.
  return name
    .normalize('NFKC')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/(\d+)/g, ' $1 ')
    .split(/[\s_\-.:/\\|,;+]+/u)
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
  const strong = READ_VERBS.has(lead) && !WEAK_READ_VERBS.has(lead);
  let risk: Risk = 'low';
  const reasons: string[] = [];
  let joined = false;
  for (const w of words) {
    if (CONJUNCTIONS.has(w)) {
      joined = true;
      continue;
    }
    let r: Risk | undefined;
    let why = `name word "${w}"`;
    if (DESTRUCTIVE.has(w) || OUTBOUND.has(w)) r = 'high';
    else if (MUTATING.has(w)) r = 'medium';
    else if (AMBIGUOUS.has(w) && !(strong && !joined) && w !== lead) r = AMBIGUOUS.get(w);
    else if (AMBIGUOUS.has(w) && w === lead && !READ_VERBS.has(w)) r = AMBIGUOUS.get(w);
    else if (/[^\x00-\x7f]/.test(w)) {
      r = 'medium';
      why = `name word "${w}" is not in the vocabulary (another language or script)`;
    } else if (joined && !known(w)) {
      r = 'medium';
      why = `unknown word "${w}" after a conjunction`;
    }
    if (r) {
      risk = higher(risk, r);
      reasons.push(why);
    }
  }
  if (reasons.length > 0) return { kind: 'mutation', risk, reasons, benign: false };
  const rest = words.slice(1);
  const last = words[words.length - 1] ?? '';
  if (strong) return { kind: 'read-only', risk: 'low', reasons: [`name starts with the read verb "${lead}"`], benign: true };
  if (READ_VERBS.has(lead) && rest.every((w) => READ_NOUNS.has(w)))
    return { kind: 'read-only', risk: 'low', reasons: [`name is the read verb "${lead}"${rest.length ? ` and report nouns` : ''}`], benign: true };
  if (READ_NOUNS.has(last) && words.slice(0, -1).every((w) => OBJECT_NOUNS.has(w) || READ_NOUNS.has(w) || /^\d+$/.test(w)))
    return { kind: 'read-only', risk: 'low', reasons: [`name is a report: "${words.join(' ')}"`], benign: true };
  return { kind: 'mutation', risk: 'medium', reasons: [`nothing in the name "${name}" says read-only`], benign: true };
}

/** Most values the argument scan visits, and how deep: beyond either, the call counts as a mutation. */
const MAX_NODES = 10_000;
const MAX_DEPTH = 32;

/** A stricter verdict the arguments force, if any. */
export function classifyArgs(args: unknown): { risk: Risk; reasons: string[] } | undefined {
  let risk: Risk | undefined;
  const reasons: string[] = [];
  const hit = (r: Risk, why: string) => {
    risk = risk ? higher(risk, r) : r;
    if (reasons.length < 8 && !reasons.includes(why)) reasons.push(why);
  };
  let nodes = 0;
  let deep = false;
  const walk = (value: unknown, key: string, depth: number): void => {
    if (++nodes > MAX_NODES) return;
    if (depth > MAX_DEPTH) {
      deep = true;
      return;
    }
    if (typeof value === 'string') {
      inspectString(key, value, hit);
      // JSON carried in a string (`options: '{"method":"DELETE"}'`) is read like the arguments around it.
      const t = value.trim();
      if ((t.startsWith('{') || t.startsWith('[')) && t.length <= 100_000) {
        try {
          walk(JSON.parse(t), key, depth + 1);
        } catch {
          // not JSON: already inspected as text
        }
      }
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) for (const v of value) walk(v, key, depth + 1);
    else
      for (const [k, v] of Object.entries(value)) {
        // An operation given as an object (`action: { name: "delete" }`): its words are the operation's.
        if (OPERATION_FIELDS.test(key) && typeof v === 'string') inspectString(key, v, hit);
        // Aggregation stages that write (MongoDB `$out`, `$merge`).
        if (k === '$out' || k === '$merge') hit('high', `${k} writes a collection`);
        if (/^x-http-method(-override)?$/i.test(k) && typeof v === 'string' && v.trim().toUpperCase() !== 'GET') hit('high', `${k} is ${v.slice(0, 10)}`);
        walk(v, k, depth + 1);
      }
  };
  walk(args, '', 0);
  if (nodes > MAX_NODES) hit('medium', `arguments too large to inspect fully (over ${MAX_NODES} values)`);
  if (deep) hit('medium', `arguments nested deeper than ${MAX_DEPTH} levels are not inspected`);
  return risk ? { risk, reasons } : undefined;
}

/** HTTP methods that change state (RFC 9110, WebDAV RFC 4918/3253/3744/5842, CalDAV RFC 4791), DELETE aside. */
const HTTP_WRITE_METHODS = new Set(
  'POST PUT PATCH MKCOL COPY MOVE LOCK UNLOCK PROPPATCH MKCALENDAR MKREDIRECTREF UPDATEREDIRECTREF ACL BIND UNBIND REBIND LINK UNLINK PURGE MERGE UPDATE CHECKIN CHECKOUT UNCHECKOUT VERSION-CONTROL LABEL MKWORKSPACE MKACTIVITY BASELINE-CONTROL ORDERPATCH'.split(
    ' ',
  ),
);

/** Words that make SQL of a text that opens with an SQL keyword (natural language rarely has them). */
const SQL_SHAPE = /;|\(|\b(from|into|set|table|where|values|returning|database|schema|index|view|privileges|backend|detach|node|nodes)\b/i;

function inspectString(key: string, value: string, hit: (r: Risk, why: string) => void): void {
  const field = key || 'argument';
  if (METHOD_FIELDS.test(key) && value.length <= 200) {
    const m = value.trim().toUpperCase();
    if (m === 'DELETE') hit('high', `${field} is HTTP DELETE`);
    else if (HTTP_WRITE_METHODS.has(m)) hit('medium', `${field} is HTTP ${m}`);
    else {
      // An RPC method name (`eth_sendRawTransaction`) is judged by its words.
      const words = splitName(value);
      const w = words.find((x) => DESTRUCTIVE.has(x) || OUTBOUND.has(x) || MUTATING.has(x));
      if (w) hit(DESTRUCTIVE.has(w) || OUTBOUND.has(w) ? 'high' : 'medium', `${field} "${value.slice(0, 40)}" says "${w}"`);
    }
  }
  // `?_method=DELETE` (Rails, Laravel and others), in any URL-like text, percent-encoded or not.
  const override = /[?&]_method=([^&#\s]{1,40})/i.exec(value)?.[1];
  if (override !== undefined) {
    let m = override;
    try {
      m = decodeURIComponent(override);
    } catch {
      // not valid percent-encoding: judged as written
    }
    m = m.trim().toUpperCase();
    if (m === 'DELETE') hit('high', `${field} overrides the HTTP method (_method=DELETE)`);
    else if (HTTP_WRITE_METHODS.has(m)) hit('high', `${field} overrides the HTTP method (_method=${m.slice(0, 20)})`);
  }
  // A GraphQL document with a mutation operation anywhere in it (`query Q {…} mutation M {…}`).
  // Commas count as white space in GraphQL; a directive may follow the keyword (`mutation@a{…}`).
  if (/^[\s,]*(query|mutation|subscription|fragment|\{)/i.test(value) && /(^|[},\s])mutation\b[\s,]*\w*[\s,]*[({@]/i.test(value))
    hit('high', `${field} is a GraphQL mutation`);
  const sqlField = /sql|statement|stmt/i.test(key);
  if (sqlField || (SQL_FIELDS.test(key) && SQL_SHAPE.test(value)) || (SQL_SHAPE.test(value) && sqlLead(value))) {
    const sql = sqlVerdict(value, sqlField);
    if (sql) hit(sql.risk, `${field} is SQL that ${sql.why}`);
  }
  if (SHELL_FIELDS.test(key)) {
    const sh = shellVerdict(value);
    if (sh) hit(sh.risk, `${field} ${sh.why}`);
  }
  if ((OPERATION_FIELDS.test(key) || CATEGORY_FIELDS.test(key)) && value.length <= 100) {
    const words = splitName(value);
    // A category (`type: "PushEvent"`) names a kind of thing; only a bare verb there is an operation.
    if (CATEGORY_FIELDS.test(key) && !OPERATION_FIELDS.test(key) && words.length !== 1) return;
    const destructive = words.find((w) => DESTRUCTIVE.has(w) || OUTBOUND.has(w));
    const mutating = words.find((w) => MUTATING.has(w) || (!CATEGORY_FIELDS.test(key) && AMBIGUOUS.has(w)));
    if (destructive) hit('high', `${field} is "${value.slice(0, 40)}"`);
    else if (mutating) hit('medium', `${field} is "${value.slice(0, 40)}"`);
  } else if (OPERATION_FIELDS.test(key)) hit('medium', `${field} is free text too long to judge (over 100 characters): it can ask for anything`);
}

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

function sqlLead(text: string): boolean {
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

/** Options of reading programs that write or run something. */
const WRITING_OPTIONS = /^(-o|--output|--pre|--pre-glob|--hostname-bin|--compress-program|--exec|-exec|--ext-diff|--run|--fix|--write|-w)(=|$)|^-o./;

/**
 * Whether a shell command changes anything: output redirected to a file, an environment assignment before
 * a command (`LD_PRELOAD=…`, `GIT_EXTERNAL_DIFF=…`), quoting too tangled to read (`\'`, `$'…'`, `#`), or
 * any program that is not a known reader used as a reader (in every segment: `;`, `&&`, `||`, `|`,
 * `$( )`, backquotes, new lines). Quotes around a program name do not hide it (`'rm' -rf ~`).
 */
export function shellVerdict(command: string): { risk: Risk; why: string } | undefined {
  if (/\\'|\$'|(^|\s)#/.test(command)) return { risk: 'medium', why: 'uses quoting or comments too tangled to read safely' };
  // Redirections are looked for outside quotes; programs are read with the quotes taken off.
  const unquoted = command.replace(/'[^']*('|$)/g, " '' ").replace(/"(?:\\.|[^"\\])*("|$)/g, ' "" ');
  for (const m of unquoted.matchAll(/>[>|]?(&?)\s*([^\s&|;<>()]*)/g)) {
    // `2>&1`, `>&2` duplicate a descriptor; `>/dev/null` discards: neither writes a file.
    if ((m[1] === '&' && /^\d*-?$/.test(m[2] ?? '')) || m[2] === '/dev/null' || (m[2] === '' && m[1] !== '&')) continue;
    return { risk: 'medium', why: 'redirects output to a file' };
  }
  const plain = command
    .replace(/['"]/g, '')
    .replace(/\d*[<>]>?&\d*-?/g, ' ')
    .replace(/\d*>>?\s*\/dev\/null/g, ' ');
  let verdict: { risk: Risk; why: string } | undefined;
  const raise = (found: { risk: Risk; why: string }) => {
    if (!verdict || RANK[found.risk] > RANK[verdict.risk]) verdict = found;
  };
  for (const segment of plain.split(/;|&&|\|\||\||\n|\$\(|`|\(|\)|&|<\(|>\(/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    if (words.length > 0 && /^\w+=/.test(words[0] as string)) raise({ risk: 'medium', why: `sets ${String(words[0]).split('=')[0]} for the command it runs` });
    while (words.length > 0 && (/^\w+=/.test(words[0] as string) || ['time', 'nice', 'nohup', 'env', 'command', 'builtin'].includes(words[0] as string)))
      words.shift();
    const program = (words[0] ?? '').split('/').pop() ?? '';
    if (!program) continue;
    const args = words.slice(1);
    if (program === 'git') {
      let i = 0;
      while (i < args.length && (args[i] as string).startsWith('-')) i += ['-C', '-c', '--git-dir', '--work-tree'].includes(args[i] as string) ? 2 : 1;
      const sub = args[i] ?? '';
      // `-c core.fsmonitor=…`, `-c core.pager=…`, `--config-env`, `--exec-path` make any subcommand run a program.
      // So does a repository the call names (`-C dir`, `--git-dir`): its own config may set them.
      const configured = args.slice(0, i).some((a) => /^(-c|--config-env|--exec-path|-C|--git-dir|--work-tree)/.test(a)) || args.includes('--textconv');
      if (!GIT_READ.has(sub) || configured || args.some((a) => WRITING_OPTIONS.test(a)))
        raise({ risk: 'medium', why: configured ? 'runs git with configuration that can run a program' : `runs git ${sub}`.trim() });
    } else if (program === 'find' && args.some((w) => w === '-delete' || w.startsWith('-exec') || w === '-ok' || w.startsWith('-fprint') || w === '-fls')) {
      raise({ risk: 'high', why: 'runs find with an action that writes or runs' });
    } else if (program === 'sed' && args.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place'))) {
      raise({ risk: 'medium', why: 'edits files in place (sed -i)' });
    } else if (SHELL_DESTRUCTIVE.has(program)) raise({ risk: 'high', why: `runs ${program}` });
    else if (!SHELL_READ.has(program)) raise({ risk: 'medium', why: `runs ${program.slice(0, 40)}` });
    else if (
      args.some((a) => WRITING_OPTIONS.test(a)) ||
      ((program === 'date' || program === 'hostname') && args.some((a) => !a.startsWith('+') && !a.startsWith('-'))) ||
      (program === 'date' && args.some((a) => /^(-s|--set)/.test(a)))
    )
      raise({ risk: 'medium', why: `runs ${program} with an option that writes` });
    else if (program === 'uniq' && args.filter((a) => !a.startsWith('-')).length >= 2) raise({ risk: 'medium', why: 'runs uniq with an output file' });
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
