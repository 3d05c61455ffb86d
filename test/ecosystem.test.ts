/**
 * `lookfirst ecosystem` against the captured catalogues: the Foreguard set (ten public servers, with that
 * project's own published score beside it) and the npm servers this suite runs. The reports are pinned as
 * golden files (UPDATE_GOLDEN=1 rewrites them); a false negative makes the command exit 2.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, runCli, tmp } from './helpers.js';

const sets = ['foreguard', 'npm'] as const;

describe('lookfirst ecosystem', () => {
  for (const set of sets) {
    it(`scores the ${set} catalogues with no false negative, as pinned in the golden report`, () => {
      const dir = join(ROOT, 'test/catalogues', set);
      const r = runCli(['ecosystem', dir], { env: { ...process.env, NO_COLOR: '1' } });
      assert.equal(r.status, 0, r.stderr);
      const golden = join(dir, 'GOLDEN.txt');
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden, r.stdout);
      assert.equal(r.stdout, readFileSync(golden, 'utf8'));
      assert.match(r.stdout, /false negatives: 0\n/);
    });
  }

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
    assert.match(r.stdout, /false negatives: 1 \(bad::get_status\)/);
    const json = runCli(['ecosystem', dir, '--json']);
    assert.equal(JSON.parse(json.stdout)[0].byName.falseNegatives[0], 'bad::get_status');
  });

  it('says what is wrong with a folder it cannot score', () => {
    const r = runCli(['ecosystem', join(tmp(), 'missing')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot read the catalogue folder/);
  });
});
