/**
 * The six clients `wrap` knows: where each keeps its MCP servers (default file per OS, the key inside),
 * the entry that starts the gate in its format, and what its tool-call timeout setting becomes. Figures
 * and limits follow docs/clients.md. Pure: the caller passes the platform, home and folders in.
 */
import { posix, win32 } from 'node:path';
import type { ClientKind, Launcher, StartFolder, TimeoutChange } from './types.js';

/** Where the caller runs: what default paths depend on. */
export interface Place {
  platform: string;
  home: string;
  /** The project folder (the working directory) for project-scoped files. */
  cwd: string;
  /** %APPDATA% on Windows (Claude Desktop's folder), when set. */
  appData?: string;
  /** `$XDG_CONFIG_HOME` on Linux, when set. */
  xdgConfigHome?: string;
}

/** Claude Code's two files: the project's `.mcp.json`, or the user's `~/.claude.json`. */
export type Scope = 'project' | 'user';

/**
 * The client's own config file when `--config-file` is not given.
 * @see docs/clients.md and each client's MCP documentation for these locations.
 */
export function defaultClientFile(client: ClientKind, place: Place, scope: Scope): string {
  const p = place.platform === 'win32' ? win32 : posix;
  switch (client) {
    case 'claude-desktop':
      if (place.platform === 'darwin') return p.join(place.home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json');
      if (place.platform === 'win32') return p.join(place.appData ?? p.join(place.home, 'AppData', 'Roaming'), 'Claude', 'claude_desktop_config.json');
      return p.join(place.xdgConfigHome ?? p.join(place.home, '.config'), 'Claude', 'claude_desktop_config.json');
    case 'claude-code':
      return scope === 'user' ? p.join(place.home, '.claude.json') : p.join(place.cwd, '.mcp.json');
    case 'cursor':
      return scope === 'user' ? p.join(place.home, '.cursor', 'mcp.json') : p.join(place.cwd, '.cursor', 'mcp.json');
    case 'vscode':
      return p.join(place.cwd, '.vscode', 'mcp.json');
    case 'gemini':
      return scope === 'user' ? p.join(place.home, '.gemini', 'settings.json') : p.join(place.cwd, '.gemini', 'settings.json');
    case 'codex':
      return p.join(place.home, '.codex', 'config.toml');
  }
}

/** The folder of each client's project-scoped file, inside the project root. */
const PROJECT_FOLDER: Partial<Record<ClientKind, string>> = { cursor: '.cursor', vscode: '.vscode', gemini: '.gemini' };

/**
 * Where the client of `file` starts a server whose entry names no `cwd` (see StartFolder): the project
 * root for a project's file (the folder holding Claude Code's `.mcp.json`, or any file of Claude Code's
 * but `~/.claude.json` and one in the home folder; the parent of `.cursor/`, `.vscode/`,
 * `.gemini/`, except ~/.cursor and ~/.gemini, those clients' user folders), else `user`. Claude Desktop and Codex only have
 * user files; A Cursor, VS Code or Gemini file elsewhere under another name is `user`
 * too (fail closed: its client's folder is not known, so relative paths keep their servers unwrapped).
 * @param file absolute path of the client's file; `home` absolute; `platform` picks the path rules.
 */
export function startFolderOf(client: ClientKind, file: string, home: string, platform: string): StartFolder {
  const p = platform === 'win32' ? win32 : posix;
  const dir = p.dirname(file);
  const same = (a: string, b: string) => (platform === 'win32' || platform === 'darwin' ? a.toLowerCase() === b.toLowerCase() : a === b);
  // Claude Code's one user file is ~/.claude.json; any other file of its is a project's .mcp.json (or a copy).
  if (client === 'claude-code') return p.basename(file) === '.claude.json' || same(dir, home) ? { scope: 'user' } : { scope: 'project', dir };
  const folder = PROJECT_FOLDER[client];
  if (folder === undefined || p.basename(dir) !== folder) return { scope: 'user' };
  const root = p.dirname(dir);
  // ~/.cursor and ~/.gemini are those clients' user folders; a .vscode folder is always a workspace's.
  return client !== 'vscode' && same(root, home) ? { scope: 'user' } : { scope: 'project', dir: root };
}

/** The key under which the client keeps its servers (VS Code: `servers`; Codex: the `mcp_servers` table). */
export function serversKey(client: ClientKind): string {
  if (client === 'vscode') return 'servers';
  if (client === 'codex') return 'mcp_servers';
  return 'mcpServers';
}

/** Gemini's default per-server timeout (ms), and Codex's default `tool_timeout_sec`. */
const GEMINI_DEFAULT_MS = 600_000;
const CODEX_DEFAULT_SEC = 60;

const numbers = (vs: readonly unknown[]): number[] => vs.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));

