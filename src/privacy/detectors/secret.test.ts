import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findShapes } from './secret.js';
import type { Candidate } from './types.js';

const found = (text: string) => {
  const out: Candidate[] = [];
  findShapes(text, out);
  return out.map((c) => [text.slice(c.start, c.end), c.detail]);
};
const body = (n: number) => 'aB3dE5fG7h'.repeat(Math.ceil(n / 10)).slice(0, n);
const b64u = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('credentials with a known shape', () => {
  const cases: [string, string][] = [
    [`ghp_${body(36)}`, 'GitHub token'],
    [`gho_${body(36)}`, 'GitHub token'],
    [`ghs_${body(36)}`, 'GitHub token'],
    [`github_pat_11${body(20)}_${body(59)}`, 'GitHub token'],
    [`sk-${body(48)}`, 'OpenAI API key'],
    [`sk-proj-${body(60)}`, 'OpenAI API key'],
    [`sk-ant-api03-${body(90)}`, 'Anthropic API key'],
    ['AKIAFAKE1234567890AB', 'AWS access key'],
    ['ASIAFAKE1234567890AB', 'AWS access key'],
    [`xoxb-1234567890-${body(24)}`, 'Slack token'],
    [`https://hooks.slack.com/services/T000/B000/${body(24)}`, 'Slack webhook URL'],
    [`sk_live_${body(24)}`, 'Stripe key'],
    [`rk_test_${body(24)}`, 'Stripe key'],
    [`hf_${body(34)}`, 'Hugging Face token'],
    [`AIza${body(35)}`, 'Google API key'],
    [`${b64u({ alg: 'RS256', typ: 'JWT' })}.${b64u({ sub: '1' })}.${body(40)}`, 'JWT'],
  ];
  for (const [token, detail] of cases) {
    it(`finds a ${detail} (${token.slice(0, 8)}…) whole, in prose, quotes and assignments`, () => {
      for (const text of [`x ${token} y`, `"${token}"`, `KEY=${token}\n`]) assert.deepEqual(found(text), [[token, detail]], text);
    });
  }
  it('finds the whole PEM block of any private key type, and a block cut before its END', () => {
    for (const type of ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'ENCRYPTED PRIVATE KEY']) {
      const pem = `-----BEGIN ${type}-----\nMIIEv${body(60)}\n${body(20)}==\n-----END ${type}-----`;
      assert.deepEqual(found(`key:\n${pem}\nrest`), [[pem, 'PEM private key']]);
    }
    assert.deepEqual(found(`-----BEGIN RSA PRIVATE KEY-----\n${body(64)}\n${body(10)}`), [
      [`-----BEGIN RSA PRIVATE KEY-----\n${body(64)}\n${body(10)}`, 'PEM private key'],
    ]);
  });
  it('leaves public keys, certificates, and prefixes without a credential body alone', () => {
    const texts = [
      `-----BEGIN PUBLIC KEY-----\n${body(64)}\n-----END PUBLIC KEY-----`,
      `-----BEGIN CERTIFICATE-----\n${body(64)}\n-----END CERTIFICATE-----`,
      'ghp_short sk-learn task-runner-with-a-very-long-package-name AKIAlowercase1234567',
      `${b64u({ typ: 'JWT' })}.${b64u({ sub: '1' })}.sig`,
      `x${'ghp_'}${body(36)}`,
    ];
    for (const t of texts) assert.deepEqual(found(t), [], t);
  });
});
