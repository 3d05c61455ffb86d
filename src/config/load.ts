/**
 * Reads lookfirst.yaml: YAML → schema → resolved paths. Every problem is reported at once with its key path
 * and line, so a bad file gets one clear error instead of a half-started gate.
 * Over 400 lines: the resolved Config type, its conversion and the problem wording (key path and line)
 * belong together; split, a new key would need edits in three files.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../errors.js';
import type { StoreConfig } from '../store/store.js';
import { configSchema, type RawConfig } from './schema.js';

/** Tool-name patterns of untrusted sources (`taint.untrusted`) when the config names none. */
export const DEFAULT_UNTRUSTED = [
  '*fetch*',
  '*scrape*',
  '*crawl*',
  '*browse*',
  '*browser*',
  '*search*',
  '*web*',
  '*url*',
  '*http*',
  '*inbox*',
  '*mail*',
  '*message*',
  '*rss*',
  '*feed*',
  '*news*',
  '*page*',
];

/** A stdio upstream, with `cwd` resolved against the config file's folder. */
export interface StdioUpstreamConfig {
  kind: 'stdio';
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  /** Outside your organisation: placeholders resolve toward it only with a person's yes, by default. */
  external?: boolean;
  /** Where real values behind placeholders may go (privacy.resolve; default ask if external, else always). */
  resolve?: ResolveMode;
}

/** A Streamable HTTP upstream. */
export interface HttpUpstreamConfig {
  kind: 'http';
  name: string;
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  external?: boolean;
  resolve?: ResolveMode;
}

/**
 * Whether the gate puts real values back for placeholders in a call to an upstream: `always`; `ask` (a
 * person sees which kinds of value go, and to whom, and decides); `never` (the placeholder text goes).
 */
export type ResolveMode = 'always' | 'ask' | 'never';

/** `privacy`, with milliseconds. */
export interface PrivacyConfig {
  ttlMs: number;
  names: string[];
  patterns: { label: string; pattern: string }[];
  /** ISO 3166-1 alpha-2 regions for national phone forms; undefined = the detector's default. */
  phoneRegions?: string[];
  allowBinary: boolean;
}

/** `redact`: the hook module (absolute path), its export, and its time budget (ms). */
export interface RedactConfig {
  module: string;
  exportName: string;
  timeoutMs: number;
}

export type UpstreamConfig = StdioUpstreamConfig | HttpUpstreamConfig;

/** A read-back rule as written: a read tool, its arguments and the expected values (`$args`/`$result` references allowed). */
export interface ReadbackRule {
  tool: string;
  args: Record<string, unknown>;
  expect: Record<string, unknown>;
}

/** `confirm.webhook` with absolute paths and milliseconds. */
export interface WebhookConfig {
  url: string;
  secretFile: string;
  caFile?: string;
  listenHost: string;
  listenPort: number;
  /** Base of `decision_url`, without a trailing slash. */
  publicUrl?: string;
  timeoutMs: number;
}

/** `confirm.device.voice`, with absolute paths and milliseconds. */
export interface VoiceConfig {
  /** The argv run per recording (`{file}` → a 16 kHz mono WAV file), or an OpenAI-compatible endpoint. */
  recogniser: { kind: 'command'; argv: string[] } | { kind: 'http'; url: string; model: string; apiKeyFile?: string } | { kind: 'pocketsphinx' };
  /** Consent word lists to understand (`en`, `hi`). */
  languages: string[];
  /** Longest recording accepted (ms). */
  maxMs: number;
  /** Bound of one transcription (ms). */
  timeoutMs: number;
}

/** `confirm.device`, with absolute paths. */
export interface DeviceConfig {
  host: string;
  port: number;
  /** The address phones open (a TLS proxy), without a trailing slash. */
  publicUrl?: string;
  tls?: { certFile: string; keyFile: string };
  /** Principal → user; a principal not named belongs to `defaultUser`. */
  users: Record<string, string>;
  defaultUser: string;
  voice?: VoiceConfig;
}