/**
 * What the client's tool-call timeout becomes so that a call held for a person, then run, is not cut
 * off by the client first. Only ever raised: the longest value a moved server had is kept if larger.
 * @param neededSeconds the gate's confirm timeout plus the longest upstream timeout plus a margin.
 * @param existing the values the moved servers had for the setting (the client's unit).
 */
export function timeoutFor(client: ClientKind, neededSeconds: number, existing: readonly unknown[]): TimeoutChange {
  const had = numbers(existing);
  switch (client) {
    case 'gemini': {
      const value = Math.max(neededSeconds * 1000, ...had);
      if (had.length === 0 && value <= GEMINI_DEFAULT_MS)
        return { setting: 'timeout', note: `Gemini's default timeout (600 s) already covers the gate's ${neededSeconds} s; left unset` };
      return { setting: 'timeout', value, note: `set Gemini's timeout to ${value} ms (the gate needs ${neededSeconds} s)` };
    }
    case 'codex': {
      const value = Math.max(neededSeconds, ...had);
      return {
        setting: 'tool_timeout_sec',
        value,
        note: `raised Codex's tool_timeout_sec to ${value} s (default ${CODEX_DEFAULT_SEC} s; the gate needs ${neededSeconds} s)`,
      };
    }
    case 'claude-desktop':
      return {
        setting: '',
        note: "Claude Desktop's tool-call limit (about 60 s on macOS, 4 min on Windows) cannot be set: keep confirm.hold_seconds below it (default 45), so the agent gets `pending` and calls again",
      };
    case 'claude-code':
      return { setting: '', note: 'Claude Code sets no per-call limit on stdio servers by default (MCP_TOOL_TIMEOUT changes it); nothing to raise' };
    case 'cursor':
    case 'vscode':
      return {
        setting: '',
        note: `${client === 'cursor' ? 'Cursor' : 'VS Code'}'s tool-call limit (about 5 min reported) cannot be set: keep confirm.timeout_seconds at 240 or less${neededSeconds > 300 ? ` (the gate may need ${neededSeconds} s)` : ''}`,
      };
  }
}

/**
 * The one server entry that starts the gate, in the client's format.
 * @param gateConfig absolute path of lookfirst.yaml.
 */
export function gateEntry(client: ClientKind, launcher: Launcher, gateConfig: string, timeout: TimeoutChange, startupSec?: number): Record<string, unknown> {
  const run = { command: launcher.command, args: [...launcher.args, 'serve', '--config', gateConfig] };
  switch (client) {
    case 'vscode':
      return { type: 'stdio', ...run };
    case 'gemini':
      return timeout.value === undefined ? run : { ...run, timeout: timeout.value };
    case 'codex':
      return { ...run, ...(startupSec === undefined ? {} : { startup_timeout_sec: startupSec }), tool_timeout_sec: timeout.value };
    default:
      return run;
  }
}

/**
 * lookfirst's own folder for gate configs: `$XDG_CONFIG_HOME/lookfirst` or `~/.config/lookfirst`
 * (Linux, macOS), `%APPDATA%\lookfirst` (Windows). Outside any project, so that the audit key, the log
 * and the env values wrap moves are never committed with a project.
 */
export function gateHome(place: Place): string {
  const p = place.platform === 'win32' ? win32 : posix;
  if (place.platform === 'win32') return p.join(place.appData ?? p.join(place.home, 'AppData', 'Roaming'), 'lookfirst');
  return p.join(place.xdgConfigHome ?? p.join(place.home, '.config'), 'lookfirst');
}

/**
 * The folder name under gateHome for one client file of one project: `<project>-<client>-<hash8>`,
 * the project folder's name (lowercase, `-` separated) for a person to recognise, and the first 8 hex
 * digits of the SHA-256 of the client file's absolute path, so that two projects of one name, or two
 * clients of one project (each gate has its own log and page), never share a folder, and wrapping the
 * same file again finds the same one.
 */
export function gateFolderName(projectDir: string, client: ClientKind, fileHashHex: string): string {
  const name =
    (
      projectDir
        .split(/[\\/]/)
        .filter((s) => s !== '')
        .at(-1) ?? ''
    )
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'project';
  return `${name}-${client}-${fileHashHex.slice(0, 8)}`;
}
