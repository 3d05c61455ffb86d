/**
 * Credentials with a known shape, found by their prefix and alphabet: GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
 * github_pat_), OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-), AWS access key ids
 * (AKIA/ASIA + 16), Slack tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-) and webhook URLs (hooks.slack.com),
 * Stripe keys (sk_/rk_/pk_ + live_/test_), Hugging Face (hf_), Google API keys (AIza + 35), JWTs (three
 * base64url parts whose header decodes to a JSON object with "alg"), and PEM private keys (the whole
 * BEGIN…END block, any key type, upper or lower case; a block without END runs to the end of its base64 body).
 *
 * Tokens are looked for only inside runs of 15 or more token characters, found by a sub-linear skip scan
 * (chars.ts forEachRun); PEM blocks and webhook URLs by their literal start. A candidate glued to a word
 * character is not a token (`task-…` is not `sk-…`). Loose alphabets (sk-, Slack, Stripe, Hugging Face)
 * must mix letters and digits (OpenAI keys also both cases), so that kebab-case names are not keys; an AWS
 * key id must hold a digit. Public keys and certificates are not secrets and are left alone.
 * @see RFC 7519 (JWT), RFC 7515 §7.2 (JWS compact form), RFC 7468 (PEM textual encoding)
 */
import { forEachRun, isWordCode, TOKENISH } from './chars.js';
import { type Candidate, RANK } from './types.js';

/** Tokens made of TOKENISH characters only, looked for inside runs of them (JWTs are checked further in the text). */
const TOKEN_RE =
  /gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}|sk-ant-[A-Za-z0-9_-]{20,}|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}|[rps]k_(?:live|test)_[A-Za-z0-9]{10,}|xox[abprs]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{30,}|AIza[0-9A-Za-z_-]{35}|(?:AKIA|ASIA)[A-Z0-9]{16}|eyJ[A-Za-z0-9_-]{8,}/g;
/** Shortest token TOKEN_RE can match (an AWS key id, 20; `xoxb-` + 10, 15): shorter runs are skipped unread. */
const MIN_TOKEN = 15;
const JWT_RE = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/y;
const PEM_RE = /-----(BEGIN|begin) ([A-Za-z0-9 ]{0,40}(?:PRIVATE KEY|private key)(?: BLOCK| block)?)-----/y;
const WEBHOOK_RE = /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9_/]{20,}/y;
const PEM_BODY_RE = /[A-Za-z0-9+/=\s:,-]*/y;

/** What a matched token is, in words, or undefined when its shape does not hold up. */
export function shapeDetail(token: string): string | undefined {
  if (token.startsWith('gh') || token.startsWith('github_pat_')) return 'GitHub token';
  if (token.startsWith('sk-ant-')) return mixed(token.slice(7)) ? 'Anthropic API key' : undefined;
  if (token.startsWith('sk-')) return mixed(token.slice(3)) && /[A-Z]/.test(token) && /[a-z]/.test(token.slice(3)) ? 'OpenAI API key' : undefined;
  if (/^[rps]k_/.test(token)) return mixed(token.slice(8)) ? 'Stripe key' : undefined;
  if (token.startsWith('xox')) return mixed(token.slice(5)) ? 'Slack token' : undefined;
  if (token.startsWith('https://hooks.slack.com/')) return 'Slack webhook URL';
  if (token.startsWith('hf_')) return mixed(token.slice(3)) ? 'Hugging Face token' : undefined;
  if (token.startsWith('AIza')) return 'Google API key';
  if (token.startsWith('AKIA') || token.startsWith('ASIA')) return /[0-9]/.test(token) ? 'AWS access key' : undefined;
  if (token.startsWith('eyJ')) return isJwtHeader(token.slice(0, token.indexOf('.'))) ? 'JWT' : undefined;
  return undefined;
}

function mixed(s: string): boolean {
  return /[0-9]/.test(s) && /[A-Za-z]/.test(s);
}

