/**
 * `lookfirst wrap CLIENT` (and what `lookfirst unwrap CLIENT`, unwrap.ts, reads back): the file work around src/wrap/'s pure
 * transforms. wrap reads the client's file and lookfirst.yaml, plans everything, validates the new
 * lookfirst.yaml with the config loader, and only then writes: first a byte-exact backup
 * (`<file>.lookfirst-backup`) and a note of what it wrote (`<file>.lookfirst-wrap.json`, hashes only),
 * then lookfirst.yaml, then the client's file, all undone if one fails (wrap-files.ts).
 * Output never shows env or header values: `--dry-run`'s diff is made from masked copies.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTwoFilesPatch } from 'diff';
import { parseConfig } from '../../config/load.js';
import { LookfirstError } from '../../errors.js';
import { defaultClientFile, gateFolderName, gateHome, type Place, type Scope, startFolderOf } from '../../wrap/clients.js';
import { maskCodex, wrapCodex } from '../../wrap/codex.js';
import { maskGateConfig, mergeGateConfig, upstreamNamesIn } from '../../wrap/gate-config.js';
import { maskJson, serversJson, wrapJson } from '../../wrap/json.js';
import { CLIENT_KINDS, type ClientKind, type Launcher, type UpstreamEntry, type WrapInput, type WrapResult } from '../../wrap/types.js';
import { cliName } from '../output.js';
import { VERSION } from '../version.js';
import { gitWorkTreeOf, writeWrap } from './wrap-files.js';

/** Options of `lookfirst wrap`. */
export interface WrapOptions {
  configFile?: string;
  gateConfig?: string;
  scope?: string;
  name?: string;
  launcher?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** Seconds added to the gate's longest wait, so that the client's timer never ends a call the gate is finishing. */
const MARGIN_SECONDS = 15;

/** The note wrap leaves beside the backup: enough for unwrap to tell whether the file changed since. */
export interface WrapNote {
  client: ClientKind;
  gate_config: string;
  original_sha256: string;
  wrapped_sha256: string;
  /** JSON clients: SHA-256 of the servers value wrap left, so unwrap can restore just that block when the client changed the rest. */
  wrapped_servers_sha256?: string;
}

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const octal = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`;
export const backupOf = (file: string) => `${file}.lookfirst-backup`;
export const noteOf = (file: string) => `${file}.lookfirst-wrap.json`;

export function clientOf(client: string): ClientKind {
  if ((CLIENT_KINDS as readonly string[]).includes(client)) return client as ClientKind;
  throw new LookfirstError('USAGE', `unknown client "${client}": use one of ${CLIENT_KINDS.join(', ')}`);
}

function scopeOf(client: ClientKind, scope: string | undefined): Scope {
  if (scope === undefined) return client === 'gemini' ? 'user' : 'project';
  if (scope === 'project' || scope === 'user') return scope;
  throw new LookfirstError('USAGE', `--scope is project or user, not "${scope}"`);
}

function placeHere(): Place {
  return {
    platform: process.platform,
    home: homedir(),
    cwd: process.cwd(),
    ...(process.env.APPDATA ? { appData: process.env.APPDATA } : {}),
    ...(process.env.XDG_CONFIG_HOME ? { xdgConfigHome: process.env.XDG_CONFIG_HOME } : {}),
  };
}

/** The client's file: --config-file, else the client's default for this OS and scope. */
export function clientFileOf(client: ClientKind, o: { configFile?: string; scope?: string }): string {
  if (o.configFile !== undefined) return resolve(o.configFile);
  return defaultClientFile(client, placeHere(), scopeOf(client, o.scope));
}

/** Where lookfirst.yaml goes, and a sentence when that is not beside the client's file, or is but should not be. */
interface GatePlace {
  file: string;
  note?: string;
  warning?: string;
}

/**
 * lookfirst.yaml's path: --gate-config; else beside the client's file, unless that file belongs to a
 * project (a project-scoped default such as ./.mcp.json or .vscode/mcp.json, or any file inside a git
 * work tree), whose folders people commit: then a folder of its own under lookfirst's config folder
 * (gateHome/gateFolderName), since `keygen` puts the audit key beside lookfirst.yaml and lookfirst.yaml
 * receives the moved servers' env and header values. A lookfirst.yaml already beside the file is used
 * (an earlier wrap, or the user's own), with a warning when it sits in a work tree.
 */
function gatePlaceOf(client: ClientKind, file: string, o: WrapOptions): GatePlace {
  if (o.gateConfig !== undefined) return { file: resolve(o.gateConfig) };
  const beside = join(dirname(file), 'lookfirst.yaml');
  const tree = gitWorkTreeOf(dirname(file));
  const projectDefault =
    o.configFile === undefined && (client === 'vscode' || (client !== 'codex' && client !== 'claude-desktop' && scopeOf(client, o.scope) === 'project'));
  if (tree === undefined && !projectDefault) return { file: beside };
  const where = tree === undefined ? `the project ${process.cwd()}` : `the git work tree ${tree}`;
  if (existsSync(beside))
    return {
      file: beside,
      warning: `WARNING: ${beside} is inside ${where}: its env and header values, and the audit key and log that sit beside it, could be committed. Move them to a folder of their own and pass --gate-config, or keep them out of git (.gitignore).`,
    };
  const place = placeHere();
  const folder = gateFolderName(tree ?? place.cwd, client, sha256(file));
  return {
    file: join(gateHome(place), folder, 'lookfirst.yaml'),
    note: `not beside ${file}, which is inside ${where}: the gate's env values, audit key and log stay out of the project (--gate-config F puts them elsewhere)`,
  };
}

