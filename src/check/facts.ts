/**
 * What `lookfirst check` and `lookfirst pilot-status` judge: facts read once from the machine (files,
 * the log's verification, the store, the upstreams' tool lists) by the gatherer in cli/check-gather.ts.
 * The checks (check/checks.ts, check/pilot.ts) are pure functions of these facts, so each verdict is
 * tested without a file system, a store or a server. No fact ever holds a secret's text: a token or a
 * webhook secret is described by its mode and the lengths of its lines only.
 */
import type { Config } from '../config/load.js';

/** How sure a check is that all is well. `ERROR` means the gate would not start or would not work. */
export type Level = 'OK' | 'WARN' | 'ERROR';

/** One line of `check`: a stable id (e.g. `audit.key`, `upstream.files`), its level and a sentence (with what to do next unless OK). */
export interface CheckResult {
  id: string;
  level: Level;
  message: string;
}

/** A file the config names: whether it is there, and its permission bits (`mode & 0o777`) when it is. */
export interface FileFact {
  path: string;
  exists: boolean;
  /** Permission bits, e.g. 0o600. */
  mode?: number;
  /** Why it could not be read, when it exists but cannot be (`EACCES`, `EISDIR`). */
  error?: string;
}

/** A secret file (token file, webhook secret): its mode and the length of each non-blank line, never the text. */
export interface SecretFact extends FileFact {
  /** Characters of the whole text, one trailing newline left out (the webhook secret is the whole file). */
  chars?: number;
  /** Characters of each non-blank line, trimmed, in order (the token file holds one token a line). */
  lineLengths?: number[];
  /** The fewest characters a secret needs (the gate's MIN_SECRET_CHARS), given by the gatherer. */
  minChars: number;
  /** Number of non-blank lines equal to an earlier one. */
  repeated?: number;
}

/** The audit log as verify-log sees it. */
export interface LogFact {
  path: string;
  /** The head sidecar beside it (`<log>.head`): what a trusted copy is copied from. */
  headPath: string;
  /** `absent`: no log and no head yet (a gate that never ran); `unreadable`: verification could not start (`error` says why). */
  state: 'absent' | 'unreadable' | 'verified';
  verdict?: 'intact' | 'tampered' | 'unproven';
  entries?: number;
  /** Problem sentences (tampering, a key mismatch), at most a few. */
  problems: string[];
  warnings: string[];
  error?: string;
}

/** A trusted copy of the log's head, as given to pilot-status with `--trusted-head`. */
export interface TrustedHeadFact {
  path: string;
  exists: boolean;
  /** True when the copy lies in the log's own folder: it then falls with the log, so it is not "elsewhere". */
  besideLog: boolean;
  /** The verdict of the log checked against this copy (undefined when it could not be checked). */
  verdict?: 'intact' | 'tampered' | 'unproven';
  error?: string;
}

/** The store named in the config, probed without writing to it. */
export interface StoreFact {
  kind: 'memory' | 'sqlite' | 'postgres';
  /** The SQLite file, or the PostgreSQL address without its password. */
  where?: string;
  reachable: boolean;
  /** Why it is not reachable or writable, in words. */
  error?: string;
}

/** A listener the gate would open (web page, webhook decisions, device page), and whether something already listens there. */
export interface PortFact {
  /** The config key, e.g. `confirm.web.port`. */
  key: string;
  host: string;
  port: number;
  inUse: boolean;
}

/** One upstream after one connection: its tools' definitions as listed, or why it could not be listed. */
export interface UpstreamFact {
  name: string;
  /** `stdio` or `http`. */
  kind: string;
  ok: boolean;
  /** The tool definitions from `tools/list` (all pages), as the upstream sent them. */
  tools: Record<string, unknown>[];
  error?: string;
  /** Milliseconds from starting the connection to the last page. */
  elapsedMs: number;
}

/** The redaction hook, loaded (its module run in a worker, its export checked) and unloaded again. */
export interface RedactFact {
  module: string;
  exportName: string;
  ok: boolean;
  error?: string;
}

/** Everything the checks read. */
export interface CheckFacts {
  config: Config;
  /** How to run this CLI in a suggested command (`lookfirst` or `node dist/cli/main.js`). */
  cli: string;
  key: FileFact;
  /** The private key parses as an Ed25519 key (undefined when it is missing). */
  keyValid?: boolean;
  keyError?: string;
  pub: FileFact;
  log: LogFact;
  token?: SecretFact;
  webhookSecret?: SecretFact;
  webhookCa?: FileFact;
  deviceTls?: FileFact[];
  /** The transcription endpoint's API key file (`confirm.device.voice.api_key_file`), when named. */
  voiceKey?: FileFact;
  /** This process can open a controlling terminal (/dev/tty). */
  tty: boolean;
  ports: PortFact[];
  store: StoreFact;
  redact?: RedactFact;
  upstreams: UpstreamFact[];
}
