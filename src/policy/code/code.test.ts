import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseSync } from 'libpg-query';
import { classifyCall } from '../classify.js';
import { judgeGraphql, judgeShell, judgeSql, judgeValue, nameHint, toolCodeHints } from './index.js';
import { PURE_SQL_FUNCTIONS } from './sql-functions.js';

const kindOf = (name: string, args: Record<string, unknown>, definition: Record<string, unknown> = {}) =>
  classifyCall(name, args, { readOnlyHint: true }, new Set(), toolCodeHints({ name, ...definition })).kind;

describe('which values are code', () => {
  it('takes fields named for code as code, and their last word decides', () => {
    assert.deepEqual(nameHint('sql', undefined)?.languages, ['sql']);
    assert.deepEqual(nameHint('sqlQuery', undefined), { languages: ['sql'], strict: true });
    assert.deepEqual(nameHint('commands', undefined)?.languages, ['shell']);
    assert.equal(nameHint('commandId', undefined), undefined, 'an id of a command is not a command');
    assert.equal(nameHint('query', undefined)?.strict, false, 'a query is text unless something names its language');
    assert.equal(nameHint('query', { languages: ['cypher'], strict: false })?.strict, true);
  });

  it('reads the inputSchema: a property described as code in a language is code', () => {
    const hints = toolCodeHints({
      name: 'lookup',
      inputSchema: {
        type: 'object',
        properties: { q: { type: 'string', description: 'A PostgreSQL query to run' }, table: { type: 'string', description: 'PostgreSQL table name' } },
      },
    });
    assert.deepEqual(hints.properties.get('q'), { languages: ['sql'], strict: true, dialects: ['postgresql'] });
    assert.equal(hints.properties.has('table'), false, 'naming the language without a kind of code is not enough');
    assert.equal(
      kindOf('lookup', { q: 'not sql' }, { inputSchema: { type: 'object', properties: { q: { type: 'string', description: 'A PostgreSQL query to run' } } } }),
      'mutation',
    );
  });

  it('a value in a field named for code that no parser accepts is a mutation, and the reason says so', () => {
    const v = classifyCall('read_query', { sql: 'SELEC * FRM t' }, undefined);
    assert.equal(v.kind, 'mutation');
    assert.match(v.reasons.join(' '), /sql holds code: not readable as SQL/);
  });

  it('leaves text that no parser accepts as text in other fields (search queries, codes)', () => {
    assert.equal(kindOf('search_docs', { query: 'delete my account instructions' }), 'read-only');
    assert.equal(kindOf('get_rate', { code: 'EUR' }), 'read-only');
    assert.equal(kindOf('brave_web_search', { query: 'select the best laptop 2026' }), 'read-only');
  });

  it('judges any string a parser accepts, whatever its field', () => {
    assert.equal(kindOf('get_report', { text: 'DELETE FROM audit' }), 'mutation');
    assert.equal(kindOf('get_report', { note: '/* x */ TRUNCATE users' }), 'mutation');
    assert.equal(kindOf('fetch_data', { body: '# read only\nmutation { deleteUser(id: 1) { id } }' }), 'mutation');
    assert.equal(kindOf('fetch_data', { body: 'query { viewer { login } }' }), 'read-only');
  });

  it('uses the dialect a tool names, and holds dialect-sensitive text when none is named', () => {
    assert.equal(judgeSql('SELECT "Name" FROM "Users" WHERE x #> \'{a}\' IS NULL', ['postgresql']).kind, 'read');
    assert.equal(judgeSql("SELECT 1--1 INTO OUTFILE '/tmp/pwn'").kind, 'write');
    assert.equal(judgeSql("SELECT 1--1 INTO OUTFILE '/tmp/pwn'", ['mysql']).kind, 'write', 'node-sql-parser lexes -- unlike MySQL');
    assert.equal(judgeSql('SELECT 1 DELETE FROM t').kind, 'write', 'an alias in PostgreSQL, a second statement elsewhere');
    assert.equal(kindOf('query', { query: 'SELECT "Name" FROM "Users"' }, { description: 'Run SQL against Postgres' }), 'read-only');
  });
});

