/**
 * Values behind a secret-naming key, in text: `password=hunter2`, `api_key: abc123`, `"db_password": "x"`
 * (JSON or a JS object in text), `Authorization: Bearer …` / `Basic …` (the credential only, not the
 * scheme), `?token=…&` in query strings, and `scheme://user:pass@host` (the password only). Only the VALUE
 * is masked; the key stays readable.
 *
 * A key names a secret when one of its parts (split at `_`, `-`, `.`, spaces and camelCase; invisible format
 * characters removed) is a secret word (password, passwd, pwd, pass, passphrase, secret, token, auth,
 * authorization, cookie, credential(s)) or a secret pair (api+key, private+key, access+key, secret+key,
 * session+id, set+cookie), or a glued part ends with one (dbpassword, apikey, accesstoken), unless the key
 * names something about the secret: its LAST part is a counting or descriptive word (count, limit, type,
 * url, name, policy, hint, reset, at, …) or its first part is max/min/num/total/count. So `max_tokens`,
 * `token_count`, `tokens_used`, `token_type`, `password_policy`, `primary_key`, `keyboard`, `author` are
 * not secret keys, and `password_reset_token` is (a descriptive word in the middle cancels nothing).
 *
 * Value: inside quotes when quoted (escapes included). Unquoted, in a URL query (`?`/`&` right before the
 * key) up to `&`, `#`, whitespace, a quote or `<>`; behind `=` elsewhere up to whitespace (`&`, `;`, `,`
 * belong to it: `password=Tr0ub4dor&3x`); behind `:` up to the end of the line, a ` #` comment, the next
 * ` key: ` / ` key=`, or a `,`/`;` followed by whitespace. Always up to a quote closing an enclosing
 * string, `;` for a cookie; a trailing `,;.)]}>` or quote is left out. After an auth
 * scheme (Bearer, Basic, Token, …), one word; at most 1024 characters. Not a value: empty, `null`, `true`,
 * `false`, `none`, `undefined`, masks (`***`), templates and variables (`${X}`, `$X`, `{{x}}`, `<x>`, `%s`),
 * TypeScript type names, member accesses and calls in code (`req.body.password`, `getToken()`),
 * comparisons (`==`, `=>`). Detail: 'password' under a pass/pwd key, else `value of "<key>"`.
 * Known gap: a password in prose with no key (`my password is hunter2`) is not found.
 */
import { type Candidate, RANK } from './types.js';

const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'secret',
  'secrets',
  'token',
  'auth',
  'authorization',
  'cookie',
  'credential',
  'credentials',
  'apikey',
]);
const GLUED_SUFFIXES = ['password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'accesskey', 'privatekey', 'secretkey', 'credentials', 'sessionid'];
const PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['api', 'key'],
  ['private', 'key'],
  ['access', 'key'],
  ['secret', 'key'],
  ['session', 'id'],
  ['set', 'cookie'],
];
const NOT_SECRET = new Set(
  'count counts limit limits max min len length size type types usage used budget estimate estimated total num number index idx ttl expiry expires expiration exp url uri endpoint path file name names field kind mode method methods policy required enabled rotation age scope scopes prefix hint strength reset changed updated created label format rule rules validation at'.split(
    ' ',
  ),
);

/** The lower-case parts of a key: `dbPassword` → db, password; `X-API-Key` → x, api, key. */
function partsOf(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((p) => p.length > 0);
}

/** Leading words that make a key a count or limit of tokens (`max_tokens`, `num_tokens`), not a secret. */
const COUNT_PREFIX = new Set(['max', 'min', 'num', 'total', 'count']);

/** True when a structured-data key names a secret by one of its parts (see the file header for the rules). */
export function isSecretKey(key: string): boolean {
  if (key.length > 128) return false;
  const parts = partsOf(stripInvisible(key));
  if (parts.length === 0) return false;
  // The last part is what the key names: `password_policy` is a policy, `password_reset_token` a token.
  if (NOT_SECRET.has(parts[parts.length - 1]!) || COUNT_PREFIX.has(parts[0]!)) return false;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (SECRET_WORDS.has(p) || GLUED_SUFFIXES.some((s) => p.length > s.length && p.endsWith(s))) return true;
    if (PAIRS.some(([a, b]) => p === a && parts[i + 1] === b)) return true;
  }
  return false;
}

