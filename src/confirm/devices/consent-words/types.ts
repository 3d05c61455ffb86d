/**
 * The shape of one language's consent words. Plain data, so that a language is added by writing a file
 * and naming it in consent-words/index.ts, without touching the parser (consent.ts).
 * Every word is written as the normaliser leaves it: NFKC, lower case, apostrophes dropped ("don't" →
 * "dont"), hyphens split ("go-ahead" → "go ahead"); a phrase is its words separated by single spaces.
 */

/** What a word or phrase means to the consent parser. */
export type WordMeaning =
  /** A card position (1-based): a cardinal ("two", "teen") or an ordinal ("second", "doosra"). */
  | { kind: 'position'; position: number; ordinal: boolean }
  /** A cardinal that names a card only beside a marker ("do number"): alone it is refused (`why`, `say`). */
  | { kind: 'marked-position'; position: number; why: string; say: string }
  /** "last": the final card of the set. */
  | { kind: 'last' }
  /** "number", "card": must stand beside a cardinal. */
  | { kind: 'marker' }
  /** Yes to the final card (or, with one position, to that card). */
  | { kind: 'confirm' }
  /** No to the final card. */
  | { kind: 'cancel' }
  /** Negates the next yes, or alone means no; beside a position it refuses ("not two"). */
  | { kind: 'negation' }
  /** A word a recogniser writes for a number, yes, no or not it misheard ("to", "won", "know", "ah"): always refused. */
  | { kind: 'sound-alike'; sounds: string }
  /** Carries no meaning ("the", "please", "um"). */
  | { kind: 'filler' };

/** One language's words, by meaning. */
export interface ConsentWords {
  /** BCP 47 primary tag, as `confirm.device.voice.languages` names it (`en`, `hi`). */
  lang: string;
  /** Cardinals, word → position (1–10); digits are understood in every language. */
  numbers: Record<string, number>;
  /** Cardinals that name a card only beside a marker ("do number" in Hinglish), word → position. */
  markedNumbers: Record<string, { position: number; why: string; say: string }>;
  /** Ordinals, word → position ("second", "2nd", "doosra"). */
  ordinals: Record<string, number>;
  /** Words for the final card ("last"). */
  last: string[];
  /** Words that stand beside a cardinal ("number", "card"). */
  markers: string[];
  /** Words and phrases that say yes. */
  confirm: string[];
  /** Words and phrases that say no. */
  cancel: string[];
  /** Words and phrases that negate ("not", "dont", "mat"). */
  negations: string[];
  /** Sound-alikes, word → what it sounds like, refused wherever they appear. */
  soundAlikes: Record<string, string>;
  /** Words without meaning that may surround an answer. */
  fillers: string[];
  /**
   * Words that are fillers right after an ordinal or "last" ("the second one", "doosra wala"), and a
   * position or nothing elsewhere ("one" is a number; "the one" alone names no card and is refused).
   */
  afterOrdinal: string[];
  /** Words after which an `afterOrdinal` cardinal names no card and is refused ("the one", "this one"). */
  beforeVagueOne: string[];
  /**
   * Articles: must stand before a card ("the second one", "the number 2", "the last one"). Elsewhere
   * ("the yeah") they are refused: measured, pocketsphinx wrote "the" for a lost "not" ("not yes" → "the
   * yeah"), which would otherwise read as a yes.
   */
  articles: string[];
}
