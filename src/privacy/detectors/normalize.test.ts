import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeView, needsView } from './normalize.js';

/** The original span behind view[a, b). */
const back = (text: string, a: number, b: number) => {
  const v = decodeView(text);
  return text.slice(v.start[a], v.end[b - 1]);
};

describe('the decoded view', () => {
  it('is not built for plain text', () => {
    for (const t of ['plain ascii text, 100% sure & done', 'a’b “quoted” — dash', 'C:\\new\\path', '&& || %s %d']) assert.equal(needsView(t), false, t);
  });
  it('decodes JSON, %-, HTML escapes, full-width ASCII and Unicode digits, keeping the original spans', () => {
    const cases: [string, string][] = [
      ['jane\\u0040corp.example', 'jane@corp.example'],
      ['jane%40corp.example', 'jane@corp.example'],
      ['jane&#64;corp.example', 'jane@corp.example'],
      ['jane&#x40;corp.example', 'jane@corp.example'],
      ['jane&commat;corp.example', 'jane@corp.example'],
      ['a=1&amp;b=2', 'a=1&b=2'],
      ['ｊａｎｅ＠ＣＯＲＰ', 'jane@CORP'],
      ['٤١١١ ०१२ 𝟓𝟔', '4111 012 56'],
      ['5555\u20095555\u202F5555\u30004444', '5555 5555 5555 4444'],
    ];
    for (const [t, want] of cases) {
      assert.equal(decodeView(t).text, want, t);
      assert.equal(back(t, 0, want.length), t, t);
    }
  });
  it('drops invisible format characters: zero-width, bidi controls, marks, soft hyphen, BOM', () => {
    for (const ch of [
      '\u200B',
      '\u200C',
      '\u200D',
      '\u200E',
      '\u200F',
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2060',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\uFEFF',
      '\u00AD',
    ]) {
      const t = `ab${ch}cd`;
      assert.equal(decodeView(t).text, 'abcd', JSON.stringify(t));
      assert.equal(back(t, 0, 4), t);
    }
  });
  it('leaves %-encoded URL delimiters and unknown entities as they are', () => {
    assert.equal(decodeView('?q=a%26b%3Dc%40').text, '?q=a%26b%3Dc@');
    assert.equal(decodeView('&bogus; &#64').text, '&bogus; @');
  });
});
