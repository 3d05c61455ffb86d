import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findPlaceholders, isPlaceholder, placeholderSpans } from './placeholder.js';

const ID = '3f9a1c2b5e7d90a1b2c3d4e5f6a7b8c9';

describe('placeholders', () => {
  it('recognises the exact form only as a whole text', () => {
    assert.equal(isPlaceholder(`[[IBAN_${ID}]]`), true);
    assert.equal(isPlaceholder(`[[IBAN_INVALID_${ID}]]`), true);
    assert.equal(isPlaceholder(` [[IBAN_${ID}]]`), false);
    assert.equal(isPlaceholder(`[[IBAN_${ID.toUpperCase()}]]`), false);
  });
  it('finds exact placeholders with their label and id', () => {
    assert.deepEqual(findPlaceholders(`a [[IBAN_INVALID_${ID}]] b`), [{ start: 2, end: 2 + `[[IBAN_INVALID_${ID}]]`.length, label: 'IBAN_INVALID', id: ID }]);
  });
  it('reports look-alikes without an id: short, upper-case, cut with an ellipsis, spaced, unclosed', () => {
    const texts = [
      '[[IBAN_3f9a]]',
      `[[IBAN_${ID.toUpperCase()}]]`,
      '[[IBAN_3f9a1c2b…]]',
      '[[IBAN_3f9a...]]',
      '[[ IBAN_3f9a1c2b ]]',
      '[[iban_3f9a1c2b]]',
      '[[IBAN_3f9a1c…',
      `[[IBAN_${ID}0]]`,
    ];
    for (const t of texts) {
      const found = findPlaceholders(`x ${t} y`);
      assert.equal(found.length, 1, t);
      assert.equal(found[0]!.id, undefined, t);
    }
  });
  it('does not take wiki links or plain brackets for placeholders', () => {
    assert.deepEqual(findPlaceholders('[[Main Page]] [x_1] [[a]]'), []);
  });
  it('gives the spans detectors must not look inside', () => {
    assert.deepEqual(placeholderSpans(`ab[[CARD_${ID}]]`), [[2, 2 + `[[CARD_${ID}]]`.length]]);
  });
  it('reports disguised attempts without an id: other separators, one bracket, full-width, invisible, escaped, foreign labels', () => {
    const texts = [
      `[[EMAIL-${ID}]]`,
      `[[EMAIL_${ID}]`,
      `[EMAIL_${ID}]]`,
      `［［EMAIL_${ID}］］`,
      `[[EMAIL_${ID.slice(0, 10)}\u200B${ID.slice(10)}]]`,
      `[\u200B[EMAIL_${ID}]]`,
      `[[EM\u2066AIL_${ID}]]`,
      `[[EMAIL_${ID}a]]`,
      `[[9X_${ID}]]`,
      `[[\u0415MAIL_${ID}]]`,
      `%5B%5BIBAN_${ID}%5D%5D`,
      `\\u005b\\u005bIBAN_${ID}\\u005d\\u005d`,
      `&#91;&#91;IBAN_${ID}&#93;&#93;`,
      `[[EMAIL:${ID}]]`,
      `[[EMAIL_\n${ID}]]`,
      `[[_${ID}]]`,
      `((EMAIL_${ID}))`,
      `{{EMAIL_${ID}}}`,
    ];
    for (const t of texts) {
      const found = findPlaceholders(`x ${t} y`);
      assert.equal(found.length, 1, JSON.stringify(t));
      assert.equal(found[0]!.id, undefined, JSON.stringify(t));
      assert.equal(found[0]!.start, 2, JSON.stringify(t));
    }
  });
  it('does not count wiki links, footnotes, SHAs, UUIDs, ticket ids or digests as attempts', () => {
    for (const t of [
      '[[wiki links]] and [[Main_Page]] and [[1]] and [1]',
      'commit 3f786850e387550fdab836ed7e6dc881de23001b',
      'uuid 550e8400-e29b-41d4-a716-446655440000 (550e8400-e29b-41d4-a716-446655440000)',
      '[PROJ-12345678] fixed in [fix](https://github.com/x/y/commit/3f786850e387550fdab836ed7e6dc881de23001b)',
      '(3f786850e387) [abc1234def] [deadbeef, cafebabe12] {sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855}',
    ])
      assert.deepEqual(findPlaceholders(t), [], t);
  });
});
