import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadPageKey } from './channels.js';

describe("confirm.web.key_file (the page's access key across restarts)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'lf-page-key-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the key, without the newline openssl writes', () => {
    const key = '3f9c1a7e5b2d8064'.repeat(4);
    writeFileSync(join(dir, 'good.key'), `${key}\n`);
    assert.equal(loadPageKey(join(dir, 'good.key')), key);
  });

  it('says how to make the file when it is missing', () => {
    assert.throws(() => loadPageKey(join(dir, 'none.key')), {
      code: 'WEB_UNAVAILABLE',
      message: /cannot read confirm\.web\.key_file .*ENOENT.*openssl rand -hex 32 >/,
    });
  });

  it('refuses a short key or one that is not URL-safe, without showing it', () => {
    for (const [name, text] of [
      ['short.key', 'hunter2-secret'],
      ['spaces.key', `${'x'.repeat(20)} ${'y'.repeat(20)}`],
      ['newline.key', `${'3f9c1a7e5b2d8064'.repeat(2)}\n${'3f9c1a7e5b2d8064'.repeat(2)}`],
      ['unicode.key', `${'3f9c1a7e5b2d8064'.repeat(2)}\u00a0x`],
      ['pattern.key', 'ab'.repeat(32)],
      ['repeated.key', 'a'.repeat(64)],
    ] as const) {
      writeFileSync(join(dir, name), text);
      assert.throws(
        () => loadPageKey(join(dir, name)),
        (err: Error & { code?: string }) => err.code === 'WEB_UNAVAILABLE' && /at least 32 characters/.test(err.message) && !err.message.includes(text),
      );
    }
  });

  it('refuses a FIFO, a directory or a large file at once, without reading it', () => {
    const fifo = join(dir, 'fifo.key');
    spawnSync('mkfifo', [fifo]);
    writeFileSync(join(dir, 'big.key'), '3f9c1a7e5b2d8064'.repeat(1000));
    for (const name of ['fifo.key', 'big.key', '.'])
      assert.throws(() => loadPageKey(join(dir, name)), { code: 'WEB_UNAVAILABLE', message: /must be a small regular file holding one key/ });
  });
});
