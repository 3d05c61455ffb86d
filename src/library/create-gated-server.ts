/**
 * `createGatedServer`: the gate inside a server author's own MCP server, with no proxy process. The
 * author's tools live on an SDK server in this process (library/tool-server.ts), connected to the gate
 * as its one upstream by the SDK's in-memory linked pair; the gate itself is built by the same
 * composition root as `lookfirst serve` (cli/gate.ts `createGate`): the same pipeline, channels,
 * receipts, store and audit log. What the author declares is trusted (it is their server): a `read` is
 * read-only, a `write` is always a mutation at the risk `risk(args)` gives, shown as `preview(args)`,
 * read back by the author's function (gateway/declared.ts says how each fails closed).
 *
 * Layering: src/library/ ranks above cli/ (test/layering.test.ts) because the composition root lives
 * in cli/ (it starts the web page, web/); nothing below imports the library.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { generateAuditKey, loadSigner } from '../audit/keys.js';
import { AuditLog } from '../audit/writer.js';
import { createGate, type Gate } from '../cli/gate.js';
import { logLine } from '../cli/output.js';
import { systemClock } from '../clock.js';
import type { DeclaredTool } from '../gateway/declared.js';
import { toConfig, upstreamNameOf } from './config.js';
import { ToolServer } from './tool-server.js';
import type { GatedServer, GatedServerOptions, InputSchema, ToolHandler, ToolSpec, WriteToolSpec } from './types.js';

/** Why the gate stopped, as written in the log's `gate_stopped`. */
const CLOSED = 'the gated server was closed';

/**
 * Builds a gated MCP server: checks the options and opens the audit log now (so a bad option or a
 * missing key fails here); the store, the channels and the gate start at the first `connect`, once the
 * tools are registered.
 * @param options see {@link GatedServerOptions}; `confirm`, `rules` and `store` are checked by the
 *   lookfirst.yaml schema.
 * @returns the server: register tools with `read` and `write`, then `connect` transports.
 * @throws ConfigError `CONFIG_INVALID` naming every bad option at once; LookfirstError
 *   `AUDIT_KEY_MISSING` when the log exists but its key does not (a new key would orphan the log's
 *   signatures), `AUDIT_KEY_INVALID`, and what the audit log throws when it cannot be opened.
 */
export async function createGatedServer(options: GatedServerOptions): Promise<GatedServer> {
  const base = upstreamNameOf(typeof options?.name === 'string' ? options.name : '');
  const upstream = base;
  const config = toConfig(options, upstream);
  const log = options.log ?? logLine;
  const tools = new ToolServer({ name: options.name, version: options.version });
  const { logPath, keyPath, pubPath } = config.audit;
  mkdirSync(dirname(logPath), { recursive: true });
  if (!existsSync(keyPath) && !existsSync(pubPath) && !existsSync(logPath)) {
    mkdirSync(dirname(keyPath), { recursive: true });
    const { name } = generateAuditKey(keyPath, pubPath);
    log(`created the audit key ${keyPath} (${name}); its public half ${pubPath} verifies the log`);
  }
  // Missing here means its log or public half exists: a new key would orphan their signatures.
  const signer = loadSigner(keyPath, `put the key back at ${keyPath}, or move ${pubPath} and ${logPath} (if present) away to start a new log with a new key`);
  const audit = await AuditLog.open({ logPath, signer, clock: systemClock, warn: log });
  // The gate starts at the first connect, once the tools are registered: its start-up checks (rules that
  // match no tool) then see them.
  const start = () =>
    createGate({
      config,
      audit,
      log,
      inProcess: new Map([[upstream, { connect: () => tools.connect(), declared: tools.declared }]]),
      serverInfo: { name: options.name, version: options.version },
      noChannel:
        'no confirmation channel besides elicitation is enabled: a write waits for a client that can show a form (confirm.web, confirm.webhook or confirm.device add one outside the client)',
    });
  return gatedServer(start, tools, audit);
}

function gatedServer(start: () => Promise<Gate>, tools: ToolServer, audit: AuditLog): GatedServer {
  let closed: Promise<void> | undefined;
  let gate: Promise<Gate> | undefined;
  const open = (what: string) => {
    if (closed) throw new Error(`cannot ${what}: the gated server is closed`);
  };
  return {
    read<S extends InputSchema>(name: string, spec: ToolSpec<S>, handler: ToolHandler<S>): void {
      open(`register "${name}"`);
      tools.add(name, spec ?? {}, handler as unknown as ToolHandler, { kind: 'read' });
    },
    write<S extends InputSchema>(name: string, spec: WriteToolSpec<S>, handler: ToolHandler<S>): void {
      open(`register "${name}"`);
      if (typeof spec?.risk !== 'function' || typeof spec?.preview !== 'function')
        throw new Error(`write tool "${name}" needs risk(args) and preview(args) functions: a person is shown the preview at that risk`);
      if (spec.readback !== undefined && typeof spec.readback !== 'function') throw new Error(`write tool "${name}": readback must be a function`);
      tools.add(name, spec, handler as unknown as ToolHandler, {
        kind: 'write',
        // The tool server hands these the arguments parsed by the schema (library/tool-server.ts).
        risk: spec.risk as unknown as DeclaredTool['risk'],
        preview: spec.preview as unknown as DeclaredTool['preview'],
        readback: spec.readback as unknown as DeclaredTool['readback'],
      });
    },
    async connect(transport: Transport): Promise<void> {
      open('connect');
      // A gate that failed to start (a port taken) is tried again by the next connect.
      gate ??= start().catch((err: unknown) => {
        gate = undefined;
        throw err;
      });
      const { gateway } = await gate;
      open('connect');
      // Tools registered since the last listing are read before this client lists them.
      await gateway.catalogue.refreshAll();
      await gateway.serve(transport);
    },
    close(): Promise<void> {
      closed ??= (async () => {
        const running = await gate?.catch(() => undefined);
        await running?.close(CLOSED);
        await tools.close();
        await audit.close().catch(() => {});
      })();
      return closed;
    },
    get tools(): readonly string[] {
      return tools.names;
    },
  };
}
