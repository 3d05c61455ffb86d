/**
 * What one server entry of a client's file becomes: moved behind the gate (stdio command, or a Streamable
 * HTTP url), or kept where it is with the reason. Fail closed: an entry with a key lookfirst.yaml has no
 * equivalent for (VS Code's `envFile`, Gemini's `includeTools`, …), or a value the client would have
 * filled in (`${VAR}`, `${input:…}`, `${env:…}`), stays with the client, since moving it would change
 * what runs. Pure: no I/O.
 */
import { isAbsolute } from 'node:path';
import { LookfirstError } from '../errors.js';
import type { ClientKind, UpstreamEntry } from './types.js';

/** Keys each client may have on a stdio entry that lookfirst.yaml holds (or that wrap may drop safely). */
const STDIO_KEYS: Record<ClientKind, readonly string[]> = {
  'claude-desktop': ['command', 'args', 'env'],
  'claude-code': ['type', 'command', 'args', 'env'],
  cursor: ['type', 'command', 'args', 'env'],
  vscode: ['type', 'command', 'args', 'env'],
  // timeout: the gate's entry gets its own; trust and description only concern the client's prompts.
  gemini: ['command', 'args', 'env', 'cwd', 'timeout', 'trust', 'description'],
  // Codex's timeouts move to the gate's entry (raised to fit), `enabled` is checked before this.
  codex: ['command', 'args', 'env', 'cwd', 'startup_timeout_sec', 'tool_timeout_sec', 'enabled'],
};

/** Keys each client may have on a Streamable HTTP entry that lookfirst.yaml's `url` upstream holds. */
const HTTP_KEYS: Record<ClientKind, readonly string[]> = {
  'claude-desktop': [],
  'claude-code': ['type', 'url', 'headers'],
  cursor: ['type', 'url', 'headers'],
  vscode: ['type', 'url', 'headers'],
  gemini: ['httpUrl', 'headers', 'timeout', 'trust', 'description'],
  codex: ['url', 'http_headers', 'startup_timeout_sec', 'tool_timeout_sec', 'enabled'],
};

/** A server entry's fate: moved (with its lookfirst.yaml entry) or kept (with a reason). */
export type ServerFate = { kind: 'move'; entry: UpstreamEntry } | { kind: 'keep'; reason: string };

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): v is Record<string, string> => isMapping(v) && Object.values(v).every((x) => typeof x === 'string');
/** lookfirst.yaml's loader drops a `__proto__` key (as it must), so an entry holding one would lose it when moved. */
const PROTO_REASON = 'its env or headers hold a key named "__proto__", which lookfirst.yaml cannot carry';
const hasVariable = (s: string): boolean => /\$\{[^}]*\}/.test(s);
/** Why an entry with a client-side variable stays: the gate would pass the variable's text on unexpanded. */
const VARIABLE_REASON = 'it uses a variable the client fills in ($' + '{…}); the gate would receive it as written';

/**
 * True when the entry already runs the gate: `lookfirst serve`, `npx lookfirst serve`, or
 * `node …/lookfirst/dist/cli/main.js serve`. Wrapping it again would put a gate in front of a gate.
 */
export function isGateEntry(entry: unknown): boolean {
  if (!isMapping(entry) || typeof entry.command !== 'string') return false;
  const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
  const words = [entry.command, ...args];
  const names = words.some(
    (w) => /(^|[/\\])lookfirst(\.cmd|\.exe|\.ps1)?$/i.test(w) || /^lookfirst@/i.test(w) || /lookfirst[/\\]dist[/\\]cli[/\\]main\.js$/i.test(w),
  );
  return names && args.includes('serve');
}

/**
 * Decides what happens to one server entry of a client's file.
 * @param entry the parsed entry (any JSON or TOML value).
 * @throws LookfirstError WRAP_REFUSED when the entry already runs `lookfirst serve`.
 */
export function fateOf(client: ClientKind, name: string, entry: unknown, file: string): ServerFate {
  if (!isMapping(entry)) return { kind: 'keep', reason: 'its entry is not an object' };
  if (isGateEntry(entry))
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: server "${name}" already runs the gate (lookfirst serve): this file is wrapped already. Run \`lookfirst unwrap ${client}\` first, or add the server to lookfirst.yaml's upstreams by hand.`,
    );
  if (entry.enabled === false) return { kind: 'keep', reason: 'it is disabled (enabled = false)' };
  const type = entry.type;
  const url = client === 'gemini' ? entry.httpUrl : entry.url;
  if (typeof entry.command === 'string') {
    if (type !== undefined && type !== 'stdio') return { kind: 'keep', reason: `it has both command and type "${String(type)}"` };
    return stdioFate(client, entry);
  }
  if (client === 'gemini' && typeof entry.url === 'string')
    return { kind: 'keep', reason: 'it speaks SSE (Gemini `url`); the gate reaches HTTP upstreams over Streamable HTTP only' };
  if (type === 'sse') return { kind: 'keep', reason: 'it speaks SSE (type "sse"); the gate reaches HTTP upstreams over Streamable HTTP only' };
  if (typeof url === 'string') return httpFate(client, entry, url);
  return { kind: 'keep', reason: 'it has neither a command nor a url wrap understands' };
}

