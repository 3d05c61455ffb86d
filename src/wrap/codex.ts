/**
 * Wrapping Codex's `config.toml`: the moved `[mcp_servers.NAME]` tables are removed with
 * @decimalturn/toml-patch (which keeps every other comment, blank line and value as written; comments
 * inside a removed table go with it: they are carried to the server's entry in lookfirst.yaml, and stay
 * in the backup), and the gate's table is appended at the end. The result is parsed again and must equal the intended document, else nothing is written. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import { parse, patch, stringify, TomlDocument } from '@decimalturn/toml-patch';
import { maskUrlsIn } from '../core/mask-url.js';
import { LookfirstError } from '../errors.js';
import { gateEntry } from './clients.js';
import { commentLines } from './comments.js';
import { maskUrl, SECRET_KEYS } from './json.js';
import { maskTomlSecrets } from './mask-secrets.js';
import { planServers } from './plan.js';
import type { WrapInput, WrapResult } from './types.js';

/**
 * Parses a TOML file.
 * @throws LookfirstError WRAP_INVALID naming the file, line and column of the syntax error.
 */
export function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (err) {
    const e = err as { line?: number; column?: number; message?: string };
    const where = e.line === undefined ? '' : ` at line ${e.line}, column ${(e.column ?? 0) + 1}`;
    const why = (e.message ?? String(err)).split('\n').at(-1)?.trim() ?? '';
    throw new LookfirstError(
      'WRAP_INVALID',
      `${file}: not valid TOML${where}${why === '' ? '' : ` (${why})`}. Fix the file (Codex would not read it either); nothing was written.`,
    );
  }
}

/**
 * Text safe inside a one-line `#` comment: a server name (a quoted TOML key may hold `\n`) or a path with a
 * line break or other control character would otherwise end the comment and be read as TOML.
 */
const oneLine = (s: string): string => s.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A TOML key as written in a table header: bare when it can be, else quoted. */
const tomlKey = (k: string): string => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));

/**
 * Rewrites Codex's config.toml: the movable servers leave, `[mcp_servers.<gate>]` runs `lookfirst serve`
 * with `tool_timeout_sec` raised to fit the gate.
 * @throws LookfirstError WRAP_INVALID (unparseable file, or a layout wrap cannot extend, such as an inline
 *   `mcp_servers = { … }`), WRAP_REFUSED (already wrapped, nothing to move, name taken).
 */
export function wrapCodex(input: WrapInput): WrapResult {
  const doc = parseToml(input.text, input.file);
  const servers = doc.mcp_servers;
  const plan = planServers('codex', servers, input.file, 'mcp_servers', input);
  const want = structuredClone(doc) as Record<string, Record<string, unknown>>;
  const table = want.mcp_servers as Record<string, unknown>;
  for (const m of plan.moved) {
    delete table[m.clientName];
    const comments = commentsLeavingWith(input.text, doc, m.clientName).flatMap(commentLines);
    if (comments.length > 0) m.comments = comments;
  }
  // With every server moved, the patch would leave an empty `[mcp_servers]` header above the gate's own
  // table; without the key, it removes the tables and the gate's `[mcp_servers.NAME]` alone defines it.
  const target: Record<string, unknown> = { ...want };
  if (Object.keys(table).length === 0) delete target.mcp_servers;
  let text = patch(input.text, target);
  const entry = gateEntry('codex', input.launcher, input.gateConfig, plan.timeout, plan.startupSec);
  table[input.gateServer] = entry;
  const eol = input.text.includes('\r\n') ? '\r\n' : '\n';
  const body = stringify(entry).replace(/\r?\n/g, eol).trimEnd();
  const head = `# lookfirst wrap: ${plan.moved.map((m) => oneLine(m.clientName)).join(', ')} now run${plan.moved.length === 1 ? 's' : ''} behind this gate (upstreams in ${oneLine(input.gateConfig)})`;
  text = `${text.replace(/\s*$/, '')}${eol}${eol}${head}${eol}[mcp_servers.${tomlKey(input.gateServer)}]${eol}${body}${eol}`;
  let after: unknown;
  try {
    after = parse(text);
  } catch {
    after = undefined;
  }
  // Compared as plain JSON: the parser's tables have no prototype, the clone's do; dates become strings on both sides.
  const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
  if (!isDeepStrictEqual(plain(after), plain(want)))
    throw new LookfirstError(
      'WRAP_INVALID',
      `${input.file}: wrap cannot add the gate's [mcp_servers.${input.gateServer}] table to this file's layout (an inline or dotted mcp_servers?); nothing was written. Write [mcp_servers.NAME] tables, one per server, and run wrap again.`,
    );
  return { text, moved: plan.moved, kept: plan.kept, gateServer: input.gateServer, timeout: plan.timeout };
}

/** The parts of toml-patch's syntax tree read here (TomlDocument.cst; the version is pinned exactly). */
interface TomlNode {
  type?: unknown;
  raw?: unknown;
  items?: unknown;
}

/** Every comment of a TOML text as written (`# …`), in order; [] when the text does not parse. */
function commentsIn(text: string): string[] {
  let cst: unknown;
  try {
    cst = new TomlDocument(text).cst;
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (nodes: unknown): void => {
    if (!Array.isArray(nodes)) return;
    for (const n of nodes as TomlNode[]) {
      if (n?.type === 'Comment' && typeof n.raw === 'string') out.push(n.raw);
      walk(n?.items);
    }
  };
  walk(cst);
  return out;
}

/**
 * The comments that leave the file when server `name` alone is removed: the file's comments before,
 * less those after (as a multiset, so a comment written twice is counted twice). Whatever rule
 * toml-patch follows for which comments a table owns (those above its header, among its keys), this is
 * exactly what the user would lose from the client's file, so it is what lookfirst.yaml carries.
 */
function commentsLeavingWith(text: string, doc: Record<string, unknown>, name: string): string[] {
  const without = structuredClone(doc) as Record<string, Record<string, unknown>>;
  delete (without.mcp_servers as Record<string, unknown>)[name];
  let after: string;
  try {
    after = patch(text, without);
  } catch {
    return [];
  }
  const left = new Map<string, number>();
  for (const c of commentsIn(after)) left.set(c, (left.get(c) ?? 0) + 1);
  return commentsIn(text).filter((c) => {
    const n = left.get(c) ?? 0;
    if (n === 0) return true;
    left.set(c, n - 1);
    return false;
  });
}

/** The same file with every env and header value of every server replaced by `***`, addresses (url, and in args) masked by maskUrl (for `--dry-run`). */
export function maskCodex(text: string, file: string): string {
  const doc = parseToml(text, file);
  const servers = doc.mcp_servers;
  if (typeof servers !== 'object' || servers === null) return text;
  for (const entry of Object.values(servers)) {
    if (typeof entry !== 'object' || entry === null) continue;
    for (const sk of SECRET_KEYS) {
      const block = (entry as Record<string, unknown>)[sk];
      if (typeof block !== 'object' || block === null) continue;
      for (const k of Object.keys(block)) (block as Record<string, unknown>)[k] = '***';
    }
    const e = entry as Record<string, unknown>;
    if (typeof e.url === 'string') e.url = maskUrl(e.url);
    if (Array.isArray(e.args)) e.args = e.args.map((a: unknown) => (typeof a === 'string' ? maskUrlsIn(a) : a));
  }
  // Secrets beside the servers (a diff's context lines show them): credential-named keys, addresses.
  maskTomlSecrets(doc);
  return patch(text, doc);
}
