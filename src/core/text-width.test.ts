import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cutToWidth, displayWidth, padEndToWidth, padStartToWidth } from './text-width.js';

describe('text width in terminal cells', () => {
  it('counts wide characters as two cells, combining marks as none, and colour as nothing', () => {
    assert.equal(displayWidth('abc'), 3);
    assert.equal(displayWidth('承認者'), 6);
    assert.equal(displayWidth('e\u0301'), 1);
    assert.equal(displayWidth('👩‍👩‍👧'), 2);
    assert.equal(displayWidth('\u001b[31mred\u001b[39m'), 3);
  });

  it('pads by cells, so a column of mixed scripts lines up', () => {
    const a = padEndToWidth('承認', 8);
    const b = padEndToWidth('abcd', 8);
    assert.equal(displayWidth(a), 8);
    assert.equal(displayWidth(b), 8);
    assert.equal(`${a}|`.indexOf('|') < `${b}|`.indexOf('|'), true, 'fewer code units, same cells');
    assert.equal(padStartToWidth('7', 3), '  7');
    assert.equal(padEndToWidth('toolong', 3), 'toolong');
  });

  it('cuts to a width without splitting a grapheme, ending in an ellipsis', () => {
    assert.equal(cutToWidth('abcdef', 4), 'abc\u2026');
    assert.equal(cutToWidth('abc', 3), 'abc');
    assert.equal(cutToWidth('承認者です', 6), '承認\u2026');
    assert.equal(displayWidth(cutToWidth('承認者です', 6)) <= 6, true);
    const flags = '🇫🇷🇩🇪🇯🇵';
    const cut = cutToWidth(flags, 5);
    assert.equal(cut, '🇫🇷🇩🇪\u2026');
    assert.ok(!/[\ud800-\udbff]$/.test(cut.slice(0, -1)), 'no lone surrogate before the ellipsis');
    assert.equal(cutToWidth('e\u0301e\u0301e\u0301', 2), 'e\u0301\u2026');
    assert.equal(cutToWidth('x', 0), '');
  });
});