/** The validated config with absolute paths and millisecond units. */
export interface Config {
  /** Absolute path of the file this came from. */
  file: string;
  upstreams: UpstreamConfig[];
  /** Tool rules by exposed name or glob pattern, in file order. */
  rules: { pattern: string; action: 'allow' | 'confirm' | 'deny'; risk?: 'low' | 'medium' | 'high'; line?: number; readback?: ReadbackRule }[];
  /** Bound of each read-back request (ms). */
  execution: { timeoutMs: number };
  /**
   * Dry run: reads are forwarded, every other call is recorded in the audit log (arguments included) and
   * answered as not executed; `lookfirst promote` replays the recording (gateway/dry-run.ts).
   */
  dryRun: boolean;
  /** Tool-name globs of untrusted sources (gateway/taint.ts; its defaults when the config names none). */
  taint: { untrusted: string[] };
  confirm: {
    timeoutMs: number;
    elicitation: boolean;
    terminal: boolean;
    /** Interval of progress notifications while a call waits for a person (ms). */
    progressMs: number;
    /** How long one request waits for an out-of-band decision before answering pending (ms). */
    holdMs: number;
    /** `keyFile`: absolute path of `confirm.web.key_file` (the page's access key across restarts). */
    web: { enabled: boolean; host: string; port: number; identityHeader?: string; publicUrl?: string; keyFile?: string };
    webhook?: WebhookConfig;
    /** `wait`: a held call waits for its decision; `pending`: it answers at once, `lookfirst_confirm` runs it. */
    mode: 'wait' | 'pending';
    /** Paired devices (absent = off). */
    device?: DeviceConfig;
  };
  /** `receiptsDir`: where signed receipts of executed writes are written (absolute). */
  audit: { logPath: string; keyPath: string; pubPath: string; reads: boolean; receiptsDir: string };
  /** Where state lives (src/store/open.ts): sqlite's path absolute, by default `lookfirst-state.db` beside the audit log. */
  store: StoreConfig;
  /** `serve --transport http` settings, token file absolute. */
  http: { host: string; port: number; tokenFile?: string; publicUrl?: string };
  /** The privacy filter (src/privacy/); absent = off. */
  privacy?: PrivacyConfig;
  /** The preview redaction hook; absent = none. */
  redact?: RedactConfig;
  /** The Prometheus endpoint (`metrics:`); absent or not enabled = none. */
  metrics?: { enabled: boolean; host: string; port: number; process: boolean };
  /** OpenTelemetry traces (`tracing:`); absent or not enabled = none. */
  tracing?: { enabled: boolean; otlpEndpoint: string; serviceName: string };
  /**
   * Things the config says that take no effect, each a sentence with its key, line and what to do (for the
   * gate to print at start). Not problems: a config that has them is valid and runs (copying the Config
   * reference, with its `enabled: false` and settings below it, must keep working).
   */
  warnings?: string[];
}

/**
 * Loads and validates a config file.
 * @param file path to lookfirst.yaml (relative paths inside it resolve against its folder).
 * @throws ConfigError `CONFIG_UNREADABLE` when the file cannot be read, `CONFIG_INVALID` with every problem
 *   (YAML syntax, unknown keys, wrong types), each with its key path and line.
 */
export function loadConfig(file: string): Config {
  const abs = resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'no such file. Pass the path of your lookfirst.yaml with --config (see README, Config reference)'
        : `cannot read the file (${code ?? String(err)})`;
    throw new ConfigError(abs, [{ path: '', message }], 'CONFIG_UNREADABLE');
  }
  return parseConfig(text, abs);
}

/**
 * Validates config text. Pure apart from path resolution against `file`'s folder.
 * @throws ConfigError with every problem found.
 */
