import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hideUrlSecrets } from './wire-error.js';

describe('hideUrlSecrets', () => {
  it("hides a url's user, password and query wherever the url sits in the text", () => {
    assert.equal(
      hideUrlSecrets('Request cannot be constructed from a URL that includes credentials: http://user:hunter2@127.0.0.1:1/mcp?token=S3CRET'),
      'Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:1/mcp?***',
    );
    assert.equal(
      hideUrlSecrets('(see https://api.example.com/v1?key=abc) and postgres://bob:pw@db/x'),
      '(see https://api.example.com/v1?***) and postgres://***@db/x',
    );
  });

  it('leaves text and urls without credentials as they are', () => {
    for (const t of ['fetch failed', 'connect ECONNREFUSED 127.0.0.1:1', 'http://127.0.0.1:8080/mcp is down', 'mail me at bob@example.com'])
      assert.equal(hideUrlSecrets(t), t);
  });
});