describe("SQL, judged by PostgreSQL's parser and node-sql-parser", () => {
  it('names the statement kind of a mutation', () => {
    assert.match(String((judgeSql('TRUNCATE users') as { why: string }).why), /TRUNCATE/);
    assert.match(String((judgeSql('GRANT admin TO mallory') as { why: string }).why), /GRANT ROLE/);
    assert.match(String((judgeSql("COPY users TO '/tmp/x'") as { why: string }).why), /COPY/);
    assert.match(String((judgeSql('SELECT my_fn()') as { why: string }).why), /my_fn/);
  });

  it('any function outside the allow-list is a mutation, quoted, commented or qualified', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/).filter((n) => !PURE_SQL_FUNCTIONS.has(n)),
        fc.constantFrom('%s(1)', '"%s"(1)', '%s/**/(1)', 'public.%s(1)', 'pg_catalog.%s(1)', '%s (1)'),
        (name, shape) => {
          const call = shape.replace('%s', name);
          const j = judgeSql(`SELECT ${call}`, ['postgresql']);
          // Either the parser refuses it (a reserved word) or it is judged a write; never a read.
          return j.kind !== 'read';
        },
      ),
      { numRuns: 300 },
    );
  });

  it('no statement the PostgreSQL parser calls a write is judged read-only', () => {
    const pieces = [
      'SELECT 1',
      'SELECT * FROM t',
      'TRUNCATE t',
      'DROP TABLE t',
      'INSERT INTO t VALUES (1)',
      'UPDATE t SET a = 1',
      'DELETE FROM t',
      'GRANT x TO y',
      'VACUUM',
      'SET a = 1',
      'COPY t TO STDOUT',
      'LISTEN c',
      'CHECKPOINT',
      'DISCARD ALL',
      'CREATE VIEW v AS SELECT 1',
      'WITH a AS (UPDATE t SET x = 1 RETURNING 1) SELECT 1',
      'SELECT 1 FOR SHARE',
      'EXPLAIN ANALYZE SELECT 1',
      'SHOW x',
      'VALUES (1)',
    ];
    const glue = fc.constantFrom(';', '; ', ';\n', ' ;/* c */ ', ';-- c\n');
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 4 }), glue, (stmts, sep) => {
        const text = stmts.join(sep);
        const parsed = parseSync(text) as { stmts: { stmt: Record<string, unknown> }[] };
        const kinds = parsed.stmts.map((s) => Object.keys(s.stmt)[0]);
        const writes = kinds.some((k) => k !== 'SelectStmt' && k !== 'VariableShowStmt' && k !== 'ExplainStmt') || /ANALYZE|UPDATE|SHARE/.test(text);
        // Reads are checked with the dialect named: unnamed, a comment is held as dialect-sensitive.
        return writes ? judgeSql(text).kind === 'write' && judgeSql(text, ['postgresql']).kind === 'write' : judgeSql(text, ['postgresql']).kind === 'read';
      }),
      { numRuns: 400 },
    );
  });
});

describe('GraphQL, judged by the graphql parser', () => {
  it('is read-only only when every operation is a query', () => {
    const op = fc.constantFrom(
      'query A { a }',
      '{ b }',
      'mutation M { del(id: 1) { id } }',
      'subscription S { s }',
      'fragment F on T { x }',
      'query { c ...F }',
    );
    const pad = fc.constantFrom(' ', '\n', ',', '\n# mutation {}\n', ' #x\n');
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 4 }), pad, (ops, sep) => {
        // Operations must be named when there are several; keep the document valid by naming each one.
        let n = 0;
        const doc = ops
          .map((o) =>
            ops.length > 1 && o.startsWith('{') ? `query Q${n++} ${o}` : o.replace(/^(query|mutation|subscription) (\w)/, (_m, k, c) => `${k} ${c}${n++}`),
          )
          .join(sep);
        const j = judgeGraphql(doc);
        const writes = ops.some((o) => /^(mutation|subscription)/.test(o));
        return j.kind === 'unparsed' || (writes ? j.kind === 'write' : j.kind === 'read');
      }),
      { numRuns: 300 },
    );
    assert.equal(judgeGraphql('query { a ').kind, 'unparsed');
    assert.equal(judgeValue('query { a ', { languages: ['graphql'], strict: true })?.risk, 'medium');
  });
});