export function parseConfig(text: string, file: string): Config {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const lineOf = (offset: number | undefined) => (offset === undefined ? undefined : lineCounter.linePos(offset).line);
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => ({
        path: '',
        line: e.linePos?.[0]?.line ?? lineOf(e.pos[0]),
        message: `YAML syntax: ${e.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '')}${
          /escape sequence/i.test(e.message) ? ' (inside "double quotes" a backslash starts an escape: write regular expressions in \'single quotes\')' : ''
        }`,
      })),
    );
  }
  const data = doc.toJS() ?? {};
  const parsed = configSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap((i) => toProblems(i, doc.contents, lineOf, data));
    throw new ConfigError(
      file,
      problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)),
    );
  }
  const raw = parsed.data;
  const base = dirname(file);
  const upstreams: UpstreamConfig[] = Object.entries(raw.upstreams).map(([name, u]) => {
    const reach = { external: u.external, resolve: u.privacy?.resolve ?? (u.external ? 'ask' : 'always') } as const;
    return 'command' in u
      ? { kind: 'stdio', name, command: u.command, args: u.args, env: u.env, cwd: resolve(base, u.cwd ?? '.'), timeoutMs: u.timeout_seconds * 1000, ...reach }
      : { kind: 'http', name, url: u.url, headers: u.headers, timeoutMs: u.timeout_seconds * 1000, ...reach };
  });
  const rules = Object.entries(raw.rules.tools).map(([pattern, r]) => ({
    pattern,
    action: r.action,
    ...(r.risk ? { risk: r.risk } : {}),
    line: lineOf(findNode(doc.contents, ['rules', 'tools', pattern], true)?.range?.[0]),
    ...(r.readback ? { readback: r.readback } : {}),
  }));
  const logPath = resolve(base, raw.audit.log);
  const keyPath = resolve(base, raw.audit.key);
  return {
    file,
    upstreams,
    rules,
    confirm: confirmOf(raw.confirm, base),
    execution: { timeoutMs: raw.execution.timeout_seconds * 1000 },
    dryRun: raw.dry_run,
    taint: { untrusted: raw.taint.untrusted ?? DEFAULT_UNTRUSTED },
    http: {
      host: raw.http.host,
      port: raw.http.port,
      tokenFile: raw.http.token_file === undefined ? undefined : resolve(base, raw.http.token_file),
      publicUrl: raw.http.public_url,
    },
    audit: { logPath, keyPath, pubPath: keyPath.replace(/(\.key)?$/, '.pub'), reads: raw.audit.reads, receiptsDir: resolve(base, raw.audit.receipts) },
    store: storeOf(raw.store, base, logPath),
    privacy: privacyOf(raw.privacy),
    redact: raw.redact && redactOf(raw.redact, base),
    metrics: raw.metrics,
    tracing: { enabled: raw.tracing.enabled, otlpEndpoint: raw.tracing.otlp_endpoint, serviceName: raw.tracing.service_name },
    warnings: warningsOf(data, doc.contents, lineOf),
  };
}

/**
 * What the config sets that is ignored: settings under `confirm.device` while `enabled` is false (a
 * `voice:` added to a device section never switched on is silently not used, and its user wonders why).
 */
function warningsOf(data: unknown, root: unknown, lineOf: (o: number | undefined) => number | undefined): string[] {
  const out: string[] = [];
  const device = (data as { confirm?: { device?: unknown } } | null)?.confirm?.device;
  if (device && typeof device === 'object' && (device as { enabled?: unknown }).enabled !== true) {
    const set = Object.keys(device).filter((k) => k !== 'enabled');
    if (set.length > 0) {
      const line = lineOf(findNode(root, ['confirm', 'device'], true)?.range?.[0]);
      out.push(
        `confirm.device${line === undefined ? '' : ` (line ${line})`} has settings (${set.join(', ')}) but enabled is false, so they are ignored: set enabled: true to use them, or remove them`,
      );
    }
  }
  return out;
}

function privacyOf(p: RawConfig['privacy']): PrivacyConfig | undefined {
  if (!p?.enabled) return undefined;
  return { ttlMs: p.ttl_seconds * 1000, names: p.names, patterns: p.patterns, phoneRegions: p.phone_regions, allowBinary: p.allow_binary };
}

function redactOf(r: NonNullable<RawConfig['redact']>, base: string): RedactConfig {
  const [file = '', exportName = 'redact'] = r.hook.split('#');
  return { module: resolve(base, file), exportName, timeoutMs: r.timeout_ms };
}

