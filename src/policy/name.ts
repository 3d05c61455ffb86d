/**
 * A tool's name as the classifier reads it: split into words, the upstream's namespace prefix removed,
 * then judged by its grammar (policy/phrase.ts). Pure.
 */
import type { Classification } from '../types.js';
import { isVerbWord, judgeNameWords, knownWord } from './phrase.js';
import { AMBIGUOUS } from './words.js';

/** The verdict on a name alone; `benign` when nothing in it clearly says write (a readOnlyHint may lower it). */
export interface NameVerdict extends Classification {
  benign: boolean;
}

/**
 * Splits a tool name into lower-case words: on `_ - . : /` and spaces, and at camelCase humps
 * (`getFileInfo` → get, file, info). Letters and digits glued together stay one word (`n8n`, `k8s`, `s3`)
 * unless every piece between the digits is a word the classifier knows (`list2delete` → list, 2, delete).
 */
export function splitName(name: string): string[] {
  // NFKC first: fullwidth or styled letters (`ｄｅｌｅｔｅ`, `𝖽𝖾𝗅𝖾𝗍𝖾`) are the words they look like.
  // Names are short; a long one is read in its first 512 characters (the camelCase split is not linear).
  return name
    .slice(0, 512)
    .normalize('NFKC')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/(\d)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-.:/\\|,;+]+/u)
    .map((w) => w.toLowerCase())
    .filter(Boolean)
    .flatMap((w) => {
      if (!/\d/.test(w) || /^\d+$/.test(w)) return [w];
      const parts = w.split(/(\d+)/).filter(Boolean);
      if (parts.every((p) => /^\d+$/.test(p) || knownWord(p))) return parts;
      // Digits written for letters (`de1ete`, `purg3`): read as the word they spell, when it is one.
      const spelled = w.replace(/[013457]/g, (d) => LEET[d] ?? d);
      return knownWord(spelled) ? [spelled] : [w];
    });
}

/** Digits that stand for letters in a word (`de1ete` → delete). */
const LEET: Record<string, string> = { '0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's', '7': 't' };

/**
 * Namespace prefixes of one upstream's tools: a first word shared by at least three tools (or by every
 * tool of a smaller catalogue of two or more) that is not itself a known verb (`browser_click`,
 * `browser_snapshot` → `browser`).
 */
export function namespacePrefixes(names: readonly string[]): Set<string> {
  const counts = new Map<string, number>();
  for (const n of names) {
    if (typeof n !== 'string') continue;
    const first = splitName(n)[0];
    if (first !== undefined) counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  const out = new Set<string>();
  for (const [word, count] of counts) {
    // A verb shared by many tools (`get_a`, `get_b`, `get_c`) is not a namespace, nor a word that can be
    // one (`post_tweet`, `post_reply`, `post_status`).
    if (isVerbWord(word) || AMBIGUOUS.has(word)) continue;
    if (count >= 3 || (names.length >= 2 && count === names.length)) out.add(word);
  }
  return out;
}

/** The words of a name that its grammar judges: split, with the upstream's namespace prefixes removed. */
export function nameWords(name: string, prefixes: ReadonlySet<string> = new Set()): string[] {
  let words = splitName(name);
  while (words.length > 1 && prefixes.has(words[0] as string)) words = words.slice(1);
  return words;
}

/** Classifies a tool by its name alone. */
export function classifyName(name: string, prefixes: ReadonlySet<string> = new Set()): NameVerdict {
  const words = nameWords(name, prefixes);
  if (words.length === 0) return { kind: 'mutation', risk: 'medium', reasons: ['the tool has no name'], benign: false };
  const s = judgeNameWords(words, splitName(name));
  if (s.kind === 'read') return { kind: 'read-only', risk: 'low', reasons: [s.why], benign: true };
  if (s.kind === 'write') return { kind: 'mutation', risk: s.risk, reasons: [s.why], benign: s.soft };
  return { kind: 'mutation', risk: s.risk, reasons: [`${s.why}: what is not known to read counts as a change`], benign: true };
}
