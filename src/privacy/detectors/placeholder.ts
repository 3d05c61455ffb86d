/**
 * Placeholders: `[[LABEL_<32 lowercase hex>]]`, the text the privacy filter puts where a private value was
 * (label: the kind of value; the id: 128 random bits issued by the vault). Here, the exact form, and the
 * look-alikes an agent may send by mistake or to probe the vault, which the caller refuses (fail closed):
 * a wrong-length or upper-case id (`[[IBAN_3f9a]]`, `[[IBAN_3F9A…]]`), an id cut with an ellipsis
 * (`[[IBAN_3f9a1c2b…]]`, `[[IBAN_3f9a...]]`, also without the closing brackets), spaces inside the brackets,
 * a lower-case label. `[[Some Page]]` (a wiki link) is not a look-alike: there is no `_<hex>` after a label.
 */

/** The exact placeholder form, global: reset `lastIndex` before use. Group 1: the label; group 2: the id. */
export const PLACEHOLDER_RE = /\[\[([A-Z][A-Z0-9_]*)_([0-9a-f]{32})\]\]/g;

const EXACT_RE = /^\[\[([A-Z][A-Z0-9_]*)_([0-9a-f]{32})\]\]$/;
/** Bounded quantifiers: a hostile text of `[[a_a_a_…` costs a bounded amount per `[[`. */
const LOOKALIKE_RE =
  /\[\[\s{0,4}([A-Za-z][A-Za-z0-9_]{0,40}?)_([0-9A-Fa-f]{1,64})\s{0,4}(?:…|\.{2,4})?\s{0,4}\]\]|\[\[\s{0,4}([A-Za-z][A-Za-z0-9_]{0,40}?)_([0-9A-Fa-f]{0,64})\s{0,4}(?:…|\.{2,4})/g;

/** One placeholder or look-alike in a text: [start, end) UTF-16 offsets; `id` undefined for a look-alike. */
export interface PlaceholderSpan {
  start: number;
  end: number;
  label: string;
  id: string | undefined;
}

/** True when the whole text is exactly one placeholder. */
export function isPlaceholder(text: string): boolean {
  return EXACT_RE.test(text);
}

/** Every exact placeholder and look-alike in `text`, by start offset. */
export function findPlaceholders(text: string): PlaceholderSpan[] {
  if (!text.includes('[[')) return [];
  const out: PlaceholderSpan[] = [];
  LOOKALIKE_RE.lastIndex = 0;
  for (let m = LOOKALIKE_RE.exec(text); m !== null; m = LOOKALIKE_RE.exec(text)) {
    const exact = EXACT_RE.exec(m[0]);
    out.push({ start: m.index, end: m.index + m[0].length, label: exact ? exact[1]! : (m[1] ?? m[3]!), id: exact ? exact[2] : undefined });
  }
  return out;
}

/** [start, end) spans of the exact placeholders in `text` (what detectors must never look inside). */
export function placeholderSpans(text: string): [number, number][] {
  if (!text.includes('[[')) return [];
  const out: [number, number][] = [];
  PLACEHOLDER_RE.lastIndex = 0;
  for (let m = PLACEHOLDER_RE.exec(text); m !== null; m = PLACEHOLDER_RE.exec(text)) out.push([m.index, m.index + m[0].length]);
  return out;
}