/** The resolved store: the schema has checked that postgres has its url and the others have none. */
function storeOf(s: RawConfig['store'], base: string, logPath: string): StoreConfig {
  if (s.kind === 'memory') return { kind: 'memory' };
  if (s.kind === 'postgres') return { kind: 'postgres', url: s.url ?? '' };
  return { kind: 'sqlite', path: s.path === undefined ? resolve(dirname(logPath), 'lookfirst-state.db') : resolve(base, s.path) };
}

function deviceOf(d: RawConfig['confirm']['device'], base: string): DeviceConfig | undefined {
  if (!d?.enabled) return undefined;
  const v = d.voice;
  return {
    host: d.host,
    port: d.port,
    publicUrl: d.public_url?.replace(/\/+$/, ''),
    tls: d.tls && { certFile: resolve(base, d.tls.cert_file), keyFile: resolve(base, d.tls.key_file) },
    users: d.users,
    defaultUser: d.default_user,
    voice: v && {
      recogniser: v.pocketsphinx
        ? { kind: 'pocketsphinx' }
        : v.command
          ? { kind: 'command', argv: v.command }
          : { kind: 'http', url: v.url ?? '', model: v.model, apiKeyFile: v.api_key_file === undefined ? undefined : resolve(base, v.api_key_file) },
      languages: v.languages,
      maxMs: v.max_seconds * 1000,
      timeoutMs: v.timeout_seconds * 1000,
    },
  };
}

function confirmOf(c: RawConfig['confirm'], base: string): Config['confirm'] {
  const w = c.webhook;
  return {
    mode: c.mode,
    device: deviceOf(c.device, base),
    timeoutMs: c.timeout_seconds * 1000,
    elicitation: c.elicitation,
    terminal: c.terminal,
    progressMs: c.progress_seconds * 1000,
    holdMs: c.hold_seconds * 1000,
    web: {
      enabled: c.web.enabled,
      host: c.web.host,
      port: c.web.port,
      identityHeader: c.web.identity_header,
      publicUrl: c.web.public_url,
      keyFile: c.web.key_file === undefined ? undefined : resolve(base, c.web.key_file),
    },
    webhook: w && {
      url: w.url,
      secretFile: resolve(base, w.secret_file),
      caFile: w.ca_file === undefined ? undefined : resolve(base, w.ca_file),
      listenHost: w.listen_host,
      listenPort: w.listen_port,
      publicUrl: w.public_url?.replace(/\/+$/, ''),
      timeoutMs: w.timeout_seconds * 1000,
    },
  };
}

function toProblems(issue: z.core.$ZodIssue, root: unknown, lineOf: (o: number | undefined) => number | undefined, data: unknown): ConfigProblem[] {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: [...path, key].join('.'),
      line: lineOf(findNode(root, [...path, key], true)?.range?.[0]),
      message: `unknown key "${key}"${suggest(key)}`,
    }));
  }
  let message = describeIssue(issue, path, valueAt(data, path));
  // A wrong item of a list whose one sentence covers its items (`args`) is named on the list, with its place.
  const item = path.at(-1);
  if (issue.code === 'invalid_type' && issue.message.startsWith('must be a list') && item !== undefined && /^\d+$/.test(item)) {
    message = `${issue.message} (item ${Number(item) + 1} is ${JSON.stringify(valueAt(data, path))?.slice(0, 40)})`;
    path.pop();
  }
  let node = findNode(root, path, false);
  // A missing key has no node: point at its parent, which is where it should be added.
  for (let up = path.length - 1; !node && up >= 0; up--) node = findNode(root, path.slice(0, up), false);
  return [{ path: path.join('.'), line: lineOf(node?.range?.[0]), message }];
}

/** A key whose value is likely a credential. */
const SECRET_KEY = /secret|token|password|passwd|api.?key|auth|credential|cookie/i;

/**
 * A wrong value as a problem shows it. Under `env` and `headers` (an upstream's API keys and bearer
 * tokens) or a key named like a credential, only its type is shown, unless it is too short to be a
 * secret (a port, a flag): a config error is printed by serve, check and the client's log.
 */
