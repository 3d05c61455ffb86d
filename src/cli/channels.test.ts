import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadPageKey } from './channels.js';

describe("confirm.web.key_file (the page's access key across restarts)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'lf-page-key-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the key, without the newline openssl writes', () => {
    const key = 'a1'.repeat(32);
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
    ] as const) {
      writeFileSync(join(dir, name), text);
      assert.throws(
        () => loadPageKey(join(dir, name)),
        (err: Error & { code?: string }) => err.code === 'WEB_UNAVAILABLE' && /at least 32 characters/.test(err.message) && !err.message.includes(text),
      );
    }
  });
});
