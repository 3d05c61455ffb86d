import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maskUrl, PATH_TOKEN_CHARS } from './mask-url.js';

describe('maskUrl', () => {
  it('masks the password, each query value and the fragment, keeping the rest', () => {
    assert.equal(maskUrl('https://sam:pw@x.example/mcp?token=abc&v=2'), 'https://sam:***@x.example/mcp?token=***&v=***');
    assert.equal(maskUrl('https://x.example/mcp#access_token=abc'), 'https://x.example/mcp#***');
  });

  it('returns an address with nothing secret, and a text that is no URL, exactly as given', () => {
    assert.equal(maskUrl('https://x.example/mcp'), 'https://x.example/mcp');
    assert.equal(maskUrl('https://x.example/services/AAAAAAAAAAAAAAAAAAAAAAAA', {}), 'https://x.example/services/AAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(maskUrl('not a url'), 'not a url');
  });

  it('with path, masks the token segments of capability URLs (chat webhooks) and keeps the short ones', () => {
    assert.equal(
      maskUrl('https://hooks.slack.example/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX', { path: true }),
      'https://hooks.slack.example/services/T0000000/B0000000/***',
    );
    assert.equal(maskUrl('https://x.example/api/webhooks/123/aBc-dEf_123456789012345', { path: true }), 'https://x.example/api/webhooks/123/***');
    assert.equal(maskUrl('http://127.0.0.1:8080/hook', { path: true }), 'http://127.0.0.1:8080/hook');
  });

  it('counts a segment by its decoded characters, so percent-encoding neither hides a token nor makes one', () => {
    const short = '%C3%A9'.repeat(PATH_TOKEN_CHARS - 1); // 15 characters, 90 bytes encoded
    assert.equal(maskUrl(`https://x.example/${short}`, { path: true }), `https://x.example/${short}`);
    assert.equal(maskUrl(`https://x.example/${'%41'.repeat(PATH_TOKEN_CHARS)}`, { path: true }), 'https://x.example/***');
  });

  describe('when the secret sits where a masker keyed on the password and query values would not look', () => {
    it('masks a user name that is the credential: alone, or token-length beside a password', () => {
      assert.equal(maskUrl('https://ghp_abcdefghijklmnop1234@github.example/x'), 'https://***@github.example/x');
      assert.equal(maskUrl('https://tok%3Asecret@h.example/'), 'https://***@h.example/');
      assert.equal(maskUrl('https://ghp_abcdefghijklmnop1234:x-oauth-basic@h.example/'), 'https://***:***@h.example/');
      assert.equal(maskUrl('https://sam:pw@[::1]:8080/a'), 'https://sam:***@[::1]:8080/a');
    });

    it('masks a query part with no value whole: its key is the token itself', () => {
      assert.equal(maskUrl('https://h.example/hook?SECRETTOKENVALUE1234'), 'https://h.example/hook?***');
      assert.equal(maskUrl('https://h.example/hook?SECRETTOKENVALUE1234=&v=2'), 'https://h.example/hook?***&v=***');
      assert.equal(maskUrl('https://h.example/hook?key%3Dvalue&a=1'), 'https://h.example/hook?***&a=***');
      assert.equal(maskUrl('https://h.example/hook?a=1;token=secret'), 'https://h.example/hook?a=***');
    });

    it('masks by shape a text the URL parser refuses or reads as opaque, so a typo does not print a password', () => {
      assert.equal(maskUrl('https://u:pw@h.example:99999/x'), 'https://***@h.example:99999/x');
      assert.equal(maskUrl('https://u:pw@exa mple.com/x?k=v#f'), 'https://***@exa mple.com/x?k=***#***');
      assert.equal(maskUrl('foo:u:pw@host'), 'foo:***@host');
      assert.equal(maskUrl('not a url/AAAAAAAAAAAAAAAAAAAAAAAA', { path: true }), 'not a url/***');
    });

    it('masks a password holding "?" or "#", which the parser reads as the end of the host', () => {
      assert.equal(maskUrl('https://u:p#w@host/x'), 'https://***@host/x');
      assert.equal(maskUrl('https://user:12?x@host'), 'https://***@host');
      assert.equal(maskUrl('https://u:p?w@host/x?q=1'), 'https://***@host/x?q=***');
    });

    it('never throws and stays linear on hostile text', () => {
      for (const t of ['', '@', '?', '#', '%', 'https://h.example/?%ED%A0%80=1', 'https://h.example/%E0%A4%A', '\\\\@']) {
        assert.equal(typeof maskUrl(t, { path: true }), 'string');
      }
      const long = `https://u:pw@h.example/${'a/'.repeat(500_000)}?${'k=v&'.repeat(100_000)}`;
      const out = maskUrl(long, { path: true });
      assert.ok(!out.includes('pw') && !out.includes('=v'));
      const broken = `https://u:pw@h ${'a/'.repeat(500_000)}`;
      assert.ok(!maskUrl(broken, { path: true }).includes('pw'));
    });
  });
});
