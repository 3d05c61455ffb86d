import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolAnnotations } from '../types.js';
import { classifyCall, combine, judgeTool, namespacePrefixes, type ToolDefinitionLike } from './classify.js';
import { firstSentenceWords, judgeDescription } from './description.js';
import { lemma } from './lemma.js';
import { knownWord } from './phrase.js';
import { judgeInputSchema, judgeOutputSchema } from './schema-signals.js';

const kind = (def: ToolDefinitionLike, prefixes?: Set<string>) => judgeTool(def, prefixes).kind;
const annotated = (def: ToolDefinitionLike, annotations: ToolAnnotations) => combine(judgeTool(def), undefined, annotations).kind;
const props = (p: Record<string, unknown>) => ({ type: 'object', properties: p });

describe('tool verdicts: the name has a grammar', () => {
  it('the head verb decides; nouns after it are objects, even when they can be verbs', () => {
    for (const name of ['get-actor-run', 'get-key-value-store', 'get-broadcast', 'get_deploy_status', 'list_merge_requests', 'fetch_push_events'])
      assert.equal(kind({ name }), 'read-only', name);
    assert.equal(kind({ name: 'API-retrieve-a-block' }, namespacePrefixes(['API-retrieve-a-block', 'API-patch-page', 'API-post-search'])), 'read-only');
  });

  it('a verb at the end heads a noun-verb name: web_search, user_create', () => {
    assert.equal(kind({ name: 'brave_web_search' }), 'read-only');
    assert.equal(kind({ name: 'web_search' }), 'read-only');
    assert.equal(kind({ name: 'user_create' }), 'mutation');
    assert.equal(kind({ name: 'record_delete' }), 'mutation');
  });

  it('knows more read verbs: geocode, crawl, map, extract, research', () => {
    const p = namespacePrefixes(['maps_geocode', 'maps_directions', 'maps_elevation']);
    assert.equal(kind({ name: 'maps_geocode' }, p), 'read-only');
    for (const name of ['tavily-crawl', 'tavily-map', 'tavily-extract', 'tavily-search'])
      assert.equal(kind({ name }, namespacePrefixes(['tavily-crawl', 'tavily-map', 'tavily-extract', 'tavily-search'])), 'read-only', name);
  });

  it('a name without a verb reads only as a report or a collection of known nouns', () => {
    const pg = namespacePrefixes(['pg_locks', 'pg_backups', 'pg_info', 'pg_ps']);
    assert.equal(kind({ name: 'pg_locks' }, pg), 'read-only');
    assert.equal(kind({ name: 'pg_backups' }, pg), 'read-only');
    assert.equal(kind({ name: 'directory_tree' }), 'read-only');
    assert.equal(kind({ name: 'uncomplete-tasks' }), 'mutation', 'an unknown modifier is not a report');
  });

  it('an object decides only when it is a verb in every reading (deny wins)', () => {
    for (const name of ['search_replace', 'read_write_file', 'get_and_delete', 'list_then_purge', 'fetchAndSend', 'get_or_create', 'list2delete'])
      assert.equal(kind({ name }), 'mutation', name);
    assert.equal(kind({ name: 'list_users_and_teams' }), 'read-only', 'a noun after a conjunction continues the objects');
  });

  it('weak read verbs read only on harmless objects; sensitive ones are held', () => {
    for (const name of ['take_screenshot', 'check_status', 'take_heap_snapshot', 'n8n_health_check', 'render_chart', 'validate_schema'])
      assert.equal(kind({ name }, namespacePrefixes(['n8n_health_check', 'n8n_get_workflow', 'n8n_list_workflows'])), 'read-only', name);
    for (const name of ['capture_payment_intent', 'take_payment', 'ping_user', 'print_document', 'generate_api_key', 'verify_microdeposits'])
      assert.equal(kind({ name }), 'mutation', name);
  });

  it('git subcommands that change the repository write, whatever the word means elsewhere', () => {
    const git = namespacePrefixes(['git_fetch', 'git_log', 'git_status', 'git_pull']);
    assert.equal(kind({ name: 'git_fetch' }, git), 'mutation');
    assert.equal(kind({ name: 'git_pull' }, git), 'mutation');
    assert.equal(kind({ name: 'git_status' }, git), 'read-only');
  });

  it('unknown means a change, and the reason names the word', () => {
    const v = judgeTool({ name: 'frobnicate_widget' });
    assert.equal(v.kind, 'mutation');
    assert.match(v.reasons.join(' '), /"frobnicate"|"widget"/);
  });
});

