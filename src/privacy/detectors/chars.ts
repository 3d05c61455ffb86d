/**
 * Character classes shared by the digit detectors (IBAN, card, phone): the separators that may split a
 * printed number without changing it (spaces, line breaks, zero-width characters, the soft hyphen) and the
 * full-width digits U+FF10–U+FF19, which read as digits to a person and to a model.
 */

/** Separators inside a printed IBAN or card number, as a regex character-class body. */
export const SEP_CLASS = ' \\t\\r\\n\\u00A0\\u202F\\u200B\\u200C\\u200D\\u2060\\uFEFF\\u00AD-';

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
