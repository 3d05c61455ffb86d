/**
 * Look-alike detection. Three kinds of word read as a word a person trusts while being another:
 * a word mixing scripts (`pаypal` with a Cyrillic `а`); a word written wholly in Cyrillic, Greek or
 * Cherokee letters that all look Latin (`раураӏ`), in text that is otherwise Latin or alone; and a word
 * using compatibility forms (`p𝖺ypal` with a mathematical `𝖺`, fullwidth `ｐａｙ`), whose NFKC form
 * differs. Every channel shows such words with a warning, and the odd letters escaped so the difference
 * is visible. Look-alikes inside Latin itself (`ɑ` for `a`, dotless `ı`) are not caught. Pure.
 * Follows the spirit of UTS #39 §5.1 (mixed-script detection): Han may mix with Hiragana and Katakana
 * (Japanese), with Hangul (Korean) and with Bopomofo; Common and Inherited characters (digits,
 * punctuation, combining marks) belong to every script.
 * @see https://www.unicode.org/reports/tr39/#Mixed_Script_Detection
 * @see https://www.unicode.org/reports/tr39/#Whole_Script_Confusables
 */
import { showHidden } from './visible.js';

/** Scripts told apart; any other letter counts as `Other`. */
const SCRIPTS = [
  'Latin',
  'Cyrillic',
  'Greek',
  'Armenian',
  'Georgian',
  'Cherokee',
  'Coptic',
  'Hebrew',
  'Arabic',
  'Devanagari',
  'Thai',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Bopomofo',
] as const;
const SCRIPT_RE = SCRIPTS.map((s) => [s, new RegExp(`^\\p{Script=${s}}$`, 'u')] as const);
const CJK_SETS: ReadonlySet<string>[] = [new Set(['Han', 'Hiragana', 'Katakana']), new Set(['Han', 'Hangul']), new Set(['Han', 'Bopomofo'])];

/** One look-alike word: where it was found, the word with odd letters escaped, and why it is flagged. */
export interface Lookalike {
  /** `tool name`, or the argument path (`to`, `items[2].name`, `key memo`). */
  where: string;
  /** The word as shown, letters outside the word's main script (or all, for a whole-script one) as `\uXXXX`. */
  shown: string;
  /** Scripts involved, most frequent first, e.g. `["Latin", "Cyrillic"]`. */
  scripts: string[];
  /** What it reads as, for whole-script and compatibility look-alikes (e.g. `paypal`). */
  readsAs?: string;
}

/**
 * Letters of other scripts that look like Latin ones (a subset of Unicode's confusables.txt, the ones
 * that render alike in common fonts), mapped to the Latin letter they pass for.
 */
const LATIN_LOOKALIKES: Record<string, string> = Object.fromEntries(
  [
    // Cyrillic
    'аa',
    'вB',
    'еe',
    'һh',
    'іi',
    'јj',
    'ӏl',
    'оo',
    'рp',
    'сc',
    'ԁd',
    'ԛq',
    'ѕs',
    'уy',
    'ԝw',
    'хx',
    'үy',
    'ѵv',
    'ɡg',
    'АA',
    'ВB',
    'ЕE',
    'ЅS',
    'ІI',
    'ЈJ',
    'КK',
    'МM',
    'НH',
    'ОO',
    'РP',
    'СC',
    'ТT',
    'ХX',
    'УY',
    'ԜW',
    'ӀI',
    'ԚQ',
    'ЬB',
    // Greek
    'αa',
    'ιi',
    'νv',
    'οo',
    'ρp',
    'τt',
    'υu',
    'κk',
    'χx',
    'γy',
    'ΑA',
    'ΒB',
    'ΕE',
    'ΖZ',
    'ΗH',
    'ΙI',
    'ΚK',
    'ΜM',
    'ΝN',
    'ΟO',
    'ΡP',
    'ΤT',
    'ΥY',
    'ΧX',
    // Cherokee
    'ᎪA',
    'ᏴB',
    'ᏟC',
    'ᎠD',
    'ᎬE',
    'ᏀG',
    'ᎻH',
    'ᏆI',
    'ᎫJ',
    'ᏦK',
    'ᏞL',
    'ᎷM',
    'ᏢP',
    'ᏚS',
    'ᎢT',
    'ᏙV',
    'ᏔW',
    'ᏃZ',
    'ᎾO',
  ].map((pair) => [pair[0]!, pair[1]!]),
);