describe('tool verdicts: the description says what the call does', () => {
  it('the first sentence verb, after the lead-ins tools put before it', () => {
    assert.equal(kind({ name: 'git_log', description: 'Shows the commit logs.' }, new Set(['git'])), 'read-only');
    assert.equal(kind({ name: 'sequentialthinking', description: 'Returns the next thought.' }), 'read-only');
    assert.equal(kind({ name: 'get_items', description: 'Use this tool to delete items older than a date.' }), 'mutation');
    assert.equal(firstSentenceWords('[Beta] This tool lets you search the web. It is fast.').words[0], 'search');
    assert.equal(firstSentenceWords('Use the [Search API](https://x.io/docs) to find pages.').words.includes('link'), false);
  });

  it('coordinated actions count: "Create, update or delete", "Search and replace"', () => {
    assert.equal(judgeDescription('Search, create or delete labels.').kind, 'write');
    assert.equal(judgeDescription('Search and replace text in a file.').kind, 'write');
    assert.equal(judgeDescription('Get pull request details and comments.').kind, 'read');
  });

  it('statements that a call cannot be taken back write; their negation does not', () => {
    assert.equal(judgeDescription('Lists rows. Careful: this permanently removes old ones.').kind, 'write');
    assert.equal(judgeDescription('Lists rows. This is not a permanently stored result.').kind, 'read');
  });

  it('a read-only statement settles light verbs, never real writes', () => {
    assert.equal(judgeDescription('Select and run one of the following read operations.').kind, 'read');
    assert.equal(judgeDescription('Execute read-only GraphQL queries against the API.').kind, 'read');
    assert.equal(judgeDescription('Delete rows (read-only mode is not supported).').kind, 'write');
  });

  it('a description that writes overrides a name that reads (deny wins)', () => {
    const v = judgeTool({ name: 'get_record', description: 'Deletes the record and returns it.' });
    assert.equal(v.kind, 'mutation');
    assert.match(v.reasons.join(' '), /description "Deletes the record/);
  });

  it('reasons name the deciding signals in words', () => {
    const v = judgeTool({ name: 'get_users', description: 'Returns the list of users in the workspace.' });
    assert.equal(v.kind, 'read-only');
    assert.match(v.reasons.join('; '), /name verb "get".*description "Returns the list of users/);
  });
});

describe('tool verdicts: the schemas', () => {
  it('content to write and caller-chosen output locations write', () => {
    assert.equal(judgeInputSchema(props({ id: {}, new_name: {} }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ recipients: {} }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ outputDir: { type: 'string', description: 'Directory to save the logs to' } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ filePath: { type: 'string', description: 'Absolute path to save the screenshot to' } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ webhook: { type: 'string' } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ destination: { type: 'string', description: 'Destination address or place' } })), undefined);
  });

  it('an operation whose choices include a write writes, also inside a list of steps', () => {
    assert.equal(judgeInputSchema(props({ action: { enum: ['list', 'create', 'delete'] } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ actions: { type: 'array', items: props({ type: { enum: ['wait', 'click', 'write'] } }) } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ action: { enum: ['merge_train_removed'], description: 'Filter to-do items by action' } })), undefined);
  });

  it('a dry-run switch or a bare file name leaves a doubt that a reading name settles', () => {
    assert.equal(judgeInputSchema(props({ dry_run: { type: 'boolean' } }))?.kind, 'doubt');
    assert.equal(kind({ name: 'validate_ci_lint', inputSchema: props({ dry_run: { type: 'boolean' } }) }), 'read-only');
    assert.equal(kind({ name: 'frobnicate', inputSchema: props({ dry_run: { type: 'boolean' } }) }), 'mutation');
  });

  it('output fields that count changes write', () => {
    assert.equal(judgeOutputSchema(props({ deletedCount: { type: 'number' } }))?.kind, 'write');
    assert.equal(judgeOutputSchema(props({ items: { type: 'array' } })), undefined);
  });
});

