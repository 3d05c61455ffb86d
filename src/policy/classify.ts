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
import type { NameVerdict } from './name.js';
import { judgeOperation } from './operation.js';
import { higher } from './rank.js';
import { judgeTool, type ToolDefinitionLike } from './tool.js';
import { CATEGORY_FIELDS, DESTRUCTIVE, METHOD_FIELDS, OPERATION_FIELDS, VERB_ONLY } from './words.js';

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
  const walk = (value: unknown, key: string, depth: number): void => {
    if (++nodes > MAX_NODES) return;
    if (depth > MAX_DEPTH) {
      deep = true;
      return;
    }
    if (typeof value === 'string') {
      inspectString(key, value, hit, hints, budget);
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
    if (Array.isArray(value)) for (const v of value) walk(v, key, depth + 1);
    else
      for (const [k, v] of Object.entries(value)) {
        // An operation given as an object (`action: { name: "delete" }`): its words are the operation's.
        if (OPERATION_FIELDS.test(key) && typeof v === 'string') inspectString(key, v, hit, hints, budget);
        // Aggregation stages that write (MongoDB `$out`, `$merge`).
        if (k === '$out' || k === '$merge') hit('high', `${k} writes a collection`);
        if (/^x-http-method(-override)?$/i.test(k) && typeof v === 'string' && v.trim().toUpperCase() !== 'GET') hit('high', `${k} is ${v.slice(0, 10)}`);
        walk(v, k, depth + 1);
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
  if (OPERATION_FIELDS.test(key) || CATEGORY_FIELDS.test(key)) {
    const op = judgeOperation(value, OPERATION_FIELDS.test(key) ? 'operation' : 'category', true);
    if (op) hit(op.risk, `${field} ${op.why}`);
  }
  // An HTTP request written out (`DELETE /api/users/1 HTTP/1.1`, `curl -X DELETE …`, `curl -d …`).
  if (value.length <= 100_000) {
    const raw = RAW_REQUEST.exec(value) ?? CURL_METHOD.exec(value);
    const m = raw?.[1]?.toUpperCase();
    if (m) hit(m === 'DELETE' ? 'high' : 'medium', `${field} holds an HTTP ${m} request`);
    else if (CURL_DATA.test(value)) hit('medium', `${field} holds a curl command that sends data (POST)`);
  }
  // A URL whose path names a destructive action (`…/users/1/delete`): many APIs act on a GET there.
  if (/^https?:\/\//i.test(value.trim()) && value.length <= 8192) {
    const path =
      value
        .trim()
        .replace(/^https?:\/\/[^/]*/i, '')
        .split(/[?#]/)[0] ?? '';
    const segment = path
      .split('/')
      .map((x) => x.toLowerCase())
      .find((x) => DESTRUCTIVE.has(x) || VERB_ONLY.has(x));
    if (segment) hit('medium', `${field} is a URL whose path says "${segment}"`);
  }
}

/** A request line at the start of a line: method, then a path or URL. */
const RAW_REQUEST = /(?:^|\n)\s*(DELETE|POST|PUT|PATCH)\s+(?:\/|https?:\/\/)/;
/** curl's explicit method. */
const CURL_METHOD = /\bcurl\b[^\n]*?(?:\s-X\s*|\s--request[\s=]+)['"]?(DELETE|POST|PUT|PATCH)\b/i;
/** curl options that send a body (and so POST). */
const CURL_DATA = /\bcurl\b[^\n]*?\s(?:-d|--data(?:-raw|-binary|-urlencode)?|-F|--form|-T|--upload-file)\b/;

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
