/**
 * The classifier: is a tool call read-only or a mutation, how risky, and why. Pure.
 *
 * - The tool's definition (policy/tool.ts): its name's grammar, its description's first verb, its schemas;
 *   deny wins; read-only only when clearly so; unknown means mutation.
 * - Arguments only make a verdict stricter: an HTTP method field, an operation field naming a mutation,
 *   and code (SQL, GraphQL, Cypher, shell), which is read-only only when a real parser proves it
 *   (policy/code/index.ts).
 * - Annotations are the upstream's untrusted hints, applied asymmetrically: whatever says "more dangerous"
 *   is believed (`destructiveHint: true` → high; `readOnlyHint: false` → mutation); `readOnlyHint: true`
 *   lowers a verdict only when neither the name, the description, the schemas nor the arguments say write
 *   (bookkeeping verbs such as `select_page`, unknown and noun-or-verb words do not count as saying it).
 */
import type { Classification, Risk, ToolAnnotations } from '../types.js';
import { type CodeBudget, judgeValue, nameHint, newCodeBudget, type ToolCodeHints } from './code/index.js';
import { urlAction, writtenRequest } from './http-text.js';
import { type NameVerdict, splitName } from './name.js';
import { judgeOperation } from './operation.js';
import { higher } from './rank.js';
import { judgeTool, type ToolDefinitionLike } from './tool.js';
import { CATEGORY_FIELDS, DESTRUCTIVE, GENERIC_OPERATION_FIELDS, METHOD_FIELDS, OPERATION_FIELDS, OUTBOUND } from './words.js';

export { classifyName, namespacePrefixes, splitName } from './name.js';
export { judgeTool } from './tool.js';
export type { Classification, NameVerdict, ToolCodeHints, ToolDefinitionLike };

/** Most values the argument scan visits, and how deep: beyond either, the call counts as a mutation. */
const MAX_NODES = 10_000;
const MAX_DEPTH = 32;

