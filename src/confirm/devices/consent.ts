/**
 * The consent parser: a transcript of the person's words → which card they chose, yes, no, or a refusal.
 * Pure (no I/O, clock or randomness): the same words, languages and card count give the same answer.
 *
 * Security posture: fail closed. Only a short, clear answer chooses; anything else is refused with a
 * reason shown to the person, who answers again. In particular:
 * - a negation never approves: "not two" is refused, "don't do it" / "mat karo" deny;
 * - mixed signals ("yes no", "two three", "no, two") are refused, never resolved by a guess;
 * - a recogniser's sound-alikes ("to", "won", "know") and words understood by no enabled language are
 *   refused, so that a mishearing asks again instead of choosing;
 * - a word that means different things in two enabled languages is refused.
 * A misheard refusal ("not two" heard as "two") cannot be caught here: the transcript is therefore shown
 * on the device and kept in the receipt (confirm/voice/answer.ts returns it with the consent).
 * @see docs/decisions/0018-devices-and-receipts.md ("Several cards", check `words_choose_card`)
 */
import { CONSENT_LANGUAGES, type ConsentWords, type WordMeaning } from './consent-words/index.js';

/** What the person's words decide. Positions are 1-based card positions of the card set shown. */
export type Consent =
  /** Approve the card at `position` ("two", "the second one", "number 2"). */
  | { kind: 'pick'; position: number }
  /** Approve the final card ("yes"). */
  | { kind: 'confirm' }
  /** Deny the final card ("no", "cancel"). */
  | { kind: 'cancel' }
  /** Decide nothing; `reason` is a sentence for the person saying what was wrong and what to say. */
  | { kind: 'refuse'; reason: string };

/** Longest transcript considered (characters before normalising); an answer is a few words. */
export const MAX_CONSENT_CHARS = 200;
/** Most words considered after normalising. */
export const MAX_CONSENT_WORDS = 12;

type Item =
  | { kind: 'position'; word: string; position: number; ordinal: boolean }
  | { kind: 'last' | 'marker' | 'confirm' | 'cancel' | 'negation' | 'filler'; word: string }
  /** Refused: `reason` says what is wrong with the word, `advice` what to say instead. */
  | { kind: 'refused'; word: string; reason: string; advice?: string };

interface Lexicon {
  /** Word or phrase → meaning; a phrase is its words joined by single spaces. */
  entries: Map<string, WordMeaning | { kind: 'conflict'; langs: string[] }>;
  longestPhrase: number;
  afterOrdinal: Set<string>;
  beforeVagueOne: Set<string>;
  articles: Set<string>;
}

