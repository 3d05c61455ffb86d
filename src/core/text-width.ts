/**
 * Columns of text as a terminal draws them: a CJK character or most emoji take two cells, a combining
 * mark none, and a flag or family emoji is one grapheme of several code points. `String.length` counts
 * UTF-16 units, so columns padded by it drift and cuts by it split a character in half. Widths follow
 * Unicode UAX #11 (East Asian Width) as `string-width` implements it; graphemes follow UAX #29
 * through `Intl.Segmenter`.
 */
import stringWidth from 'string-width';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Terminal cells `text` takes (ANSI colour sequences count as none). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/**
 * `text` cut to at most `max` cells, ending in `…` when anything was left out; never splits a grapheme
 * (a surrogate pair, a flag, a letter with its accents). `max` below 1 gives ''.
 */
export function cutToWidth(text: string, max: number): string {
  if (max < 1) return '';
  if (displayWidth(text) <= max) return text;
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = displayWidth(segment);
    if (used + w > max - 1) break;
    out += segment;
    used += w;
  }
  return `${out}\u2026`;
}

/** `text` followed by spaces up to `width` cells (left-aligned); text already as wide or wider is returned as is. */
export function padEndToWidth(text: string, width: number): string {
  const w = displayWidth(text);
  return w >= width ? text : text + ' '.repeat(width - w);
}

/** Spaces and then `text` up to `width` cells (right-aligned, for numbers). */
export function padStartToWidth(text: string, width: number): string {
  const w = displayWidth(text);
  return w >= width ? text : ' '.repeat(width - w) + text;
}
