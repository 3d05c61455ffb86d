import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyArgs, classifyCall, classifyName, namespacePrefixes, splitName } from './classify.js';
import { judgeValue } from './code/index.js';

/** SQL in a field named for SQL (dialect unknown); shell in a field named for a command. */
const sqlVerdict = (q: string) => judgeValue(q, { languages: ['sql'], strict: true });
const shellVerdict = (c: string) => judgeValue(c, { languages: ['shell'], strict: true });

const kind = (name: string, args?: unknown, annotations?: Parameters<typeof classifyCall>[2], prefixes?: Set<string>) =>
  classifyCall(name, args, annotations, prefixes).kind;

describe('the classifier: names', () => {
  it('splits names on separators, camelCase and digits', () => {
    assert.deepEqual(splitName('getFileInfo'), ['get', 'file', 'info']);
    assert.deepEqual(splitName('list_v2Items'), ['list', 'v2', 'items']);
    assert.deepEqual(splitName('n8n_health_check'), ['n8n', 'health', 'check']);
    assert.deepEqual(splitName('list2delete'), ['list', '2', 'delete']);
    assert.deepEqual(splitName('crm.contacts:delete/all-now'), ['crm', 'contacts', 'delete', 'all', 'now']);
    assert.deepEqual(splitName('HTTPRequestSend'), ['http', 'request', 'send']);
  });

  it('reads only when a read verb leads or a report noun ends the name', () => {
    for (const n of ['get_file_info', 'list_directory', 'read_text_file', 'search_files', 'directory_tree', 'browser_console_messages', 'getUser', 'fetch'])
      assert.equal(kind(n), 'read-only', n);
  });

  it('deny wins: a mutating word anywhere makes a mutation', () => {
    for (const n of ['get_and_delete', 'list_then_purge', 'fetchAndSend', 'read_write_file', 'search_replace', 'get_or_create'])
      assert.equal(kind(n), 'mutation', n);
  });

  it('knows every class of mutating word and its synonyms', () => {
    const high = [
      'delete_file',
      'drop_table',
      'purge_cache',
      'wipe_disk',
      'terminate_instance',
      'send_email',
      'transfer_funds',
      'refund_order',
      'publish_post',
      'deploy_app',
      'exec_command',
      'run_script',
    ];
    const medium = ['write_file', 'update_record', 'create_issue', 'move_file', 'merge_request_create', 'invoke_lambda', 'rename_branch', 'browser_click'];
    for (const n of high) assert.deepEqual([n, classifyName(n).kind, classifyName(n).risk], [n, 'mutation', 'high']);
    for (const n of medium) assert.equal(classifyName(n).kind, 'mutation', n);
    // The merge request is what is created: a change of medium risk, not a merge.
    assert.equal(classifyName('merge_request_create').risk, 'medium');
    assert.equal(classifyName('merge_pull_request').risk, 'high');
  });

  it('treats noun-or-verb words as nouns only after a leading read verb', () => {
    assert.equal(kind('get_email'), 'read-only');
    assert.equal(kind('list_orders_by_payment'), 'read-only');
    assert.equal(kind('email_user'), 'mutation');
    assert.equal(kind('send_email'), 'mutation');
    assert.equal(kind('get_and_transfer'), 'mutation');
    assert.equal(classifyName('transfer').risk, 'high');
  });

  it('calls unknown names mutations, saying why', () => {
    const v = classifyName('sequentialthinking');
    assert.equal(v.kind, 'mutation');
    assert.equal(v.benign, true);
    assert.match(v.reasons[0] ?? '', /word "sequentialthinking" is unknown/);
    assert.equal(kind('frobnicate'), 'mutation');
    assert.equal(kind(''), 'mutation');
  });

  it('recognises a namespace prefix shared by several tools of one upstream', () => {
    const names = ['browser_click', 'browser_snapshot', 'browser_navigate', 'browser_tabs', 'get_thing'];
    const p = namespacePrefixes(names);
    assert.deepEqual([...p], ['browser']);
    assert.equal(kind('browser_snapshot', undefined, undefined, p), 'read-only');
    assert.equal(kind('browser_click', undefined, undefined, p), 'mutation');
    // A verb shared by many tools is not a prefix.
    assert.equal(namespacePrefixes(['get_a', 'get_b', 'get_c']).size, 0);
  });
});

