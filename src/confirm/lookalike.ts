/**
 * Look-alike detection: a word that mixes letters of several scripts (`pаypal` with a Cyrillic `а`) is
 * almost never honest, and a person reading it sees a word they trust. Every channel shows such words
 * with a warning, and the foreign letters escaped so the difference is visible. Pure.
 * Follows the spirit of UTS #39 §5.1 (mixed-script detection): Han may mix with Hiragana and Katakana
 * (Japanese), with Hangul (Korean) and with Bopomofo; Common and Inherited characters (digits,
 * punctuation, combining marks) belong to every script.
 * @see https://www.unicode.org/reports/tr39/#Mixed_Script_Detection
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

/** One look-alike word: where it was found, the word with foreign letters escaped, and its scripts. */
export interface Lookalike {
  /** `tool name`, or the argument path (`to`, `items[2].name`, `key of memo`). */
  where: string;
  /** The word as shown, letters outside the word's main script as `\uXXXX`. */
  shown: string;
  /** Scripts mixed, most frequent first, e.g. `["Latin", "Cyrillic"]`. */
  scripts: string[];
}

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

/** Words (runs of letters and marks) of `text` that mix scripts. */
export function mixedScriptWords(text: string): Omit<Lookalike, 'where'>[] {
  const found: Omit<Lookalike, 'where'>[] = [];
  for (const [word] of text.matchAll(/[\p{L}\p{M}]+/gu)) {
    const counts = new Map<string, number>();
    for (const ch of word) if (isScriptLetter(ch)) counts.set(scriptOf(ch), (counts.get(scriptOf(ch)) ?? 0) + 1);
    const scripts = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([s]) => s);
    if (compatible(scripts)) continue;
    const main = scripts[0];
    const shown = [...word]
      .map((ch) => (isScriptLetter(ch) && scriptOf(ch) !== main ? `\\u${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : ch))
      .join('');
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
  return found.map((f) => `look-alike in ${f.where}: "${f.shown}" mixes ${f.scripts.join(' and ')} letters`);
}
