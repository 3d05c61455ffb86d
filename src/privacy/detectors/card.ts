/**
 * Payment card numbers (PANs): 13–19 digits that pass the ISO/IEC 7812 Luhn check AND start with the issuer
 * prefix of a known network (Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay,
 * Maestro) at a length that network issues. The prefix rule is what keeps unix-millisecond timestamps
 * (13 digits starting with 1) and most order numbers out; a Luhn check alone passes one number in ten.
 *
 * Printed forms: plain, grouped by spaces or dashes, and split by line breaks, zero-width characters or the
 * soft hyphen; full-width digits count as digits. The finding spans the original text, separators included.
 * A run of digits glued to letters or `_` (inside a hash or an identifier) is not a card. When the whole run
 * is not a card, the longest card made of whole chunks (digits between separators) is taken from each
 * chunk on, every chunk of 3 digits or more (`size 2048 4111 1111 1111 1111`), so a lone group next to a card does not hide it; a table of
 * 4-digit numbers can thus yield a card where four neighbours happen to pass the prefix and Luhn rules.
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

/** The [start, end) chunks of unseparated digits in text[start, end), with their digit counts. */
function chunks(text: string, start: number, end: number): [number, number, number][] {
  const out: [number, number, number][] = [];
  let i = start;
  while (i < end) {
    while (i < end && !isDigitCode(text.charCodeAt(i))) i++;
    const a = i;
    while (i < end && isDigitCode(text.charCodeAt(i))) i++;
    if (i > a) out.push([a, i, i - a]);
  }
  return out;
}

const DETAIL = 'payment card number';
/** Fewest digits of a printed card's group (4-4-4-4, 4-6-5, 4-4-4-4-3) when the card is read out of a longer run. */
const MIN_GROUP = 3;

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
    if (!gluedStart && !gluedEnd && isCardNumber(digitsOf(text, start, end))) {
      out.push({ start, end, label: 'CARD', detail: DETAIL, rank: RANK.card });
      continue;
    }
    // Otherwise the longest card made of whole chunks, from each chunk on: `2048 4111 1111 1111 1111`.
    const cs = chunks(text, start, end);
    for (let i = 0; i < cs.length; i++) {
      if (gluedStart && i === 0) continue;
      let digits = 0;
      let best = -1;
      for (let j = i; j < cs.length && cs[j]![2] >= MIN_GROUP && digits + cs[j]![2] <= 19; j++) {
        digits += cs[j]![2];
        if (digits >= 13 && !(gluedEnd && j === cs.length - 1) && isCardNumber(digitsOf(text, cs[i]![0], cs[j]![1]))) best = j;
      }
      if (best < 0) continue;
      out.push({ start: cs[i]![0], end: cs[best]![1], label: 'CARD', detail: DETAIL, rank: RANK.card });
      i = best;
    }
  }
}