/** RFC 7519: the JOSE header is base64url of a JSON object carrying "alg". */
function isJwtHeader(part: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

function push(out: Candidate[], start: number, end: number, detail: string): void {
  out.push({ start, end, label: 'SECRET', detail, rank: RANK.shape });
}

/** Shortest run of token characters that can hold a token: runs shorter than this need not be read. */
export const MIN_TOKEN_RUN = MIN_TOKEN;

/** Pushes every credential of a known shape in `text` onto `out` (label SECRET). */
export function findShapes(text: string, out: Candidate[]): void {
  let after = 0;
  forEachRun(text, TOKENISH, MIN_TOKEN, (from, to) => {
    if (from >= after) after = findTokensInRun(text, out, from, to);
  });
  findBlocks(text, out);
}

/**
 * Pushes the tokens inside the run of token characters text[from, to) onto `out`; returns the end of the
 * last token pushed (a JWT runs past its run), or `from`. Callers skip the runs before it.
 */
export function findTokensInRun(text: string, out: Candidate[], from: number, to: number): number {
  let last = from;
  if (!mayHoldToken(text, from, to)) return last;
  const run = text.slice(from, to);
  TOKEN_RE.lastIndex = 0;
  for (let m = TOKEN_RE.exec(run); m !== null; m = TOKEN_RE.exec(run)) {
    const start = from + m.index;
    if (start > 0 && isWordCode(text.charCodeAt(start - 1))) continue;
    let token = m[0];
    if (token.startsWith('eyJ')) {
      JWT_RE.lastIndex = start;
      token = JWT_RE.exec(text)?.[0] ?? '';
    }
    const end = start + token.length;
    if (end < text.length && isWordCode(text.charCodeAt(end))) continue;
    const detail = token === '' ? undefined : shapeDetail(token);
    if (detail === undefined) continue;
    push(out, start, end, detail);
    last = end;
    if (end >= to) break;
    TOKEN_RE.lastIndex = Math.max(TOKEN_RE.lastIndex, end - from);
  }
  return last;
}

/**
 * False when text[from, to) holds no token start: every shape of {@link TOKEN_RE} starts with `AI`, `AK`,
 * `AS` or `eyJ`, or has a `_` right after `gh[pousr]`, `github`, `[rps]k` or `hf`, or a `-` right after `sk`
 * or `xox[abprs]`. Most runs (ids, hashes, UUIDs, paths) end here, unsliced.
 */
function mayHoldToken(text: string, from: number, to: number): boolean {
  const at = (i: number, s: string) => i >= from && text.startsWith(s, i);
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 95) {
      const p = text.charCodeAt(i - 1);
      if (at(i - 3, 'gh') && (p === 112 || p === 111 || p === 117 || p === 115 || p === 114)) return true;
      if (at(i - 6, 'github') || at(i - 2, 'hf')) return true;
      if (p === 107 && i - 2 >= from && 'rps'.includes(text[i - 2]!)) return true;
    } else if (c === 45) {
      if (at(i - 2, 'sk') || (at(i - 4, 'xox') && 'abprs'.includes(text[i - 1]!))) return true;
    } else if (c === 65) {
      const n = text.charCodeAt(i + 1);
      if (n === 73 || n === 75 || n === 83) return true;
    } else if (c === 101 && text.charCodeAt(i + 1) === 121 && text.charCodeAt(i + 2) === 74) return true;
  }
  return false;
}

/** Pushes every PEM private key block and Slack webhook URL in `text` onto `out`. */
export function findBlocks(text: string, out: Candidate[]): void {
  const noEnd = new Set<string>(); // END lines not found once are not looked for again (no quadratic search)
  for (let at = text.indexOf('-----'); at !== -1; at = text.indexOf('-----', at + 1)) {
    const b = text.charCodeAt(at + 5);
    if (b !== 66 && b !== 98) continue; // B or b
    PEM_RE.lastIndex = at;
    const m = PEM_RE.exec(text);
    if (!m) continue;
    const endLine = `-----${m[1] === 'begin' ? 'end' : 'END'} ${m[2]}-----`;
    const close = noEnd.has(endLine) ? -1 : text.indexOf(endLine, PEM_RE.lastIndex);
    if (close === -1) noEnd.add(endLine);
    let end: number;
    if (close !== -1 && close - at < 65536) end = close + endLine.length;
    else {
      PEM_BODY_RE.lastIndex = PEM_RE.lastIndex;
      end = PEM_RE.lastIndex + PEM_BODY_RE.exec(text)![0].trimEnd().length;
    }
    push(out, at, end, 'PEM private key');
    at = end - 1;
  }
  for (let at = text.indexOf('https://hooks.slack.com/services/'); at !== -1; at = text.indexOf('https://hooks.slack.com/services/', at + 1)) {
    WEBHOOK_RE.lastIndex = at;
    const m = WEBHOOK_RE.exec(text);
    if (m) push(out, at, at + m[0].length, 'Slack webhook URL');
  }
}
