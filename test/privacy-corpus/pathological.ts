/**
 * Pathological inputs for the privacy detectors, about 100 KB each: long runs of what the scans stop at
 * (spaces, key words, `:`/`=`, digits with separators, `@`, Base64-ish runs, `[[`, PEM headers, escapes,
 * invisible characters) and mixes of them, made to make a backtracking or re-reading scan quadratic.
 * test/privacy-corpus.test.ts checks the findings on them; bench/privacy.ts prints MB/s for each.
 */

const K = 100_000;
const fill = (s: string) => s.repeat(Math.ceil(K / s.length)).slice(0, K);
const ID = '0123456789abcdef0123456789abcdef';

export const PATHOLOGICAL: Readonly<Record<string, string>> = {
  'spaces then a digit': `${' '.repeat(K - 1)}1`,
  'pwd: keys then spaces (the attack)': `${'pwd:'.repeat(K / 16)}${' '.repeat(K - K / 4)}1\n`,
  'password= keys': fill('password='),
  'token: keys': fill('token:'),
  'password: keys spaced': fill('password: '),
  'pwd:" unclosed quotes': fill('pwd:"'),
  'pwd:\'" mixed quotes': fill('pwd:\'"'),
  'key words, no separator': fill('password token secret '),
  colons: fill(':'),
  equals: fill('='),
  ':= mix': fill(':= '),
  '?token=& query': fill('?token=&'),
  'key characters then =': `pwd${'a'.repeat(K)}=`,
  '"password": " JSON': fill('"password": "'),
  'digits and spaces': fill('1 '),
  'digits and dashes': fill('12-'),
  'digits and dots': fill('4111.'),
  '"4111 " repeated': fill('4111 '),
  '+1 repeated': fill('+1 '),
  '00 repeated': fill('00 '),
  'tel:+ repeated': fill('tel:+'),
  '@ repeated': fill('@'),
  'a@ repeated': fill('a@'),
  'a@b. repeated': fill('a@b.'),
  'a＠ full-width': fill('a＠'),
  'Base64-ish run': fill('QUtJQUlPU0ZPRE5ON0VYQU1QTEU'),
  'Base64 padding': fill('aGVsbG8='),
  '[[ repeated': fill('[['),
  '[[A_ repeated': fill('[[A_'),
  '[[EMAIL_<hex> unclosed': fill('[[EMAIL_0123456789abcdef'),
  '[ brackets and labels': fill(`[X_${ID.slice(0, 8)}(`),
  'PEM headers': fill('-----BEGIN PRIVATE KEY-----\n'),
  'lower-case PEM headers': fill('-----begin private key-----\n'),
  dashes: fill('-'),
  '://': fill('://'),
  'a://b:c': fill('a://b:c'),
  '%40 escapes': fill('%40'),
  '&#64; entities': fill('&#64;'),
  '\\u0040 escapes': fill('\\u0040'),
  'zero-width spaces': fill('\u200B'),
  'digits split by zero-width': fill('1\u200B'),
  'bidi controls and digits': fill('4\u202E1\u2066'),
  'DE89 repeated': fill('DE89 '),
  'a name repeated': fill('Jane '),
  'dotted words': fill('a.'),
  backslashes: fill('\\'),
  'everything mixed': fill('pwd: [[a@1 2 3 -----BEGIN = %40 \u200B tel:+ '),
};