/**
 * How the client will start the gate. `node` (default): this Node and this install's main.js, both
 * absolute, so that a client started outside a shell (Claude Desktop has no PATH of yours) finds them;
 * `lookfirst`: the command on PATH; `npx`: `npx -y lookfirst@<this version>`.
 */
function launcherOf(kind: string | undefined): Launcher {
  switch (kind ?? 'node') {
    case 'node':
      return { command: process.execPath, args: [fileURLToPath(new URL('../main.js', import.meta.url))] };
    case 'lookfirst':
      return { command: 'lookfirst', args: [] };
    case 'npx':
      return { command: 'npx', args: ['-y', `lookfirst@${VERSION}`] };
    default:
      throw new LookfirstError('USAGE', `--launcher is node, lookfirst or npx, not "${kind}"`);
  }
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LookfirstError(
      'WRAP_INVALID',
      code === 'ENOENT' ? `${file}: no such file (${what}); nothing was written.` : `${file}: cannot read it (${code ?? String(err)}); nothing was written.`,
    );
  }
}

/** The longest a call can take through the gate: a person's whole confirm timeout, then the slowest upstream. */
function neededSeconds(gateText: string | undefined, gateFile: string): number {
  if (gateText === undefined) return 120 + 60 + MARGIN_SECONDS;
  const c = parseConfig(gateText, gateFile);
  const slowest = Math.max(60_000, ...c.upstreams.map((u) => u.timeoutMs));
  return Math.ceil((c.confirm.timeoutMs + slowest) / 1000) + MARGIN_SECONDS;
}

/** lookfirst.yaml's upstreams as the loader reads them (cwd absolute), for the plan to find a server it already has. */
function existingUpstreams(gateText: string, gateFile: string): Map<string, UpstreamEntry> {
  return new Map(
    parseConfig(gateText, gateFile).upstreams.map((u): [string, UpstreamEntry] =>
      u.kind === 'stdio' ? [u.name, { command: u.command, args: u.args, env: u.env, cwd: u.cwd }] : [u.name, { url: u.url, headers: u.headers }],
    ),
  );
}

/** This install's JSON Schema of lookfirst.yaml (absolute), for a new file's `$schema` line; undefined when the package lacks it. */
function schemaPath(): string | undefined {
  const path = fileURLToPath(new URL('../../../schema/lookfirst.schema.json', import.meta.url));
  return existsSync(path) ? path : undefined;
}

