import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { cliName } from './output.js';

describe('cliName (how suggested commands name this CLI)', () => {
  it('says lookfirst when started under that name (PATH, npm bin, npx)', () => {
    assert.equal(cliName('/usr/local/bin/lookfirst'), 'lookfirst');
    assert.equal(cliName('/home/u/app/node_modules/.bin/lookfirst'), 'lookfirst');
  });

  it('gives node and the absolute path otherwise, whatever the current folder', () => {
    assert.equal(cliName('/home/u/lookfirst/dist/cli/main.js'), 'node /home/u/lookfirst/dist/cli/main.js');
    assert.equal(cliName('dist/cli/main.js'), `node ${resolve('dist/cli/main.js')}`);
  });

  it('quotes a path a shell would split or expand', { skip: process.platform === 'win32' ? 'POSIX quoting' : false }, () => {
    assert.equal(cliName('/home/u/my tools/dist/cli/main.js'), "node '/home/u/my tools/dist/cli/main.js'");
    assert.equal(cliName("/home/u/o'brien/main.js"), "node '/home/u/o'\\''brien/main.js'");
  });
});
