/**
 * `lookfirst plan`: the Mutation Plan of a list of calls, from a file or stdin, as text or JSON, with a
 * tools/list result for annotations; nothing is executed, and bad input says which item is wrong.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAIN, NODE, runCli, tmp } from './helpers.js';

const calls = [
  { name: 'read_text_file', arguments: { path: '/srv/app/config.toml' } },
  { name: 'delete_file', arguments: { path: '/srv/app/config.toml' } },
  { name: 'query', arguments: { sql: 'WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x' } },
  { name: 'sequentialthinking', arguments: { thought: 'hm' } },
];
const tools = {
  tools: [
    { name: 'delete_file', annotations: { readOnlyHint: true } },
    { name: 'sequentialthinking', annotations: { readOnlyHint: true } },
  ],
};

describe('lookfirst plan', () => {
  it('run on a terminal with nothing piped in, says what to pass instead of waiting or failing with EAGAIN', async () => {
    const dir = tmp('lf-plan-tty-');
    const out = join(dir, 'out.txt');
    const session = `lf-plan-${process.pid}`;
    // A real terminal: tmux gives the command a pty as stdin.
    const started = spawnSync('tmux', [
      'new-session',
      '-d',
      '-s',
      session,
      // The tmux server's environment may hold a TMPDIR another test file's guard removed: pass this file's.
      '-e',
      `TMPDIR=${tmpdir()}`,
      '-x',
      '200',
      '-y',
      '20',
      `${NODE} ${MAIN} plan > ${out} 2>&1; echo "exit $?" >> ${out}`,
    ]);
    assert.equal(started.status, 0, String(started.stderr));
    try {
      let text = '';
      for (let i = 0; i < 100 && !/exit \d/.test(text); i++) {
        await new Promise((r) => setTimeout(r, 100));
        text = (() => {
          try {
            return readFileSync(out, 'utf8');
          } catch {
            return '';
          }
        })();
      }
      assert.match(text, /no calls given: pass a file \(lookfirst plan calls\.json\) or pipe JSON in/);
      assert.match(text, /exit 1/);
    } finally {
      spawnSync('tmux', ['kill-session', '-t', session]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints each call as read-only or mutation with its effect, and a summary', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'calls.json'), JSON.stringify(calls));
    writeFileSync(join(dir, 'tools.json'), JSON.stringify(tools));
    const r = runCli(['plan', join(dir, 'calls.json'), '--tools', join(dir, 'tools.json')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /1\. ✔ read-only {2}read_text_file/);
    assert.match(r.stdout, /2\. ⚠ mutation \(high\) {2}delete_file: deletes \/srv\/app\/config\.toml/);
    assert.match(r.stdout, /annotations: readOnlyHint, not believed/);
    assert.match(r.stdout, /3\. ⚠ mutation \(high\) {2}query: runs SQL: WITH x AS \(DELETE/);
    assert.match(r.stdout, /4\. ✔ read-only {2}sequentialthinking/);
    assert.match(r.stdout, /4 calls: 2 read-only, 2 mutations \(2 high risk\)/);
  });

  it('reads stdin and prints JSON for machines', () => {
    const r = spawnSync(NODE, [MAIN, 'plan', '--json'], { input: JSON.stringify(calls), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const plan = JSON.parse(r.stdout) as { name: string; kind: string; risk: string; effect: string; reasons: string[] }[];
    assert.deepEqual(
      plan.map((p) => [p.name, p.kind, p.risk]),
      [
        ['read_text_file', 'read-only', 'low'],
        ['delete_file', 'mutation', 'high'],
        ['query', 'mutation', 'high'],
        ['sequentialthinking', 'mutation', 'medium'],
      ],
    );
    assert.equal(plan[1]?.effect, 'deletes /srv/app/config.toml');
    assert.ok(plan.every((p) => p.reasons.length > 0));
  });

  it('reads the definitions it is given: a description that deletes is held, whatever the name says', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'calls.json'), JSON.stringify([{ name: 'get_page', arguments: { id: 1 } }]));
    writeFileSync(join(dir, 'tools.json'), JSON.stringify({ tools: [{ name: 'get_page', description: 'Deletes the page and returns it.' }] }));
    const r = runCli(['plan', join(dir, 'calls.json'), '--tools', join(dir, 'tools.json'), '--json']);
    assert.equal(r.status, 0, r.stderr);
    const [entry] = JSON.parse(r.stdout) as { kind: string; reasons: string[] }[];
    assert.equal(entry?.kind, 'mutation');
    assert.match(entry?.reasons.join('; ') ?? '', /description "Deletes the page/);
    writeFileSync(join(dir, 'tools.json'), JSON.stringify({ tool: [] }));
    const bad = runCli(['plan', join(dir, 'calls.json'), '--tools', join(dir, 'tools.json')]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /--tools must be a tools\/list result/);
  });

  it('names the item that is wrong, and the file that is not JSON', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ name: 'ok' }, { arguments: {} }]));
    const r = runCli(['plan', join(dir, 'bad.json')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /bad\.json: item 2 needs a string "name"/);
    writeFileSync(join(dir, 'broken.json'), '[{');
    assert.match(runCli(['plan', join(dir, 'broken.json')]).stderr, /broken\.json is not JSON/);
    writeFileSync(join(dir, 'args.json'), JSON.stringify([{ name: 'x', arguments: [1] }]));
    assert.match(runCli(['plan', join(dir, 'args.json')]).stderr, /item 1 \("x"\): "arguments" must be an object/);
  });
});
