/**
 * IBANs (ISO 13616): a country code, two check digits and the country's BBAN, validated with `ibantools`
 * (country length and BBAN format from its country specs, then the mod-97 checksum).
 *
 * Printed forms: the electronic form, the printed form in groups of four, lower case, full-width digits,
 * and forms split by line breaks, zero-width characters or the soft hyphen; the finding spans the original
 * text, separators included. Exactly the country's length is taken; a value glued to a further letter or
 * digit is not an IBAN.
 *
 * IBAN_INVALID (the country's length and BBAN format, but a bad mod-97 checksum) is stricter, since no
 * checksum vouches for it: no lower-case letters, and visible separators (spaces, dashes) only between
 * groups of four. Without these rules prose such as "qa12 this text goes on" matches a loose BBAN format.
 * @see ISO 13616-1:2020; https://github.com/Simplify/ibantools
 */
import { countrySpecs, isValidIBAN, ValidationErrorsIBAN, validateIBAN } from 'ibantools';
import { asciiDigit, isDigitCode, isLetterCode, isWordCode } from './chars.js';
import { type Candidate, RANK } from './types.js';

/** Most separators in a row inside an IBAN (a line break and an indent). */
const MAX_SEPS = 8;
/** Separators a person sees; the others (line breaks, zero-width, soft hyphen) may fall anywhere. */
const VISIBLE_SEP = new Set([' ', '\t', '-', '\u00A0', '\u202F']);
const BAD_CHECKSUM_ONLY = new Set<number>([ValidationErrorsIBAN.WrongIBANChecksum, ValidationErrorsIBAN.WrongAccountBankBranchChecksum]);

/** An IBAN read from the text: its end offset, electronic form, and whether its print is strict enough for IBAN_INVALID. */
interface Read {
  end: number;
  electronic: string;
  strict: boolean;
}

/** Reads exactly `chars` alphanumerics from `start`, across separators; undefined when the run is shorter. */
function read(text: string, start: number, chars: number): Read | undefined {
  let electronic = '';
  let strict = true;
  let seps = 0;
  let i = start;
  while (i < text.length && electronic.length < chars) {
    const c = text.charCodeAt(i);
    if (!SEP_CLASS_SET.has(text[i]!)) seps = 0;
    if (isDigitCode(c)) electronic += asciiDigit(c);
    else if (isLetterCode(c)) {
      if (c >= 97) strict = false;
      electronic += String.fromCharCode(c & ~32);
    } else if (SEP_CLASS_SET.has(text[i]!)) {
      if (++seps > MAX_SEPS || (!isWordCode(text.charCodeAt(i + 1)) && !SEP_CLASS_SET.has(text[i + 1] ?? ''))) return undefined;
      if (VISIBLE_SEP.has(text[i]!) && electronic.length % 4 !== 0) strict = false;
    } else return undefined;
    i++;
  }
  if (electronic.length < chars) return undefined;
  return { end: i, electronic, strict };
}

const SEP_CLASS_SET = new Set([' ', '\t', '\r', '\n', '\u00A0', '\u202F', '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD', '-']);

/**
 * Pushes every IBAN (label IBAN) and IBAN-shaped value with a bad checksum (label IBAN_INVALID) that starts
 * in text[from, to) onto `out` (offsets into the whole `text`; the value may run past `to`).
 */
export function findIbans(text: string, out: Candidate[], from = 0, to = text.length): void {
  // Two letters and two digits start an IBAN: looked for by char codes, no copy of the window.
  for (let i = from; i + 4 <= to; i++) {
    if (
      !isLetterCode(text.charCodeAt(i)) ||
      !isLetterCode(text.charCodeAt(i + 1)) ||
      !isDigitCode(text.charCodeAt(i + 2)) ||
      !isDigitCode(text.charCodeAt(i + 3))
    )
      continue;
    const start = i;
    if (start > 0 && isWordCode(text.charCodeAt(start - 1))) continue;
    const country = text.slice(start, start + 2).toUpperCase();
    const spec = countrySpecs[country];
    if (!spec?.chars || !spec.bban_regexp) continue;
    const r = read(text, start, spec.chars);
    if (!r || (r.end < text.length && isWordCode(text.charCodeAt(r.end)))) continue;
    if (isValidIBAN(r.electronic)) {
      out.push({ start, end: r.end, label: 'IBAN', detail: `IBAN (${country})`, rank: RANK.iban });
    } else if (r.strict && validateIBAN(r.electronic).errorCodes.every((e) => BAD_CHECKSUM_ONLY.has(e))) {
      out.push({ start, end: r.end, label: 'IBAN_INVALID', detail: 'IBAN with a bad checksum', rank: RANK.iban });
    } else continue;
    i = Math.max(i, r.end - 1);
  }
}