describe("shell, judged on mvdan/sh's syntax tree", () => {
  const readers = ['ls -la', 'cat f', 'grep -n x f', 'wc -l', 'git log --oneline', 'head -5', 'sort -u', "sed -n '1p'"];
  const writers = [
    'rm -rf x',
    'touch x',
    'ls > out',
    'sort -o out f',
    'git push',
    'curl -X POST u',
    'eval ls',
    'X=1 ls',
    'echo $(date)',
    'cat <(rm x)',
    'tee f',
  ];
  const ops = [' | ', ' && ', ' || ', '; ', '\n', ' & '];

  it('a command is read-only only when every command anywhere in it reads', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ cmd: fc.constantFrom(...readers, ...writers), wrap: fc.constantFrom('%s', '(%s)', '{ %s; }', 'echo "$(%s)"', 'if true; then %s; fi') }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.constantFrom(...ops),
        (parts, op) => {
          const text = parts.map((p) => p.wrap.replace('%s', p.cmd)).join(op);
          const writes = parts.some((p) => writers.includes(p.cmd) || p.wrap.includes('$('));
          const j = judgeShell(text);
          return writes ? j.kind === 'write' : j.kind === 'read';
        },
      ),
      { numRuns: 400 },
    );
  });

  it('quotes and escapes do not hide a program', () => {
    for (const c of ["'r''m' -rf ~", 'r\\m x', '"rm" x', '\\rm x', "$'rm' x", 'command rm x', 'env rm x', 'nice -n 5 rm x', 'time rm x'])
      assert.equal(judgeShell(c).kind, 'write', c);
  });
});

describe('bounds on the work one call can cause', () => {
  it('a call whose code exceeds the parsing budget is a mutation, however harmless each part', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`q${i}`, `SELECT ${'1, '.repeat(1000)}${i}`]));
    const v = classifyCall('get_rows', many, { readOnlyHint: true });
    assert.equal(v.kind, 'mutation');
    assert.match(v.reasons.join(' '), /more code than the gate reads|in the time a call has/);
  });

  it('long SQL in an unnamed dialect, and shell nested past the stack, are mutations, not crashes', () => {
    assert.equal(judgeSql(`SELECT ${'lower(x), '.repeat(600)}1`).kind, 'write');
    assert.equal(judgeSql(`SELECT ${'lower(x), '.repeat(600)}1`, ['postgresql']).kind, 'read');
    assert.equal(judgeShell(Array.from({ length: 5000 }, () => 'ls').join(' && ')).kind, 'write');
    assert.notEqual(judgeShell(`${'('.repeat(3000)}ls${')'.repeat(3000)}`).kind, 'read');
  });
});

