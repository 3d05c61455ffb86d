/**
 * English inflections back to the base form the vocabulary (policy/words.ts) lists: `deletes` → delete,
 * `searching` → search, `copied` → copy, `retrieves` → retrieve. Rule-based and bounded; a form no rule
 * explains is returned as written. Pure.
 */

/** How a word was inflected: `s` (plural noun or third person), `ing`, `ed`, or none. */
export type Inflection = 's' | 'ing' | 'ed' | undefined;

/** A word reduced to its base form, and how it was inflected. */
export interface Lemma {
  base: string;
  inflection: Inflection;
}

/**
 * Reduces `word` to the first candidate base form that `known` accepts; a word that is known as written
 * stays as written (`news`, `status`, `settings` are not plurals of anything the vocabulary knows).
 */
export function lemma(word: string, known: (w: string) => boolean): Lemma {
  if (known(word) || word.length < 4) return { base: word, inflection: undefined };
  const tries: [string, Inflection][] = [];
  if (word.endsWith('ies')) tries.push([`${word.slice(0, -3)}y`, 's']);
  if (word.endsWith('es')) tries.push([word.slice(0, -2), 's']);
  if (word.endsWith('s') && !word.endsWith('ss')) tries.push([word.slice(0, -1), 's']);
  if (word.endsWith('ing')) {
    const stem = word.slice(0, -3);
    tries.push([stem, 'ing'], [`${stem}e`, 'ing']);
    if (/([bdgklmnprt])\1$/.test(stem)) tries.push([stem.slice(0, -1), 'ing']);
  }
  if (word.endsWith('ied')) tries.push([`${word.slice(0, -3)}y`, 'ed']);
  if (word.endsWith('ed')) {
    const stem = word.slice(0, -2);
    tries.push([stem, 'ed'], [`${stem}e`, 'ed']);
    if (/([bdgklmnprt])\1$/.test(stem)) tries.push([stem.slice(0, -1), 'ed']);
  }
  for (const [base, inflection] of tries) if (known(base)) return { base, inflection };
  return { base: word, inflection: undefined };
}
