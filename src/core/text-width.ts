/**
 * Columns of text as a terminal draws them: a CJK character or most emoji take two cells, a combining
 * mark none, and a flag or family emoji is one grapheme of several code points. `String.length` counts
 * UTF-16 units, so columns padded by it drift and cuts by it split a character in half. Widths follow
 * Unicode UAX #11 (East Asian Width) as `string-width` implements it; graphemes follow UAX #29
 * through `Intl.Segmenter`.
 * Linear in the text's length whatever it holds: the text (a tool name, an approver) comes from an
 * upstream or the log, and ICU's segmenter takes quadratic time on a long run of emoji sequences (a
 * megabyte of family emoji: minutes), so text is segmented in bounded pieces (see {@link graphemesOf}).
 */
import stringWidth from 'string-width';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Code units segmented at once: small enough that the segmenter's worst case stays in microseconds. */
const PIECE_UNITS = 1024;

/**
 * The graphemes of `text`, in order, found piece by piece: each piece of {@link PIECE_UNITS} code units
 * is segmented and all but its last grapheme are kept (the last may run on past the piece), and the next
 * piece starts where that one did. Breaks left of the last are final: UAX #29 decides a break from what
 * lies before it (from a known boundary) and the one character after it. A grapheme longer than a piece
 * (a letter with thousands of marks) comes out as several parts, the later ones marks only, which take
 * no cells. A piece never ends in half a surrogate pair.
 */
export function* graphemesOf(text: string): Generator<string> {
  let pos = 0;
  while (text.length - pos > PIECE_UNITS) {
    // Never half a surrogate pair at the end: the break before it would be judged on half a character.
    const cut = /[\ud800-\udbff]/.test(text[pos + PIECE_UNITS - 1] ?? '') ? PIECE_UNITS - 1 : PIECE_UNITS;
    const piece = text.slice(pos, pos + cut);
    let last = 0;
    let count = 0;
    const parts: string[] = [];
    for (const { segment, index } of graphemes.segment(piece)) {
      parts.push(segment);
      last = index;
      count++;
    }
    if (count > 1) {
      for (const part of parts.slice(0, -1)) yield part;
      pos += last;
    } else {
      yield piece;
      pos += piece.length;
    }
  }
  if (pos < text.length) for (const { segment } of graphemes.segment(text.slice(pos))) yield segment;
}

/** Terminal cells `text` takes (ANSI colour sequences count as none). Linear in the text's length. */
export function displayWidth(text: string): number {
  if (text.length <= PIECE_UNITS || /^[\u0020-\u007e]*$/.test(text)) return stringWidth(text);
  // Whole graphemes handed over in runs of about a piece, so string-width's own segmenting stays bounded too.
  let width = 0;
  let run = '';
  for (const g of graphemesOf(text)) {
    run += g;
    if (run.length >= PIECE_UNITS) {
      width += stringWidth(run);
      run = '';
    }
  }
  return width + stringWidth(run);
}

/**
 * `text` cut to at most `max` cells, ending in `…` when anything was left out; never splits a grapheme
 * (a surrogate pair, a flag, a letter with its accents). `max` below 1 gives ''. Reads only as much of
 * the text as it shows.
 */
export function cutToWidth(text: string, max: number): string {
  if (max < 1) return '';
  let out = '';
  let used = 0;
  let fits = ''; // the text up to the last grapheme that leaves room for the ellipsis
  for (const g of graphemesOf(text)) {
    const w = stringWidth(g);
    if (used + w > max) return `${fits}\u2026`;
    out += g;
    used += w;
    if (used <= max - 1) fits = out;
  }
  return out;
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
