import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findEmails } from './email.js';
import type { Candidate } from './types.js';

const values = (text: string) => {
  const out: Candidate[] = [];
  findEmails(text, out);
  return out.map((c) => text.slice(c.start, c.end));
};

describe('e-mail addresses', () => {
  it('finds dot-atom addresses with subdomains, plus tags and upper case', () => {
    assert.deepEqual(values('to <Jane.Doe+x@mail.Example.co.uk>, cc a_b-c@d.io.'), ['Jane.Doe+x@mail.Example.co.uk', 'a_b-c@d.io']);
    assert.deepEqual(values('mailto:someone@example.com?x'), ['someone@example.com']);
  });
  it('trims dots the local part cannot start with', () => {
    assert.deepEqual(values('...jane@example.com'), ['jane@example.com']);
  });
  it('leaves package specs, handles, decorators, URL userinfo and hosts without a TLD alone', () => {
    assert.deepEqual(values('@types/node lodash@4.17.21 @jane @Component user@localhost ssh://git@example.com x://u:p@example.com'), []);
  });
  it('finds addresses in URL paths, with Unicode local parts and internationalised domains; not file names', () => {
    assert.deepEqual(values('https://x.example/u/jane@corp.example'), ['jane@corp.example']);
    assert.deepEqual(values('mail jöhn@corp.example'), ['jöhn@corp.example']);
    assert.deepEqual(values('ops@bücher.example'), ['ops@bücher.example']);
    assert.deepEqual(values('icon@2x.png logo@3x.webp //user@host.example'), []);
  });
});
