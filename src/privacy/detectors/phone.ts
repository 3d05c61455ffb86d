/**
 * Phone numbers, validated with libphonenumber-js (its default metadata: a number is valid when its length
 * and leading digits fit a numbering plan; no number rules are written here). A char-code scan finds runs of
 * digits and phone punctuation; only runs that pass the rules below reach libphonenumber (its own text
 * scanner is far too slow for megabytes).
 *
 * Accepted forms (the decision the privacy filter documents):
 * - International: `+` (or full-width `＋`) or the `00` international prefix (unless an id word such as
 *   `ref` is nearer than a phone word), then 7–15 digits with spaces, dashes, dots, slashes or
 *   parentheses, valid for the country its calling code names. Any region.
 * - National (no `+`): valid for one of `phoneRegions` (default {@link DEFAULT_PHONE_REGIONS}), AND either
 *   preceded by a context word (tel, phone, mobile, cell, call, fax, sms, whatsapp, telefon, hotline, …,
 *   optionally with "no", "nr", "number" and a colon), or printed in a phone grouping: an area code in
 *   parentheses `(030) 1234567`, a trunk-prefixed group `030 1234 5678` / `030/1234567`, the North
 *   American `555-123-4567` / `555.123.4567` / `555 123 4567`, the French `01 23 45 67 89`.
 * Never a phone: a run glued to letters, `_`, `.`, `,`, `:`, `/`, `#` or another digit run on either side
 * (versions, amounts, IP addresses, times, hashes) but a `:` before `+` or after a phone word (`tel:+44…`,
 * `callto:`, `sms:`, `Phone:+1…`: URIs and labels), a national form right after
 * another number and a space (tables of numbers), a run preceded by
 * an identifier word (order, invoice, ref, id, ticket, account, tracking, …) unless a phone word is nearer,
 * and bare digit runs without context (unix timestamps, order numbers). Dates (2024-01-15) fit no grouping.
 * Full-width digits count as digits; the finding spans the original text.
 * @see ITU-T E.164; https://gitlab.com/catamphetamine/libphonenumber-js
 */
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { asciiDigit, isDigitCode, isWordCode } from './chars.js';
import { type Candidate, RANK } from './types.js';

/** Regions tried for national forms when none are configured: North America, the UK and the larger EU markets. */
export const DEFAULT_PHONE_REGIONS: readonly string[] = ['US', 'GB', 'DE', 'FR', 'IT', 'ES', 'NL', 'AT', 'CH'];

/**
 * Where the match of `[+＋(]?[digit][digit, space, no-break space, ().\/-]{5,24}` (greedy) starting at
 * `p` in text[p, to) ends, or -1: the candidate run of a phone number.
 */
function runAt(text: string, p: number, to: number): number {
  let d = p;
  const c = text.charCodeAt(p);
  if (c === 43 || c === 0xff0b || c === 40) d++;
  if (d >= to || !isDigitCode(text.charCodeAt(d))) return -1;
  let e = d + 1;
  const limit = Math.min(to, d + 25);
  while (e < limit && isRunCode(text.charCodeAt(e))) e++;
  return e - d - 1 >= 5 ? e : -1;
}

