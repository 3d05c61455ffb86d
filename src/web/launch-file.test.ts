import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { createLaunchFile } from './launch-file.js';

const KEYED = 'http://127.0.0.1:8471/?k=SECRETKEYabc_-123';

describe('launch file', () => {
  it('is readable by this user only, in a private directory, and forwards to the keyed address', (t) => {
    const parent = mkdtempSync(join(tmpdir(), 'lf-launch-'));
    t.after(() => rmSync(parent, { recursive: true, force: true }));
    const f = createLaunchFile(KEYED, parent);
    assert.equal(statSync(f.path).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(f.path)).mode & 0o777, 0o700);
    const text = readFileSync(f.path, 'utf8');
    assert.match(text, /<meta http-equiv="refresh" content="0;url=http:\/\/127\.0\.0\.1:8471\/\?k=SECRETKEYabc_-123">/);
    assert.doesNotMatch(f.path + f.url, /SECRETKEY/, 'what goes to the launcher holds no key');
    f.remove();
    assert.equal(existsSync(dirname(f.path)), false, 'removed with its directory');
    f.remove();
  });

  it('refuses an address that is not http(s)', () => {
    assert.throws(() => createLaunchFile('javascript:alert(1)'), /must be http\(s\)/);
  });

  it('escapes the address for HTML', () => {
    const f = createLaunchFile('http://127.0.0.1:1/?k=a"><script>x</script>');
    const text = readFileSync(f.path, 'utf8');
    f.remove();
    assert.doesNotMatch(text, /<script>/);
  });
});
