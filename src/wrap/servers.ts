/**
 * What one server entry of a client's file becomes: moved behind the gate (stdio command, or a Streamable
 * HTTP url), or kept where it is with the reason. Fail closed: an entry with a key lookfirst.yaml has no
 * equivalent for (VS Code's `envFile`, Gemini's `includeTools`, …), or a value the client would have
 * filled in (`${VAR}`, `${input:…}`, `${env:…}`), stays with the client, since moving it would change
 * what runs. Pure: no I/O.
 */
import { posix, win32 } from 'node:path';
import { LookfirstError } from '../errors.js';
import type { ClientKind, Launcher, StartFolder, UpstreamEntry } from './types.js';

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

/** What fateOf needs besides the entry, all from the wrap's input (types.ts WrapInput); each optional. */
export interface FateContext {
  /** Where the client starts a server with no `cwd`; absent: `user`. */
  start?: StartFolder;
  /** The gate's entry name in the client's file: an entry of that name that runs `serve --config` is the gate. */
  gateServer?: string;
  /** How wrap would start the gate: an entry running exactly that, then `serve`, is the gate. */
  launcher?: Launcher;
  /** How a person runs this CLI here, for the hint of a refusal; absent: `lookfirst`. */
  cli?: string;
}

const LOOKFIRST_WORD = /(^|[/\\])lookfirst(\.cmd|\.exe|\.ps1)?$|^lookfirst@/i;
/** Any build of lookfirst's CLI, wherever the clone or install sits (`/tmp/x/dist/cli/main.js`). */
const ANY_MAIN = /(^|[/\\])dist[/\\]cli[/\\]main\.js$/i;
const LOOKFIRST_MAIN = /lookfirst[/\\]dist[/\\]cli[/\\]main\.js$/i;
const hasConfigFlag = (args: readonly string[]): boolean => args.some((a) => a === '--config' || a.startsWith('--config='));

/**
 * True when the entry already runs the gate, in any form wrap or a person writes: the very launcher this
 * wrap would write followed by `serve`; `lookfirst serve` (any path, `.cmd`/`.exe`), `npx … lookfirst@x
 * serve`; `node …/lookfirst/dist/cli/main.js serve`; any `…/dist/cli/main.js serve --config F` (a clone
 * in a folder of another name); or an entry named `gateServer` whose args hold `serve` and `--config`.
 * Wrapping it again would put a gate in front of a gate. It errs towards yes: a false yes refuses the
 * wrap with a message, a false no would hide the gate's own log behind a second one.
 */
export function isGateEntry(entry: unknown, name?: string, ctx: Pick<FateContext, 'gateServer' | 'launcher'> = {}): boolean {
  if (!isMapping(entry) || typeof entry.command !== 'string') return false;
  const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
  const serve = args.includes('serve');
  if (!serve) return false;
  const l = ctx.launcher;
  if (l !== undefined && entry.command === l.command && l.args.every((a, i) => args[i] === a) && args[l.args.length] === 'serve') return true;
  const words = [entry.command, ...args];
  if (words.some((w) => LOOKFIRST_WORD.test(w) || LOOKFIRST_MAIN.test(w))) return true;
  if (hasConfigFlag(args) && words.some((w) => ANY_MAIN.test(w))) return true;
  return name !== undefined && name === ctx.gateServer && hasConfigFlag(args);
}

/**
 * Decides what happens to one server entry of a client's file.
 * @param entry the parsed entry (any JSON or TOML value).
 * @param ctx where the client starts servers, the gate's name and launcher (see FateContext).
 * @throws LookfirstError WRAP_REFUSED when the entry already runs `lookfirst serve` (isGateEntry).
 */