describe('found by the attack on the parsers', () => {
  it('SQL that makes node-sql-parser backtrack is held once its time is up, and the gate stays up', () => {
    assert.equal(judgeSql(`SELECT ${'(SELECT '.repeat(20)}1`).kind, 'write');
    assert.equal(judgeSql(`SELECT ${'CAST('.repeat(790)}1`).kind, 'write');
    assert.equal(judgeSql('SELECT id FROM t WHERE x = 1').kind, 'read', 'the parser works again after a timeout');
  });

  it('a condition field is judged inside the query it joins', () => {
    assert.equal(kindOf('find_rows', { where: '1=1; DELETE FROM users' }), 'mutation');
    assert.equal(kindOf('find_rows', { filter: "status = 'open' AND pg_terminate_backend(1) IS NOT NULL" }), 'mutation');
    assert.equal(kindOf('find_rows', { where: "status = 'open'" }), 'read-only');
    assert.equal(kindOf('list_issues', { filter: 'is:open label:bug' }), 'read-only');
  });

  it('text shaped like a writing statement is held even when no parser reads it', () => {
    assert.equal(kindOf('search', { query: 'DELETE FROM users ORDER BY id LIMIT 1 RETURNING id' }), 'mutation');
    assert.equal(kindOf('search', { query: `mutation{a(x:${'['.repeat(3000)}${']'.repeat(3000)}){id}}` }), 'mutation');
    assert.equal(kindOf('search', { query: '// note\nMATCH (n) DETACH DELETE n' }), 'mutation');
    assert.equal(kindOf('search', { query: 'update on the elections' }), 'read-only');
  });

  it('a statement after a semicolon in any text is judged on its own', () => {
    assert.equal(kindOf('get_items', { sort: 'name; DROP TABLE items' }), 'mutation');
  });
});

describe('other query languages, by their plain read forms', () => {
  const sparql = { inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'A SPARQL query' } } } };
  const kql = { inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'The KQL query to run' } } } };
  const promql = { inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'PromQL expression' } } } };

  it('SPARQL: a query form reads; any Update operation writes', () => {
    assert.equal(kindOf('sparql_query', { query: 'PREFIX ex: <http://x/> SELECT ?s WHERE { ?s ex:p "DELETE" }' }, sparql), 'read-only');
    assert.equal(kindOf('sparql_query', { query: 'PREFIX ex: <http://x/> DELETE WHERE { ?s ?p ?o }' }, sparql), 'mutation');
    assert.equal(kindOf('sparql_query', { query: 'SELECT * WHERE { ?s ?p ?o } ; CLEAR ALL' }, sparql), 'mutation');
  });

  it('KQL: a query reads; a control command or a plug-in does not', () => {
    assert.equal(kindOf('kusto_query', { query: 'StormEvents | where State == ".drop" | take 10' }, kql), 'read-only');
    assert.equal(kindOf('kusto_query', { query: 'StormEvents | take 1;\n.drop table StormEvents' }, kql), 'mutation');
    assert.equal(kindOf('kusto_query', { query: 'T | evaluate python(typeof(*), "x")' }, kql), 'mutation');
  });

  it('a field described as a read-only language still holds no SQL that writes', () => {
    assert.equal(kindOf('get_metrics', { query: 'rate(http_requests_total[5m])' }, promql), 'read-only');
    assert.equal(kindOf('get_metrics', { query: 'DROP TABLE metrics' }, promql), 'mutation');
  });
});

describe('found by the second attack on the parsers', () => {
  it('MariaDB executable comments are held when MySQL or MariaDB is named', () => {
    assert.equal(kindOf('query', { sql: 'SELECT 1 /*M! ; DROP TABLE t */' }, { description: 'Run a MariaDB SQL query' }), 'mutation');
    assert.equal(kindOf('query', { sql: "SELECT 1 /*M!100000 INTO OUTFILE '/tmp/x' */" }, { description: 'Run a MySQL SQL query' }), 'mutation');
  });

  it('comments PostgreSQL reads differently do not hide a statement in a plain field', () => {
    assert.equal(kindOf('search', { q: '-- x\rDROP TABLE users' }), 'mutation');
    assert.equal(kindOf('query', { query: '/* /* */ */ DELETE FROM users' }), 'mutation');
  });

  it('command lines under other names are commands', () => {
    assert.equal(kindOf('get_output', { cmd_line: 'rm -rf /' }), 'mutation');
    assert.equal(kindOf('get_output', { commandLine: 'rm -rf /' }), 'mutation');
  });

  it('a long command is held without being parsed', () => {
    assert.equal(judgeShell(`echo ${'a '.repeat(30000)}`).kind, 'write');
  });
});