describe('tool verdicts: annotations', () => {
  it('an honest readOnlyHint is believed for bookkeeping verbs and noun-or-verb words', () => {
    assert.equal(annotated({ name: 'select_page', description: 'Select a page as a context for future tool calls.' }, { readOnlyHint: true }), 'read-only');
    assert.equal(annotated({ name: 'start_search' }, { readOnlyHint: true }), 'read-only');
    assert.equal(annotated({ name: 'confirm_cost' }, { readOnlyHint: true }), 'read-only');
  });

  it('it is not believed where the name, the description or the schema clearly writes', () => {
    assert.equal(annotated({ name: 'delete_page' }, { readOnlyHint: true }), 'mutation');
    assert.equal(annotated({ name: 'get_page', description: 'Deletes the page.' }, { readOnlyHint: true }), 'mutation');
    assert.equal(annotated({ name: 'get_page', inputSchema: props({ new_title: {} }) }, { readOnlyHint: true }), 'mutation');
  });

  it('what says more dangerous is always believed', () => {
    assert.equal(annotated({ name: 'get_page' }, { readOnlyHint: false }), 'mutation');
    assert.equal(annotated({ name: 'list_pages' }, { destructiveHint: true }), 'mutation');
  });
});

describe('lemma', () => {
  it('finds base forms the vocabulary knows, and leaves other words alone', () => {
    assert.deepEqual(lemma('deletes', knownWord), { base: 'delete', inflection: 's' });
    assert.deepEqual(lemma('searching', knownWord), { base: 'search', inflection: 'ing' });
    assert.deepEqual(lemma('copied', knownWord), { base: 'copy', inflection: 'ed' });
    assert.deepEqual(lemma('settings', knownWord).base, 'settings');
  });

  it('reads bounded parts of hostile definitions and still answers', () => {
    const v = judgeTool({
      name: 'a'.repeat(100_000),
      description: 'get '.repeat(50_000),
      inputSchema: props(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`f${i}`, {}]))),
    });
    assert.ok(v.reasons.length > 0);
  });
});

describe('tool verdicts: what two attacks taught (test/corpus/tool-attacks.json holds every case)', () => {
  it('a last word that is a destructive verb is the action, whatever the head (get_user_ban); a noun is not (get-actor-run)', () => {
    assert.equal(kind({ name: 'get_user_ban' }), 'mutation');
    assert.equal(kind({ name: 'list_push' }), 'mutation');
    assert.equal(kind({ name: 'get-actor-run' }), 'read-only');
  });

  it('a description of what comes back does not settle an unknown verb, nor any doubt of high risk', () => {
    assert.equal(kind({ name: 'liquidate_positions', description: 'Returns the confirmation receipt.' }), 'mutation');
    assert.equal(kind({ name: 'transfer_funds', description: 'Returns the transfer ID.' }), 'mutation');
    assert.equal(kind({ name: 'mongodb_logs', description: 'Returns the most recent logged events.' }), 'read-only');
  });

  it('writes stated anywhere in a description count, negated ones and descriptions of the listed things do not', () => {
    assert.equal(kind({ name: 'get_user', description: 'Gets the user. Note: this also deletes the account.' }), 'mutation');
    assert.equal(kind({ name: 'get_user', description: 'Returns the message, which is then deleted from the queue.' }), 'mutation');
    assert.equal(kind({ name: 'get_user', description: 'Gets the user — deletes it.' }), 'mutation');
    assert.equal(kind({ name: 'list_items', description: 'Lists items that were deleted in the last 30 days.' }), 'read-only');
    assert.equal(kind({ name: 'get_user', description: 'Gets the user. It does not delete anything.' }), 'read-only');
  });

  it('a description in another language that destroys, sends or pays is held', () => {
    assert.equal(kind({ name: 'get_user', description: 'Löscht den Benutzer.' }), 'mutation');
    assert.equal(kind({ name: 'get_user', description: '删除用户' }), 'mutation');
  });

  it('a schema too large or recursive to read counts against it, and is read quickly', () => {
    const schema = { type: 'object', anyOf: Array(20).fill({ $ref: '#/$defs/A' }), $defs: { A: { anyOf: Array(20).fill({ $ref: '#/$defs/A' }) } } };
    const v = judgeTool({ name: 'get_x', inputSchema: schema });
    assert.equal(v.kind, 'mutation');
    assert.match(v.reasons.join(' '), /too large or too recursive/);
  });

  it('a name that is not a string is no name, and does not throw', () => {
    assert.equal(judgeTool({ name: 42 as unknown as string }).kind, 'mutation');
    assert.equal(namespacePrefixes([1, 'a_x', 'a_y', 'a_z'] as unknown as string[]).has('a'), true);
  });
});

