/**
 * `lookfirst ecosystem` against the captured, hand-labelled catalogues: the Foreguard set (ten public
 * servers), the npm servers this suite runs, and the development set (test/catalogues/dev, captured
 * offline from npm). The reports are pinned as golden files (UPDATE_GOLDEN=1 rewrites them); a false
 * negative makes the command exit 2.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, runCli, tmp } from './helpers.js';

const sets = ['foreguard', 'npm'] as const;

/** Run the command on one set and compare its report with the pinned one. */
function golden(set: string): { status: number | null; stdout: string } {
  const dir = join(ROOT, 'test/catalogues', set);
  const r = runCli(['ecosystem', dir], { env: { ...process.env, NO_COLOR: '1' } });
  const file = join(dir, 'GOLDEN.txt');
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, r.stdout);
  assert.equal(r.stdout, readFileSync(file, 'utf8'));
  return r;
}

describe('lookfirst ecosystem', () => {
  for (const set of sets) {
    it(`scores the ${set} catalogues in three views with no false negative, as pinned in the golden report`, () => {
      const r = golden(set);
      assert.equal(r.status, 0);
      assert.equal(r.stdout.match(/false negatives: 0;/g)?.length, 3);
    });
  }

  it('scores the development set (50 servers from npm) and exits 2 for the writes it cannot see, named in the report', () => {
    const r = golden('dev');
    assert.equal(r.status, 2);
    // The writes the catalogue does not show (README "What it still gets wrong"): with annotations only
    // two tools whose documentation describes a search but whose code creates an investigation.
    assert.match(
      r.stdout,
      /catalogue with annotations: agreement [\d.]+% of 1382 scored tools; false negatives: 2 \(grafana::find_error_pattern_logs, grafana::find_slow_requests\)/,
    );
  });

  it('refuses catalogues and labels it cannot score honestly, naming the file and what to do', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'labels'));
    const run = (catalogue: unknown, labels?: string) => {
      writeFileSync(join(dir, 's.json'), JSON.stringify(catalogue));
      if (labels !== undefined) writeFileSync(join(dir, 'labels/s.tsv'), labels);
      return runCli(['ecosystem', dir]);
    };
    let r = run({ slug: 's', tools: [{ name: 'get_a' }] }, 'get_a\tread\nget_gone\twrite\n');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /labels get_gone, which .*s\.json does not list: remove those lines or capture the server again/);
    r = run({ slug: 's', tools: [{ name: 'get_a' }, { name: 'get_a' }] }, 'get_a\tread\n');
    assert.match(r.stderr, /the tool "get_a" is listed twice/);
    r = run({ slug: 's', tools: [{ name: 'get_a' }, { title: 'no name' }] }, 'get_a\tread\n');
    assert.match(r.stderr, /tool 2 has no string "name"/);
    r = run({ slug: 's', tools: [{ name: 'get_a' }] }, 'get_a\tread\nget_a\twrite\n');
    assert.match(r.stderr, /"get_a" is labelled twice/);
    rmSync(join(dir, 'labels/s.tsv'));
    r = run({ slug: 's', tools: [{ name: 'get_a', label: 'wrte' }] });
    assert.match(r.stderr, /tool "get_a" has "label": "wrte"; use "read" or "write"/);
    // A slug that is a path does not reach outside the folder: the file's own name is used.
    writeFileSync(join(dir, 'labels/s.tsv'), 'del_a\twrite\n');
    r = run({ slug: '../../etc/x', tools: [{ name: 'del_a' }] });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /agreement with labels given blind to annotations/);
  });

  it('says which labels file is wrong, and where', () => {
    const dir = tmp();
    writeFileSync(join(dir, 's.json'), JSON.stringify({ slug: 's', tools: [{ name: 'get_a' }, { name: 'get_b' }] }));
    mkdirSync(join(dir, 'labels'));
    writeFileSync(join(dir, 'labels/s.tsv'), 'get_a\tread\n');
    let r = runCli(['ecosystem', dir]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /labels\/s\.tsv has no label for get_b/);
    writeFileSync(join(dir, 'labels/s.tsv'), 'get_a\tread\nget_b\treads\n');
    r = runCli(['ecosystem', dir]);
    assert.match(r.stderr, /labels\/s\.tsv:2: expected "tool<TAB>read\|write<TAB>note"/);
  });

  it('exits 2 and names the tool when a mutating tool is judged read-only', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({
        slug: 'bad',
        tools: [
          { name: 'get_status', annotations: { readOnlyHint: false } },
          { name: 'delete_all', annotations: { readOnlyHint: false } },
        ],
      }),
    );
    const r = runCli(['ecosystem', dir]);
    assert.equal(r.status, 2);
    assert.match(r.stdout, /names only: agreement 50\.0% of 2 scored tools; false negatives: 1 \(bad::get_status\)/);
    const json = runCli(['ecosystem', dir, '--json']);
    assert.equal(JSON.parse(json.stdout)[0].totals.names.falseNegatives[0], 'bad::get_status');
  });

  it('says what is wrong with a folder it cannot score', () => {
    const r = runCli(['ecosystem', join(tmp(), 'missing')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot read the catalogue folder/);
  });
});