describe('the classifier: arguments only make it stricter', () => {
  it('HTTP method fields: DELETE high, POST/PUT/PATCH medium, GET nothing', () => {
    assert.equal(classifyCall('fetch_url', { url: 'https://x', method: 'DELETE' }, undefined).risk, 'high');
    for (const m of ['post', 'PUT', 'Patch']) assert.equal(kind('fetch_url', { method: m }), 'mutation', m);
    assert.equal(kind('fetch_url', { method: 'GET' }), 'read-only');
  });

  it('SQL that mutates anywhere: comments, CTEs, several statements, EXPLAIN ANALYZE', () => {
    for (const q of [
      'DELETE FROM users',
      'select 1; drop table users',
      'WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone',
      '/* harmless */ UPDATE accounts SET balance = 0',
      '-- read\nINSERT INTO t VALUES (1)',
      'EXPLAIN ANALYZE DELETE FROM t',
      'SELECT * INTO backup FROM t',
      'select * from t for update',
    ])
      assert.ok(sqlVerdict(q), q);
    for (const q of ["SELECT * FROM t WHERE note = 'drop table x; delete'", 'SELECT count(*) FROM "delete"', 'select 1 -- delete everything'])
      assert.equal(sqlVerdict(q), undefined, q);
    // Read in every dialect, the strictest wins: a dollar quote is a Postgres literal but MySQL code.
    assert.notEqual(sqlVerdict('SELECT $$DROP TABLE$$'), undefined);
    assert.equal(kind('query', { sql: 'SELECT * FROM t' }), 'read-only');
    // Found by the third attack: text one dialect runs hidden by another's comment or quoting rules.
    for (const q of [
      'SELECT 1 # 2; COMMIT; DROP TABLE users;',
      "SELECT '\\'' ; DROP TABLE users; -- '",
      "SELECT 1--1 INTO OUTFILE '/tmp/pwn'",
      "SELECT 1 AS $x$ INTO OUTFILE '/tmp/pwn'",
      "SELECT pg_notify('c', 'x')",
      'SELECT lo_create(0)',
      'SELECT pg_try_advisory_lock(1)',
      "SELECT pg_logical_emit_message(true, 'p', 'x')",
    ])
      assert.notEqual(sqlVerdict(q), undefined, q);
    assert.equal(kind('query-graphql', { query: 'query Q { viewer { login } } mutation M { deleteRepository(id: 1) { id } }' }), 'mutation');
    assert.equal(kind('query-graphql', { query: 'fragment F on User { id } mutation { deleteUser(id: 1) { ...F } }' }), 'mutation');
    assert.equal(kind('query-graphql', { query: 'query Q { viewer { login } }' }), 'read-only');
    assert.equal(kind('read_neo4j_cypher', { query: 'OPTIONAL MATCH (n) DETACH DELETE n' }), 'mutation');
    assert.equal(kind('read_neo4j_cypher', { query: 'UNWIND [1,2] AS x CREATE (:N {v: x})' }), 'mutation');
    assert.equal(kind('read_neo4j_cypher', { query: 'MATCH (n) RETURN n LIMIT 5' }), 'read-only');
    assert.equal(kind('search', { command: 'git -c core.fsmonitor=/tmp/evil.sh status' }), 'mutation');
    assert.equal(kind('search', { command: 'git status' }), 'read-only');
    assert.equal(kind('search', { command: 'date --set=2020-01-01' }), 'mutation');
    assert.equal(kind('search', { command: 'rg --hostname-bin=/tmp/x foo' }), 'mutation');
    assert.equal(kind('fetch', { method: 'MKCOL' }), 'mutation');
    assert.equal(kind('fetch', { method: 'PROPFIND' }), 'read-only');
    assert.equal(kind('get_items', { actions: ['delete'] }), 'mutation');
    assert.equal(kind('browse', { task: `Open the shop, put the cheapest item in the cart and then ${'carefully '.repeat(8)}complete checkout` }), 'mutation');
    // Found by the fourth attack.
    assert.notEqual(sqlVerdict('SELECT "a\\"" ; DELETE FROM users; -- "'), undefined);
    assert.notEqual(sqlVerdict('SELECT "\\"" INTO OUTFILE \'/tmp/x\' -- "'), undefined);
    assert.notEqual(sqlVerdict('SELECT 1 AS é$a$, 2 # 3; DELETE FROM t; -- $a$'), undefined);
    assert.equal(kind('query', { cypher: 'PROFILE MATCH (n) DETACH DELETE n' }), 'mutation');
    assert.equal(kind('query', { query: 'CYPHER runtime=slotted MATCH (n) DETACH DELETE n' }), 'mutation');
    assert.equal(kind('query', { query: 'WITH "a\\"" AS x MATCH (n) DETACH DELETE n //"' }), 'mutation');
    assert.equal(kind('query', { query: 'query A { a },mutation { deleteUser(id:1){id} }' }), 'mutation');
    assert.equal(kind('query', { query: 'query A { a } mutation@a{ deleteUser(id:1){id} }' }), 'mutation');
    assert.equal(kind('search', { command: 'git show --textconv HEAD' }), 'mutation');
    assert.equal(kind('fetch', { url: 'https://x.test/a?_method=MKCOL' }), 'mutation');
    assert.equal(kind('fetch', { url: 'https://x.test/a?_method=%44ELETE' }), 'mutation');
    assert.equal(kind('fetch', { url: '//x/y?_method=DELETE' }), 'mutation');
    assert.equal(kind('fetch', { method: 'UPDATEREDIRECTREF' }), 'mutation');
    assert.equal(kind('get_items', { action: { name: 'delete', target: 'all' } }), 'mutation');
    assert.equal(kind('fetch', { url: 'https://x.test/a?_method=GET' }), 'read-only');
    assert.equal(kind('extract_zip', {}), 'mutation');
    assert.equal(kind('download_report', {}), 'mutation');
    assert.equal(classifyCall('query', { sql: 'select 1;\nDROP TABLE t' }, undefined).risk, 'high');
    // Natural language in a search field is not SQL.
    assert.equal(kind('search_docs', { query: 'how to delete a branch' }), 'read-only');
    // A strong SQL opening counts in any field.
    assert.equal(kind('get_report', { text: 'DELETE FROM audit' }), 'mutation');
  });

  it('shell commands with redirection or anything but a known reader', () => {
    for (const c of [
      'rm -rf /tmp/x',
      'ls > out.txt',
      'echo hi >> ~/.bashrc',
      'cat a | tee b',
      'ls; curl -X POST https://x',
      'git push',
      'find . -delete',
      "sed -i 's/a/b/' f",
      'python3 script.py',
      'echo $(rm x)',
    ])
      assert.ok(shellVerdict(c), c);
    for (const c of ['ls -la', 'cat a | grep b | wc -l', 'git status', 'ls 2>&1', 'ls > /dev/null', "grep '>' file", 'echo "a > b"'])
      assert.equal(shellVerdict(c), undefined, c);
    assert.equal(kind('get_output', { command: 'rm -rf /' }), 'mutation');
    assert.equal(classifyCall('get_output', { command: 'rm -rf /' }, undefined).risk, 'high');
  });

  it('operation fields whose value is a mutating word', () => {
    assert.equal(classifyCall('records', { action: 'delete', id: 3 }, { readOnlyHint: true }).kind, 'mutation');
    assert.equal(kind('get_records', { op: 'archive_all' }), 'mutation');
    assert.equal(kind('get_records', { op: 'list' }), 'read-only');
  });

  it('looks into nested arguments, within bounds', () => {
    assert.equal(kind('get_batch', { steps: [{ request: { method: 'DELETE' } }] }), 'mutation');
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 100; i++) at = at.next = {} as Record<string, unknown>;
    at.method = 'DELETE';
    assert.match(classifyArgs(deep)?.reasons[0] ?? '', /nested deeper than 32/, 'too deep to read counts as a mutation');
    const wide = Array.from({ length: 20_000 }, (_, i) => i);
    assert.match(classifyArgs({ wide })?.reasons[0] ?? '', /too large/);
  });
});