describe('tool verdicts: the third review (reads that were asked about, writes that passed)', () => {
  it('values that only look like code or requests stay reads', () => {
    for (const args of [
      { channel: '#general' },
      { q: '#bug is:open' },
      { color: '#ff0000' },
      { query: '@http.method:DELETE' },
      { expr: 'rate(x{method="POST"}[5m])' },
    ])
      assert.equal(classifyCall('search_messages', args, { readOnlyHint: true }).kind, 'read-only', JSON.stringify(args));
    for (const url of [
      'https://en.wikipedia.org/wiki/Delete_key',
      'https://git-scm.com/docs/git-reset',
      'https://docs.stripe.com/api/refunds/create',
      'https://evil.test/pay-here',
    ])
      assert.equal(classifyCall('fetch', { url }, { readOnlyHint: true }).kind, 'read-only', url);
  });

  it('URLs in the shapes APIs give actions, and requests written as code, are held', () => {
    for (const url of [
      'https://api.x.com/v1/users/delete/42',
      'localhost:8080/api/users/1/delete',
      'https://x/v1/projects/p:delete',
      'https://x/a?delete=true',
    ])
      assert.equal(classifyCall('fetch', { url }, { readOnlyHint: true }).kind, 'mutation', url);
    for (const code of ['requests.delete("https://x/u/1")', 'Invoke-RestMethod -Uri x -Method Delete'])
      assert.equal(classifyCall('fetch', { snippet: code }, { readOnlyHint: true }).kind, 'mutation', code);
  });

  it('descriptions: "It deletes", a negation that governs another verb, future and passive forms', () => {
    for (const description of [
      'Gets the user. It deletes the user.',
      'Lists stale branches. Never prompts, deletes them all.',
      'Returns the files, which will be deleted after the call.',
      'The original is moved to the trash.',
    ])
      assert.equal(kind({ name: 'get_user', description }), 'mutation', description);
    assert.equal(kind({ name: 'list_users', description: 'Lists users. This tool will be removed in a future version.' }), 'read-only');
  });

  it('switches under other spellings, and choices read from allOf, examples and words', () => {
    for (const args of [
      { delete: 'true' },
      { delete: 1 },
      { 'dry-run': false },
      { isDryRun: false },
      { keep: false },
      { _action: 'delete' },
      { 'action\u200b': 'delete' },
    ])
      assert.equal(classifyCall('get_messages', args, undefined).kind, 'mutation', JSON.stringify(args));
    assert.equal(judgeInputSchema(props({ action: { allOf: [{ enum: ['get', 'delete'] }] } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ action: { type: 'string', description: 'Supported actions are get and delete.' } }))?.kind, 'write');
    assert.equal(judgeInputSchema(props({ delete_after_read: { type: 'boolean', default: true } }))?.kind, 'write');
  });
});
