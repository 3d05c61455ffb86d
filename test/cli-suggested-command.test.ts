/**
 * How the built CLI can be started, and how it names itself in the commands it suggests: dist/cli/main.js is
 * executable after `npm run build` (npx and npm's bin links run it directly), and every suggested command
 * (serve with no key, stats with no log, check) prints the CLI in one form: `node /absolute/main.js` when
 * started by path from any folder, `lookfirst` when started under that name.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { FAKE_UPSTREAM, MAIN, NODE, nodeUpstream, ROOT, tmp, writeConfig } from './helpers.js';

const env = { ...process.env, NO_COLOR: '1', LOOKFIRST_NO_OPEN: '1' };

/** Runs the CLI as `node <script> …args` from `cwd`, stdin closed. */
function run(cwd: string, script: string, args: string[]) {
  const r = spawnSync(NODE, [script, ...args], { cwd, env, encoding: 'utf8', input: '', timeout: 30_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the built CLI', () => {
  it('is executable, so npx and bin links can start it without node in front', {
    skip: process.platform === 'win32' ? 'no mode bits on Windows' : false,
  }, () => {
    assert.equal(statSync(MAIN).mode & 0o111, 0o111, 'npm run build must chmod dist/cli/main.js 755');
    const r = spawnSync(MAIN, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\d+\.\d+\.\d+/);
  });
});

describe('suggested commands name the CLI in one form', () => {
  const dir = tmp();
  // No key and no log: serve, stats and check all suggest a next command.
  const config = writeConfig(dir, `upstreams:\n${nodeUpstream('fake', FAKE_UPSTREAM)}`, { keygen: false });
  // Started by a path relative to a folder above the clone, as a new user does from their home folder.
  const from = dirname(ROOT);
  const relativeMain = join(basename(ROOT), 'dist/cli/main.js');

  for (const [name, args] of [
    ['serve (no key)', ['serve', '--config', config]],
    ['stats (no log)', ['stats', '--config', config]],
    ['verify-log (no log)', ['verify-log', '--config', config]],
    ['check', ['check', '--config', config, '--timeout', '5']],
  ] as const) {
    it(`${name}: node and the absolute path of main.js, never a path relative to the current folder`, () => {
      const r = run(from, relativeMain, [...args]);
      assert.ok(r.out.includes(`node ${MAIN} `), r.out);
      assert.ok(!r.out.includes(`node ${relativeMain}`), r.out);
    });
  }

  it('says `lookfirst` when started under that name (npm link, a global install, npx)', () => {
    const bin = join(tmp(), 'lookfirst');
    symlinkSync(MAIN, bin);
    const r = run(dir, bin, ['stats', '--config', config]);
    assert.match(r.out, /\(lookfirst serve --config /);
    assert.ok(!r.out.includes('main.js'), r.out);
  });
});
