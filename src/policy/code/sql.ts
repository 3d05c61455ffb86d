/**
 * SQL in arguments, judged by real parsers: PostgreSQL's own (libpg-query, compiled to WebAssembly) and
 * node-sql-parser for MySQL, MariaDB, SQLite, SQL Server, BigQuery and Snowflake. Pure: the parsers are
 * loaded once when this module is imported (top-level await), then every parse is synchronous.
 *
 * Read-only only when every statement is a query (SELECT, VALUES, TABLE, SHOW, DESCRIBE, EXPLAIN without
 * ANALYZE, a SQLite PRAGMA without a value) with no INTO, no locking clause, no data-modifying CTE and no
 * function outside the allow-list of pure built-ins (sql-functions.ts). Everything else is a mutation,
 * and its reason names the statement kind.
 *
 * Where the dialect is unknown every dialect that parses the text is asked, and the strictest answer
 * wins. Text whose very tokens differ between dialects (`#`, backslashes, `$`, backquotes, `/*`, `--`
 * without a space after it) is a mutation unless one named dialect is known, because node-sql-parser
 * does not lex exactly as the MySQL server does (`SELECT 1--1 INTO OUTFILE …` is one such text).
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import type { Risk } from '../../types.js';
import { BUILTIN_TYPES, PURE_SAMPLE_METHODS, PURE_SQL_FUNCTIONS, READ_PRAGMAS } from './sql-functions.js';
import { PARSE_TIMEOUT_MS, type ParseTime, parseInWorker } from './sql-worker.js';
import { type CodeJudgement, MAX_CODE_CHARS, type SqlDialect, stricter } from './verdict.js';

await loadModule();

/**
 * The dialects asked when a tool does not say which one it speaks. SQL Server, BigQuery and Snowflake
 * are asked only when named: node-sql-parser reads many other dialects' statements as SQL Server
 * variable assignments, which would hold every such read for a person. MariaDB's grammar is MySQL's
 * for everything the judge looks at; it is asked when named (each parse costs about a millisecond).
 */
export const ALL_DIALECTS: readonly SqlDialect[] = ['postgresql', 'mysql', 'sqlite'];

/**
 * Keywords that open a writing statement. A read in one dialect that holds one of them as a keyword
 * (`SELECT 1 DELETE FROM t` is an alias in PostgreSQL, two statements in SQL Server) is a mutation when
 * another dialect refuses the text.
 */
const WRITE_LEADS = new Set(
  'insert update delete merge upsert replace drop create alter truncate grant revoke exec execute call copy do set reset lock vacuum load attach detach rename comment refresh reindex cluster notify prepare deallocate declare discard kill shutdown'.split(
    ' ',
  ),
);

/** Whether PostgreSQL's scanner finds a write-opening keyword (outside strings, names and comments). */
function holdsWriteKeyword(text: string): boolean {
  try {
    return scanSync(text).tokens.some((t) => t.keywordKind !== 0 && WRITE_LEADS.has(t.text.toLowerCase()));
  } catch {
    return true;
  }
}

/** Whether a word of `words` stands outside strings and comments, after the first `from` tokens. */
function holdsWord(text: string, words: ReadonlySet<string>, from: number): boolean {
  try {
    return scanSync(text)
      .tokens.filter((t) => t.tokenName !== 'SQL_COMMENT' && t.tokenName !== 'C_COMMENT')
      .slice(from)
      .some((t) => (t.tokenName === 'IDENT' || t.keywordKind !== 0) && !t.text.startsWith('"') && words.has(t.text.toLowerCase()));
  } catch {
    return true;
  }
}

/**
 * Longest SQL that node-sql-parser reads (characters): its PEG parser takes seconds on tens of kilobytes,
 * which a hostile agent could use to stall the gate. PostgreSQL's parser reads up to MAX_CODE_CHARS.
 */
const MAX_OTHER_DIALECT_CHARS = 4_000;

/** How long node-sql-parser may take for all the SQL of one call (ms); past it, the call is held. */
export const CALL_PARSE_MS = 500;

/**
 * Whether a statement word stands where a statement can start: at the start, or after `;`, a line break
 * (`\r` too), `(`, the end of a comment (`*\/`), or inside MySQL's executable `/*! … *\/`, which runs.
 * Comments are not removed first: dialects disagree on where they end (PostgreSQL nests them).
 */
