/**
 * English consent words. Choices worth knowing:
 * - "ok"/"okay" are fillers, not a yes: people say them while thinking, and a recogniser writes them for
 *   hesitation sounds. "ok yes" is a yes; "ok" alone chooses nothing and is refused.
 * - "one" is the number 1, a filler right after an ordinal ("the second one"), and refused after "the",
 *   "this" or "that" ("the one" names no card).
 * - "no" is never a marker ("No. 2"): "no, two" must be refused as mixed, not read as card 2.
 * - Sound-alikes are what pocketsphinx and whisper write for misheard numbers and yes/no ("to", "too",
 *   "won", "know"); they are refused so that a mishearing asks again instead of choosing. Hesitation
 *   sounds ("ah", "uh", "oh") are refused too: a recogniser writes them for a word it lost, often "not".
 */
import type { ConsentWords } from './types.js';

/** English (`en`). */
export const en: ConsentWords = {
  lang: 'en',
  numbers: { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 },
  markedNumbers: {},
  ordinals: {
    first: 1,
    second: 2,
    third: 3,
    fourth: 4,
    fifth: 5,
    sixth: 6,
    seventh: 7,
    eighth: 8,
    ninth: 9,
    tenth: 10,
    '1st': 1,
    '2nd': 2,
    '3rd': 3,
    '4th': 4,
    '5th': 5,
    '6th': 6,
    '7th': 7,
    '8th': 8,
    '9th': 9,
    '10th': 10,
  },
  last: ['last', 'final'],
  markers: ['number', 'card', 'option', 'item'],
  confirm: ['yes', 'yeah', 'yep', 'yup', 'confirm', 'confirmed', 'approve', 'approved', 'accept', 'allow', 'go ahead', 'do it', 'sure', 'affirmative'],
  cancel: ['no', 'nope', 'nah', 'cancel', 'stop', 'deny', 'denied', 'reject', 'abort', 'refuse', 'decline', 'never mind'],
  negations: ['not', 'dont', 'do not', 'never', 'wont', 'cant', 'cannot', 'shouldnt', 'isnt', 'nt'],
  soundAlikes: {
    to: 'two',
    too: 'two',
    tu: 'two',
    for: 'four',
    fore: 'four',
    won: 'one',
    wan: 'one',
    ate: 'eight',
    tree: 'three',
    free: 'three',
    sex: 'six',
    sax: 'six',
    heaven: 'seven',
    nein: 'nine',
    tin: 'ten',
    // biome-ignore lint/suspicious/noThenProperty: a word list, never awaited; "then" is how recognisers write a misheard "ten".
    then: 'ten',
    yet: 'yes',
    yas: 'yes',
    guess: 'yes',
    know: 'no',
    now: 'no',
    knot: 'not',
    note: 'not',
    nod: 'not',
    // Hesitation sounds are what pocketsphinx writes for a word it could not place: measured, "not yes"
    // came out as "ah yes" every time with the default model. Ignoring them would turn a lost "not" into
    // a yes, so they are refused.
    ah: 'not',
    uh: 'not',
    oh: 'no',
    um: 'no',
    er: 'no',
    erm: 'no',
    hmm: 'no',
    huh: 'no',
  },
  fillers: ['the', 'please', 'ok', 'okay', 'well', 'pick', 'choose', 'select', 'take', 'its', 'it', 'is'],
  afterOrdinal: ['one'],
  beforeVagueOne: ['the', 'this', 'that'],
  articles: ['the'],
};
