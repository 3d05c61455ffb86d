import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findCards, hasCardPrefix, isCardNumber, luhnValid } from './card.js';
import type { Candidate } from './types.js';

const values = (text: string) => {
  const out: Candidate[] = [];
  findCards(text, out);
  return out.map((c) => text.slice(c.start, c.end));
};

describe('payment card numbers', () => {
  it('checks the ISO/IEC 7812 Luhn digit', () => {
    assert.equal(luhnValid('4111111111111111'), true);
    assert.equal(luhnValid('4111111111111112'), false);
    assert.equal(luhnValid('79927398713'), true);
  });
  it('knows the networks by prefix and length', () => {
    for (const d of [
      '4111111111111111',
      '4222222222222',
      '5555555555554444',
      '2223003122003222',
      '378282246310005',
      '6011111111111117',
      '3530111333300000',
      '30569309025904',
      '6200000000000005',
    ]) {
      assert.equal(isCardNumber(d), true, d);
    }
    assert.equal(hasCardPrefix('1700000000000'), false, 'a unix-millisecond timestamp');
    assert.equal(hasCardPrefix('55555555555544'), false, 'Mastercard has 16 digits');
    assert.equal(hasCardPrefix('3782822463100051'), false, 'American Express has 15 digits');
  });
  it('finds plain, grouped, dashed and line-broken numbers, spans in the original text', () => {
    assert.deepEqual(values('a 4111111111111111 b'), ['4111111111111111']);
    assert.deepEqual(values('a 4111 1111 1111 1111.'), ['4111 1111 1111 1111']);
    assert.deepEqual(values('a 3782-822463-10005!'), ['3782-822463-10005']);
    assert.deepEqual(values('4111 1111\r\n1111 1111'), ['4111 1111\r\n1111 1111']);
  });
  it('reads through zero-width characters, the soft hyphen and full-width digits', () => {
    for (const ch of ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD'])
      assert.deepEqual(values(`x ${['4111', '1111', '1111', '1111'].join(ch)} y`).length, 1, ch.codePointAt(0)!.toString(16));
    assert.deepEqual(values('\uFF14\uFF11\uFF11\uFF11 1111 1111 1111'), ['\uFF14\uFF11\uFF11\uFF11 1111 1111 1111']);
  });
  it('finds a card inside a longer run of digits split by line breaks or lone groups', () => {
    assert.deepEqual(values('card 4111 1111 1111 1111\n2024-01-15'), ['4111 1111 1111 1111']);
    assert.deepEqual(values('12 34 4111111111111111'), ['4111111111111111']);
    assert.deepEqual(values('size=2048 4111 1111 1111 1111'), ['4111 1111 1111 1111']);
    assert.deepEqual(values('1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20'), []);
  });
  it('takes only the printed forms of cards: one group, groups of four, 4-6-5 and 4-6-4, one kind of separator', () => {
    assert.deepEqual(values('4111 11\n11 1111 1111'), ['4111 11\n11 1111 1111']);
    assert.deepEqual(values('3056 930902 5904'), ['3056 930902 5904']);
    assert.deepEqual(values('58380 66299 74218 and 41 11111111 111111 and 4111-1111 1111-1111'), []);
    assert.deepEqual(values('57\t2024-01-06\n62\t945\t84'), []);
  });
  it('does not take Luhn-invalid numbers, timestamps, digits glued to letters, or long ids', () => {
    assert.deepEqual(values('4111111111111112 1733011200123 a4111111111111111 x_4111111111111111 12345678901234567890'), []);
  });
});
