import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countBursts, estimateSyllables, wordsCoverSpeech } from './coverage.js';

/** `bursts` bursts of a 200 Hz tone, 200 ms each, 150 ms apart. */
function bursts(n: number): Int16Array {
  const out = new Int16Array(16000 * (0.1 + n * 0.35));
  for (let b = 0; b < n; b++) {
    const at = 1600 + b * 5600;
    for (let i = 0; i < 3200; i++) out[at + i] = Math.round(10000 * Math.sin((2 * Math.PI * 200 * i) / 16000) * Math.sin((Math.PI * i) / 3200));
  }
  return out;
}

describe('wordsCoverSpeech', () => {
  it('counts bursts of speech separated by quiet', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((n) => countBursts(bursts(n))),
      [0, 1, 2, 3],
    );
  });
  it('estimates syllables from spelling, leniently', () => {
    assert.deepEqual(['two', 'yes', 'one', 'please', 'the second one', 'number 2', 'approve', 'दूसरा'].map(estimateSyllables), [1, 1, 1, 1, 4, 3, 2, 5]);
  });
  it('refuses one syllable of words for two bursts of speech ("not two" heard as "two")', () => {
    assert.equal(wordsCoverSpeech(bursts(2), 'two').ok, false);
    assert.equal(wordsCoverSpeech(bursts(1), 'two').ok, true);
    assert.equal(wordsCoverSpeech(bursts(2), 'not two').ok, true);
    assert.equal(wordsCoverSpeech(bursts(2), 'yes please').ok, true);
    assert.equal(wordsCoverSpeech(bursts(3), 'card two').ok, false, '"not card two" heard as "card two"');
  });
});
