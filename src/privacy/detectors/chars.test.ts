import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { countDigits, DIGITISH, forEachRun, TOKENISH } from './chars.js';

/** Every maximal run of members at least `min` long, by a plain left-to-right reading. */
function naive(text: string, members: Uint8Array, min: number): [number, number][] {
  const out: [number, number][] = [];
  let s = -1;
  for (let i = 0; i <= text.length; i++) {
    const m = i < text.length && members[text.charCodeAt(i)] === 1;
    if (m && s < 0) s = i;
    if (!m && s >= 0) {
      if (i - s >= min) out.push([s, i]);
      s = -1;
    }
  }
  return out;
}

describe('the skip scan over runs', () => {
  it('finds exactly the runs a plain reading finds, for any text and length', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '1', ' ', '-', '.', 'x', '/', '\u200B', '\uFF11') }), fc.integer({ min: 1, max: 30 }), (text, min) => {
        for (const members of [DIGITISH, TOKENISH]) {
          const got: [number, number][] = [];
          forEachRun(text, members, min, (s, e) => got.push([s, e]));
          assert.deepEqual(got, naive(text, members, min));
        }
      }),
      { numRuns: 500 },
    );
  });
  it('counts ASCII and full-width digits', () => {
    assert.equal(countDigits('a1\uFF12 3', 0, 5), 3);
  });
});
