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
 * the line (YAML, headers), the next `key=`/`key:`, or `,`, `;`, `}`, `]`; after an auth scheme, one word. Not a value: empty, `null`/`true`/`false`/`none`/
 * `undefined`, masks (`***`), templates and variables (`${X}`, `$X`, `{{x}}`, `<x>`, `%s`), TypeScript type
 * names, member accesses and calls in code (`req.body.password`, `getToken()`), comparisons (`==`, `=>`).
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

const KEYWORD_RE = /pass|pwd|secret|token|auth|cookie|credential|key|session/gi;
const KEY_CHAR = /[A-Za-z0-9_.-]/;
const NOT_A_VALUE =
  /^(?:null|nil|none|true|false|undefined|string|number|boolean|any|unknown|\*+|x{3,}|\[?redacted\]?|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|%[sd]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[;,]?|.*\(.*)$/i;
const SCHEME_RE = /^(?:Bearer|Basic|Token|Digest|Bot|ApiKey|token)\s+/;
const QUOTED_RE = /(["'])((?:[^"'\\\r\n]|\\.|(?!\1)["']){1,4096})\1/y;
const EQ_VALUE_RE = /[^\s&;,"'<>]{1,4096}/y;
const COLON_VALUE_RE = /[^\r\n,;}\]]{1,4096}?(?=\s+[A-Za-z_][\w.-]*[=:]|\s*(?:[\r\n,;}\]]|$))/y;
const USERINFO_RE = /[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/[^\s:/@?#[\]"'<>]{1,256}:([^\s/@?#"'<>]{1,256})@/g;

/** What the value behind `key` is, in words. */
function detailOf(key: string): string {
  return /pass|pwd/i.test(key) ? 'password' : `value of "${key}"`;
}

function push(out: Candidate[], start: number, value: string, detail: string): void {
  const trimmed = value.trimEnd();
  if (trimmed.length === 0 || NOT_A_VALUE.test(trimmed)) return;
  const scheme = SCHEME_RE.exec(trimmed);
  const from = scheme ? scheme[0].length : 0;
  const to = scheme ? from + (/^\S+/.exec(trimmed.slice(from))?.[0].length ?? 0) : trimmed.length;
  if (to <= from) return;
  out.push({ start: start + from, end: start + to, label: 'SECRET', detail, rank: RANK.keyed });
}

/** Pushes the value behind every secret-naming key in `text`, and every URL userinfo password, onto `out`. */
export function findKeyedValues(text: string, out: Candidate[]): void {
  KEYWORD_RE.lastIndex = 0;
  for (let m = KEYWORD_RE.exec(text); m !== null; m = KEYWORD_RE.exec(text)) {
    let ks = m.index;
    let ke = ks + m[0].length;
    while (ks > 0 && KEY_CHAR.test(text[ks - 1]!)) ks--;
    while (ke < text.length && KEY_CHAR.test(text[ke]!)) ke++;
    KEYWORD_RE.lastIndex = ke;
    const key = text.slice(ks, ke);
    if (!isSecretKey(key)) continue;
    let i = ke;
    if ((text[i] === '"' || text[i] === "'") && text[ks - 1] === text[i]) i++;
    while (text[i] === ' ' || text[i] === '\t') i++;
    const sep = text[i];
    if (sep !== ':' && sep !== '=') continue;
    if (text[i + 1] === '=' || text[i + 1] === '>' || text[i + 1] === ':' || (sep === ':' && text[i + 1] === '/')) continue;
    i++;
    while (text[i] === ' ' || text[i] === '\t') i++;
    QUOTED_RE.lastIndex = i;
    const q = QUOTED_RE.exec(text);
    if (q) {
      push(out, i + 1, q[2]!, detailOf(key));
      continue;
    }
    const re = sep === '=' ? EQ_VALUE_RE : COLON_VALUE_RE;
    re.lastIndex = i;
    const v = re.exec(text);
    if (v) push(out, i, v[0], detailOf(key));
  }
  USERINFO_RE.lastIndex = 0;
  for (let m = USERINFO_RE.exec(text); m !== null; m = USERINFO_RE.exec(text)) {
    const end = m.index + m[0].length - 1;
    out.push({ start: end - m[1]!.length, end, label: 'SECRET', detail: 'password', rank: RANK.keyed });
  }
}
