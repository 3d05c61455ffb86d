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
});