/** Invisible format characters (zero-width, bidi controls, soft hyphen, BOM) removed. */
function stripInvisible(s: string): string {
  return s.replace(/[\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g, '');
}

/** A key word, the rest of its key, an optional closing quote and `:` or `=`: one pass finds every keyed value. */
/** A key holding one of these can name a secret (cheap test before {@link isSecretKey}). */
const KEY_WORDS = ['pass', 'pwd', 'secret', 'token', 'auth', 'cookie', 'credential', 'key', 'session'];
/** The key words by their first letter's code. */
const KEY_WORDS_BY_FIRST = ((): (readonly string[] | undefined)[] => {
  const t: string[][] = [];
  for (const w of KEY_WORDS) {
    const c = w.charCodeAt(0);
    t[c] = [...(t[c] ?? []), w];
  }
  return t;
})();

/**
 * True when the key text[ks, ke) (ASCII key characters) holds a key word, in any case: the cheap test
 * before {@link isSecretKey}. `c | 32` lower-cases a letter and maps no other key character to one.
 */
function hasKeyWord(text: string, ks: number, ke: number): boolean {
  for (let i = ks; i + 3 <= ke; i++) {
    const words = KEY_WORDS_BY_FIRST[text.charCodeAt(i) | 32];
    if (words === undefined) continue;
    for (const w of words) {
      if (i + w.length > ke) continue;
      let k = 1;
      while (k < w.length && (text.charCodeAt(i + k) | 32) === w.charCodeAt(k)) k++;
      if (k === w.length) return true;
    }
  }
  return false;
}
const NOT_A_VALUE =
  /^(?:null|nil|none|true|false|undefined|string|number|boolean|any|unknown|\*+|x{3,}|\[?redacted\]?|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|%[sd]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[;,]?|.*\(.*)$/i;
const SCHEME_RE = /^(?:Bearer|Basic|Token|Digest|Bot|ApiKey|token)\s+/;
const QUOTED_RE = /(["'])((?:[^"'\\\r\n]|\\.|(?!\1)["']){1,1024})\1/y;
/** Longest value read behind a key. */
const MAX_VALUE = 1024;
/** A word that starts the next `key: ` / `key=` on the same line (a value behind `:` stops before it). */
const NEXT_KEY_RE = /[A-Za-z_][\w.-]{0,64}\??(?::\s|=[^=\s])/y;
const USERINFO_RE = /[^\s:/@?#[\]"'<>]{0,256}:([^\s/@?#"'<>]{1,256})@/y;

function isSpaceCode(c: number): boolean {
  return (
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 13 ||
    c === 11 ||
    c === 12 ||
    c === 0xa0 ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x3000 ||
    (c >= 0x2000 && c <= 0x200a)
  );
}

/** A quote that closes an enclosing string: followed by the end or a character that is not part of a word. */
function closesString(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c !== 34 && c !== 39) return false;
  const n = text.charCodeAt(i + 1);
  return Number.isNaN(n) || !(isKeyCode(n) || n > 127);
}

/**
 * The end of an unquoted value starting at `i`. In a URL query (`?`/`&` before the key) it ends at `&`, `#`,
 * whitespace, a quote or `<>`; behind `=` in free text at whitespace; behind `:` at the end of the line, a
 * ` #` comment or the next ` key: ` / ` key=`. Either way at a quote that closes an enclosing string, at `;`
 * for a cookie, and after at most {@link MAX_VALUE} characters. Each character is read once.
 */
function valueEnd(text: string, i: number, query: boolean, colon: boolean, cookie: boolean): number {
  const limit = Math.min(text.length, i + MAX_VALUE);
  let j = i;
  if (query) {
    while (j < limit) {
      const c = text.charCodeAt(j);
      if (c === 38 || c === 35 || c === 34 || c === 39 || c === 60 || c === 62 || isSpaceCode(c)) break;
      j++;
    }
    return j;
  }
  while (j < limit) {
    const c = text.charCodeAt(j);
    if (c === 10 || c === 13 || (cookie && c === 59) || closesString(text, j)) break;
    // Behind `:`, a `,` or `;` followed by whitespace ends a list item or a statement.
    if (colon && (c === 44 || c === 59) && (j + 1 >= text.length || isSpaceCode(text.charCodeAt(j + 1)))) break;
    if (isSpaceCode(c)) {
      if (!colon) break;
      let k = j + 1;
      while (k < limit && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9)) k++;
      if (k >= limit) break;
      if (text.charCodeAt(k) === 35) break;
      NEXT_KEY_RE.lastIndex = k;
      if (NEXT_KEY_RE.test(text)) break;
      j = k;
      continue;
    }
    j++;
  }
  return j;
}

