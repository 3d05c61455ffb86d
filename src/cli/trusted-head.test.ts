import assert from 'node:assert/strict';
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isHeadBesideLog } from './trusted-head.js';

describe('isHeadBesideLog (the rule verify-log and pilot-status share)', () => {
  const root = mkdtempSync(join(tmpdir(), 'lf-trusted-head-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const logDir = join(root, 'logs');
  const safe = join(root, 'safe');
  mkdirSync(join(logDir, 'sub'), { recursive: true });
  mkdirSync(safe);
  const log = join(logDir, 'audit.jsonl');
  writeFileSync(`${log}.head`, 'head\n');

  it("counts the log's own head file, a copy in its folder and one below it as beside the log", () => {
    assert.equal(isHeadBesideLog(log, `${log}.head`), true);
    copyFileSync(`${log}.head`, join(logDir, 'copy.head'));
    assert.equal(isHeadBesideLog(log, join(logDir, 'copy.head')), true);
    assert.equal(isHeadBesideLog(log, join(logDir, 'sub', 'copy.head')), true);
  });

  it('sees through a symlink or a hard link to the head kept beside the log', () => {
    symlinkSync(`${log}.head`, join(safe, 'symlinked.head'));
    assert.equal(isHeadBesideLog(log, join(safe, 'symlinked.head')), true);
    linkSync(`${log}.head`, join(safe, 'hardlinked.head'));
    assert.equal(isHeadBesideLog(log, join(safe, 'hardlinked.head')), true);
  });

  it('accepts a real copy kept in another folder, and one in a folder named like the log folder', () => {
    copyFileSync(`${log}.head`, join(safe, 'copy.head'));
    assert.equal(isHeadBesideLog(log, join(safe, 'copy.head')), false);
    mkdirSync(`${logDir}-backup`);
    assert.equal(isHeadBesideLog(log, join(`${logDir}-backup`, 'copy.head')), false);
  });
});
