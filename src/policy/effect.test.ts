import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectOf } from './effect.js';

describe('effects', () => {
  it('says what a call would do, in words', () => {
    const cases: [string, Record<string, unknown>, string | undefined][] = [
      ['delete_file', { path: '/srv/app/config.toml' }, 'deletes /srv/app/config.toml'],
      ['write_file', { path: 'notes.md', content: 'x'.repeat(1204) }, 'writes 1,204 bytes to notes.md'],
      ['write_file', { path: 'n.md', content: 'é' }, 'writes 2 bytes to n.md'],
      ['edit_file', { path: 'a.ts', edits: [{}, {}] }, 'edits a.ts (2 edits)'],
      ['create_directory', { path: '/srv/new' }, 'creates directory /srv/new'],
      ['move_file', { source: 'a.txt', destination: 'b.txt' }, 'moves a.txt → b.txt'],
      ['http_request', { url: 'https://api.example.com/users/7', method: 'delete' }, 'DELETE https://api.example.com/users/7'],
      ['run', { command: 'rm -rf build' }, 'runs: rm -rf build'],
      ['send_email', { to: ['ann@example.com', 'bo@example.com'], subject: 'Invoice 7' }, 'sends to "ann@example.com, bo@example.com": "Invoice 7"'],
      ['transfer_funds', { amount: '250', currency: 'eur', iban: 'DE89370400440532013000' }, 'transfers 250.00 EUR to DE89370400440532013000'],
      ['refund', { amount: 12.5, to: 'cus_1' }, 'refunds 12.50 to cus_1'],
      ['execute_sql', { sql: 'DELETE\n FROM t' }, 'runs SQL: DELETE FROM t'],
      ['read_text_file', { path: '/a' }, undefined],
      ['frobnicate', { x: 1 }, undefined],
    ];
    for (const [tool, args, want] of cases) assert.equal(effectOf(tool, args), want, tool);
  });

  it('quotes a value that could pose as more of the sentence', () => {
    assert.equal(effectOf('move_file', { source: 'a → /etc/passwd', destination: 'b' }), 'moves "a → /etc/passwd" → b');
    assert.equal(effectOf('delete_file', { path: 'x y' }), 'deletes "x y"');
    assert.equal(effectOf('delete_file', { path: 'a\nb' }), 'deletes "a\\nb"');
  });

  it('shows an amount exactly: never rounded, and a string a number parser would bend is quoted as written', () => {
    const t = (amount: unknown) => effectOf('transfer', { amount, currency: 'eur', iban: 'DE89370400440532013000' });
    assert.equal(t(0.005), 'transfers 0.005 EUR to DE89370400440532013000');
    assert.equal(t('12.5'), 'transfers 12.50 EUR to DE89370400440532013000');
    assert.equal(t(1e21), 'transfers 1000000000000000000000 EUR to DE89370400440532013000');
    assert.equal(t('0x10'), 'transfers "0x10" EUR to DE89370400440532013000');
    assert.equal(t('1e3'), 'transfers "1e3" EUR to DE89370400440532013000');
    assert.equal(t(' 5'), 'transfers " 5" EUR to DE89370400440532013000');
  });
  it('ignores arguments that are not an object', () => {
    assert.equal(effectOf('delete_file', null), undefined);
    assert.equal(effectOf('delete_file', ['x']), undefined);
  });
});
