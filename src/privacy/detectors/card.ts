/**
 * Payment card numbers (PANs): 13–19 digits that pass the ISO/IEC 7812 Luhn check AND start with the issuer
 * prefix of a known network (Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay,
 * Maestro) at a length that network issues. The prefix rule is what keeps unix-millisecond timestamps
 * (13 digits starting with 1) and most order numbers out; a Luhn check alone passes one number in ten.
 *
 * Printed forms: plain, grouped by spaces or dashes, and split by line breaks, zero-width characters or the
 * soft hyphen; full-width digits count as digits. The finding spans the original text, separators included.
 * A run of digits glued to letters or `_` (inside a hash or an identifier) is not a card. When the whole run
 * is not a card, its parts split at line breaks / double spaces, then its unseparated chunks, are tried.
 * @see ISO/IEC 7812-1 (issuer identification, Luhn check digit)
 */
import { DIGIT_CLASS, isDigitCode, isWordCode, SEP_CLASS } from './chars.js';
import { type Candidate, RANK } from './types.js';

const RUN_RE = new RegExp(`[${DIGIT_CLASS}](?:[${SEP_CLASS}]{1,3}[${DIGIT_CLASS}]|[${DIGIT_CLASS}]){12,}`, 'g');

/** ISO/IEC 7812 Luhn check over ASCII digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** True when a 13–19 digit string starts with a known network's issuer prefix at a length it issues. */
export function hasCardPrefix(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  const p6 = Number(d.slice(0, 6));
  if (d[0] === '4') return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) return n >= 16; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16; // JCB
  if ((p3 >= 300 && p3 <= 305) || p4 === 3095 || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14; // Diners Club
  if (p2 === 62) return n >= 16; // UnionPay
  if (p2 === 50 || (p2 >= 56 && p2 <= 58) || p2 === 63 || p2 === 67) return n >= 13; // Maestro
  return false;
}

/** True when `digits` (ASCII, no separators) is a payment card number: length, network prefix and Luhn. */
export function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && hasCardPrefix(digits) && luhnValid(digits);
}

/** Digits of text[start, end) in ASCII, skipping separators. */
function digitsOf(text: string, start: number, end: number): string {
  let out = '';
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (isDigitCode(c)) out += String.fromCharCode(c >= 0xff10 ? c - 0xff10 + 48 : c);
  }
  return out;
}

/** Splits [start, end) at separator runs that match `strong` into [start, end) parts that begin and end with a digit. */
function parts(text: string, start: number, end: number, strong: (sep: string) => boolean): [number, number][] {
  const out: [number, number][] = [];
  let from = start;
  let i = start;
  while (i < end) {
    if (isDigitCode(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i;
    while (j < end && !isDigitCode(text.charCodeAt(j))) j++;
    if (strong(text.slice(i, j))) {
      out.push([from, i]);
      from = j;
    }
    i = j;
  }
  out.push([from, end]);
  return out;
}

const DETAIL = 'payment card number';

/** Pushes every payment card number in text[from, to) onto `out` (offsets into the whole `text`). */
export function findCards(text: string, out: Candidate[], from = 0, to = text.length): void {
  const window = from === 0 && to === text.length ? text : text.slice(from, to);
  RUN_RE.lastIndex = 0;
  for (let m = RUN_RE.exec(window); m !== null; m = RUN_RE.exec(window)) {
    const start = from + m.index;
    const end = start + m[0].length;
    // A chunk glued to a word character (or a '+', a phone's) is never part of a card; the others may be.
    const gluedStart = start > 0 && (isWordCode(text.charCodeAt(start - 1)) || text[start - 1] === '+');
    const gluedEnd = end < text.length && isWordCode(text.charCodeAt(end));
    const free = (s: number, e: number) => !(gluedStart && s === start) && !(gluedEnd && e === end);
    if (free(start, end) && isCardNumber(digitsOf(text, start, end))) {
      out.push({ start, end, label: 'CARD', detail: DETAIL, rank: RANK.card });
      continue;
    }
    for (const [s, e] of parts(text, start, end, (sep) => sep.length > 1 || /[\r\n\t]/.test(sep))) {
      if ((s !== start || e !== end) && free(s, e) && isCardNumber(digitsOf(text, s, e))) {
        out.push({ start: s, end: e, label: 'CARD', detail: DETAIL, rank: RANK.card });
        continue;
      }
      for (const [a, b] of parts(text, s, e, () => true)) {
        if ((a !== start || b !== end) && free(a, b) && isCardNumber(digitsOf(text, a, b)))
          out.push({ start: a, end: b, label: 'CARD', detail: DETAIL, rank: RANK.card });
      }
    }
  }
}
