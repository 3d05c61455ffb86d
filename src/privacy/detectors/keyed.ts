/**
 * Values behind a secret-naming key, in text: `password=hunter2`, `api_key: abc123`, `"db_password": "x"`
 * (JSON or a JS object in text), `Authorization: Bearer …` / `Basic …` (the credential only, not the
 * scheme), `?token=…&` in query strings, and `scheme://user:pass@host` (the password only). Only the VALUE
 * is masked; the key stays readable.
 *
 * A key names a secret when one of its parts (split at `_`, `-`, `.`, spaces and camelCase) is a secret
 * word (password, passwd, pwd, pass, passphrase, secret, token, auth, authorization, cookie, credential(s))
 * or a secret pair (api+key, private+key, access+key, secret+key, session+id, set+cookie), or a glued part
 * ends with one (dbpassword, apikey, accesstoken), and no part is a counting or descriptive word (count,
 * max, limit, type, url, name, policy, …): `max_tokens`, `token_count`, `tokens`, `primary_key`, `sort_key`,
 * `keyboard`, `author`, `passage` are not secret keys.
 *
 * Value: inside quotes when quoted; after `=` up to whitespace, `&`, `;` or `,`; after `:` up to the end of
 * the line (YAML, headers), a ` #` comment, the next `key=` / `key: `, or `,`, `;`, `}`, `]`; after an auth
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
  'count counts limit limits max min len length size type types usage used budget estimate estimated total num number index idx ttl expiry expires expiration exp url uri endpoint path file name names field kind mode method methods policy required enabled rotation age scope scopes prefix hint strength reset changed updated created label format rule rules validation'.split(
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

/** True when a structured-data key names a secret by one of its parts (see the file header for the rules). */
export function isSecretKey(key: string): boolean {
  if (key.length > 128) return false;
  const parts = partsOf(key);
  if (parts.some((p) => NOT_SECRET.has(p))) return false;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (SECRET_WORDS.has(p) || GLUED_SUFFIXES.some((s) => p.length > s.length && p.endsWith(s))) return true;
    if (PAIRS.some(([a, b]) => p === a && parts[i + 1] === b)) return true;
  }
  return false;
}

/** A key word, the rest of its key, an optional closing quote and `:` or `=`: one pass finds every keyed value. */
const KEYED_RE = /(?:pass|pwd|secret|token|auth|cookie|credential|key|session)[\w.-]{0,64}["']?[ \t]{0,8}[:=]/gi;
const NOT_A_VALUE =
  /^(?:null|nil|none|true|false|undefined|string|number|boolean|any|unknown|\*+|x{3,}|\[?redacted\]?|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|%[sd]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[;,]?|.*\(.*)$/i;
const SCHEME_RE = /^(?:Bearer|Basic|Token|Digest|Bot|ApiKey|token)\s+/;
const QUOTED_RE = /(["'])((?:[^"'\\\r\n]|\\.|(?!\1)["']){1,1024})\1/y;
const EQ_VALUE_RE = /[^\s&;,"'<>]{1,1024}/y;
const COLON_VALUE_RE = /[^\r\n,;}\]]{1,1024}/y;
/** Where a `key: value` value stops before the end of its line: a ` #` comment or the next `key: ` / `key=`. */
const COLON_STOP_RE = /\s+(?:#|[A-Za-z_][\w.-]{0,64}(?::\s|=[^=\s]))/;
const USERINFO_RE = /[^\s:/@?#[\]"'<>]{0,256}:([^\s/@?#"'<>]{1,256})@/y;

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
  KEYED_RE.lastIndex = 0;
  for (let m = KEYED_RE.exec(text); m !== null; m = KEYED_RE.exec(text)) {
    let ks = m.index;
    while (ks > 0 && isKeyCode(text.charCodeAt(ks - 1))) ks--;
    let ke = m.index;
    while (ke < text.length && isKeyCode(text.charCodeAt(ke))) ke++;
    const key = text.slice(ks, ke);
    if (!isSecret(key)) continue;
    let i = m.index + m[0].length - 1;
    const sep = text[i];
    if (text[i + 1] === '=' || text[i + 1] === '>' || text[i + 1] === ':' || (sep === ':' && text[i + 1] === '/')) continue;
    i++;
    while (text[i] === ' ' || text[i] === '\t') i++;
    QUOTED_RE.lastIndex = i;
    const q = QUOTED_RE.exec(text);
    if (q) {
      KEYED_RE.lastIndex = push(out, i + 1, q[2]!, detailOf(key)) + 1;
      continue;
    }
    const re = sep === '=' ? EQ_VALUE_RE : COLON_VALUE_RE;
    re.lastIndex = i;
    let value = re.exec(text)?.[0];
    if (value === undefined) continue;
    if (sep === ':') {
      const stop = COLON_STOP_RE.exec(value);
      if (stop) value = value.slice(0, stop.index);
    }
    // Keys inside a value already read are not read again (each part of the text is read once).
    KEYED_RE.lastIndex = push(out, i, value, detailOf(key));
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