/** A digit or what may sit between the digits of a printed phone number. */
function isRunCode(c: number): boolean {
  return isDigitCode(c) || c === 32 || c === 0xa0 || c === 40 || c === 41 || c === 46 || c === 47 || c === 45;
}
const GROUPINGS = [
  /^\(0?\d{2,5}\) ?\d{3,4}[ -]?\d{2,5}$/,
  /^0[1-9]\d{1,4}[ /-]\d{3,4}(?:[ -]?\d{2,5})?$/,
  /^[2-9]\d{2}([-. ])[2-9]\d{2}\1\d{4}$/,
  /^0[1-9](?:[ .]\d{2}){4}$/,
];
const PHONE_WORD =
  /(?:^|[^a-z])(?:tel|callto|tele|telephone|phone|ph|mobile|mob|cell|cellphone|call|fax|sms|whatsapp|telefon|telefono|tél|téléphone|handy|hotline|dial)\.?(?:[\s-]*(?:no|nr|number|num)\.?)?\s*[:=]?\s*["']?$/;
const ID_WORD = /(?:order|invoice|inv|ref|reference|id|ticket|account|acct|tracking|serial|sku|case|po|no|nr|number|#)\.?\s*[:=#]?\s*$/;
const WORDY_RE = /[a-z#]/;
/** How many trailing groups are dropped from a run that is not a phone number before giving up. */
const MAX_TRIES = 4;
const STUCK_BEFORE = new Set(['.', ',', ':', '/', '#', '-', '+', '@', '$', '€', '£']);

/** The run in ASCII: digits, '+', and spaces for no-break spaces. */
function normalise(s: string): string {
  let ascii = true;
  for (let i = 0; i < s.length && ascii; i++) ascii = s.charCodeAt(i) < 0x80;
  if (ascii) return s; // the common case: nothing to change, no copy
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigitCode(c)) out += asciiDigit(c);
    else if (c === 0xff0b) out += '+';
    else if (c === 0xa0) out += ' ';
    else out += s[i];
  }
  return out;
}

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (isDigitCode(s.charCodeAt(i))) n++;
  return n;
}

/**
 * libphonenumber's verdicts, by region and number: the same numbers recur in a large text (a signature,
 * a hotline), and one verdict costs far more than a lookup. Bounded: started over when full.
 */
const verdicts = new Map<string, boolean>();
const VERDICT_CACHE_SIZE = 4096;

/** Whether libphonenumber holds `n` valid (international when `region` is undefined). */
function isValidNumber(n: string, region: CountryCode | undefined): boolean {
  const key = region === undefined ? n : `${region}\u0000${n}`;
  let v = verdicts.get(key);
  if (v === undefined) {
    v = (region === undefined ? parsePhoneNumberFromString(n) : parsePhoneNumberFromString(n, region))?.isValid() === true;
    if (verdicts.size >= VERDICT_CACHE_SIZE) verdicts.clear();
    verdicts.set(key, v);
  }
  return v;
}

/** The words {@link PHONE_WORD} can end with (a phone word, or the `no`/`nr`/`number`/`num` after one). */
const PHONE_WORD_ENDS = [
  ...'tel callto tele telephone phone ph mobile mob cell cellphone call fax sms whatsapp telefon telefono tél téléphone handy hotline dial'.split(' '),
  ...'no nr number num'.split(' '),
];