/** A stricter verdict the arguments force, if any. */
export function classifyArgs(args: unknown, hints?: ToolCodeHints): { risk: Risk; reasons: string[] } | undefined {
  let risk: Risk | undefined;
  const reasons: string[] = [];
  const hit = (r: Risk, why: string) => {
    risk = risk ? higher(risk, r) : r;
    if (reasons.length < 8 && !reasons.includes(why)) reasons.push(why);
  };
  let nodes = 0;
  let deep = false;
  const budget: CodeBudget = newCodeBudget();
  // Below an operation field (`action: { type: { value: "delete" } }`), every text is part of the operation.
  const walk = (value: unknown, rawKey: string, depth: number, inOperation = false): void => {
    if (++nodes > MAX_NODES) return;
    if (depth > MAX_DEPTH) {
      deep = true;
      return;
    }
    const key = plainKey(rawKey);
    // A switch given as a boolean, or as "true"/"false"/1/0.
    const flag = typeof value === 'boolean' ? value : value === 1 || value === 'true' ? true : value === 0 || value === 'false' ? false : undefined;
    if (flag !== undefined) {
      const sw = judgeSwitch(key, flag);
      if (sw) hit(sw.risk, sw.why);
      if (typeof value !== 'string') return;
    }
    if (typeof value === 'string') {
      inspectString(key, value, hit, hints, budget);
      if (inOperation && !OPERATION_FIELDS.test(key)) {
        const op = judgeOperation(value, 'generic', false);
        if (op) hit(op.risk, `an operation field's ${key} ${op.why}`);
      }
      // JSON carried in a string (`options: '{"method":"DELETE"}'`) is read like the arguments around it.
      const t = value.trim();
      if ((t.startsWith('{') || t.startsWith('[')) && t.length <= 100_000) {
        try {
          walk(JSON.parse(t), key, depth + 1);
        } catch {
          // not JSON: already inspected as text
        }
      }
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      // A header or option given as a pair (`[["X-HTTP-Method-Override", "DELETE"]]`).
      if (value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') walk(value[1], value[0], depth + 1, inOperation);
      for (const v of value) walk(v, key, depth + 1, inOperation);
    } else
      for (const [k, v] of Object.entries(value)) {
        // An operation given as an object (`action: { name: "delete" }`): its words are the operation's.
        if (OPERATION_FIELDS.test(key) && typeof v === 'string') inspectString(key, v, hit, hints, budget);
        // Aggregation stages that write (MongoDB `$out`, `$merge`).
        if (k === '$out' || k === '$merge') hit('high', `${k} writes a collection`);
        walk(v, k, depth + 1, inOperation || OPERATION_FIELDS.test(key));
      }
  };
  walk(args, '', 0);
  if (nodes > MAX_NODES) hit('medium', `arguments too large to inspect fully (over ${MAX_NODES} values)`);
  if (deep) hit('medium', `arguments nested deeper than ${MAX_DEPTH} levels are not inspected`);
  return risk ? { risk, reasons } : undefined;
}

/** HTTP methods that change state (RFC 9110, WebDAV RFC 4918/3253/3744/5842, CalDAV RFC 4791), DELETE aside. */
const HTTP_WRITE_METHODS = new Set(
  'POST PUT PATCH MKCOL COPY MOVE LOCK UNLOCK PROPPATCH MKCALENDAR MKREDIRECTREF UPDATEREDIRECTREF ACL BIND UNBIND REBIND LINK UNLINK PURGE MERGE UPDATE CHECKIN CHECKOUT UNCHECKOUT VERSION-CONTROL LABEL MKWORKSPACE MKACTIVITY BASELINE-CONTROL ORDERPATCH'.split(
    ' ',
  ),
);

function inspectString(key: string, value: string, hit: (r: Risk, why: string) => void, hints: ToolCodeHints | undefined, budget: CodeBudget): void {
  const field = key || 'argument';
  if (/^x-http-method(-override)?$/i.test(key) && value.trim().toUpperCase() !== 'GET') hit('high', `${key} is ${value.slice(0, 10)}`);
  if (METHOD_FIELDS.test(key) && value.length <= 200) {
    const m = value.trim().toUpperCase();
    if (m === 'DELETE') hit('high', `${field} is HTTP DELETE`);
    else if (HTTP_WRITE_METHODS.has(m)) hit('medium', `${field} is HTTP ${m}`);
    else {
      // An RPC method name (`eth_sendRawTransaction`) is judged by its words.
      const op = judgeOperation(value, 'method', false);
      if (op) hit(op.risk, `${field} ${op.why}`);
    }
  }
  // `?_method=DELETE` (Rails, Laravel and others), in any URL-like text, percent-encoded or not.
  const override = /[?&]_method=([^&#\s]{1,40})/i.exec(value)?.[1];
  if (override !== undefined) {
    let m = override;
    try {
      m = decodeURIComponent(override);
    } catch {
      // not valid percent-encoding: judged as written
    }
    m = m.trim().toUpperCase();
    if (m === 'DELETE') hit('high', `${field} overrides the HTTP method (_method=DELETE)`);
    else if (HTTP_WRITE_METHODS.has(m)) hit('high', `${field} overrides the HTTP method (_method=${m.slice(0, 20)})`);
  }
  // Code (SQL, GraphQL, Cypher, shell) is read-only only when a real parser proves it (policy/code).
  const code = judgeValue(value, hints?.properties.get(key) ?? nameHint(key, hints?.tool), budget);
  if (code) hit(code.risk, `${field} holds code: ${code.why}`);
  if (OPERATION_FIELDS.test(key) || CATEGORY_FIELDS.test(key) || GENERIC_OPERATION_FIELDS.test(key)) {
    const op = judgeOperation(value, OPERATION_FIELDS.test(key) ? 'operation' : CATEGORY_FIELDS.test(key) ? 'category' : 'generic', true);
    if (op) hit(op.risk, `${field} ${op.why}`);
  }
  // An operation written as text (`"action=delete"`, `"op: purge"`).
  // Not in a search or a query: there `action:delete` and `{method="POST"}` are filters on what is read.
  const searched = /query|^q$|search|filter|expr|where|selector|match/i.test(key);
  const pair = searched ? null : /\b(action|op|operation|cmd|do|mode|method)\s*[:=]\s*["']?([\w.-]{1,40})/i.exec(value.slice(0, 10_000));
  const written = pair?.[2];
  if (pair?.[1]?.toLowerCase() === 'method' && written && HTTP_WRITE_METHODS.has(written.toUpperCase()))
    hit(written.toUpperCase() === 'DELETE' ? 'high' : 'medium', `${field} asks for HTTP ${written.toUpperCase()}`);
  else if (written) {
    const op = judgeOperation(written, 'category', false);
    if (op) hit(op.risk, `${field} asks ${op.why.replace(/^is /, '')}`);
  }
  // An HTTP request written out (`DELETE /api/users/1 HTTP/1.1`, `curl -X DELETE …`, `curl -d …`).
  const request = writtenRequest(value);
  if (request) hit(request.method === 'DELETE' ? 'high' : 'medium', `${field} holds an HTTP ${request.method} request (${request.how})`);
  // A URL that names a writing action (`…/users/1/delete`, `…/api/chat.delete`): many APIs act on a GET.
  // A path given without its host (`path: "/api/users/1/delete"`) is read as a URL.
  // Only an API path: a file's path (`/tmp/data/new.txt`) is not a request.
  const apiPath =
    PATH_FIELDS.test(key) && value.startsWith('/') && (/^(?:endpoint|route|api_?path)$/i.test(key) || /(?:^|\/)(?:api|rpc|v\d+)(?:\/|$)/i.test(value));
  const action = urlAction(apiPath ? `https://host${value}` : value);
  if (action) hit('medium', `${field} is a URL: ${action}`);
}

/** Fields that carry a path of an API (`path`, `endpoint`, `route`). */
const PATH_FIELDS = /^(?:path|endpoint|route|url|uri|href|resource|api_?path)$/i;

/** Switches that turn a call into a write when set (`delete: true`, `auto_delete: true`, `send: true`). */
const WRITE_SWITCHES = new Set(
  'delete remove purge drop destroy erase wipe overwrite send notify email publish pay charge refund transfer execute run apply commit confirm consume ack acknowledge archive mark save write update create replace move unsubscribe approve submit post reply forward cancel kill terminate reset clear flush cleanup clean'.split(
    ' ',
  ),
);

/** Switches that keep a call from writing; set to false, the call writes (`dry_run: false`). */
const SAFETY_SWITCHES =
  /^(?:(?:is|use|enable|should)_?)?(?:dry_?run|preview|read_?only|simulate|validate_?only|check_?only|test_?mode|no_?op|safe_?mode|what_?if|sandbox|keep|peek)$/i;

/** Judges a boolean argument by its field's name. */
function judgeSwitch(rawKey: string, value: boolean): { risk: Risk; why: string } | undefined {
  const key = rawKey.replace(/-/g, '_');
  if (!value) return SAFETY_SWITCHES.test(key) ? { risk: 'medium', why: `${key} is false: the call is not a dry run` } : undefined;
  const w = splitName(key).find((x) => WRITE_SWITCHES.has(x));
  if (!w) return undefined;
  return { risk: DESTRUCTIVE.has(w) || OUTBOUND.has(w) ? 'high' : 'medium', why: `${key} is true: the call may ${w}` };
}

/**
 * An argument's field name as the checks read it: NFKC, trimmed, without invisible characters or
 * wrapping `_`, `$`, `[]`, and letters that look Latin in other scripts (Cyrillic `а`, Greek `ο`) read
 * as the Latin ones, so `"аction "` and `"_action[]"` are `action`.
 */
function plainKey(key: string): string {
  // Invisible characters, a trailing `[]` and wrapping `_`/`$` (`action[]`, `_action`, `$action`) aside.
  const k = key
    .normalize('NFKC')
    .replace(/[\u200b-\u200f\u2060\ufeff\u00ad]/g, '')
    .trim()
    .replace(/\[\]$/, '')
    .replace(/^[_$]+|[_$]+$/g, '');
  return /[^\x00-\x7f]/.test(k) ? k.replace(/[\u0370-\u03ff\u0400-\u04ff]/g, (c) => LOOK_ALIKES[c] ?? c) : k;
}

/** Cyrillic and Greek letters that look like Latin ones (Unicode TR 39 confusables, the common ones). */
const LOOK_ALIKES: Record<string, string> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  х: 'x',
  у: 'y',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  к: 'k',
  м: 'm',
  н: 'h',
  т: 't',
  в: 'b',
  А: 'A',
  Е: 'E',
  О: 'O',
  Р: 'P',
  С: 'C',
  Х: 'X',
  У: 'Y',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  К: 'K',
  М: 'M',
  Н: 'H',
  Т: 'T',
  В: 'B',
  α: 'a',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  ι: 'i',
  κ: 'k',
  τ: 't',
  υ: 'u',
  χ: 'x',
  Α: 'A',
  Ε: 'E',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Χ: 'X',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
};

/**
 * Classifies one call: the tool's definition, then arguments, then annotations as described above. A
 * caller that classifies many calls of one tool computes `judgeTool` once and calls `combine`.
 * @param name the upstream's name of the tool (without the gate's `<upstream>__` prefix).
 * @param prefixes namespace prefixes of the tool's upstream (namespacePrefixes).
 * @param hints which of the tool's fields hold code, from its definition (code/fields.ts toolCodeHints).
 * @param definition the rest of the tool's definition (description, schemas), when known.
 */
export function classifyCall(
  name: string,
  args: unknown,
  annotations: ToolAnnotations | undefined,
  prefixes: ReadonlySet<string> = new Set(),
  hints?: ToolCodeHints,
  definition?: Omit<ToolDefinitionLike, 'name'>,
): Classification {
  return combine(judgeTool({ ...definition, name }, prefixes), args === undefined ? undefined : classifyArgs(args, hints), annotations);
}

/** Applies argument findings and annotations to a tool's verdict (split out so that verdict can be cached). */
export function combine(n: NameVerdict, a: ReturnType<typeof classifyArgs>, annotations: ToolAnnotations | undefined): Classification {
  let kind = n.kind;
  let risk = n.risk;
  const reasons = [...n.reasons];
  if (a) {
    // The name's own "read" reason would read as a contradiction beside the arguments' finding.
    if (kind === 'read-only') reasons.splice(0, reasons.length, ...n.reasons.map((r) => `the name alone would read (${r})`));
    kind = 'mutation';
    risk = higher(risk, a.risk);
    reasons.unshift(...a.reasons);
  }
  if (annotations?.destructiveHint === true) {
    kind = 'mutation';
    risk = 'high';
    reasons.unshift('annotations: destructiveHint');
  } else if (annotations?.readOnlyHint === false) {
    if (kind === 'read-only') risk = 'medium';
    kind = 'mutation';
    reasons.push('annotations: readOnlyHint false');
  } else if (annotations?.readOnlyHint === true) {
    if (kind === 'mutation' && n.benign && !a)
      return {
        kind: 'read-only',
        risk: 'low',
        reasons: [
          'annotations: readOnlyHint, and nothing in the name, description, schemas or arguments says write',
          ...n.reasons.filter((r) => !/counts as a change/.test(r)),
        ],
      };
    if (kind === 'mutation') reasons.push('annotations: readOnlyHint, not believed');
  }
  return { kind, risk, reasons };
}
