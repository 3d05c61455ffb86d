/**
 * Making hidden characters visible before a person reads them. An approval is only as good as what the
 * person saw: bidi overrides can reorder text, zero-width and tag characters can hide it, line and
 * paragraph separators can push it out of view, and look-alike spaces can pass for an ordinary space.
 * Every channel (page, terminal, elicitation, webhook display fields, log summaries) shows them as
 * `\uXXXX` (astral ones as `\u{XXXXX}`). Pure.
 * @see Unicode TR #9 (bidi controls), TR #36 §2 (visual security), UTS #39 §3 (confusables)
 */

/**
 * Characters a person cannot read for what they are, by Unicode property rather than by hand-kept list
 * (UAX #44): controls (`Cc`, but tab, newline and CR), format characters (`Cf`: bidi embeddings,
 * overrides, isolates and marks, zero-width characters, shorthand and hieroglyph format controls, number
 * signs, tags), default-ignorable code points (variation selectors, Hangul fillers, invisible operators,
 * unassigned ignorables), line and paragraph separators (`Zl`, `Zp`), every space but U+0020 (`Zs`:
 * no-break, em, ideographic and other look-alike spaces), private-use (`Co`) and unassigned (`Cn`)
 * code points, the Braille blank, and lone surrogates.
 */
const HIDDEN =
  /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}\u2800]|[^\P{Cc}\t\n\r]|[^\P{Zs} ]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

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