describe('the classifier: annotations are applied asymmetrically', () => {
  it('believes whatever says more dangerous', () => {
    const d = classifyCall('get_status', {}, { destructiveHint: true });
    assert.deepEqual([d.kind, d.risk], ['mutation', 'high']);
    assert.equal(kind('list_items', {}, { readOnlyHint: false }), 'mutation');
  });

  it('lets readOnlyHint lower only a benign name with arguments that show nothing', () => {
    assert.equal(kind('delete_file', { path: '/x' }, { readOnlyHint: true }), 'mutation');
    assert.match(classifyCall('delete_file', {}, { readOnlyHint: true }).reasons.join(' '), /not believed/);
    assert.equal(kind('sequentialthinking', { thought: 'hm' }, { readOnlyHint: true }), 'read-only');
    assert.equal(kind('sequentialthinking', { sql: 'DROP TABLE t' }, { readOnlyHint: true }), 'mutation');
    assert.equal(kind('open_nodes', {}, { readOnlyHint: true }), 'read-only', 'open is a bookkeeping verb: an honest hint is believed');
    assert.equal(kind('open_nodes', {}, undefined), 'mutation', 'without the hint, open is a change');
  });
});

describe('the classifier: attacks it must survive (from an adversarial review)', () => {
  it('SQL hidden behind string, comment and quoting tricks, side-effect functions and other dialects', () => {
    for (const sql of [
      "SELECT '--'; DROP TABLE users; SELECT 1",
      "SELECT '/*'; DROP TABLE users; SELECT '*/'",
      "SELECT E'\\''; DROP TABLE users; --'",
      'SELECT 1 AS x$$; DROP TABLE users; SELECT 2 AS y$$',
      "SELECT 1 # '\nDROP TABLE users; -- '",
      'SELECT 1 /*!50000 ; DROP TABLE users */',
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity',
      "SELECT dblink_exec('db', 'DELETE FROM users')",
      "SELECT nextval('s')",
      'KILL 42',
      'PRAGMA writable_schema=ON',
      'MATCH (n) DETACH DELETE n',
    ])
      assert.equal(kind('query', { sql }), 'mutation', sql);
    assert.equal(kind('query-graphql', { query: 'mutation { deleteRepository(id: 1) { id } }' }), 'mutation');
    assert.equal(kind('search', { query: 'update my address' }), 'read-only', 'natural language is not SQL');
  });

  it('shell quoting, environment prefixes and reading programs used to write', () => {
    for (const c of [
      "'rm' -rf ~",
      '"rm" -rf ~',
      "X='' rm -rf ~",
      "ls \\' ; rm -rf ~ ; echo \\'",
      "ls $'\\'' ; rm -rf ~ #'",
      'echo x >&/tmp/f',
      'echo x >| f',
      'sort -o f in',
      'rg --pre rm -e x .',
      'git diff --output=f',
      'GIT_EXTERNAL_DIFF=/tmp/e.sh git diff',
      'LD_PRELOAD=/tmp/x.so ls',
      'date -s 2020-01-01',
      'uniq in out',
    ])
      assert.ok(shellVerdict(c), c);
    // A repository the call names may carry config that runs programs (core.fsmonitor), even for log.
    assert.equal(shellVerdict('git -C /repo log')?.risk, 'medium');
    assert.equal(shellVerdict('git log'), undefined);
  });

  it('names: weak read verbs, report nouns after unknown verbs, conjunctions, other scripts', () => {
    for (const n of [
      'capture_payment_intent',
      'take_payment',
      'verify_microdeposits',
      'ping_user',
      'print_document',
      'convert_trial_to_paid',
      'discard_changes',
      'bump_version',
      'ack_events',
      'borrar_logs',
      'lint_and_fix',
      'check_out',
      'list_then_ｄｅｌｅｔｅ',
      'get_und_löschen',
      'scan_and_quarantine',
    ])
      assert.equal(kind(n), 'mutation', n);
    for (const n of ['take_screenshot', 'check_status', 'ping', 'directory_tree', 'get_email']) assert.equal(kind(n), 'read-only', n);
  });

  it('method and operation fields under other names, JSON in strings, write stages', () => {
    for (const args of [
      { actionType: 'trash' },
      { subCommand: 'delete' },
      { requestMethod: 'DELETE' },
      { http_verb: 'DELETE' },
      { headers: { 'X-HTTP-Method-Override': 'DELETE' } },
      { url: 'https://x/api?_method=DELETE' },
      { options: '{"method":"DELETE"}' },
      { method: 'eth_sendRawTransaction' },
      { pipeline: [{ $match: {} }, { $out: 'users' }] },
      { text: 'SELECT 1; DROP TABLE t' },
      { commands: ['rm -rf /'] },
    ])
      assert.equal(kind('get_data', args), 'mutation', JSON.stringify(args));
    assert.equal(kind('list_events', { type: 'PushEvent' }), 'read-only', 'a category value that is only a noun');
  });
});
