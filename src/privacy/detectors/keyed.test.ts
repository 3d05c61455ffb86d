import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findKeyedValues, isSecretKey } from './keyed.js';
import type { Candidate } from './types.js';

const values = (text: string) => {
  const out: Candidate[] = [];
  findKeyedValues(text, out);
  return out.map((c) => text.slice(c.start, c.end));
};

describe('secret-naming keys', () => {
  it('names a secret by one of its parts, in any case convention', () => {
    for (const k of [
      'password',
      'passwd',
      'pwd',
      'secret',
      'token',
      'api_key',
      'apiKey',
      'X-API-Key',
      'access_token',
      'accessToken',
      'db_password',
      'DB_PASSWORD',
      'dbpassword',
      'client_secret',
      'private_key',
      'credentials',
      'auth',
      'Authorization',
      'cookie',
      'Set-Cookie',
      'session_id',
      'AWS_SECRET_ACCESS_KEY',
      'refreshToken',
    ]) {
      assert.equal(isSecretKey(k), true, k);
    }
  });
  it('does not take counts, settings and words that merely contain a secret word', () => {
    for (const k of [
      'max_tokens',
      'token_count',
      'tokens',
      'primary_key',
      'sort_key',
      'keyboard',
      'author',
      'passage',
      'bypass',
      'password_policy',
      'token_type',
      'auth_url',
      'secret_name',
      'key',
      'monkey',
      'session',
    ]) {
      assert.equal(isSecretKey(k), false, k);
    }
  });
});

describe('values behind secret-naming keys in text', () => {
  it('masks only the value, in key=value, YAML and JSON-in-text', () => {
    assert.deepEqual(values('password=hunter2 user=bob'), ['hunter2']);
    assert.deepEqual(values('api_key: abc123\nregion: eu'), ['abc123']);
    assert.deepEqual(values('{"db_password": "correct horse", "user": "x"}'), ['correct horse']);
    assert.deepEqual(values("{ token: 'a\\'b' }"), ["a\\'b"]);
  });
  it('masks the credential after an Authorization scheme, not the scheme', () => {
    assert.deepEqual(values('Authorization: Bearer abc.def-123'), ['abc.def-123']);
    assert.deepEqual(values('Authorization: Basic dXNlcjpwYXNz'), ['dXNlcjpwYXNz']);
  });
  it('masks query parameters and the password of URL userinfo', () => {
    assert.deepEqual(values('/cb?access_token=xyz&state=1'), ['xyz']);
    assert.deepEqual(values('postgres://app:s3cret@db:5432/x and redis://:pw@cache'), ['s3cret', 'pw']);
  });
  it('stops a YAML value at a comment or the next key', () => {
    assert.deepEqual(values('secret: abc # rotated'), ['abc']);
    assert.deepEqual(values('password: pw1 user: bob'), ['pw1']);
  });
  it('leaves placeholders for values, comparisons, calls and member accesses alone', () => {
    for (const t of [
      'password: null',
      `password=\${X}`,
      'password: ****',
      'token: <token>',
      'if (password == x)',
      'token = getToken();',
      'token = req.headers.token;',
      'password: string;',
      'token => 1',
      'password:\n  nested: 1',
    ]) {
      assert.deepEqual(values(t), [], t);
    }
  });
  it('reads an unquoted value by its context: to whitespace behind `=`, to `&`/`#` in a URL query', () => {
    assert.deepEqual(values('password=Tr0ub4dor&3xtra;Secret'), ['Tr0ub4dor&3xtra;Secret']);
    assert.deepEqual(values('token=abc123;xyz789 next'), ['abc123;xyz789']);
    assert.deepEqual(values('a=1&password=x&b=2'), ['x']);
    assert.deepEqual(values('/cb?token=t0k#frag'), ['t0k']);
    assert.deepEqual(values('password=hunter2; restart'), ['hunter2']);
    assert.deepEqual(values('password=hunter2.'), ['hunter2']);
    assert.deepEqual(values('(password=hunter2)'), ['hunter2']);
    assert.deepEqual(values('"cmd": "mysql --password=rootpw --x"'), ['rootpw']);
    assert.deepEqual(values('password=hun"ter2'), ['hun"ter2']);
    assert.deepEqual(values('Set-Cookie: sid=abc; HttpOnly'), ['sid=abc']);
    assert.deepEqual(values('{password: abc, user: bob}'), ['abc']);
    assert.deepEqual(values('password: "abc\\"def"'), ['abc\\"def']);
  });
  it('takes a key as secret when any part names one, unless it names a count, limit or type of it', () => {
    for (const k of ['password_reset_token', 'reset_password', 'old_password', 'pass\u200bword', 'resetToken']) assert.equal(isSecretKey(k), true, k);
    for (const k of ['max_tokens', 'token_count', 'tokens_used', 'token_type', 'token_limit', 'num_tokens', 'password_changed_at', 'password_reset'])
      assert.equal(isSecretKey(k), false, k);
  });
});
