/**
 * Shapes shared by `lookfirst wrap`'s pure transforms: which client, what a server entry becomes, and
 * what one wrap changes. The transforms take text and return text; the command (cli/commands/wrap.ts)
 * does every read and write.
 */

/** The MCP clients whose own config `wrap` can rewrite. */
export type ClientKind = 'claude-desktop' | 'claude-code' | 'cursor' | 'vscode' | 'gemini' | 'codex';

/** Every client kind, in the order help text lists them. */
export const CLIENT_KINDS: readonly ClientKind[] = ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'gemini', 'codex'];

/** A server entry as lookfirst.yaml's `upstreams.<name>` holds it (only the keys wrap writes). */
export type UpstreamEntry = { command: string; args: string[]; env?: Record<string, string>; cwd?: string } | { url: string; headers?: Record<string, string> };

/** One server of the client's file that moves behind the gate. */
export interface MovedServer {
  /** Its name in the client's file. */
  clientName: string;
  /** Its name under `upstreams` (lowercase, `-`/`_` separated, unique). */
  upstream: string;
  entry: UpstreamEntry;
  /**
   * True when lookfirst.yaml already holds this very server under `upstream` (same command, args, env
   * and cwd, or same url and headers): wrap points at that entry instead of adding a copy, so the gate
   * does not start one server twice (two memory servers writing one file) after wrap, unwrap, wrap, or
   * when two clients share one lookfirst.yaml.
   */
  reused?: boolean;
  /**
   * The comments that left the client's file with this server (above it, inside it, after it on its
   * line), as lines of text without their markers; lookfirst.yaml carries them above the upstream.
   */
  comments?: string[];
}

/** One server of the client's file left where it is, and why (a sentence for a person). */
export interface KeptServer {
  clientName: string;
  reason: string;
}

/** How the client starts the gate: the program and the arguments before `serve --config <file>`. */
export interface Launcher {
  command: string;
  /** e.g. [`/abs/lookfirst/dist/cli/main.js`] when command is node. */
  args: string[];
}

/** What the tool-call timeout setting of the client becomes. */
export interface TimeoutChange {
  /** The setting, as the client's docs name it (`timeout`, `tool_timeout_sec`). */
  setting: string;
  /** Its new value in the client's unit, or undefined when the client's default already fits. */
  value?: number;
  /** A sentence for the user: what was raised, or why nothing was. */
  note: string;
}

/** The result of wrapping one client file: the new text and what happened. */
export interface WrapResult {
  /** The client's file, rewritten. */
  text: string;
  moved: MovedServer[];
  kept: KeptServer[];
  /** The name of the one server entry that now runs the gate. */
  gateServer: string;
  timeout: TimeoutChange;
  /**
   * Servers elsewhere in the same file that wrap does not touch and the client still runs without the
   * gate (Claude Code's per-project `projects["/path"].mcpServers` in ~/.claude.json), one sentence each.
   */
  untouched?: string[];
}

/**
 * The folder a client starts a stdio server in when its entry names no `cwd`. `project`: a project's
 * file (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, `.gemini/settings.json`), whose client
 * starts servers in the project root `dir` (absolute). `user`: a user's file (Claude Desktop,
 * ~/.claude.json, ~/.cursor/mcp.json, ~/.gemini/settings.json, ~/.codex/config.toml), whose client starts
 * servers in a folder nobody specified (wherever the app or the session happened to start), so a
 * relative path in such an entry has no one meaning and the server stays with the client.
 */
export type StartFolder = { scope: 'project'; dir: string } | { scope: 'user' };

/** Inputs every client transform needs besides the file's text. */
export interface WrapInput {
  /** The client file's text, exactly as read. */
  text: string;
  /** The file's path, for error messages only. */
  file: string;
  /** Absolute path of lookfirst.yaml the gate will read. */
  gateConfig: string;
  launcher: Launcher;
  /** Upstream names already in lookfirst.yaml, which the moved servers must not take (unless reused). */
  takenUpstreams: ReadonlySet<string>;
  /**
   * The entries behind those names, as the config loader read them (a stdio `cwd` absolute, resolved
   * against lookfirst.yaml's folder): a moved server identical to one of them reuses it. Absent: none.
   */
  existingUpstreams?: ReadonlyMap<string, UpstreamEntry>;
  /** The longest a tool call may take through the gate (person's decision plus execution), in seconds. */
  neededSeconds: number;
  /** The gate's entry name in the client's file (default `lookfirst`). */
  gateServer: string;
  /**
   * Where the client starts a server that names no `cwd`: a moved server gets that folder as its
   * `cwd`, since the gate would otherwise start it in lookfirst.yaml's folder. Absent: `user`.
   */
  start?: StartFolder;
  /** How a person runs this CLI here (cli/output.ts cliName), for the commands hints suggest. Absent: `lookfirst`. */
  cli?: string;
}