function transform(client: ClientKind, input: WrapInput): WrapResult {
  return client === 'codex' ? wrapCodex(input) : wrapJson(client, input);
}

/** Runs `lookfirst wrap`; returns the exit code. @throws LookfirstError WRAP_*, USAGE; ConfigError for a bad lookfirst.yaml. */
export function wrapCommand(clientArg: string, o: WrapOptions): number {
  const client = clientOf(clientArg);
  const file = clientFileOf(client, o);
  const cli = cliName();
  const gatePlace = gatePlaceOf(client, file, o);
  const gateFile = gatePlace.file;
  if (existsSync(backupOf(file)) || existsSync(noteOf(file)))
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file} is wrapped already (${backupOf(file)} exists). Run \`${cli} unwrap ${client}${o.configFile ? ` --config-file ${file}` : ''}\` first; nothing was written.`,
    );
  const raw = readBytes(file);
  const text = raw.toString('utf8');
  const gateText = existsSync(gateFile) ? readText(gateFile, 'the gate config') : undefined;
  const input: WrapInput = {
    text,
    file,
    gateConfig: gateFile,
    launcher: launcherOf(o.launcher),
    takenUpstreams: gateText === undefined ? new Set() : upstreamNamesIn(gateText, gateFile),
    existingUpstreams: gateText === undefined ? new Map() : existingUpstreams(gateText, gateFile),
    neededSeconds: neededSeconds(gateText, gateFile),
    gateServer: o.name ?? 'lookfirst',
    start: startFolderOf(client, file, homedir(), process.platform),
    cli,
  };
  const result = transform(client, input);
  const newGate = mergeGateConfig(gateText, result.moved, gateFile, file, schemaPath(), cli);
  // Fail closed: never write a lookfirst.yaml the gate would refuse (ConfigError names every problem).
  const keyMissing = !existsSync(parseConfig(newGate, gateFile).audit.keyPath);
  // Secrets that sat in the client's file now sit in lookfirst.yaml too: not for group or others to read.
  const secrets = result.moved.some((m) => Object.keys(('url' in m.entry ? m.entry.headers : m.entry.env) ?? {}).length > 0);
  const gateMode = gateText === undefined ? undefined : statSync(gateFile).mode & 0o777;
  const tighten = secrets && gateMode !== undefined && (gateMode & 0o077) !== 0;

  const summary = {
    client,
    file,
    gate_config: gateFile,
    gate_config_created: gateText === undefined,
    server: result.gateServer,
    command: input.launcher.command,
    args: [...input.launcher.args, 'serve', '--config', gateFile],
    moved: result.moved.map((m) => ({ name: m.clientName, upstream: m.upstream, kind: 'url' in m.entry ? 'http' : 'stdio', reused: m.reused === true })),
    kept: result.kept.map((k) => ({ name: k.clientName, reason: k.reason })),
    untouched: result.untouched ?? [],
    timeout: result.timeout,
    backup: backupOf(file),
    gate_config_mode: tighten && gateMode !== undefined ? { from: octal(gateMode), to: octal(gateMode & 0o700) } : null,
    audit_key_missing: keyMissing,
    gate_config_note: gatePlace.note ?? null,
    warning: gatePlace.warning ?? null,
    dry_run: o.dryRun === true,
  };
  // Loud on stderr too, so that --json users and scripts see it.
  if (gatePlace.warning !== undefined) process.stderr.write(`lookfirst: ${gatePlace.warning}\n`);
  if (o.dryRun) {
    // Both sides masked after the real transform (not the transform of a masked copy, which would move a
    // server whose env holds a ${VAR} that *** hides): the diff shows exactly what wrap writes, no secret.
    const mask = (t: string) => (client === 'codex' ? maskCodex(t, file) : maskJson(client, t, file));
    const diff =
      createTwoFilesPatch(file, file, mask(text), mask(result.text)) +
      createTwoFilesPatch(
        gateText === undefined ? '/dev/null' : gateFile,
        gateFile,
        gateText === undefined ? '' : maskGateConfig(gateText, gateFile),
        maskGateConfig(newGate, gateFile),
      );
    if (o.json) process.stdout.write(`${JSON.stringify({ ...summary, diff })}\n`);
    else process.stdout.write(`${diff}\n${describe(summary, cli)}\n(dry run: nothing was written; env and header values are shown as ***)\n`);
    return 0;
  }

  const note: WrapNote = { client, gate_config: gateFile, original_sha256: sha256(raw), wrapped_sha256: sha256(result.text) };
  if (client !== 'codex') note.wrapped_servers_sha256 = sha256(serversJson(client, result.text, file));
  writeWrap({
    file,
    original: raw,
    clientText: result.text,
    backup: backupOf(file),
    note: noteOf(file),
    noteText: `${JSON.stringify(note, null, 2)}\n`,
    gateFile,
    gateBefore: gateText,
    gateText: newGate,
    tightenGate: tighten,
  });
  if (o.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else process.stdout.write(`${describe(summary, cli)}\n`);
  return 0;
}

