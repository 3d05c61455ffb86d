/**
 * Making hidden characters visible before a person reads them. An approval is only as good as what the
 * person saw: bidi overrides can reorder text, zero-width and tag characters can hide it, line and
 * paragraph separators can push it out of view, and look-alike spaces can pass for an ordinary space.
 * Every channel (page, terminal, elicitation, webhook display fields, log summaries) shows them as
 * `\uXXXX` (astral ones as `\u{XXXXX}`). Pure.
 * @see Unicode TR #9 (bidi controls), TR #36 §2 (visual security), UTS #39 §3 (confusables)
 */

/**
 * Characters that render as nothing, reorder text, break lines, or look like an ordinary space:
 * controls (C0 but tab, newline and CR; C1), no-break and other look-alike spaces (U+00A0, U+1680,
 * U+2000–U+200A, U+202F, U+205F, U+3000), soft hyphen, combining grapheme joiner, Arabic letter mark,
 * Hangul fillers, Khmer and Mongolian invisibles, zero-width and directional marks, line and paragraph
 * separators, bidi embeddings, overrides and isolates, word joiners and invisible operators, variation
 * selectors (both blocks), Braille blank, BOM, interlinear annotations, musical invisible formatting,
 * tag characters, and lone surrogates.
 */
const HIDDEN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u00a0\u00ad\u061c\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164\ufeff\uffa0\ufff0-\ufffb]|\u034f|[\u17b4\u17b5]|[\u180b-\u180d\u180f]|[\ufe00-\ufe0f]|[\u{1d173}-\u{1d17a}]|[\u{e0000}-\u{e007f}]|[\u{e0100}-\u{e01ef}]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

/** `\u202E`, or `\u{E0041}` for a character beyond the BMP. */
function escapeOf(c: string): string {
  const cp = c.codePointAt(0)!;
  const hex = cp.toString(16).toUpperCase();
  return cp > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}

/** Replaces each hidden or look-alike-space character with `\uXXXX`, for text shown as text. */
export function showHidden(text: string): string {
  return text.replace(HIDDEN, escapeOf);
}

/**
 * Replaces each hidden character with its JSON escape (`\uXXXX`, surrogate pairs for astral ones), for
 * JSON shown to a person: the text stays valid JSON with the same meaning, now with nothing hidden.
 */
export function showHiddenInJson(json: string): string {
  return json.replace(HIDDEN, (c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));
}

/** Like showHidden, and line breaks and tabs too: for text that must stay on one line (names, titles). */
export function oneLine(text: string): string {
  return showHidden(text).replace(/[\t\n\r]/g, escapeOf);
}

/** True when the text holds a hidden or look-alike-space character. */
export function hasHidden(text: string): boolean {
  HIDDEN.lastIndex = 0;
  const found = HIDDEN.test(text);
  HIDDEN.lastIndex = 0;
  return found;
}
