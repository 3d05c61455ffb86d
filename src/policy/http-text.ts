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
 * The writing HTTP request a text spells out, if any.
 * @returns the method (DELETE, POST, PUT, PATCH) and how the text says it.
 */
export function writtenRequest(text: string): { method: string; how: string } | undefined {
  for (const line of text.slice(0, MAX_TEXT).split('\n')) {
    const direct = REQUEST_LINE.exec(line) ?? HTTPIE.exec(line);
    if (direct?.[1]) return { method: direct[1].toUpperCase(), how: 'a request line' };
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

/** A URL, with or without its scheme (`https://x/a`, `//x/a`, `x.com/a`). */
const URL_LIKE = /^(?:https?:)?\/\/[^\s/]+|^[\w-]+(?:\.[\w-]+)+(?::\d+)?\//i;

/**
 * What a URL's last path segment says it does: a destructive word in it (`delete`, `batchDelete`,
 * `remove-all`, `purge_cache`), or an RPC method that writes (`chat.postMessage`, `sendMessage`). A page
 * whose path only mentions paying or sending (`/pay-here`, `/send-feedback`) is a page.
 */
function actsIn(segment: string, api: boolean): string | undefined {
  // Under an API (`/api/…`, `/v2/…`, `api.host`), a verb seldom used as a noun counts too (`/orders/1/refund`).
  const found = splitName(segment).find((w) => DESTRUCTIVE.has(w) || ['deactivate', 'disable', 'reboot', 'suspend'].includes(w) || (api && isStrongVerb(w)));
  if (found) return found;
  // RPC style: `service.methodName`, or a bare camelCase method (`sendMessage`).
  const method = segment.split('.').pop() ?? segment;
  if ((/[.]/.test(segment) || /^[a-z]+[A-Z]/.test(method)) && judgeOperation(method, 'method', false)) return segment.slice(0, 40);
  return undefined;
}

/**
 * The action a URL names, if it writes: a writing word in its last path segment (RPC style:
 * `/api/chat.delete`, `/v1/…:batchDelete`, `/users/1/delete`, `/sendMessage`), or an operation in its
 * query (`?action=delete`, `?cmd=rm`). Percent-encoding is decoded first.
 */
export function urlAction(text: string): string | undefined {
  const t = text.trim();
  if (t.length > 8192 || !URL_LIKE.test(t)) return undefined;
  let decoded = t;
  try {
    decoded = decodeURIComponent(t.replace(/\+/g, ' '));
  } catch {
    // not valid percent-encoding: judged as written
  }
  const [beforeQuery = '', query = ''] = decoded.replace(/#.*$/, '').split('?', 2);
  const path = beforeQuery.replace(/^(?:https?:)?\/\/[^/]*|^[\w-]+(?:\.[\w-]+)+(?::\d+)?/i, '');
  const segments = path.split('/').filter(Boolean);
  const last = segments[segments.length - 1];
  const api = /\/(?:api|rpc|v\d+)\//i.test(`${path}/`) || /^(?:https?:)?\/\/api\./i.test(t);
  const word = last === undefined ? undefined : (actsIn(last.split(':').pop() ?? last, api) ?? (last.includes(':') ? actsIn(last, api) : undefined));
  if (word) return `its path says "${word}"`;
  for (const pair of query.split('&').slice(0, 50)) {
    const [key = '', value = ''] = pair.split('=', 2);
    if (OPERATION_FIELDS.test(key) || /^(?:cmd|command|method)$/i.test(key)) {
      const op = judgeOperation(value, 'operation', false);
      if (op) return `its query asks ${key}=${value.slice(0, 30)}`;
    }
  }
  return undefined;
}
