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
});