function unknownKey(entry: Record<string, unknown>, known: readonly string[]): string | undefined {
  return Object.keys(entry).find((k) => !known.includes(k));
}

function stdioFate(client: ClientKind, e: Record<string, unknown>): ServerFate {
  const extra = unknownKey(e, STDIO_KEYS[client]);
  if (extra !== undefined) return { kind: 'keep', reason: `its key "${extra}" has no equivalent in lookfirst.yaml` };
  const command = e.command as string;
  const args = e.args ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) return { kind: 'keep', reason: 'its args are not a list of strings' };
  const env = e.env ?? {};
  if (!isStringMap(env)) return { kind: 'keep', reason: 'its env has a value that is not a string' };
  if (Object.hasOwn(env, '__proto__')) return { kind: 'keep', reason: PROTO_REASON };
  const cwd = e.cwd;
  if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd)))
    return { kind: 'keep', reason: 'its cwd is not an absolute path (the gate would read it relative to lookfirst.yaml)' };
  const strings = [command, ...args, ...Object.values(env), ...(cwd === undefined ? [] : [cwd])];
  if (strings.some(hasVariable)) return { kind: 'keep', reason: VARIABLE_REASON };
  if (command.trim() === '') return { kind: 'keep', reason: 'its command is empty' };
  const entry: UpstreamEntry = { command, args: [...args] };
  if (Object.keys(env).length > 0) entry.env = { ...env };
  if (cwd !== undefined) entry.cwd = cwd;
  return { kind: 'move', entry };
}

function httpFate(client: ClientKind, e: Record<string, unknown>, url: string): ServerFate {
  const extra = unknownKey(e, HTTP_KEYS[client]);
  if (extra !== undefined) return { kind: 'keep', reason: `its key "${extra}" has no equivalent in lookfirst.yaml` };
  if (!/^https?:\/\/./i.test(url)) return { kind: 'keep', reason: 'its url is not an http:// or https:// address' };
  const headers = (client === 'codex' ? e.http_headers : e.headers) ?? {};
  if (!isStringMap(headers)) return { kind: 'keep', reason: 'its headers have a value that is not a string' };
  if (Object.hasOwn(headers, '__proto__')) return { kind: 'keep', reason: PROTO_REASON };
  if ([url, ...Object.values(headers)].some(hasVariable)) return { kind: 'keep', reason: VARIABLE_REASON };
  return { kind: 'move', entry: Object.keys(headers).length > 0 ? { url, headers: { ...headers } } : { url } };
}

/**
 * The `upstreams` name for a client's server name: lowercase letters and digits with single `-` between
 * them (lookfirst.yaml's rule), made unique against `taken` with a `-2`, `-3`… suffix.
 */
export function upstreamNameFor(clientName: string, taken: ReadonlySet<string>): string {
  const base =
    clientName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'server';
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
  return name;
}

const sameMap = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean => {
  const x = Object.entries(a ?? {}).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0));
  const y = Object.entries(b ?? {}).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0));
  return JSON.stringify(x) === JSON.stringify(y);
};

/**
 * True when two upstream entries start the same server: same command, args (in order), env and working
 * folder, or same url and headers. A missing `cwd` means `defaultCwd` (lookfirst.yaml's folder, where
 * the gate starts such a server); env and headers compare as sets of pairs, an absent one as empty.
 * Keys only the gate reads (`timeout_seconds`, …) are not compared: they do not change what runs.
 */
export function sameUpstream(a: UpstreamEntry, b: UpstreamEntry, defaultCwd: string): boolean {
  if ('url' in a || 'url' in b) return 'url' in a && 'url' in b && a.url === b.url && sameMap(a.headers, b.headers);
  return (
    a.command === b.command && JSON.stringify(a.args) === JSON.stringify(b.args) && sameMap(a.env, b.env) && (a.cwd ?? defaultCwd) === (b.cwd ?? defaultCwd)
  );
}
