/**
 * The concrete effect of a call, in words a person reads before approving it: `deletes /srv/app.toml`,
 * `writes 1,204 bytes to notes.md`, `moves a → b`, `DELETE https://…`, `runs: rm -rf build`,
 * `sends to ann@example.com: "Invoice"`, `transfers 250.00 EUR to DE89…`. Derived from the tool's name
 * words and well-known argument names; when the arguments allow nothing concrete, there is no effect and
 * the caller shows the tool and its arguments instead. Pure; values are quoted as given (channels escape
 * hidden characters themselves).
 */
import { splitName } from './classify.js';
import { DESTRUCTIVE } from './words.js';

type Args = Record<string, unknown>;

const PATH_KEYS = ['path', 'file', 'filepath', 'file_path', 'filename', 'target', 'uri', 'key'];
const SOURCE_KEYS = ['source', 'src', 'from', 'old_path', 'oldpath', 'source_path'];
const DEST_KEYS = ['destination', 'dest', 'to', 'new_path', 'newpath', 'target', 'destination_path'];
const CONTENT_KEYS = ['content', 'contents', 'text', 'data', 'body', 'file_text'];
const RECIPIENT_KEYS = ['to', 'recipient', 'recipients', 'email', 'emails', 'address', 'channel', 'phone', 'number'];
const AMOUNT_KEYS = ['amount', 'value', 'sum', 'total'];
const ACCOUNT_KEYS = ['to', 'account', 'iban', 'recipient', 'payee', 'destination', 'beneficiary', 'to_account', 'creditor'];

/** First string (or list of strings) among `keys`, compared case-insensitively. */
function pick(args: Args, keys: readonly string[]): string | undefined {
  const lower = new Map(Object.entries(args).map(([k, v]) => [k.toLowerCase(), v]));
  for (const k of keys) {
    const v = lower.get(k);
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number') return String(v);
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return (v as string[]).join(', ');
  }
  return undefined;
}

/**
 * An amount as a person must read it: a plain decimal with at least two places, never rounded (0.005 stays
 * 0.005, 1e21 is written out); anything else a number parser would accept (`0x10`, `1e3`, ` 5`) is shown
 * quoted, as written, since the upstream may read it otherwise than as the number it looks like.
 */
function amountText(raw: string): string {
  const m = /^(-?\d+)(?:\.(\d+))?$/.exec(raw);
  if (!m) {
    const n = Number(raw);
    // A number the arguments carried as a JSON number: its exact decimal expansion.
    if (Number.isInteger(n) && String(n) === raw && /e/i.test(raw)) return BigInt(n).toString();
    if (Number.isFinite(n) && String(n) === raw && /e/i.test(raw)) return raw;
    return JSON.stringify(raw);
  }
  const [, whole, frac = ''] = m;
  return `${whole}.${frac.padEnd(2, '0')}`;
}

/**
 * A value as shown in an effect: bare when it is a plain token (a path, an address, a number), else
 * JSON-quoted, so that a value with spaces, arrows or quotes cannot pose as more of the sentence.
 */
const short = (s: string, n = 120) => {
  const cut = s.length > n ? `${s.slice(0, n - 1)}…` : s;
  return /^[\w./:@+~%=,#-]+…?$/u.test(cut) ? cut : JSON.stringify(cut);
};
/** A command or statement: shown as typed (channels escape hidden characters), cut at `n`. */
const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const bytes = (s: string) => Buffer.byteLength(s, 'utf8').toLocaleString('en-US');

/**
 * The effect of calling `tool` with `args`, or undefined when nothing concrete can be said.
 * @param tool the upstream's name of the tool.
 */
export function effectOf(tool: string, args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const a = args as Args;
  const words = new Set(splitName(tool));
  const has = (...w: string[]) => w.some((x) => words.has(x));
  const method = typeof a.method === 'string' ? a.method.toUpperCase() : undefined;
  const url = pick(a, ['url', 'endpoint', 'href']);
  if (url && method && method !== 'GET' && method !== 'HEAD') return `${method} ${short(url)}`;
  const command = pick(a, ['command', 'cmd', 'script']);
  if (command) return `runs: ${clip(command)}`;
  const sql = pick(a, ['sql', 'query', 'statement']);
  if (sql && has('sql', 'query', 'execute', 'exec', 'run', 'db', 'database')) return `runs SQL: ${clip(sql.replace(/\s+/g, ' '))}`;
  if (has('transfer', 'pay', 'payment', 'refund', 'send', 'wire', 'payout', 'remit')) {
    const amount = pick(a, AMOUNT_KEYS);
    if (amount !== undefined && !Number.isNaN(Number(amount))) {
      const currency = pick(a, ['currency', 'ccy', 'currency_code']) ?? '';
      const to = pick(a, ACCOUNT_KEYS);
      const verb = has('refund') ? 'refunds' : 'transfers';
      return `${verb} ${amountText(amount)}${currency ? ` ${currency.toUpperCase()}` : ''}${to ? ` to ${short(to, 60)}` : ''}`;
    }
  }
  if (has('send', 'email', 'mail', 'message', 'post', 'reply', 'notify', 'sms')) {
    const to = pick(a, RECIPIENT_KEYS);
    if (to) {
      const subject = pick(a, ['subject', 'title']);
      return `sends to ${short(to, 80)}${subject ? `: ${JSON.stringify(subject.length > 80 ? `${subject.slice(0, 79)}…` : subject)}` : ''}`;
    }
  }
  if (has('move', 'rename', 'mv')) {
    const from = pick(a, SOURCE_KEYS);
    const to = pick(a, DEST_KEYS);
    if (from && to) return `moves ${short(from, 80)} → ${short(to, 80)}`;
  }
  const path = pick(a, PATH_KEYS);
  if (path && [...words].some((w) => DESTRUCTIVE.has(w))) return `deletes ${short(path)}`;
  if (path && has('edit', 'patch', 'modify', 'replace')) {
    const edits = Array.isArray(a.edits) ? a.edits.length : undefined;
    return `edits ${short(path)}${edits ? ` (${edits} edit${edits === 1 ? '' : 's'})` : ''}`;
  }
  if (path && has('directory', 'dir', 'folder', 'mkdir') && has('create', 'make', 'new', 'mkdir')) return `creates directory ${short(path)}`;
  if (path && has('write', 'create', 'save', 'put', 'upload', 'store', 'append')) {
    const content = pick(a, CONTENT_KEYS);
    const verb = has('append') ? 'appends' : 'writes';
    return content === undefined ? `${verb} to ${short(path)}` : `${verb} ${bytes(content)} bytes to ${short(path)}`;
  }
  return undefined;
}
