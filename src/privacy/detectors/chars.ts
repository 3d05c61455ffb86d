/**
 * Character classes shared by the digit detectors (IBAN, card, phone): the separators that may split a
 * printed number without changing it (spaces, line breaks, zero-width characters, the soft hyphen) and the
 * full-width digits U+FF10–U+FF19, which read as digits to a person and to a model.
 */

/** Separators inside a printed IBAN or card number, as a regex character-class body. */
export const SEP_CLASS = ' \\t\\r\\n\\u00A0\\u202F\\u200B\\u200C\\u200D\\u2060\\uFEFF\\u00AD\\-';

/** ASCII and full-width digits, as a regex character-class body. */
export const DIGIT_CLASS = '0-9\\uFF10-\\uFF19';

/** True for the UTF-16 code of an ASCII or full-width digit. */
export function isDigitCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 0xff10 && c <= 0xff19);
}

/** True for the UTF-16 code of an ASCII letter. */
export function isLetterCode(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** True when the code is an ASCII letter, digit (ASCII or full-width) or `_`: a word character next to a value. */
export function isWordCode(c: number): boolean {
  return isDigitCode(c) || isLetterCode(c) || c === 95;
}

/** The ASCII digit ('0'–'9') for an ASCII or full-width digit code. */
export function asciiDigit(c: number): string {
  return String.fromCharCode(c >= 0xff10 ? c - 0xff10 + 48 : c);
}

/** A 65 536-entry membership table for the UTF-16 code units of `chars` (a regex character-class body). */
function table(classBody: string): Uint8Array {
  const re = new RegExp(`[${classBody}]`);
  const t = new Uint8Array(65536);
  for (let c = 0; c < 65536; c++) if (re.test(String.fromCharCode(c))) t[c] = 1;
  return t;
}

/** Digits and everything that may sit between the digits of a printed card, IBAN or phone number. */
export const DIGITISH = table(`${DIGIT_CLASS}${SEP_CLASS}().\\/+\\uFF0B`);
/** Base64, base64url and token characters: what a credential of a known shape or its Base64 is made of. */
export const TOKENISH = table('A-Za-z0-9+/_\\-');

/**
 * Calls `visit(start, end)` for every maximal run of `members` at least `min` code units long, in order.
 * Sub-linear on text with few long runs: it reads each window of `min` code units from its right end back,
 * and the first non-member it meets moves the window past it (no run of `min` can hold it); a window of
 * members only is the start of a run, read to its end. A code unit is read again only inside a run found.
 */
export function forEachRun(text: string, members: Uint8Array, min: number, visit: (start: number, end: number) => void): void {
  const n = text.length;
  let w = 0; // the window's start: 0 or right after a non-member, so a run found starts there
  while (w + min <= n) {
    let j = w + min - 1;
    while (j >= w && members[text.charCodeAt(j)] === 1) j--;
    if (j >= w) {
      w = j + 1;
      continue;
    }
    let e = w + min;
    while (e < n && members[text.charCodeAt(e)] === 1) e++;
    visit(w, e);
    w = e + 1;
  }
}

/** Number of ASCII or full-width digits in text[start, end). */
export function countDigits(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (isDigitCode(text.charCodeAt(i))) n++;
  return n;
}
