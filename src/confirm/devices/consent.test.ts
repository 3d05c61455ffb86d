import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Consent, MAX_CONSENT_CHARS, parseConsent, toConsentWords } from './consent.js';
import { CONSENT_LANGUAGES } from './consent-words/index.js';

const pick = (position: number): Consent => ({ kind: 'pick', position });
const confirm: Consent = { kind: 'confirm' };
const cancel: Consent = { kind: 'cancel' };

/** [transcript, languages, expected consent] with three cards shown. */
const ACCEPTED: [string, string[], Consent][] = [
  ['two', ['en'], pick(2)],
  ['Two.', ['en'], pick(2)],
  ['the second one', ['en'], pick(2)],
  ['The second one, please', ['en'], pick(2)],
  ['number 2', ['en'], pick(2)],
  ['number two', ['en'], pick(2)],
  ['card two', ['en'], pick(2)],
  ['2', ['en'], pick(2)],
  ['#2', ['en'], pick(2)],
  ['2nd', ['en'], pick(2)],
  ['second', ['en'], pick(2)],
  ['one', ['en'], pick(1)],
  ['number one', ['en'], pick(1)],
  ['the first one', ['en'], pick(1)],
  ['the third one', ['en'], pick(3)],
  ['three', ['en'], pick(3)],
  ['the last one', ['en'], pick(3)],
  ['yes, the second one', ['en'], pick(2)],
  ['do it, two', ['en'], pick(2)],
  ['number two, the second one', ['en'], pick(2)],
  ['yes', ['en'], confirm],
  ['YES!', ['en'], confirm],
  ['yeah', ['en'], confirm],
  ['go ahead', ['en'], confirm],
  ['go-ahead', ['en'], confirm],
  ['ok yes', ['en'], confirm],
  ['yes please', ['en'], confirm],
  ['approve', ['en'], confirm],
  ['no', ['en'], cancel],
  ['No.', ['en'], cancel],
  ['cancel', ['en'], cancel],
  ['stop', ['en'], cancel],
  ['deny', ['en'], cancel],
  ['no, don’t', ['en'], cancel],
  ["don't do it", ['en'], cancel],
  ["don't", ['en'], cancel],
  ['never mind', ['en'], cancel],
  ['ye\u200bs', ['en'], confirm],
  ['\u202eyes', ['en'], confirm],
  ['２', ['en'], pick(2)],
  ['doosra', ['hi'], pick(2)],
  ['dusra', ['hi'], pick(2)],
  ['दूसरा', ['hi'], pick(2)],
  ['doosra wala', ['hi'], pick(2)],
  ['do number', ['hi'], pick(2)],
  ['number do', ['hi'], pick(2)],
  ['do number', ['en', 'hi'], pick(2)],
  ['ek', ['hi'], pick(1)],
  ['pehla', ['hi'], pick(1)],
  ['teen', ['hi'], pick(3)],
  ['teesra', ['hi'], pick(3)],
  ['तीसरा', ['hi'], pick(3)],
  ['२', ['hi'], pick(2)],
  ['नंबर २', ['hi'], pick(2)],
  ['haan', ['hi'], confirm],
  ['haa', ['hi'], confirm],
  ['हाँ', ['hi'], confirm],
  ['haan ji', ['hi'], confirm],
  ['haan karo', ['hi'], confirm],
  ['nahin', ['hi'], cancel],
  ['nahi', ['hi'], cancel],
  ['नहीं', ['hi'], cancel],
  ['mat karo', ['hi'], cancel],
  ['yes', ['en', 'hi'], confirm],
  ['haan', ['en', 'hi'], confirm],
  ['the second one', ['en', 'hi'], pick(2)],
];

/** [transcript, languages, a fragment of the reason] with three cards shown. */
const REFUSED: [string, string[], string][] = [
  ['not two', ['en'], 'does not choose a card'],
  ['not the second one', ['en'], 'does not choose a card'],
  ['two not', ['en'], 'both yes and no'],
  ["don't two", ['en'], 'does not choose a card'],
  ['never number 2', ['en'], 'does not choose a card'],
  ['yes no', ['en'], 'both yes and no'],
  ['no yes', ['en'], 'both yes and no'],
  ['no, two', ['en'], 'both yes and no'],
  ['cancel two', ['en'], 'both yes and no'],
  ['yes, don’t', ['en'], 'both yes and no'],
  ["don't cancel", ['en'], 'double negative'],
  ['two three', ['en'], 'more than one card'],
  ['the first one two', ['en'], 'more than one card'],
  ['to', ['en'], 'misheard "two"'],
  ['too', ['en'], 'misheard "two"'],
  ['for', ['en'], 'misheard "four"'],
  ['won', ['en'], 'misheard "one"'],
  ['the second won', ['en'], 'misheard "one"'],
  ['ate', ['en'], 'misheard "eight"'],
  ['know', ['en'], 'misheard "no"'],
  ['four', ['en'], 'no card 4'],
  ['number 7', ['en'], 'no card 7'],
  ['0', ['en'], 'no card 0'],
  ['99999999999999999999', ['en'], 'no card with that number'],
  ['', ['en'], 'no words'],
  ['  ...  ', ['en'], 'no words'],
  ['\u200b\u200d', ['en'], 'no words'],
  ['uh', ['en'], 'misheard "not"'],
  ['ah yes', ['en'], 'misheard "not"'],
  ['oh two', ['en'], 'misheard "no"'],
  ['ok', ['en'], 'chooses nothing'],
  ['please', ['en'], 'chooses nothing'],
  ['the one', ['en'], 'names no card'],
  ['the yeah', ['en'], '"the" before "yeah" names no card'],
  ['yes the', ['en'], '"the" at the end names no card'],
  ['the the second one', ['en'], '"the" before "the"'],
  ['number', ['en'], 'needs a number'],
  ['the number', ['en'], 'needs a number'],
  ['maybe', ['en'], 'not an answer I understand'],
  ['yes if you must', ['en'], 'not an answer I understand'],
  ['doosra', ['en'], 'not an answer I understand'],
  ['yes '.repeat(13), ['en'], 'too long'],
  ['y'.repeat(MAX_CONSENT_CHARS + 1), ['en'], 'too long'],
  ['do', ['hi'], '"do" is two in Hindi'],
  ['do', ['en', 'hi'], '"do" is two in Hindi'],
  ['to', ['hi'], 'misheard'],
  ['tin', ['en', 'hi'], 'means different things in en and hi'],
  ['mat doosra', ['hi'], 'does not choose a card'],
  ['doosra nahi', ['hi'], 'both yes and no'],
  ['haan nahi', ['hi'], 'both yes and no'],
  ['haan nahin', ['en', 'hi'], 'both yes and no'],
  ['ek do', ['hi'], '"do" is two in Hindi'],
  ['yes', ['fr'], 'no consent words for language "fr"'],
  ['yes', [], 'no consent words'],
];

