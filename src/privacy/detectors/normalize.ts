/**
 * A decoded view of a text, for detectors to read what a person or a model reads: invisible format
 * characters removed (zero-width, bidi controls U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, the word
 * joiner, the BOM, the soft hyphen), JSON `\uXXXX` escapes, %-encoded ASCII (`%40`; not the URL delimiters
 * `& # = ? / ; %`, which keep their meaning), HTML character references (`&#64;`, `&#x40;`, `&commat;`,
 * `&amp;`, …) decoded, full-width ASCII (`＠`, `Ｇ`, `１`) and every Unicode decimal digit (\p{Nd}:
 * Arabic-Indic, Devanagari, mathematical digits, …) read as ASCII, and the thin, figure and ideographic
 * spaces read as a space. Each character of the view knows the span of the original text it comes from, so
 * a finding in the view covers the ORIGINAL bytes, escapes and invisible characters inside included, and
 * restoring gives them back exactly.
 *
 * Cheap: {@link needsView} is a native ASCII check (the UTF-8 length), then one regex scan of the rest, and most
 * texts need no view (the detectors read them as they are).
 */

/** Invisible format characters: dropped from the view. */
const INVISIBLE_RE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/;
/** The code units the view changes: invisible and space characters, full-width ASCII, non-ASCII digits. */
const TRIGGER = ((): Uint8Array => {
  const t = new Uint8Array(65536);
  const nd = /\p{Nd}/u;
  const other = /[\u00AD\u180E\u2000-\u200F\u202A-\u202F\u205F-\u2069\u3000\uFEFF\uFF01-\uFF5E]/;
  for (let c = 0x80; c < 0x10000; c++) if (other.test(String.fromCharCode(c)) || (c < 0xd800 || c > 0xdfff ? nd.test(String.fromCharCode(c)) : false)) t[c] = 1;
  // The high surrogates of the astral blocks that hold decimal digits (mathematical digits, …).
  for (let c = 0x10000; c < 0x20000; c++) if (nd.test(String.fromCodePoint(c))) t[String.fromCodePoint(c).charCodeAt(0)] = 1;
  return t;
})();
/** A superset of the TRIGGER code units without the common typographic ones (’ “ ” – …): what the scan stops at. */
const NON_ASCII_RE = /[\u00AD\u0660-\u1FFF\u2000-\u200F\u202A-\u202F\u205F-\u2069\u3000\uA620-\uABFF\uD800-\uDBFF\uFEFF\uFF01-\uFF5E]/g;
const SUSPECT_RE = /[%&\\\u0080-\uffff]/;
/** Escapes the view decodes, read where a `\`, `%` or `&` is. */
const ESCAPE_RE = /\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,8};)/y;

function hasEscape(text: string, ch: string): boolean {
  for (let i = text.indexOf(ch); i !== -1; i = text.indexOf(ch, i + 1)) {
    ESCAPE_RE.lastIndex = i;
    if (ESCAPE_RE.test(text)) return true;
  }
  return false;
}

/** The HTML named references worth decoding (those that hide an address, a number or a key). */
const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  commat: '@',
  period: '.',
  colon: ':',
  equals: '=',
  plus: '+',
  lowbar: '_',
  hyphen: '-',
  dash: '-',
  num: '#',
  percnt: '%',
  sol: '/',
  lsqb: '[',
  rsqb: ']',
  lbrack: '[',
  rbrack: ']',
  quest: '?',
  excl: '!',
  comma: ',',
  semi: ';',
  ast: '*',
};

/** %-escapes left as they are: decoding them would change the structure of a URL. */
const URL_DELIMITERS = new Set(['&', '#', '=', '?', '/', ';', '%']);

/** A decoded view and, for each of its code units, the [start, end) of the original text it comes from. */
export interface View {
  text: string;
  start: Int32Array;
  end: Int32Array;
}

/** True when the text holds anything the view would change. */
export function needsView(text: string): boolean {
  if (text.length < 512) {
    // Short texts (the strings of JSON data): one regex test finds the texts worth a closer look.
    if (!SUSPECT_RE.test(text)) return false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        if (TRIGGER[c] === 1) return true;
      } else if (c === 37 || c === 38 || c === 92) {
        ESCAPE_RE.lastIndex = i;
        if (ESCAPE_RE.test(text)) return true;
      }
    }
    return false;
  }
  if (hasEscape(text, '%') || hasEscape(text, '&') || hasEscape(text, '\\')) return true;
  // Non-ASCII code units are found by a regex scan (fast on mostly ASCII text); dense non-ASCII text (a
  // script other than Latin) is read by a plain loop instead.
  // Most text is ASCII: its UTF-8 length (a native count, ~6x faster than any regex scan) says so.
  if (Buffer.byteLength(text, 'utf8') === text.length) return false;
  NON_ASCII_RE.lastIndex = 0;
  let hits = 0;
  while (NON_ASCII_RE.test(text)) {
    const i = NON_ASCII_RE.lastIndex - 1;
    if (TRIGGER[text.charCodeAt(i)] === 1) return true;
    if (++hits >= 256 && i < hits * 8) {
      for (let j = i + 1; j < text.length; j++) if (TRIGGER[text.charCodeAt(j)] === 1) return true;
      return false;
    }
  }
  return false;
}

