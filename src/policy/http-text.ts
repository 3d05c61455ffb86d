/**
 * HTTP requests written out in a string argument: a request line (`DELETE /api/users/1 HTTP/1.1`), a
 * command line (`curl -X DELETE …`, `curl -d …`, `wget --method=DELETE …`, `http DELETE …`), a method
 * override header (`X-HTTP-Method-Override: DELETE`), and a URL that names its action
 * (`…/api/chat.delete`, `…/users/1/delete`, `?action=delete`). Pure, and linear in the text: every
 * pattern is anchored to a line or a token, so a hostile string cannot make it backtrack.
 */
import { splitName } from './name.js';
import { judgeOperation } from './operation.js';
import { isStrongVerb } from './phrase.js';
import { DESTRUCTIVE, OPERATION_FIELDS } from './words.js';

/** Longest text read for requests (characters); the rest of a longer one is not searched. */
const MAX_TEXT = 100_000;

/** Methods that change state (RFC 9110 §9.3). */
const WRITE_METHOD = /^(?:DELETE|POST|PUT|PATCH)$/;

const REQUEST_LINE = /^[ \t]*(delete|post|put|patch)[ \t]+(?:\/|https?:\/\/|[\w.-]+\/)/i;
const HTTPIE = /^[ \t]*(?:https?|xh|xhs)[ \t]+(delete|post|put|patch)\b/i;
/** Command-line clients: how each names a method, and the options that send a body (and so POST). */
const CLIENTS = [
  {
    name: 'curl',
    method: /(?:^|\s)(?:-[A-Za-z]*X[ \t]*|--request[ \t=]+)['"]?([A-Za-z]+)/,
    body: /(?:^|\s)(?:-[A-Za-z]*[dFT]|--data[\w-]*|--form[\w-]*|--upload-file|--json)(?:[\s=]|$)/,
  },
  { name: 'wget', method: /--method[ \t=]+['"]?([A-Za-z]+)/, body: /--(?:post|body)-(?:data|file)\b/ },
];
const OVERRIDE = /x-http-method(?:-override)?["']?[ \t]*[:=,][ \t]*["']?([A-Za-z]+)/i;
/**
 * A method named in code or a shell's own client: `requests.delete(`, `axios.post(`, `method: 'DELETE'`,
 * `'method' => 'DELETE'`, PowerShell's `-Method Delete` (not `method="POST"`: a PromQL label matcher).
 */
const CODE_METHOD =
  /\b(?:requests|axios|http|httpx|session|client|\$http)\.(delete|post|put|patch)\s*\(|["']?method["']?\s*(?::|=>)\s*["'](delete|post|put|patch)["']|-Method\s+["']?(delete|post|put|patch)\b/i;

/**
 * The writing HTTP request a text spells out, if any.
 * @returns the method (DELETE, POST, PUT, PATCH) and how the text says it.
 */
export function writtenRequest(text: string): { method: string; how: string } | undefined {
  for (const line of text.slice(0, MAX_TEXT).split('\n')) {
    const direct = REQUEST_LINE.exec(line) ?? HTTPIE.exec(line);
    if (direct?.[1]) return { method: direct[1].toUpperCase(), how: 'a request line' };
    const code = CODE_METHOD.exec(line);
    const coded = (code?.[1] ?? code?.[2] ?? code?.[3])?.toUpperCase();
    if (coded) return { method: coded, how: 'code that sends the request' };
    const override = OVERRIDE.exec(line)?.[1]?.toUpperCase();
    if (override && WRITE_METHOD.test(override)) return { method: override, how: 'a method override header' };
    for (const tool of CLIENTS) {
      const at = line.indexOf(tool.name);
      if (at < 0) continue;
      const rest = line.slice(at + tool.name.length);
      const m = tool.method.exec(rest)?.[1]?.toUpperCase();
      if (m && WRITE_METHOD.test(m)) return { method: m, how: `a ${tool.name} command` };
      if (tool.body.test(rest)) return { method: 'POST', how: `a ${tool.name} command that sends a body` };
    }
  }
  return undefined;
}

/** A URL, with or without its scheme (`https://x/a`, `wss://x/a`, `//x/a`, `x.com/a`, `localhost:8080/a`). */
const URL_LIKE = /^(?:(?:https?|wss?):)?\/\/[^\s/]+|^(?:[\w-]+(?:\.[\w-]+)+|localhost)(?::\d+)?\//i;

/** A path segment that names one thing: a number, a UUID, a long hex or opaque id. */
const ID_SEGMENT = /^(?:\d+|[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f-]{27,}|[A-Za-z0-9_-]{20,})$/i;

/** A word that acts as a whole path segment next to an id (`/users/1/delete`, `/orders/9/refund`). */
const actingWord = (segment: string): string | undefined => {
  const words = splitName(segment.replace(/\.(?:json|xml|php|html?|cgi|aspx?|do|action)$/i, ''));
  const w = words[0] as string;
  return words.length === 1 &&
    (DESTRUCTIVE.has(w) || isStrongVerb(w) || ['deactivate', 'disable', 'suspend', 'reboot', 'restart', 'approve', 'reject'].includes(w))
    ? w
    : undefined;
};

/**
 * The action a URL names, if it writes, in the shapes APIs give actions (and pages do not):
 * - a writing verb as a whole segment next to an id (`/users/1/delete`, `/users/delete/42`);
 * - a method after a colon (`/v1/projects/p:delete`, `…/items:batchDelete`);
 * - an RPC method under an API path (`/api/chat.postMessage`, `/bot123:AA/sendMessage`);
 * - an operation in the query (`?action=delete`, `?cmd=rm`, `?delete=true`).
 * A page about an action (`/wiki/Delete_key`, `/docs/git-reset`, `/Methods/DELETE`) is a page.
 * Percent-encoding is decoded first; `GET `, quotes and angle brackets around the URL are set aside.
 */
export function urlAction(text: string): string | undefined {
  const t = text
    .trim()
    .replace(/^(?:GET|HEAD)\s+/i, '')
    .replace(/^[<"'`]|[>"'`]$/g, '');
  if (t.length > 8192 || !URL_LIKE.test(t)) return undefined;
  let decoded = t;
  try {
    decoded = decodeURIComponent(t.replace(/\+/g, ' '));
  } catch {
    // not valid percent-encoding: judged as written
  }
  const [beforeQuery = '', query = ''] = decoded.replace(/#.*$/, '').split('?', 2);
  const path = beforeQuery.replace(/^(?:(?:https?|wss?):)?\/\/[^/]*|^(?:[\w-]+(?:\.[\w-]+)+|localhost)(?::\d+)?/i, '');
  const segments = path.split('/').filter(Boolean);
  // Documentation, blogs and wikis describe actions; reading them is reading.
  if (/^(?:(?:https?|wss?):)?\/\/(?:docs?|developers?|dev|learn|help|support|wiki|blog|guides?)\./i.test(t)) return undefined;
  if (segments.some((x) => /^(?:docs?|documentation|reference|wiki|blog|guides?|manual|tutorials?)$/i.test(x))) return undefined;
  const apiPath = segments.some((x) => /^(?:api|rpc|admin|v\d+|bot\S*|ajax|cgi-bin)$/i.test(x));
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    const word = actingWord(seg);
    if (word && (ID_SEGMENT.test(segments[i - 1] ?? '') || ID_SEGMENT.test(segments[i + 1] ?? ''))) return `its path says "${word}" of one thing`;
    // `/users/remove-all`, `/cache/purge_everything`: a destructive verb on everything.
    // `/users/remove-all`, or under an API or admin path a destructive verb leading a segment
    // (`/admin/purge_cache`); a documentation page (`/wiki/Delete_key`) is under neither.
    const ws = splitName(seg.replace(/\.(?:json|xml|php|html?|cgi|aspx?|do|action)$/i, ''));
    if (ws.length === 2 && DESTRUCTIVE.has(ws[0] as string) && (ws[1] === 'all' || ws[1] === 'everything')) return `its path says "${seg}"`;
    if (apiPath && ws.length <= 3 && DESTRUCTIVE.has(ws[0] as string) && i > 0) return `its path says "${seg}"`;
    const colon = seg.lastIndexOf(':');
    if (colon > 0 && judgeOperation(seg.slice(colon + 1), 'generic', false)) return `its path calls the method "${seg.slice(colon + 1, colon + 41)}"`;
  }
  const last = segments[segments.length - 1] ?? '';
  if (apiPath && /^[a-z]+[A-Z]|[.]/.test(last) && judgeOperation(last.split('.').pop() ?? last, 'method', false))
    return `its path calls the method "${last.slice(0, 40)}"`;
  for (const pair of query.split('&').slice(0, 50)) {
    const [rawKey = '', value = ''] = pair.split('=', 2);
    const key = rawKey.replace(/\[\]$/, '').replace(/^[_$]+|[_$]+$/g, '');
    if (OPERATION_FIELDS.test(key) || /^(?:cmd|command|method)$/i.test(key)) {
      const op = judgeOperation(value, 'operation', false);
      if (op) return `its query asks ${key}=${value.slice(0, 30)}`;
    }
    // `?delete`, `?delete=true`: the query names the action itself.
    if (actingWord(key) && DESTRUCTIVE.has(splitName(key)[0] ?? '') && !/^(?:false|0|no)$/i.test(value)) return `its query asks "${key}"`;
  }
  return undefined;
}