describe('parseConsent', () => {
  for (const [text, langs, want] of ACCEPTED) {
    it(`reads ${JSON.stringify(text)} (${langs.join('+')}) as ${JSON.stringify(want)}`, () => {
      assert.deepEqual(parseConsent(text, langs, 3), want);
    });
  }
  for (const [text, langs, fragment] of REFUSED) {
    it(`refuses ${JSON.stringify(text.slice(0, 40))} (${langs.join('+') || 'no language'})${fragment ? `: ${fragment}` : ''}`, () => {
      const got = parseConsent(text, langs, 3);
      assert.equal(got.kind, 'refuse', JSON.stringify(got));
      if (got.kind === 'refuse') assert.ok(got.reason.includes(fragment), got.reason);
    });
  }
  it('refuses every answer when no card is shown', () => {
    for (const t of ['yes', 'no', 'one']) assert.equal(parseConsent(t, ['en'], 0).kind, 'refuse');
  });
  it('picks only positions inside the set', () => {
    assert.deepEqual(parseConsent('two', ['en'], 2), pick(2));
    assert.equal(parseConsent('three', ['en'], 2).kind, 'refuse');
    assert.deepEqual(parseConsent('the last one', ['en'], 1), pick(1));
  });
  it('normalises case, punctuation, NFKC, Devanagari digits and apostrophes into words', () => {
    assert.deepEqual(toConsentWords('  DON’T—do it!! ２ ३ '), ['dont', 'do', 'it', '2', '3']);
  });
});

const ALL_WORDS = [
  ...new Set(
    Object.values(CONSENT_LANGUAGES).flatMap((l) => [
      ...Object.keys(l.numbers),
      ...Object.keys(l.markedNumbers),
      ...Object.keys(l.ordinals),
      ...l.last,
      ...l.markers,
      ...l.confirm,
      ...l.cancel,
      ...l.negations,
      ...Object.keys(l.soundAlikes),
      ...l.fillers,
    ]),
  ),
  '2',
  '7',
  '२',
  'maybe',
  'wait',
  'do',
  "don't",
  'NOT',
  ',',
  '!',
];
const LANGS = fc.subarray(['en', 'hi'], { minLength: 1 });
const SOUP = fc.array(fc.constantFrom(...ALL_WORDS), { minLength: 0, maxLength: 8 }).map((w) => w.join(' '));

describe('parseConsent on random word soup', () => {
  it('never picks or confirms when a negation or a no word is among the words', () => {
    fc.assert(
      fc.property(SOUP, LANGS, fc.integer({ min: 1, max: 10 }), (text, langs, cards) => {
        const got = parseConsent(text, langs, cards);
        const words = toConsentWords(text);
        if (got.kind === 'pick' || got.kind === 'confirm') {
          const negative = new Set(langs.flatMap((l) => [...CONSENT_LANGUAGES[l]!.negations, ...CONSENT_LANGUAGES[l]!.cancel]).filter((w) => !w.includes(' ')));
          for (const w of words) assert.ok(!negative.has(w), `${JSON.stringify(text)} (${langs}) → ${got.kind} despite "${w}"`);
        }
      }),
      { numRuns: 3000 },
    );
  });
  it('picks only positions from 1 to the card count', () => {
    fc.assert(
      fc.property(SOUP, LANGS, fc.integer({ min: 1, max: 10 }), (text, langs, cards) => {
        const got = parseConsent(text, langs, cards);
        if (got.kind === 'pick') assert.ok(got.position >= 1 && got.position <= cards);
      }),
      { numRuns: 2000 },
    );
  });
  it('is deterministic: the same words, languages and count give the same consent', () => {
    fc.assert(
      fc.property(
        fc.oneof(SOUP, fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 30 })),
        LANGS,
        fc.integer({ min: 0, max: 10 }),
        (text, langs, cards) => {
          assert.deepEqual(parseConsent(text, langs, cards), parseConsent(text, [...langs].reverse(), cards));
          assert.deepEqual(parseConsent(text, langs, cards), parseConsent(text, langs, cards));
        },
      ),
      { numRuns: 2000 },
    );
  });
  it('never throws on any string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => void parseConsent(text, ['en', 'hi'], 3)));
  });
});