const digitValues = new Map<number, number>();
const ND_RE = /^\p{Nd}$/u;

/** The value (0–9) of a \p{Nd} code point, or -1. Decimal digits come in runs of ten from zero. */
function digitValue(cp: number): number {
  let v = digitValues.get(cp);
  if (v === undefined) {
    if (!ND_RE.test(String.fromCodePoint(cp))) v = -1;
    else {
      let zero = cp;
      while (cp - zero < 60 && ND_RE.test(String.fromCodePoint(zero - 1))) zero--;
      v = (cp - zero) % 10;
    }
    digitValues.set(cp, v);
  }
  return v;
}

function hexValue(s: string): number {
  return /^[0-9A-Fa-f]+$/.test(s) ? Number.parseInt(s, 16) : -1;
}

/** The decoded view of `text` (see the file header). */
export function decodeView(text: string): View {
  const n = text.length;
  const start = new Int32Array(n + 1);
  const end = new Int32Array(n + 1);
  const codes = new Uint16Array(n);
  let k = 0;
  /** Appends `s`, which stands for text[a, b). */
  function emit(s: string, a: number, b: number): void {
    for (let j = 0; j < s.length; j++) {
      codes[k] = s.charCodeAt(j);
      start[k] = a;
      end[k] = b;
      k++;
    }
  }
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 0x80 && c !== 37 && c !== 38 && c !== 92) {
      // A stretch of plain ASCII is copied as it is.
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d >= 0x80 || d === 37 || d === 38 || d === 92) break;
        j++;
      }
      for (let p = i; p < j; p++) {
        codes[k] = text.charCodeAt(p);
        start[k] = p;
        end[k] = p + 1;
        k++;
      }
      i = j;
      continue;
    }
    if (c === 92 && text.charCodeAt(i + 1) === 117) {
      const v = hexValue(text.slice(i + 2, i + 6));
      if (v >= 0 && i + 6 <= n) {
        emit(String.fromCharCode(v), i, i + 6);
        i += 6;
        continue;
      }
    } else if (c === 37) {
      const v = hexValue(text.slice(i + 1, i + 3));
      if (v >= 0 && v < 0x80 && i + 3 <= n && !URL_DELIMITERS.has(String.fromCharCode(v))) {
        emit(String.fromCharCode(v), i, i + 3);
        i += 3;
        continue;
      }
    } else if (c === 38) {
      const m = /^&(?:#([0-9]{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([A-Za-z]{2,8}));?/.exec(text.slice(i, i + 12));
      if (m) {
        let s: string | undefined;
        if (m[1] !== undefined || m[2] !== undefined) {
          const cp = m[1] !== undefined ? Number(m[1]) : Number.parseInt(m[2]!, 16);
          if (cp > 0 && cp <= 0x10ffff) s = String.fromCodePoint(cp);
        } else if (m[0].endsWith(';')) s = ENTITIES[m[3]!.toLowerCase()];
        if (s !== undefined) {
          emit(s, i, i + m[0].length);
          i += m[0].length;
          continue;
        }
      }
    } else if (c >= 0x80) {
      const cp = text.codePointAt(i)!;
      const width = cp > 0xffff ? 2 : 1;
      if (INVISIBLE_RE.test(String.fromCharCode(c))) {
        i++;
        continue;
      }
      if (c >= 0xff01 && c <= 0xff5e) {
        emit(String.fromCharCode(c - 0xfee0), i, i + 1);
        i++;
        continue;
      }
      if (c === 0x3000 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f) {
        emit(' ', i, i + 1);
        i++;
        continue;
      }
      const d = cp > 0x39 ? digitValue(cp) : -1;
      if (d >= 0) {
        emit(String(d), i, i + width);
        i += width;
        continue;
      }
      emit(text.slice(i, i + width), i, i + width);
      i += width;
      continue;
    }
    emit(text[i]!, i, i + 1);
    i++;
  }
  start[k] = n;
  end[k] = n;
  let out = '';
  for (let p = 0; p < k; p += 8192) out += String.fromCharCode(...codes.subarray(p, Math.min(k, p + 8192)));
  return { text: out, start: start.subarray(0, k + 1), end: end.subarray(0, k + 1) };
}