/** What the value behind `key` is, in words. */
function detailOf(key: string): string {
  return /pass|pwd/i.test(key) ? 'password' : `value of "${key}"`;
}

/** Pushes the value (or the credential after an auth scheme) as a finding; returns where the value ends. */
function push(out: Candidate[], start: number, value: string, detail: string): number {
  const trimmed = value.trimEnd();
  if (trimmed.length === 0 || NOT_A_VALUE.test(trimmed)) return start + value.length;
  const scheme = SCHEME_RE.exec(trimmed);
  const from = scheme ? scheme[0].length : 0;
  const to = scheme ? from + (/^\S+/.exec(trimmed.slice(from))?.[0].length ?? 0) : trimmed.length;
  if (to > from) out.push({ start: start + from, end: start + to, label: 'SECRET', detail, rank: RANK.keyed });
  return start + value.length;
}

function isKeyCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || c === 45;
}

/**
 * Pushes the value behind every secret-naming key in `text`, and every URL userinfo password, onto `out`.
 * `isSecret` is {@link isSecretKey} or a cached copy of it.
 */
export function findKeyedValues(text: string, out: Candidate[], isSecret: (key: string) => boolean = isSecretKey): void {
  // Every `:` and `=` is looked at once; the key is read backwards from it (a quote and up to 8 spaces or
  // tabs, then at most 128 key characters), so each character is read a bounded number of times.
  let colon = text.indexOf(':');
  let equals = text.indexOf('=');
  let from = 0; // the end of the last value read: separators inside it are not read again
  while (colon !== -1 || equals !== -1) {
    const sepAt = colon === -1 ? equals : equals === -1 ? colon : Math.min(colon, equals);
    if (sepAt === colon) colon = text.indexOf(':', sepAt + 1);
    else equals = text.indexOf('=', sepAt + 1);
    if (sepAt < from) continue;
    let ke = sepAt;
    while (ke > 0 && sepAt - ke < 8 && (text.charCodeAt(ke - 1) === 32 || text.charCodeAt(ke - 1) === 9)) ke--;
    if (ke > 0 && (text.charCodeAt(ke - 1) === 34 || text.charCodeAt(ke - 1) === 39)) ke--;
    let ks = ke;
    while (ks > 0 && ke - ks < 128 && isKeyCode(text.charCodeAt(ks - 1))) ks--;
    if (ks === ke) continue;
    // No slice and no regex for the many keys that hold no key word (`id`, `status`, `12` of `12:00`).
    if (!hasKeyWord(text, ks, ke)) continue;
    const key = text.slice(ks, ke);
    if (!isSecret(key)) continue;
    let i = sepAt;
    const sep = text[i];
    if (text[i + 1] === '=' || text[i + 1] === '>' || text[i + 1] === ':' || (sep === ':' && text[i + 1] === '/')) continue;
    i++;
    const limit = Math.min(text.length, i + 64);
    while (i < limit && (text[i] === ' ' || text[i] === '\t')) i++;
    QUOTED_RE.lastIndex = i;
    const q = QUOTED_RE.exec(text);
    if (q) {
      from = push(out, i + 1, q[2]!, detailOf(key)) + 1;
      continue;
    }
    const before = ks > 0 ? text[ks - 1] : '';
    const query = sep === '=' && (before === '?' || before === '&');
    const raw = valueEnd(text, i, query, sep === ':', /cookie/i.test(key));
    let end = raw;
    if (NOT_A_VALUE.test(text.slice(i, raw))) {
      from = Math.max(from, raw);
      continue;
    }
    // Punctuation that ends a sentence or a list is not part of the value.
    while (end > i && ',;.)]}>"\''.includes(text[end - 1]!)) end--;
    // Keys inside a value already read are not read again (each part of the text is read once).
    from = Math.max(from, push(out, i, text.slice(i, end), detailOf(key)));
  }
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    if (at === 0 || !/[A-Za-z0-9+.-]/.test(text[at - 1]!)) continue;
    USERINFO_RE.lastIndex = at + 3;
    const m = USERINFO_RE.exec(text);
    if (!m) continue;
    const end = USERINFO_RE.lastIndex - 1;
    out.push({ start: end - m[1]!.length, end, label: 'SECRET', detail: 'password', rank: RANK.keyed });
  }
}
