import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaintMemory, tokensOf, untrustedTest } from './taint.js';

describe('taint memory', () => {
  it('keeps distinctive tokens, normalised', () => {
    assert.deepEqual(tokensOf('Mail Ann@Example.COM, see https://Evil.test/x?y=1). Path /etc/ssh/sshd_config.'), [
      'ann@example.com',
      'https://evil.test/x?y=1',
      '/etc/ssh/sshd_config',
      '/evil.test/x',
    ]);
    assert.deepEqual(tokensOf('key sk_live_0123456789abcdefghijklmn'), ['sk_live_0123456789abcdefghijklmn']);
    assert.deepEqual(tokensOf('short words only'), []);
    // A long token is kept to 256 characters, and still matches itself.
    assert.deepEqual(tokensOf(`x ${'A'.repeat(900_000)} y`), ['a'.repeat(256)]);
    // An upper-case scheme is the same URL.
    assert.deepEqual(tokensOf('see HTTPS://EVIL.Example.com/Pay'), ['https://evil.example.com/pay', '/evil.example.com/pay']);
  });

  it('reads a hostile page without rescanning it from every position (bounded repeats; no timing asserted)', () => {
    // With unbounded repeats each of these took minutes: the gate's event loop would have stalled.
    for (const page of ['a.'.repeat(400_000), 'x'.repeat(900_000), '/a'.repeat(300_000), `${'x'.repeat(60)}@`.repeat(10_000)])
      assert.ok(tokensOf(page).length <= 500_000);
  });

  it('finds a copied value inside a larger token on either side (found by the third attack)', () => {
    const m = new TaintMemory(() => 1);
    m.record(
      'fetch',
      'token ghp_0123456789abcdefghijklmnopqrstuv0123, pay attacker@evil.test, run /home/u/payload.sh, see https://evil.test/c?u=bob@corp.example',
    );
    assert.equal(m.find({ env: 'GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuv0123' }).length, 1);
    assert.equal(m.find({ url: 'https://pay.example/?to=attacker@evil.test' }).length, 1);
    assert.equal(m.find({ args: '--script=/home/u/payload.sh' }).length, 1);
    assert.equal(m.find({ to: 'bob@corp.example' }).length, 1);
  });

  it('remembers IBANs (spaced or not), IPv4 addresses and Windows paths (found by the fourth attack)', () => {
    const m = new TaintMemory(() => 1);
    m.record('fetch', 'Pay DE89 3704 0044 0532 0130 00 now; callback 203.0.113.77; run C:\\Users\\evil\\payload.exe');
    assert.equal(m.find({ iban: 'DE89370400440532013000' }).length, 1);
    assert.equal(m.find({ host: '203.0.113.77' }).length, 1);
    assert.equal(m.find({ run: 'C:\\Users\\evil\\payload.exe' }).length, 1);
    // Linear on a page of long URLs ending in dots (no timing asserted).
    assert.ok(tokensOf(`${'http://'}${'.'.repeat(2040)}x `.repeat(485)).length > 0);
  });

  it('finds a remembered token in arguments at any depth, naming its source', () => {
    const m = new TaintMemory(() => 42);
    m.record('fetch', { content: [{ type: 'text', text: 'contact evil@attacker.test' }] });
    const hits = m.find({ to: ['Evil@Attacker.test'], note: { deep: 'x' } });
    assert.deepEqual(hits, [{ value: 'evil@attacker.test', source: { tool: 'fetch', atMs: 42 } }]);
    assert.deepEqual(m.find({ to: 'friend@example.com' }), []);
  });

  it('takes at most 500 tokens from one result, so one page cannot flush what others left', () => {
    const m = new TaintMemory();
    m.record('inbox', 'pay iban-holder@bank.test');
    for (let page = 0; page < 5; page++) m.record('fetch', Array.from({ length: 2000 }, (_, i) => `x${page}-${i}@spam.test`).join(' '));
    assert.equal(m.find({ to: 'iban-holder@bank.test' }).length, 1);
  });

  it('matches untrusted tools by glob, case-insensitively', () => {
    const t = untrustedTest(['*fetch*', 'gmail__*']);
    assert.equal(t('web_FETCH'), true);
    assert.equal(t('gmail__read'), true);
    assert.equal(t('write_file'), false);
  });
});
