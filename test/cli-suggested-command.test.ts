/**
 * How the built CLI can be started: dist/cli/main.js is executable after `npm run build` (npx and npm's bin
 * links run it directly).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MAIN } from './helpers.js';

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