// Invisible and bidi characters (format controls, variation selectors, fillers): never part of a word.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
const APOSTROPHES = /['`\u00B4\u2018\u2019\u02BC\u02BB]/g;
const DEVANAGARI_DIGITS = /[\u0966-\u096F]/g;
const NOT_WORD = /[^\p{L}\p{M}\p{N}]+/gu;

/**
 * Normalises a transcript into words: NFKC, invisible and bidi characters removed, Devanagari digits as
 * ASCII digits, lower case, apostrophes dropped ("don't" → "dont"), anything else that is not a letter,
 * mark or digit a word break.
 * @param text the transcript as the recogniser wrote it.
 * @returns the words, possibly none.
 */
export function toConsentWords(text: string): string[] {
  return text
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .replace(DEVANAGARI_DIGITS, (d) => String(d.charCodeAt(0) - 0x0966))
    .toLowerCase()
    .replace(APOSTROPHES, '')
    .replace(NOT_WORD, ' ')
    .trim()
    .split(' ')
    .filter((w) => w !== '');
}

const lexicons = new Map<string, Lexicon>();

function meaningsOf(words: ConsentWords): [string, WordMeaning][] {
  const out: [string, WordMeaning][] = [];
  for (const [w, position] of Object.entries(words.numbers)) out.push([w, { kind: 'position', position, ordinal: false }]);
  for (const [w, m] of Object.entries(words.markedNumbers)) out.push([w, { kind: 'marked-position', position: m.position, why: m.why, say: m.say }]);
  for (const [w, position] of Object.entries(words.ordinals)) out.push([w, { kind: 'position', position, ordinal: true }]);
  for (const w of words.last) out.push([w, { kind: 'last' }]);
  for (const w of words.markers) out.push([w, { kind: 'marker' }]);
  for (const w of words.confirm) out.push([w, { kind: 'confirm' }]);
  for (const w of words.cancel) out.push([w, { kind: 'cancel' }]);
  for (const w of words.negations) out.push([w, { kind: 'negation' }]);
  for (const [w, sounds] of Object.entries(words.soundAlikes)) out.push([w, { kind: 'sound-alike', sounds }]);
  for (const w of words.fillers) out.push([w, { kind: 'filler' }]);
  return out;
}

function lexiconFor(langs: readonly ConsentWords[]): Lexicon {
  const key = langs.map((l) => l.lang).join(',');
  const cached = lexicons.get(key);
  if (cached) return cached;
  const entries: Lexicon['entries'] = new Map();
  const from = new Map<string, string[]>();
  let longestPhrase = 1;
  for (const lang of langs) {
    for (const [raw, meaning] of meaningsOf(lang)) {
      // Lists are written normalised; normalising again keeps a list typo from silently never matching.
      const word = toConsentWords(raw).join(' ');
      longestPhrase = Math.max(longestPhrase, word.split(' ').length);
      const had = entries.get(word);
      // Two sound-alikes are refused either way; any other difference makes the word ambiguous.
      const differs =
        had && had.kind !== 'conflict' && !(had.kind === 'sound-alike' && meaning.kind === 'sound-alike') && JSON.stringify(had) !== JSON.stringify(meaning);
      if (differs) {
        entries.set(word, { kind: 'conflict', langs: [...new Set([...(from.get(word) ?? []), lang.lang])] });
      } else if (!had) entries.set(word, meaning);
      from.set(word, [...(from.get(word) ?? []), lang.lang]);
    }
  }
  const lexicon: Lexicon = {
    entries,
    longestPhrase,
    afterOrdinal: new Set(langs.flatMap((l) => l.afterOrdinal)),
    beforeVagueOne: new Set(langs.flatMap((l) => l.beforeVagueOne)),
    articles: new Set(langs.flatMap((l) => l.articles)),
  };
  lexicons.set(key, lexicon);
  return lexicon;
}

/** Reads words into items: longest phrase first, digits as positions, every word classified. */
function toItems(words: string[], lex: Lexicon): Item[] {
  const items: Item[] = [];
  let i = 0;
  while (i < words.length) {
    let matched = false;
    for (let n = Math.min(lex.longestPhrase, words.length - i); n >= 1 && !matched; n--) {
      const phrase = words.slice(i, i + n).join(' ');
      const m = lex.entries.get(phrase);
      if (!m) continue;
      items.push(itemOf(phrase, m));
      i += n;
      matched = true;
    }
    if (matched) continue;
    const word = words[i]!;
    if (/^[0-9]+$/.test(word)) {
      // More than two digits is out of range for any card set; Number() of a long string is not.
      items.push({ kind: 'position', word, position: word.length > 2 ? Number.POSITIVE_INFINITY : Number(word), ordinal: false });
    } else {
      items.push({ kind: 'refused', word, reason: `"${word}" is not an answer I understand` });
    }
    i += 1;
  }
  return items;
}

function itemOf(word: string, m: WordMeaning | { kind: 'conflict'; langs: string[] }): Item {
  switch (m.kind) {
    case 'position':
      return { kind: 'position', word, position: m.position, ordinal: m.ordinal };
    case 'marked-position':
      // Resolved beside a marker in resolveContext; refused otherwise.
      return { kind: 'refused', word, reason: m.why, advice: m.say };
    case 'sound-alike':
      return { kind: 'refused', word, reason: `"${word}" may be a misheard "${m.sounds}"` };
    case 'conflict':
      return { kind: 'refused', word, reason: `"${word}" means different things in ${m.langs.join(' and ')}` };
    default:
      return { kind: m.kind, word };
  }
}

/** Words whose meaning depends on their neighbours: "the second one", "the one", "do number", articles, markers. */
function resolveContext(items: Item[], lex: Lexicon): Item[] {
  const out = items.slice();
  for (let i = 0; i < out.length; i++) {
    const it = out[i]!;
    const prev = out[i - 1];
    const next = out[i + 1];
    const marked = (x: Item | undefined) => x?.kind === 'marker';
    if (lex.afterOrdinal.has(it.word) && prev && ((prev.kind === 'position' && prev.ordinal) || prev.kind === 'last')) {
      out[i] = { kind: 'filler', word: it.word };
    } else if (lex.afterOrdinal.has(it.word) && it.kind === 'position' && prev && lex.beforeVagueOne.has(prev.word)) {
      out[i] = { kind: 'refused', word: it.word, reason: `"${prev.word} ${it.word}" names no card`, advice: 'say "the first one" or "number one"' };
    } else if (it.kind === 'refused') {
      const m = lex.entries.get(it.word);
      if (m?.kind === 'marked-position' && (marked(prev) || marked(next))) out[i] = { kind: 'position', word: it.word, position: m.position, ordinal: false };
    }
  }
  for (let i = 0; i < out.length; i++) {
    const it = out[i]!;
    const next = out[i + 1];
    if (lex.articles.has(it.word) && it.kind === 'filler' && !(next && (next.kind === 'position' || next.kind === 'last' || next.kind === 'marker'))) {
      out[i] = {
        kind: 'refused',
        word: it.word,
        reason: `"${it.word}"${next ? ` before "${next.word}"` : ' at the end'} names no card, so a word may have been misheard`,
      };
    }
  }
  for (let i = 0; i < out.length; i++) {
    const it = out[i]!;
    if (it.kind !== 'marker') continue;
    const cardinal = (x: Item | undefined) => x?.kind === 'position' && !x.ordinal;
    if (!cardinal(out[i - 1]) && !cardinal(out[i + 1])) out[i] = { kind: 'refused', word: it.word, reason: `"${it.word}" needs a number beside it` };
  }
  return out;
}

const refuse = (reason: string): Consent => ({ kind: 'refuse', reason });

/**
 * Turns a transcript into a consent. Picks a card ("two", "the second one", "number 2", "doosra", "do
 * number"), confirms the final card ("yes", "haan"), cancels ("no", "cancel", "nahin", "mat karo"), and
 * refuses everything else with a reason: a negation with a card ("not two"), mixed signals ("yes no",
 * "two three"), sound-alikes ("to"), unknown words, positions outside 1..cardCount, nothing or too much.
 * @param text the recogniser's transcript (any case, punctuation, Unicode form).
 * @param languages language tags to understand (`en`, `hi`); a tag with no word list is refused.
 * @param cardCount how many cards the set shown holds (positions are 1..cardCount).
 * @returns the consent; never throws.
 */
export function parseConsent(text: string, languages: readonly string[], cardCount: number): Consent {
  if (!Number.isInteger(cardCount) || cardCount < 1) return refuse('there is no card to answer');
  const unknown = languages.filter((l) => !Object.hasOwn(CONSENT_LANGUAGES, l));
  if (unknown.length > 0 || languages.length === 0)
    return refuse(
      `no consent words for language ${unknown.length ? unknown.map((l) => `"${l}"`).join(', ') : '(none configured)'}: the gate cannot understand the answer`,
    );
  if (typeof text !== 'string' || text.length > MAX_CONSENT_CHARS) return refuse('the answer is too long: say only the card, yes or no');
  const words = toConsentWords(text);
  if (words.length === 0) return refuse('no words were heard: say the card, yes or no');
  if (words.length > MAX_CONSENT_WORDS) return refuse('the answer is too long: say only the card, yes or no');
  const lex = lexiconFor([...new Set(languages)].sort().map((l) => CONSENT_LANGUAGES[l]!));
  const items = resolveContext(toItems(words, lex), lex);
  const bad = items.filter((i): i is Extract<Item, { kind: 'refused' }> => i.kind === 'refused');
  if (bad.length > 0) return refuse(`${bad.map((b) => b.reason).join('; ')}: ${bad.find((b) => b.advice)?.advice ?? 'say the card, yes or no again'}`);
  return decide(items, cardCount);
}

/** The structure of a clean answer: negation scope, then one meaning or a refusal. */
function decide(items: Item[], cardCount: number): Consent {
  const content = items.filter((i) => i.kind !== 'filler' && i.kind !== 'marker');
  const positions = new Set<number>();
  let confirms = 0;
  let cancels = 0;
  for (let i = 0; i < content.length; i++) {
    const it = content[i]!;
    if (it.kind === 'negation') {
      const next = content[i + 1];
      if (!next) cancels += 1;
      else if (next.kind === 'position' || next.kind === 'last')
        return refuse(`"${it.word} ${next.word}" does not choose a card: say the card you want, or no`);
      else if (next.kind === 'confirm') {
        cancels += 1;
        i += 1;
      } else return refuse(`"${it.word} ${next.word}" is a double negative: say yes or no`);
    } else if (it.kind === 'position') positions.add(it.position);
    else if (it.kind === 'last') positions.add(cardCount);
    else if (it.kind === 'confirm') confirms += 1;
    else if (it.kind === 'cancel') cancels += 1;
  }
  if (positions.size > 1) return refuse(`the answer names more than one card (${[...positions].join(' and ')}): say one card`);
  if (cancels > 0 && (positions.size > 0 || confirms > 0)) return refuse('the answer says both yes and no: say one of them');
  const [position] = positions;
  if (position !== undefined) {
    if (position < 1 || position > cardCount)
      return refuse(`there is no card ${Number.isFinite(position) ? position : 'with that number'}: say a card from 1 to ${cardCount}`);
    return { kind: 'pick', position };
  }
  if (cancels > 0) return { kind: 'cancel' };
  if (confirms > 0) return { kind: 'confirm' };
  return refuse('the answer chooses nothing: say the card, yes or no');
}
