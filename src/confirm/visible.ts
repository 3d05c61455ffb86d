/**
 * Making hidden characters visible before a person reads them. An approval is only as good as what the
 * person saw: bidi overrides can reorder text, zero-width and tag characters can hide it, line and
 * paragraph separators can push it out of view. Every channel shows them as visible codes. Pure.
 */

/**
 * Characters that render as nothing, reorder text, or break lines: controls (C0 but tab, newline and CR;
 * C1), soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers, Khmer and Mongolian
 * invisibles, zero-width and directional marks, line and paragraph separators, bidi embeddings,
 * overrides and isolates, word joiners and invisible operators, variation selectors (both blocks),
 * Braille blank, BOM, interlinear annotations, musical invisible formatting, tag characters, and lone surrogates.
 */
const HIDDEN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ufeff\uffa0\ufff0-\ufffb]|\u034f|[\u17b4\u17b5]|[\u180b-\u180d\u180f]|[\ufe00-\ufe0f]|[\u{1d173}-\u{1d17a}]|[\u{e0000}-\u{e007f}]|[\u{e0100}-\u{e01ef}]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

const code = (c: string) => c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');

/** Replaces each hidden character with `<U+XXXX>`, for text shown as text. */
export function showHidden(text: string): string {
  return text.replace(HIDDEN, (c) => `<U+${code(c)}>`);
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
  return showHidden(text).replace(/[\t\n\r]/g, (c) => `<U+${code(c)}>`);
}

/** True when the text holds a hidden character. */
export function hasHidden(text: string): boolean {
  HIDDEN.lastIndex = 0;
  const found = HIDDEN.test(text);
  HIDDEN.lastIndex = 0;
  return found;
}
