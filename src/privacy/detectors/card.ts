/**
 * Payment card numbers (PANs): 13–19 digits that pass the ISO/IEC 7812 Luhn check AND start with the issuer
 * prefix of a known network (Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay,
 * Maestro) at a length that network issues. The prefix rule is what keeps unix-millisecond timestamps
 * (13 digits starting with 1) and most order numbers out; a Luhn check alone passes one number in ten.
 *
 * Printed forms: plain, grouped by spaces, dashes or dots (thin spaces read as spaces, ./normalize.ts), and split by line breaks, zero-width characters or the
 * soft hyphen; full-width digits count as digits. The finding spans the original text, separators included.
 * A run of digits glued to letters or `_` (inside a hash or an identifier) is not a card. When the whole run
 * is not a card, the longest card made of whole chunks (digits between separators) is taken from each
 * chunk on (`size 2048 4111 1111 1111 1111`), so a lone group next to a card does not hide it. Either way
 * the value must be printed as a card is (isCardGrouping), which keeps numbers in tables out; a table of
 * 4-digit numbers can still yield a card where four neighbours pass the prefix and Luhn rules.
 * @see ISO/IEC 7812-1 (issuer identification, Luhn check digit)
 */
import { asciiDigit, countDigits, DIGIT_CLASS, isDigitCode, isWordCode, SEP_CLASS } from './chars.js';
import { type Candidate, RANK } from './types.js';

const RUN_RE = new RegExp(`[${DIGIT_CLASS}](?:[${SEP_CLASS}.]{1,3}[${DIGIT_CLASS}]|[${DIGIT_CLASS}]){12,}`, 'g');

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
  const p2 = (d.charCodeAt(0) - 48) * 10 + d.charCodeAt(1) - 48;
  const p3 = p2 * 10 + d.charCodeAt(2) - 48;
  const p4 = p3 * 10 + d.charCodeAt(3) - 48;
  const p6 = (p4 * 10 + d.charCodeAt(4) - 48) * 10 + d.charCodeAt(5) - 48;
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

/** The end of the chunk of unseparated digits starting at `i` (no further than `end`). */
function chunkEnd(text: string, i: number, end: number): number {
  while (i < end && isDigitCode(text.charCodeAt(i))) i++;
  return i;
}

/** The start of the next chunk of digits at or after `i`, or `end`. */
function nextChunk(text: string, i: number, end: number): number {
  while (i < end && !isDigitCode(text.charCodeAt(i))) i++;
  return i;
}

const DETAIL = 'payment card number';
/** Characters a person does not see: ignored wherever they are. */
const INVISIBLE = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0xad]);

/**
 * Whether text[start, end) is printed as a card is: one group of digits, or groups of four with a shorter
 * last one (4-4-4-4, 4-4-4-4-3, 4-4-4-1), or 4-6-5 / 4-6-4 (American Express, Diners Club), split by one
 * kind of visible separator (spaces, dashes, tabs). Invisible characters count for nothing; a line break
 * between two digits is read both as a separator and as a hard wrap inside a group. Numbers in a table
 * (`58380 66299 74218`, `57\t2024-01-06`) are not printed so.
 */
export function isCardGrouping(text: string, start: number, end: number): boolean {
  return grouped(text, start, end, false) || grouped(text, start, end, true);
}

function grouped(text: string, start: number, end: number, wrapInside: boolean): boolean {
  const sizes: number[] = [0];
  let sep = -1;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (isDigitCode(c)) sizes[sizes.length - 1]!++;
    else if (INVISIBLE.has(c)) continue;
    else if (wrapInside && (c === 10 || c === 13) && isDigitCode(text.charCodeAt(i - 1)) && isDigitCode(text.charCodeAt(i + 1))) continue;
    else {
      if (c !== 10 && c !== 13) {
        if (sep !== -1 && sep !== c) return false;
        sep = c;
      }
      if (sizes[sizes.length - 1] !== 0) sizes.push(0);
    }
  }
  if (sizes.length === 1) return true;
  const shape = sizes.join('-');
  if (shape === '4-6-5' || shape === '4-6-4') return true;
  return sizes.every((n, k) => (k < sizes.length - 1 ? n === 4 : n >= 1 && n <= 4));
}

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
    const count = countDigits(text, start, end);
    if (count < 13) continue;
    if (!gluedStart && !gluedEnd && count <= 19 && isCardNumber(digitsOf(text, start, end)) && isCardGrouping(text, start, end)) {
      out.push({ start, end, label: 'CARD', detail: DETAIL, rank: RANK.card });
      continue;
    }
    // Otherwise the longest card made of whole chunks, from each chunk on: `2048 4111 1111 1111 1111`.
    for (let a = nextChunk(text, start, end); a < end; ) {
      const b = chunkEnd(text, a, end);
      const first = asciiDigit(text.charCodeAt(a));
      // Every network starts with 2–6; every grouping of more than one group starts with four digits.
      const fours = b - a === 4 || INVISIBLE.has(text.charCodeAt(b));
      if ((gluedStart && a === start) || first < '2' || first > '6' || (!fours && b - a < 13)) {
        a = nextChunk(text, b, end);
        continue;
      }
      let best = -1;
      let acc = '';
      for (let c = a, d = b; c < end; c = nextChunk(text, d, end), d = chunkEnd(text, c, end)) {
        acc += digitsOf(text, c, d);
        if (acc.length > 19) break;
        // The cheap checks first: prefix and Luhn, then the grouping.
        if (acc.length >= 13 && !(gluedEnd && d === end) && isCardNumber(acc) && isCardGrouping(text, a, d)) best = d;
        if (!fours) break;
      }
      if (best > 0) out.push({ start: a, end: best, label: 'CARD', detail: DETAIL, rank: RANK.card });
      a = nextChunk(text, best > 0 ? best : b, end);
    }
  }
}