function startsStatement(text: string): boolean {
  return SQL_STATEMENT_WORD.test(text.slice(0, MAX_CODE_CHARS));
}

/** A word that starts a statement in some dialect, where a statement starts. */
const SQL_STATEMENT_WORD =
  /(?:^|[;\n\r(]|\*\/|\/\*[!M]\S*)\s*(?:select|with|insert|update|delete|create|drop|alter|truncate|grant|revoke|show|describe|desc|explain|values|table|pragma|call|exec|execute|set|merge|replace|copy|vacuum|analyze|analyse|begin|commit|rollback|use|kill|lock|unlock|load|handler|do|prepare|deallocate|declare|shutdown|backup|restore|attach|detach|reindex|cluster|comment|listen|notify|refresh|import|checkpoint|reset|discard|savepoint|release|start|fetch|move|close|open|dbcc|waitfor|bulk|print|throw|upsert|optimize|flush|purge|rename|repair|check|checksum|install|uninstall|change|stop|help)\b/i;

/** Tokens that different SQL dialects (or node-sql-parser and the MySQL server) read differently. */
const DIALECT_SENSITIVE = /[\\#$`]|--(?![ \t\r\n\f\v]|$)|\/\*/;
/** For MySQL and MariaDB alone: where node-sql-parser lexes unlike the servers (`--1`, `/*!` and MariaDB's `/*M!` code). */
const MYSQL_SENSITIVE = /--(?![ \t\r\n\f\v]|$)|\/\*M?!/;
/** For one other named dialect: backslashes, whose meaning in strings node-sql-parser may not share. */
const OTHER_SENSITIVE = /\\/;

/** The tokens that make a read doubtful for these dialects, or undefined when PostgreSQL alone is asked. */
function sensitiveFor(dialects: readonly SqlDialect[]): RegExp | undefined {
  if (dialects.every((d) => d === 'postgresql')) return undefined;
  if (dialects.every((d) => d === 'mysql' || d === 'mariadb')) return MYSQL_SENSITIVE;
  if (dialects.length === 1) return OTHER_SENSITIVE;
  return DIALECT_SENSITIVE;
}

/**
 * SQL Server statements that need no `;` before them and are reserved words there, so that
 * `SELECT * FROM t SHUTDOWN` is two statements (other parsers read an alias).
 */
const TSQL_STATEMENTS = new Set(
  'shutdown checkpoint reconfigure commit rollback kill deallocate backup restore dbcc waitfor use raiserror goto begin save revert setuser truncate bulk open close fetch declare set exec execute insert update delete merge drop create alter grant deny revoke print throw return break continue disable enable'.split(
    ' ',
  ),
);

/** Statement kinds that destroy data or change who may do what: risk high. */
const HIGH_STATEMENTS =
  /^(Drop|Truncate|Delete|Grant|AlterRole|CreateRole|AlterSystem|Copy|Do|Call|DropOwned|ReassignOwned|AlterDefaultPrivileges|AlterOwner|CreateFunction|Load|drop|truncate|delete|grant|revoke|exec|call|load|attach|detach|kill|shutdown|purge)/;

const write = (risk: Risk, why: string): CodeJudgement => ({ kind: 'write', risk, why });

/** `TruncateStmt` → `TRUNCATE`, `AlterRoleStmt` → `ALTER ROLE`, `VariableSetStmt` → `SET`. */
function statementName(node: string): string {
  const special: Record<string, string> = {
    VariableSetStmt: 'SET',
    VariableShowStmt: 'SHOW',
    DoStmt: 'DO',
    GrantRoleStmt: 'GRANT ROLE',
    GrantStmt: 'GRANT/REVOKE',
  };
  return (
    special[node] ??
    node
      .replace(/Stmt$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toUpperCase()
  );
}

/**
 * Judges SQL text.
 * @param dialects the dialects the tool speaks; several (or all) when it does not say.
 * @returns `read`, `write` with the statement kind, or `unparsed` when no dialect's parser accepts it.
 */
export function judgeSql(text: string, dialects: readonly SqlDialect[] = ALL_DIALECTS, time: ParseTime = { ms: CALL_PARSE_MS }): CodeJudgement {
  if (text.length > MAX_CODE_CHARS) return write('medium', `SQL longer than ${MAX_CODE_CHARS} characters is not read`);
  // PostgreSQL's parser stops at a NUL; a driver or engine that does not would run what follows.
  if (text.includes('\0')) return write('medium', 'SQL holding a NUL character (a parser may stop reading there)');
  const pragma = judgePragma(text);
  if (pragma) return pragma;
  // Text with no statement word at all (`#general`, a colour `#ff0000`, `-- note`) is no SQL, whatever a
  // lenient parser makes of it: a dialect would read it as an empty statement, or a comment.
  if (!startsStatement(text)) return { kind: 'unparsed', why: 'no SQL statement starts in it' };
  let worst: CodeJudgement | undefined;
  let refused = 0;
  for (const d of dialects) {
    if (d !== 'postgresql' && text.length > MAX_OTHER_DIALECT_CHARS)
      return write(
        'medium',
        `SQL longer than ${MAX_OTHER_DIALECT_CHARS} characters is read only by PostgreSQL's parser; name the dialect (PostgreSQL) in the tool description, or have a person look`,
      );
    const j = d === 'postgresql' ? judgePostgres(text) : judgeOther(text, d, time);
    if (j.kind === 'unparsed') {
      refused++;
      continue;
    }
    worst = worst ? stricter(worst, j) : j;
    if (worst.kind === 'write' && worst.risk === 'high') return worst;
  }
  if (!worst) return { kind: 'unparsed', why: `no SQL parser accepts it (${dialects.join(', ')})` };
  if (worst.kind === 'read' && sensitiveFor(dialects)?.test(text))
    return write(
      'medium',
      'its comments, quotes or escapes read differently in different SQL dialects; name the dialect in the tool description to have it read',
    );
  if (worst.kind === 'read' && dialects.includes('transactsql') && holdsWord(text, TSQL_STATEMENTS, 1))
    return write('medium', 'SQL Server reads a second statement in it (a statement word needs no semicolon there)');
  if (worst.kind === 'read' && refused > 0 && holdsWriteKeyword(text))
    return write(
      'medium',
      'a dialect that refuses this text may read a write in it (a writing keyword outside any string); name the dialect in the tool description',
    );
  return worst;
}

/** SQLite `PRAGMA name`, `PRAGMA name(arg)`: reads only for a reporting pragma; with `= value` it writes. */
function judgePragma(text: string): CodeJudgement | undefined {
  const m = /^\s*pragma\s+(?:(\w+)\s*\.\s*)?(\w+)\s*(=|\()?/i.exec(text);
  if (!m) return undefined;
  const name = (m[2] as string).toLowerCase();
  if (m[3] === '=') return write('medium', `sets PRAGMA ${name}`);
  const whole = /^\s*pragma\s+(?:\w+\s*\.\s*)?\w+\s*(\(\s*[\w'"]+\s*\))?\s*;?\s*$/i.test(text);
  if (!whole) return write('medium', 'PRAGMA with more than a name and one argument');
  if (m[3] === '(' && !/^(table_info|table_xinfo|index_list|index_info|index_xinfo|foreign_key_list|foreign_key_check|integrity_check|quick_check)$/.test(name))
    return write('medium', `sets PRAGMA ${name}`);
  return READ_PRAGMAS.has(name) ? { kind: 'read', language: 'SQLite PRAGMA' } : write('medium', `PRAGMA ${name} is not a known report`);
}

// ---- PostgreSQL (libpg-query: the server's own grammar) ----

function judgePostgres(text: string): CodeJudgement {
  let tree: { stmts?: { stmt?: Record<string, unknown> }[] };
  try {
    tree = parseSync(text) as typeof tree;
  } catch (e) {
    return { kind: 'unparsed', why: `PostgreSQL: ${e instanceof Error ? e.message : String(e)}` };
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length === 0) return { kind: 'read', language: 'PostgreSQL' };
  let worst: CodeJudgement = { kind: 'read', language: 'PostgreSQL' };
  for (const s of stmts) {
    worst = stricter(worst, judgePgStatement(s.stmt ?? {}));
    if (worst.kind === 'write' && worst.risk === 'high') break;
  }
  return worst;
}

function judgePgStatement(stmt: Record<string, unknown>): CodeJudgement {
  const [kind, body] = Object.entries(stmt)[0] ?? ['', undefined];
  if (kind === 'SelectStmt') return judgePgTree(body, 'PostgreSQL');
  if (kind === 'VariableShowStmt') return { kind: 'read', language: 'PostgreSQL' };
  if (kind === 'ExplainStmt') {
    const b = body as { query?: Record<string, unknown>; options?: { DefElem?: { defname?: string } }[] };
    if ((b.options ?? []).some((o) => o.DefElem?.defname === 'analyze')) return write('medium', 'EXPLAIN ANALYZE runs the statement');
    return judgePgStatement(b.query ?? {});
  }
  const name = statementName(kind || 'unknown statement');
  return write(HIGH_STATEMENTS.test(kind) ? 'high' : 'medium', `${name} (PostgreSQL)`);
}

/** Walks a query's tree: any statement inside it, INTO, a locking clause, or an impure function makes a write. */
function judgePgTree(root: unknown, language: string): CodeJudgement {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    for (const [key, value] of Object.entries(node)) {
      if (key.endsWith('Stmt') && key !== 'SelectStmt')
        return write(HIGH_STATEMENTS.test(key) ? 'high' : 'medium', `${statementName(key)} inside a query (a data-modifying WITH)`);
      if (key === 'intoClause') return write('medium', 'SELECT … INTO creates a table');
      if (key === 'lockingClause' && Array.isArray(value) && value.length > 0) return write('medium', 'locks rows (FOR UPDATE/SHARE)');
      if (key === 'FuncCall') {
        // PostgreSQL folds unquoted names to lower case already; a quoted "LOWER" is another function.
        const bad = impureFunction(pgName((value as { funcname?: unknown }).funcname), true);
        if (bad) return write('high', bad);
      }
      if (key === 'RangeTableSample') {
        const method = pgName((value as { method?: unknown }).method);
        if (method.length !== 1 || !PURE_SAMPLE_METHODS.has(method[0] as string))
          return write('medium', `samples with the method ${method.join('.')}, which is not built in`);
      }
      // Operators are functions: one from a schema other than pg_catalog may be anyone's (A_Expr, ANY/ALL, ORDER BY … USING).
      const operator = key === 'A_Expr' ? pgName((value as { name?: unknown }).name) : key === 'operName' || key === 'useOp' ? pgName(value) : [];
      if (operator.length > 1 && operator[0] !== 'pg_catalog') return write('medium', `uses the operator ${operator.join('.')} from schema ${operator[0]}`);
      if (key === 'TypeCast' || key === 'typeName') {
        const type = pgName((key === 'TypeCast' ? (value as { typeName?: { names?: unknown } }).typeName : (value as { names?: unknown }))?.names);
        const bad = type.length > 0 && (type.length > 1 ? type[0] !== 'pg_catalog' : !BUILTIN_TYPES.has(type[0] as string));
        if (bad)
          return write('medium', `casts to the type ${type.join('.').slice(0, 60)}, which is not built in (a domain's checks and a type's input function run)`);
      }
      stack.push(value);
    }
  }
  return { kind: 'read', language };
}

/** The parts of a qualified name in libpg-query's tree (`[{ String: { sval } }]`). */
function pgName(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((p) => String((p as { String?: { sval?: string } }).String?.sval ?? '?'));
}

/** A reason when a function (its name parts) is not a pure built-in; undefined when it is. */
function impureFunction(parts: readonly string[], exactCase = false): string | undefined {
  const name = parts[parts.length - 1] ?? '';
  const schema = parts.length > 1 ? parts.slice(0, -1).join('.') : undefined;
  if (schema !== undefined && !['pg_catalog', 'sys', 'dbo', 'main'].includes(schema.toLowerCase()))
    return `calls ${parts.join('.')}, a function outside the built-ins (it may change data)`;
  if (!PURE_SQL_FUNCTIONS.has(exactCase ? name : name.toLowerCase())) return `calls ${name.slice(0, 60)}, not a known side-effect-free built-in function`;
  return undefined;
}

// ---- Other dialects (node-sql-parser) ----

/** node-sql-parser's names for its dialects. */
const NSP_NAMES: Record<Exclude<SqlDialect, 'postgresql'>, string> = {
  mysql: 'MySQL',
  mariadb: 'MariaDB',
  sqlite: 'Sqlite',
  transactsql: 'TransactSQL',
  bigquery: 'BigQuery',
  snowflake: 'Snowflake',
};

/** Statement types of node-sql-parser that only read. */
const NSP_READ_TYPES = new Set(['select', 'show', 'desc', 'describe']);

function judgeOther(text: string, d: Exclude<SqlDialect, 'postgresql'>, time: ParseTime): CodeJudgement {
  const parsed = parseInWorker(text, NSP_NAMES[d], time);
  if (parsed.kind === 'timeout')
    return write(
      'medium',
      `SQL that ${NSP_NAMES[d]}'s parser could not read in the time a call has (${PARSE_TIMEOUT_MS} ms a text, ${CALL_PARSE_MS} ms a call)`,
    );
  if (parsed.kind === 'refused') return { kind: 'unparsed', why: `${NSP_NAMES[d]}: ${parsed.error.slice(0, 120)}` };
  const language = NSP_NAMES[d];
  // The parser's own list of what each statement does to each table ("select::db::t", "delete::null::t").
  const op = parsed.tableList.map((t) => t.split('::')[0] ?? '').find((o) => o !== 'select' && o !== 'show');
  if (op) return write(HIGH_STATEMENTS.test(op) ? 'high' : 'medium', `${op.toUpperCase()} (${language})`);
  const stmts = (Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast]).map((s) => ((s as { stmt?: unknown })?.stmt ?? s) as Record<string, unknown>);
  for (const s of stmts) {
    const type = String((s as { type?: unknown })?.type ?? 'unknown');
    let target = s as Record<string, unknown>;
    if (type === 'explain') {
      if (/\banalyze\b/i.test(text)) return write('medium', 'EXPLAIN ANALYZE runs the statement');
      target = ((s as { expr?: unknown }).expr ?? {}) as Record<string, unknown>;
    } else if (!NSP_READ_TYPES.has(type)) return write(HIGH_STATEMENTS.test(type) ? 'high' : 'medium', `${type.toUpperCase()} (${language})`);
    const j = judgeNspTree(target, language);
    if (j.kind !== 'read') return j;
  }
  return { kind: 'read', language };
}

function judgeNspTree(root: unknown, language: string): CodeJudgement {
  const stack: unknown[] = [root];
  let seen = 0;
  while (stack.length > 0) {
    if (++seen > 200_000) return write('medium', 'SQL too complex to read fully');
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const n = node as Record<string, unknown>;
    const type = typeof n.type === 'string' ? n.type : undefined;
    if (
      type &&
      n.ast === undefined &&
      /^(insert|update|delete|replace|create|drop|alter|truncate|grant|revoke|lock|unlock|call|exec|set|use|rename|load|attach|detach|assign)$/.test(type)
    )
      return write(HIGH_STATEMENTS.test(type) ? 'high' : 'medium', `${type.toUpperCase()} inside a query (${language})`);
    const into = n.into as { position?: unknown; keyword?: unknown } | undefined;
    if (into && typeof into === 'object' && (into.position != null || into.keyword != null)) return write('medium', `SELECT … INTO writes (${language})`);
    if ((typeof n.locking_read === 'string' && n.locking_read) || (n.for_update != null && n.for_update !== false))
      return write('medium', 'locks rows (FOR UPDATE/SHARE)');
    // node-sql-parser reads a parenthesised subquery in some positions as a "function" named SELECT.
    if ((type === 'function' || type === 'aggr_func' || type === 'window_func') && nspName(n.name).join('.').toLowerCase() !== 'select') {
      const bad = impureFunction(nspName(n.name));
      if (bad) return write('high', bad);
    }
    for (const v of Object.values(n)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
  return { kind: 'read', language };
}

/** A function's name in node-sql-parser's tree: `"COUNT"`, or `{ name: [{ value: "lower" }] }`. */
function nspName(name: unknown): string[] {
  if (typeof name === 'string') return [name];
  const parts = (name as { name?: { value?: unknown }[]; schema?: { value?: unknown } })?.name;
  if (Array.isArray(parts)) {
    const out = parts.map((p) => String(p?.value ?? '?'));
    const schema = (name as { schema?: { value?: unknown } }).schema?.value;
    return schema ? [String(schema), ...out] : out;
  }
  return ['?'];
}