/** What {@link PHONE_WORD} allows between its word and the number: \s, quotes, `:`, `=`, `.`. */
function isWordTail(c: number): boolean {
  return (
    c === 34 ||
    c === 39 ||
    c === 58 ||
    c === 61 ||
    c === 46 ||
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * False when {@link PHONE_WORD} cannot match before `start` (a necessary test, no slice of the text): the
 * letters before the trailing spaces, quotes, `:`, `=` and `.` must end with one of {@link PHONE_WORD_ENDS}.
 */
function mayFollowPhoneWord(text: string, start: number): boolean {
  let e = start;
  while (e > 0 && start - e < 32 && isWordTail(text.charCodeAt(e - 1))) e--;
  if (e === 0) return false;
  const words = ENDS_BY_LAST[lower(text.charCodeAt(e - 1))];
  if (words === undefined) return false;
  for (const w of words) {
    let k = 1;
    while (k < w.length && e - 1 - k >= 0 && lower(text.charCodeAt(e - 1 - k)) === w.charCodeAt(w.length - 1 - k)) k++;
    if (k === w.length) return true;
  }
  return false;
}

/** {@link PHONE_WORD_ENDS} by the code of their last letter. */
const ENDS_BY_LAST = ((): (readonly string[] | undefined)[] => {
  const t: string[][] = [];
  for (const w of PHONE_WORD_ENDS) {
    const c = w.charCodeAt(w.length - 1);
    t[c] = [...(t[c] ?? []), w];
  }
  return t;
})();

/** The lower-case code of an ASCII letter or `É`; other codes as they are. */
function lower(c: number): number {
  return (c >= 65 && c <= 90) || c === 0xc9 ? c + 32 : c;
}

/** Whether the run `n` is printed in one of {@link GROUPINGS} (its first characters pick the ones to try). */
function isGrouped(n: string): boolean {
  const c = n.charCodeAt(0);
  if (c === 40) return GROUPINGS[0]!.test(n);
  if (c === 48) return GROUPINGS[1]!.test(n) || GROUPINGS[3]!.test(n);
  const sep = n.charCodeAt(3);
  return c >= 50 && c <= 57 && (sep === 45 || sep === 46 || sep === 32) && GROUPINGS[2]!.test(n);
}

/** Whether the normalised run `n`, found at `start` in `text`, is a phone number. */
function isPhone(n: string, text: string, start: number, regions: readonly CountryCode[]): boolean {
  const digits = digitCount(n);
  if (digits < 7 || digits > 15) return false;
  if (n[0] === '+') return isValidNumber(n, undefined);
  if (n.startsWith('(00')) return false;
  const grouped = isGrouped(n);
  // A national form with no phone grouping needs a phone word: most runs (ids, amounts) end here, unread.
  if (!grouped && !n.startsWith('00') && !mayFollowPhoneWord(text, start)) return false;
  const before = text.slice(Math.max(0, start - 32), start).toLowerCase();
  const wordy = WORDY_RE.test(before); // no letter or '#' before: neither a phone word nor an id word
  const context = wordy && PHONE_WORD.test(before);
  // `00` is the international prefix (`0033 1 42 68 53 00`): read as `+`, unless an id word is nearer.
  if (n.startsWith('00')) return n[2] !== '0' && !(!context && wordy && ID_WORD.test(before)) && isValidNumber(`+${n.slice(2)}`, undefined);
  // Without a phone word, a phone grouping and no id word before it (the grouping first: the cheaper test).
  if (!context && (!grouped || (wordy && ID_WORD.test(before)))) return false;
  return regions.some((r) => isValidNumber(n, r));
}

/** Pushes every phone number in text[from, to) onto `out` (offsets into the whole `text`), national forms tried against `regions`. */
export function findPhones(text: string, out: Candidate[], regions: readonly CountryCode[], from = 0, to = text.length): void {
  // The candidate runs ({@link runAt}) in text[from, to), in order, found by char codes (no copy of the window).
  let next = from;
  while (next < to) {
    let start = next;
    let runEnd = -1;
    for (; start < to && runEnd === -1; start++) runEnd = runAt(text, start, to);
    if (runEnd === -1) break;
    start--;
    next = runEnd;
    // Glued to a word character: not a phone (the cheapest rejection, before any copy).
    if (start > 0 && isWordCode(text.charCodeAt(start - 1))) continue;
    let run = text.slice(start, runEnd);
    const prev = text[start - 1] ?? ' ';
    // `tel:+44…`, `callto:`, `sms:`, `phone:+1…`: a colon right before `+` or after a phone word is a URI or a label.
    const uri = prev === ':' && (run[0] === '+' || run[0] === '\uFF0B' || PHONE_WORD.test(text.slice(Math.max(0, start - 32), start).toLowerCase()));
    if (STUCK_BEFORE.has(prev) && !uri) continue;
    // A national form right after another number (`12 030 1234567`, a table of numbers) is not read.
    if (run[0] !== '+' && run[0] !== '\uFF0B' && isDigitCode(text.charCodeAt(start - 2)) && (prev === ' ' || prev === '\t' || prev === '\u00A0')) continue;
    for (let tries = 0; tries < MAX_TRIES && run.length > 0; tries++) {
      while (run.length > 0 && !isDigitCode(run.charCodeAt(run.length - 1))) run = run.slice(0, -1);
      const end = start + run.length;
      const after = text[end] ?? ' ';
      const glued =
        isWordCode(after.charCodeAt(0)) ||
        ((after === '.' || after === ',' || after === ':' || after === '-' || after === '/') && isDigitCode(text.charCodeAt(end + 1)));
      const digits = digitCount(run);
      if (!glued && digits >= 7 && digits <= 15 && isPhone(normalise(run), text, start, regions)) {
        out.push({ start, end, label: 'PHONE', detail: 'phone number', rank: RANK.phone });
        next = end;
        break;
      }
      const cut = Math.max(run.lastIndexOf(' '), run.lastIndexOf('\u00A0'));
      if (cut <= 0) break;
      run = run.slice(0, cut);
    }
  }
}
