/**
 * The public shapes of the library (`createGatedServer`): what a server author passes and gets back.
 * Pinned by test/library-api.test.ts: a change here is a change of the public API, made on purpose.
 * The `confirm`, `rules` and `store` options are the lookfirst.yaml sections of the same names, typed
 * from the config schema itself (config/schema.ts), so that the library and `lookfirst serve` accept,
 * and refuse, the same settings with the same words.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { configSchema, toolRuleSchema } from '../config/schema.js';
import type { Risk } from '../types.js';

/**
 * `confirm` as in lookfirst.yaml (snake_case keys): `web`, `webhook`, `device`, `timeout_seconds`,
 * `hold_seconds`, `elicitation`, `terminal`, `mode`. Relative file paths (`secret_file`) resolve against
 * the process's working folder.
 */
export type GatedConfirmOptions = NonNullable<z.input<typeof configSchema>['confirm']>;

/** One tool rule as in lookfirst.yaml's `rules.tools.<pattern>`: `{ action: 'allow' | 'confirm' | 'deny' }`. */
export type GatedRule = z.input<typeof toolRuleSchema>;

/**
 * `store` as in lookfirst.yaml: `{ kind: 'sqlite', path? }` (default: `lookfirst-state.db` beside the
 * audit log), `{ kind: 'postgres', url }`, or `{ kind: 'memory' }` (nothing survives a restart).
 */
export type GatedStoreOptions = NonNullable<z.input<typeof configSchema>['store']>;

/** What `createGatedServer` is built from. */
export interface GatedServerOptions {
  /** The server's name, as clients see it in `initialize` (`serverInfo.name`). */
  name: string;
  /** The server's version (`serverInfo.version`). */
  version: string;
  /**
   * The signed, hash-chained audit log: `log` (JSONL file) and `key` (Ed25519 PEM; its public half
   * `<key without .key>.pub` beside it). Both are created on first start when neither the key nor the
   * log exists; a log without its key is refused. `receipts` is the folder of signed receipts (default
   * `receipts/` beside the log); `reads: false` leaves allowed reads out of the log. Relative paths
   * resolve against the working folder. `lookfirst verify-log` checks the log as it checks the gate's.
   */
  audit: { log: string; key: string; receipts?: string; reads?: boolean };
  /** Where pending approvals, holds and nonces live (default sqlite beside the audit log). */
  store?: GatedStoreOptions;
  /** The confirmation channels and their timing (lookfirst.yaml `confirm`); default: elicitation only. */
  confirm?: GatedConfirmOptions;
  /** Tool rules by tool name or glob, e.g. `{ transfer: { action: 'confirm' } }` (lookfirst.yaml `rules.tools`). */
  rules?: Record<string, GatedRule>;
  /** Operator messages (default: stderr, prefixed `lookfirst:`; never stdout, the stdio protocol channel). */
  log?: (line: string) => void;
}

/** A JSON Schema of a tool's arguments (`type: 'object'`), passed to clients unchanged and not validated. */
export interface JsonSchemaObject {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

/**
 * A tool's arguments: a zod (v4) object shape, validated before the tool runs and before its risk is
 * judged, or a JSON Schema object, passed on as it is.
 */
export type InputSchema = z.ZodRawShape | JsonSchemaObject;

/** The arguments a handler gets: parsed by the zod shape, or the JSON object the client sent. */
export type ArgsOf<S> = S extends JsonSchemaObject ? Record<string, unknown> : S extends z.ZodRawShape ? z.output<z.ZodObject<S>> : Record<string, unknown>;

/** What every tool declares. */
export interface ToolSpec<S extends InputSchema = InputSchema> {
  /** What the tool does, for the agent (and the classifier's reasons on the card). */
  description?: string;
  /** A short display name. */
  title?: string;
  /** The arguments (default: no arguments). */
  inputSchema?: S;
}

/**
 * What the read-back answers: `ok` (the effect is there), `failed` (it is not), `unclear`, or the same
 * with a detail a person reads in the log and on the page.
 */
export type ReadbackAnswer = 'ok' | 'failed' | 'unclear' | { outcome: 'ok' | 'failed' | 'unclear'; detail?: string };

/** What a write declares besides its schema: how risky a call is, what the person reads, how to check it. */
export interface WriteToolSpec<S extends InputSchema = InputSchema> extends ToolSpec<S> {
  /** The risk of this call (high risk may need a second yes on a paired device). A throw, or anything else, is `high`. */
  risk: (args: ArgsOf<S>) => Risk;
  /** The card text, e.g. `Send 120.00 EUR to DE89… (Alice)`. A throw shows the generic summary with a note; the question is asked either way. */
  preview: (args: ArgsOf<S>) => string;
  /**
   * After the write ran: whether its effect is there. Anything but `ok` blocks the tool until a person
   * unlocks it (`lookfirst unlock`); a throw or no answer within the execution timeout is `unclear`.
   * @param result the tool's result as the client receives it (`structuredContent` holds an object the handler returned).
   */
  readback?: (args: ArgsOf<S>, result: CallToolResult) => ReadbackAnswer | Promise<ReadbackAnswer>;
}

/** Per-call context a handler gets. */
export interface ToolContext {
  /** Aborted when the call is cancelled or the gate stops. */
  signal: AbortSignal;
}

/**
 * A tool's implementation. Return a `CallToolResult` (`{ content: [...] }`) to answer exactly that, or
 * any other value: an object becomes `structuredContent` and JSON text, anything else JSON text. A throw
 * answers an error result (for a write: its outcome is unclear and the tool is blocked).
 */
export type ToolHandler<S extends InputSchema = InputSchema> = (args: ArgsOf<S>, ctx: ToolContext) => unknown;

/** A running gated server: register tools, then connect clients. */
export interface GatedServer {
  /**
   * Registers a read tool: read-only, allowed at once (unless a rule says otherwise) and logged.
   * @throws Error when the name is taken or is not a valid tool name, or the server is closed.
   */
  read<S extends InputSchema>(name: string, spec: ToolSpec<S>, handler: ToolHandler<S>): void;
  /**
   * Registers a write tool: every call is held for a person on the configured channels (unless a rule
   * allows it), shown with `preview(args)` at `risk(args)`, executed once if approved, read back.
   * @throws Error when the name is taken or is not a valid tool name, the spec has no `risk` or
   *   `preview` function, or the server is closed.
   */
  write<S extends InputSchema>(name: string, spec: WriteToolSpec<S>, handler: ToolHandler<S>): void;
  /**
   * Serves one client session on an SDK server transport (stdio, Streamable HTTP, in-memory). Several
   * sessions may be connected; each has its own holds. The first call starts the gate (store, channels).
   * @throws Error when the server is closed; LookfirstError / StoreError when the store or a channel
   *   cannot start (e.g. `WEB_UNAVAILABLE`: the page's port is taken); the next call tries again.
   */
  connect(transport: Transport): Promise<void>;
  /** Stops every session (held calls are denied, never run), the channels, the store and the log. Idempotent. */
  close(): Promise<void>;
  /** The names of the registered tools, in registration order. */
  readonly tools: readonly string[];
}