export function fateOf(client: ClientKind, name: string, entry: unknown, file: string, ctx: FateContext = {}): ServerFate {
  if (!isMapping(entry)) return { kind: 'keep', reason: 'its entry is not an object' };
  if (isGateEntry(entry, name, ctx))
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: server "${name}" already runs the gate (lookfirst serve): this file is wrapped already. Run \`${ctx.cli ?? 'lookfirst'} unwrap ${client} --config-file ${file}\` first, or add the server to lookfirst.yaml's upstreams by hand.`,
    );
  if (entry.enabled === false) return { kind: 'keep', reason: 'it is disabled (enabled = false)' };
  const type = entry.type;
  const url = client === 'gemini' ? entry.httpUrl : entry.url;
  if (typeof entry.command === 'string') {
    if (type !== undefined && type !== 'stdio') return { kind: 'keep', reason: `it has both command and type "${String(type)}"` };
    return stdioFate(client, entry, ctx.start ?? { scope: 'user' });
  }
  if (client === 'gemini' && typeof entry.url === 'string')
    return { kind: 'keep', reason: 'it speaks SSE (Gemini `url`); the gate reaches HTTP upstreams over Streamable HTTP only' };
  if (type === 'sse') return { kind: 'keep', reason: 'it speaks SSE (type "sse"); the gate reaches HTTP upstreams over Streamable HTTP only' };
  if (typeof url === 'string') return httpFate(client, entry, url);
  return { kind: 'keep', reason: 'it has neither a command nor a url wrap understands' };
}

const absolute = (s: string): boolean => posix.isAbsolute(s) || win32.isAbsolute(s);
/** `.`, `..`, `./x`, `../x` (`\` too), also after `=` (`--root=./data`). */
const RELATIVE_ARG = /(^|=)\.{1,2}([/\\]|$)/;
/** A script named without an absolute folder (`server.js`, `src/tools.py`): an interpreter reads it from the start folder. */
const RELATIVE_SCRIPT = /^(?![/\\]|[A-Za-z]:)[^:@=]*\.(c?m?js|ts|py|sh|rb|jar|php|pl|ps1|bat|cmd)$/i;

/**
 * The first word of a stdio entry that names a path relative to the folder the server starts in: a
 * command with a folder in it that is not absolute (`bin/server`, `./server`), or an argument such as
 * `./data`, `../x`, `--root=./data`, or a script file (`server.js`, `src/tools.py`). Other bare words
 * (`data`) cannot be told from names, and are not found.
 */
export function relativePathIn(command: string, args: readonly string[]): string | undefined {
  if ((command.includes('/') || command.includes('\\')) && !absolute(command)) return command;
  return args.find((a) => RELATIVE_ARG.test(a) || RELATIVE_SCRIPT.test(a));
}

function unknownKey(entry: Record<string, unknown>, known: readonly string[]): string | undefined {
  return Object.keys(entry).find((k) => !known.includes(k));
}

function stdioFate(client: ClientKind, e: Record<string, unknown>, start: StartFolder): ServerFate {
  const extra = unknownKey(e, STDIO_KEYS[client]);
  if (extra !== undefined) return { kind: 'keep', reason: `its key "${extra}" has no equivalent in lookfirst.yaml` };
  const command = e.command as string;
  const args = e.args ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) return { kind: 'keep', reason: 'its args are not a list of strings' };
  const env = e.env ?? {};
  if (!isStringMap(env)) return { kind: 'keep', reason: 'its env has a value that is not a string' };
  if (Object.hasOwn(env, '__proto__')) return { kind: 'keep', reason: PROTO_REASON };
  const given = e.cwd;
  if (given !== undefined && typeof given !== 'string') return { kind: 'keep', reason: 'its cwd is not a string' };
  const strings = [command, ...args, ...Object.values(env), ...(given === undefined ? [] : [given])];
  if (strings.some(hasVariable)) return { kind: 'keep', reason: VARIABLE_REASON };
  if (command.trim() === '') return { kind: 'keep', reason: 'its command is empty' };
  // The gate starts a server with no cwd in lookfirst.yaml's folder, which is not where the client started
  // it: the cwd becomes that folder (the project root), or, in a user file, a relative path keeps it here.
  let cwd: string | undefined;
  if (given !== undefined && absolute(given)) cwd = given;
  else if (start.scope === 'project')
    cwd = given === undefined ? start.dir : (win32.isAbsolute(start.dir) && !posix.isAbsolute(start.dir) ? win32 : posix).join(start.dir, given);
  else if (given !== undefined)
    return {
      kind: 'keep',
      reason: `its cwd "${given}" is relative, and this user file's client starts servers in no set folder: make it absolute, then run wrap again`,
    };
  else {
    const rel = relativePathIn(command, args);
    if (rel !== undefined)
      return {
        kind: 'keep',
        reason: `"${rel}" is a relative path, and this user file's client starts servers in no set folder, so the gate could not start it where the client does: add an absolute cwd (or make the path absolute), then run wrap again`,
      };
  }
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
