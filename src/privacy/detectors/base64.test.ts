import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findBase64Secrets } from './base64.js';
import type { Candidate } from './types.js';

const found = (text: string) => {
  const out: Candidate[] = [];
  findBase64Secrets(text, out);
  return out.map((c) => [text.slice(c.start, c.end), c.detail]);
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('credentials hidden in Base64', () => {
  it('masks the whole run when it decodes to a credential, with the kind in the detail', () => {
    const gh = b64(`ghp_${'aB3dE5fG7h'.repeat(4).slice(0, 36)}`);
    assert.deepEqual(found(`token: ${gh} end`), [[gh, 'Base64 of a GitHub token']]);
    const aws = b64('AKIAFAKE1234567890AB');
    assert.deepEqual(found(aws), [[aws, 'Base64 of an AWS access key']]);
  });
  it('finds a credential in the middle of the encoded text, and base64url', () => {
    const s = Buffer.from(`{"auth":"sk_live_${'aB3dE5fG7h'.repeat(3)}"}`).toString('base64url');
    assert.equal(found(`x ${s} y`)[0]?.[1], 'Base64 of a Stripe key');
  });
  it('leaves harmless text, binary and short runs alone', () => {
    assert.deepEqual(found(b64('The quick brown fox jumps over the lazy dog, twice.')), []);
    assert.deepEqual(found('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'), []);
    assert.deepEqual(found(b64('AKIAFAKE12')), []);
  });
});
