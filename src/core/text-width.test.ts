import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cutToWidth, displayWidth, graphemesOf, padEndToWidth, padStartToWidth } from './text-width.js';

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

  describe('when the text is long (a hostile tool name of a megabyte)', () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const reference = (t: string) => [...segmenter.segment(t)].map((s) => s.segment);

    it('finds the same graphemes as one pass of the segmenter, across every piece boundary', () => {
      // Offsets 0..3 shift where pieces end: inside a flag pair, a surrogate pair, a ZWJ sequence, a mark run.
      for (const unit of ['x🇫🇷', '🇫🇷', 'ab👨‍👩‍👧‍👦é', 'e\u0301\u0302', '\u1100\u1161\u11a8', 'क्\u200dष']) {
        for (let offset = 0; offset < 4; offset++) {
          const text = 'y'.repeat(offset) + unit.repeat(Math.ceil(3000 / unit.length));
          assert.deepEqual([...graphemesOf(text)], reference(text), `${JSON.stringify(unit)} at offset ${offset}`);
          assert.equal(
            displayWidth(text),
            reference(text).reduce((n, g) => n + displayWidth(g), 0),
          );
        }
      }
    });

    it('keeps a grapheme longer than a piece whole in width: a letter with a million marks is one cell', () => {
      const text = `e${'\u0301'.repeat(1 << 20)}`;
      assert.equal([...graphemesOf(text)].join(''), text);
      assert.equal(displayWidth(text), 1);
    });

    it('measures and cuts in linear time (the segmenter alone takes minutes on a megabyte of family emoji)', () => {
      const text = '👨‍👩‍👧‍👦'.repeat(100_000);
      let started = performance.now();
      assert.equal(cutToWidth(text, 64).endsWith('\u2026'), true);
      assert.ok(performance.now() - started < 2_000, 'cut reads only what it shows');
      started = performance.now();
      assert.equal(displayWidth(text), 200_000);
      assert.ok(performance.now() - started < 30_000, 'width is linear');
    });
  });
});