function shownValue(received: unknown, path: readonly (string | number)[]): string {
  const text = JSON.stringify(received)?.slice(0, 40) ?? String(received);
  const secret = path.some((p) => p === 'env' || p === 'headers') || SECRET_KEY.test(String(path.at(-1) ?? ''));
  if (!secret || received === null || typeof received === 'boolean' || text.length <= 5) return text;
  const kind = Array.isArray(received) ? 'a list' : typeof received === 'object' ? 'a mapping' : `a ${typeof received}`;
  return `${kind} (${text.length > 5 && typeof received !== 'object' ? `${String(received).length} characters, ` : ''}not shown here: it may be a secret)`;
}

/** A sentence for one schema problem, in the config's own terms rather than the schema library's. */
function describeIssue(issue: z.core.$ZodIssue, path: string[], received: unknown): string {
  const what: Record<string, string> = {
    boolean: 'true or false',
    number: 'a number',
    string: 'a string',
    array: 'a list',
    object: 'a mapping',
    record: 'a mapping',
  };
  if (issue.code === 'invalid_key') return `"${path.at(-1)}": ${issue.issues[0]?.message ?? issue.message}`;
  if (issue.code === 'invalid_type') {
    if (received === undefined)
      return path.length === 1 && path[0] === 'upstreams' ? 'is required: name at least one MCP server to put behind the gate' : 'is required';
    // The schema's own sentence, when it has one (`must be a list of strings`), says more than the bare type.
    if (issue.message.startsWith('must be ')) return `${issue.message}, not ${shownValue(received, path)}`;
    const example = issue.expected === 'object' && typeof received === 'boolean' && path.at(-1) === 'web' ? ` (write web: { enabled: ${received} })` : '';
    return `must be ${what[issue.expected] ?? issue.expected}, not ${shownValue(received, path)}${example}`;
  }
  if (issue.code === 'invalid_value' && issue.message.startsWith('Invalid')) return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  if (issue.code === 'too_small' && issue.origin === 'number') return `must be ${issue.inclusive ? 'at least' : 'more than'} ${issue.minimum}`;
  return issue.message;
}

/**
 * Every key a mapping anywhere in `schema` can hold, found by walking its object shapes through the
 * wrappers around them (optional, default, pipe, union, record, list). "Did you mean" takes its keys from
 * here, so it cannot drift from the schema as a hand-kept list did.
 * @returns the key names, in no particular order.
 */
export function schemaKeys(schema: z.core.$ZodType): Set<string> {
  const keys = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (s: unknown): void => {
    if (!s || typeof s !== 'object' || seen.has(s) || !('_zod' in s)) return;
    seen.add(s);
    const def = (s as z.core.$ZodType)._zod.def as unknown as Record<string, unknown>;
    if (def.type === 'object')
      for (const [k, v] of Object.entries(def.shape as Record<string, unknown>)) {
        keys.add(k);
        walk(v);
      }
    for (const inner of ['innerType', 'in', 'out', 'valueType', 'element', 'left', 'right']) walk(def[inner]);
    if (Array.isArray(def.options)) for (const o of def.options) walk(o);
  };
  walk(schema);
  return keys;
}

/** The keys lookfirst.yaml can hold anywhere, for "did you mean". */
export const KNOWN_KEYS: ReadonlySet<string> = schemaKeys(configSchema);

function valueAt(data: unknown, path: string[]): unknown {
  let v = data;
  for (const k of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** ` (did you mean "args"?)` for a key one or two edits away from a known one. */
function suggest(key: string): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of KNOWN_KEYS) {
    const d = editDistance(key.toLowerCase(), k);
    // 0 is a key that is right elsewhere but not here (`headers` on a stdio upstream): no suggestion helps.
    if (d > 0 && d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** Finds the YAML node at a key path; with `keyNode`, the node of the last key itself (its line). */
function findNode(root: unknown, path: string[], keyNode: boolean): YamlNode | undefined {
  let node: unknown = root;
  for (let i = 0; i < path.length; i++) {
    if (!isMap(node)) return undefined;
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === path[i]);
    if (!pair) return undefined;
    if (keyNode && i === path.length - 1) return pair.key as YamlNode;
    node = pair.value;
  }
  return node as YamlNode | undefined;
}