/** The client's file as bytes (the backup must be byte-exact). @throws LookfirstError WRAP_INVALID when unreadable. */
function readBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LookfirstError(
      'WRAP_INVALID',
      code === 'ENOENT'
        ? `${file}: no such file (the client's config). Pass the file with --config-file, or --scope user|project; nothing was written.`
        : `${file}: cannot read it (${code ?? String(err)}); nothing was written.`,
    );
  }
}

/** The summary as lines for a person; `cli` is how to run this CLI here (cliName), for the commands it suggests. */
function describe(
  s: {
    client: string;
    file: string;
    gate_config: string;
    gate_config_created: boolean;
    server: string;
    command: string;
    args: string[];
    moved: { name: string; upstream: string; reused: boolean }[];
    kept: { name: string; reason: string }[];
    untouched: string[];
    timeout: { note: string };
    backup: string;
    gate_config_mode: { from: string; to: string } | null;
    audit_key_missing: boolean;
    gate_config_note: string | null;
    warning: string | null;
    dry_run: boolean;
  },
  cli: string,
): string {
  const would = s.dry_run ? 'would ' : '';
  const lines = [
    `${s.dry_run ? 'would wrap' : 'wrapped'} ${s.file} (${s.client})`,
    `  behind the gate: ${s.moved.map((m) => `${m.name} → upstreams.${m.upstream}${m.reused ? ' (reused: the same server is there already, not added twice)' : ''}`).join(', ')}`,
    ...s.kept.map((k) => `  left unwrapped, the client ${would}still run${s.dry_run ? '' : 's'} it without the gate: ${k.name} (${k.reason})`),
    ...s.untouched.map((u) => `  not wrapped, the client still runs them without the gate: ${u}`),
    `  the client ${would}start${s.dry_run ? '' : 's'} "${s.server}": ${[s.command, ...s.args].join(' ')}`,
    `  timeout: ${s.timeout.note}`,
    `  gate config: ${s.gate_config} (${s.gate_config_created ? 'new' : s.moved.every((m) => m.reused) ? 'unchanged: every server was there already' : 'upstreams added'})`,
    ...(s.gate_config_note ? [`    ${s.gate_config_note}`] : []),
    ...(s.warning ? [`  ${s.warning}`] : []),
    ...(s.gate_config_mode
      ? [
          `  gate config mode: ${s.gate_config_mode.from} → ${s.gate_config_mode.to} (it ${would}now hold${s.dry_run ? '' : 's'} env or header values; chmod ${s.gate_config_mode.from.slice(1)} undoes it)`,
        ]
      : []),
    `  backup: ${s.backup}; \`${cli} unwrap ${s.client} --config-file ${s.file}\` restores the file byte for byte`,
  ];
  if (s.audit_key_missing) lines.push(`next: ${cli} keygen --config ${s.gate_config} (the gate will not start without its audit key), then restart the client`);
  else lines.push('next: restart the client');
  return lines.join('\n');
}