function scriptOf(letter: string): string {
  for (const [name, re] of SCRIPT_RE) if (re.test(letter)) return name;
  return 'Other';
}

/** A letter that belongs to one script (not Common, like `ー`, nor Inherited). */
function isScriptLetter(ch: string): boolean {
  return /\p{L}/u.test(ch) && !/[\p{Script=Common}\p{Script=Inherited}]/u.test(ch);
}

function compatible(scripts: string[]): boolean {
  return scripts.length <= 1 || CJK_SETS.some((set) => scripts.every((s) => set.has(s)));
}

const escapeLetter = (ch: string) => {
  const cp = ch.codePointAt(0)!;
  return cp > 0xffff ? `\\u{${cp.toString(16).toUpperCase()}}` : `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
};

/** Words (runs of letters and marks) of `text` that are look-alikes of one of the three kinds. */
export function mixedScriptWords(text: string): Omit<Lookalike, 'where'>[] {
  const found: Omit<Lookalike, 'where'>[] = [];
  const words = [...text.matchAll(/[\p{L}\p{M}]+/gu)].map((m) => m[0]);
  const hasLatin = words.some((w) => /\p{Script=Latin}/u.test(w));
  for (const word of words) {
    // Compatibility forms (mathematical, fullwidth, letterlike): NFKC folds them to plain letters.
    const folded = word.normalize('NFKC');
    if (folded !== word && [...word].some((ch) => /\p{L}/u.test(ch) && ch.normalize('NFKC') !== ch && /^[\p{Script=Latin}]+$/u.test(ch.normalize('NFKC')))) {
      const shown = [...word].map((ch) => (ch.normalize('NFKC') !== ch ? escapeLetter(ch) : ch)).join('');
      found.push({ shown: showHidden(shown), scripts: ['Latin', 'compatibility forms'], readsAs: folded });
      continue;
    }
    const counts = new Map<string, number>();
    for (const ch of word) if (isScriptLetter(ch)) counts.set(scriptOf(ch), (counts.get(scriptOf(ch)) ?? 0) + 1);
    const scripts = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([s]) => s);
    if (scripts.length === 1 && scripts[0] !== 'Latin' && word.length >= 2 && (hasLatin || words.length === 1)) {
      const chars = [...word].filter((ch) => isScriptLetter(ch));
      if (chars.every((ch) => LATIN_LOOKALIKES[ch] !== undefined)) {
        const readsAs = chars.map((ch) => LATIN_LOOKALIKES[ch]).join('');
        found.push({ shown: [...word].map(escapeLetter).join(''), scripts: [scripts[0]!], readsAs });
        continue;
      }
    }
    if (compatible(scripts)) continue;
    const main = scripts[0];
    const shown = [...word].map((ch) => (isScriptLetter(ch) && scriptOf(ch) !== main ? escapeLetter(ch) : ch)).join('');
    found.push({ shown: showHidden(shown), scripts });
  }
  return found;
}

/** Every look-alike word in a tool name and its arguments (keys and string values, at any depth). */
export function findLookalikes(tool: string, args: unknown): Lookalike[] {
  const out: Lookalike[] = mixedScriptWords(tool).map((w) => ({ where: 'tool name', ...w }));
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') {
      for (const w of mixedScriptWords(value)) out.push({ where: path || 'arguments', ...w });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, `${path}[${i}]`);
      });
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const at = path ? `${path}.${showHidden(k)}` : showHidden(k);
        for (const w of mixedScriptWords(k)) out.push({ where: `key ${at}`, ...w });
        walk(v, at);
      }
    }
  };
  walk(args, '');
  return out.slice(0, 20);
}

/** One line per look-alike, e.g. `look-alike in to: "p\u0430ypal" mixes Latin and Cyrillic letters`. */
export function lookalikeLines(found: readonly Lookalike[]): string[] {
  return found.map((f) => {
    if (f.scripts[1] === 'compatibility forms')
      return `look-alike in ${f.where}: "${f.shown}" uses compatibility letters; it reads as "${showHidden(f.readsAs ?? '')}"`;
    if (f.readsAs !== undefined) return `look-alike in ${f.where}: "${f.shown}" is all ${f.scripts[0]} letters that look like Latin "${f.readsAs}"`;
    return `look-alike in ${f.where}: "${f.shown}" mixes ${f.scripts.join(' and ')} letters`;
  });
}
