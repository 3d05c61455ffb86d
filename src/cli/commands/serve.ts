/**
 * `lookfirst serve --config F`: the gate on stdio. Order matters: over HTTP the port first (a busy port
 * starts no upstream), then the audit key and log (no log, no gate), then the web page, then upstreams
 * and catalogue, then the client connection. stdout carries only MCP messages; everything for the
 * operator goes to stderr.
 */

import { createServer, type Server } from 'node:http';
import open from 'open';
import { type Config, loadConfig } from '../../config/load.js';
import { LOOPBACK } from '../../config/schema.js';
import { loadSecret, MIN_SECRET_CHARS } from '../../confirm/channels/webhook.js';
import { LookfirstError } from '../../errors.js';
import { serveBothEras } from '../../gateway/stdio-eras.js';
import { answerStartFailure } from '../../gateway/transport/refuse-start.js';
import { LineServerTransport } from '../../gateway/transport/stdio-server.js';
import { MAX_MESSAGE_BYTES } from '../../gateway/upstream.js';
import { close as closeServer, listen } from '../../web/http.js';
import { createLaunchFile, type LaunchFile } from '../../web/launch-file.js';
import { startMcpEndpoint } from '../../web/mcp-endpoint.js';
import { createGate, type Gate } from '../gate.js';
import { cliName, logLine, paint } from '../output.js';

/** Where to serve over HTTP, from the config and the command line; undefined for stdio. */
function httpSettings(config: Config, opts: ServeOptions): { host: string; port: number; tokens: string[]; publicUrl?: string } | undefined {
  const kind = opts.transport ?? 'stdio';
  if (kind !== 'stdio' && kind !== 'http') throw new LookfirstError('USAGE', `--transport must be stdio or http, not "${kind}"`);
  if (kind === 'stdio') {
    if (opts.port !== undefined || opts.host !== undefined) throw new LookfirstError('USAGE', '--host and --port apply to --transport http only');
    return undefined;
  }
  const port = opts.port === undefined ? config.http.port : Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new LookfirstError('USAGE', `--port must be a port number (0-65535, 0 picks a free one), not "${opts.port}"`);
  const host = opts.host ?? config.http.host;
  if (!LOOPBACK.has(host) && !config.http.tokenFile)
    throw new LookfirstError(
      'USAGE',
      `serving on ${host}, off this machine's loopback, needs a bearer token: set http.token_file in ${config.file} (a file with at least 32 random characters)`,
    );
  // Read now, before anything starts: a bad token file is a start-up error like a bad config.
  const tokens = config.http.tokenFile ? loadTokens(config.http.tokenFile) : [];
  return { host, port, tokens, publicUrl: config.http.publicUrl };
}

/**
 * Reads `http.token_file`: one bearer token per line (each at least MIN_SECRET_CHARS characters, no two
 * alike; blank lines ignored). Each token is a principal of its own: its sessions, caps and taint memory.
 * @throws LookfirstError `HTTP_TOKEN` naming the line (never its text) when a token is short or repeated.
 */
function loadTokens(path: string): string[] {
  const lines = loadSecret(path, 'http.token_file', 'HTTP_TOKEN').split(/\r?\n/);
  const tokens: string[] = [];
  lines.forEach((raw, i) => {
    const t = raw.trim();
    if (!t) return;
    if (t.length < MIN_SECRET_CHARS)
      throw new LookfirstError(
        'HTTP_TOKEN',
        `http.token_file ${path} line ${i + 1} holds ${t.length} characters; each token needs at least ${MIN_SECRET_CHARS} (e.g. openssl rand -hex 32 >> ${path})`,
      );
    if (tokens.includes(t)) throw new LookfirstError('HTTP_TOKEN', `http.token_file ${path} line ${i + 1} repeats an earlier token: give each client its own`);
    tokens.push(t);
  });
  return tokens;
}

/**
 * Opens the approval page in the person's browser through a launch file (web/launch-file.ts): the
 * launcher's command line holds only the file's path, never the access key. A failure is only reported.
 */
function createBrowserOpener(): { open: (url: string) => void; close: () => void } {
  let launch: LaunchFile | undefined;
  const fallback = () => logLine('could not open a browser; open the approval page address printed above yourself');
  return {
    open(url) {
      try {
        launch ??= createLaunchFile(url);
      } catch (err) {
        logLine(`could not write the file that opens the approval page (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
        return fallback();
      }
      // xdg-open and friends exit non-zero when no browser is there: that is a failure too.
      open(launch.path).then((child) => {
        child.on('error', fallback);
        child.on('exit', (code) => {
          if (code !== null && code !== 0) fallback();
        });
      }, fallback);
    },
    close: () => launch?.remove(),
  };
}

/** Options of `lookfirst serve`. */
export interface ServeOptions {
  config: string;
  /** `stdio` (default) or `http` (Streamable HTTP at /mcp). */
  transport?: string;
  /** Override `http.host` / `http.port`. */
  host?: string;
  port?: string;
  /** Record every call but allowed reads instead of executing it (overrides `dry_run: false`). */
  dryRun?: boolean;
}

/**
 * Runs the gate until the client disconnects (stdio) or a signal arrives; resolves with the exit code.
 * On stdio, a gate that cannot start answers its client's first request with the reason (an error the
 * client shows) and resolves with 1, after printing it to stderr.
 * @throws ConfigError for a bad config or option, LookfirstError when a channel or the endpoint cannot start.
 */
export async function serveCommand(opts: ServeOptions): Promise<number> {
  const stdio = (opts.transport ?? 'stdio') === 'stdio';
  const started = { client: false };
  try {
    return await serveGate(opts, started);
  } catch (err) {
    // On stdio the client is waiting for an answer to initialize: tell it why, or all it shows is
    // "Connection closed". A person at a terminal (stdin a TTY) reads stderr instead. stderr first, as
    // main.ts would: a client that gets the error stops the gate at once, before a later line is written.
    if (!stdio || started.client || process.stdin.isTTY || !(err instanceof LookfirstError)) throw err;
    process.stderr.write(`${paint(process.stderr, 'red', 'lookfirst:')} ${err.message}\n`);
    await answerStartFailure(process.stdin, process.stdout, `lookfirst could not start: ${err.message}`, err.code);
    return 1;
  }
}

/** `serveCommand` itself; `started.client` turns true once the client's transport is connected. */
async function serveGate(opts: ServeOptions, started: { client: boolean }): Promise<number> {
  const loaded = loadConfig(opts.config);
  const config = opts.dryRun ? { ...loaded, dryRun: true } : loaded;
  const http = httpSettings(config, opts);
  // A busy port must fail before any upstream process starts: the address is held while the gate is
  // built and let go just before the endpoint binds it (port 0 picks a free one: nothing to hold).
  let held = http && http.port !== 0 ? await holdPort(http.host, http.port) : undefined;
  const release = async () => {
    const h = held;
    held = undefined;
    if (h) await closeServer(h);
  };
  const opener = process.env.LOOKFIRST_NO_OPEN === '1' ? undefined : createBrowserOpener();
  let gate: Gate;
  try {
    gate = await createGate({ config, openBrowser: opener?.open, observe: true });
  } catch (err) {
    opener?.close();
    await release();
    throw err;
  }
  const { gateway, modern } = gate;
  const cleanup: (() => Promise<void> | void)[] = [];
  if (opener) cleanup.push(opener.close);
  try {
    if (config.dryRun)
      logLine(
        `DRY RUN: reads run for real; every other call is recorded in ${config.audit.logPath} and answered as not executed. When the session is over, stop the gate, then review and replay the recorded calls with: ${cliName()} promote ${config.audit.logPath} --config ${config.file} --dry-run (then without --dry-run)`,
      );
    if (config.privacy) {
      const where = config.upstreams.map((u) => `${u.name}: ${u.resolve ?? 'always'}`).join(', ');
      logLine(
        `privacy filter on: private values reach the client as placeholders (kept ${config.privacy.ttlMs / 1000} s in the state store, which holds the real values: keep it private); real values go back per upstream (${where})${config.redact ? '; redaction hook loaded' : ''}`,
      );
    } else if (config.redact) logLine('redaction hook loaded: every preview passes through it before anyone sees it');
    const tools = gateway.catalogue.all().length;
    logLine(
      `serving ${tools} tool${tools === 1 ? '' : 's'} from ${config.upstreams.length} upstream${config.upstreams.length === 1 ? '' : 's'}; audit log ${config.audit.logPath}; state in ${storeWords(config)}`,
    );
    let transport: LineServerTransport | undefined;
    if (http) {
      const token = http.tokens.length > 0;
      await release();
      const endpoint = await startMcpEndpoint({
        host: http.host,
        port: http.port,
        tokens: http.tokens,
        publicUrl: http.publicUrl,
        gateway,
        modern,
        log: logLine,
        onRefused: gate.refused,
      });
      cleanup.unshift(() => endpoint.close());
      logLine(
        `MCP endpoint at ${endpoint.url} (Streamable HTTP)${token ? `; every request needs a bearer token (${http.tokens.length} configured, each its own principal)` : ''}`,
      );
      if (http.host === '0.0.0.0' || http.host === '::')
        logLine(
          `listening on every interface: clients use this machine's address (http://<address>:${endpoint.port}/mcp)${http.publicUrl ? ` or ${http.publicUrl}` : ''}`,
        );
      if (!token)
        logLine('warning: no http.token_file: every process on this machine can call tools through the gate. Set http.token_file to require a bearer token.');
    } else {
      transport = new LineServerTransport(process.stdin, process.stdout, MAX_MESSAGE_BYTES);
      started.client = true;
      const closeModern = await serveBothEras(transport, { legacy: (t) => gateway.serve(t), modern, log: logLine });
      cleanup.unshift(closeModern);
    }
    return await new Promise<number>((resolve) => {
      let stopping = false;
      const stop = async (why: string) => {
        if (stopping) return;
        stopping = true;
        // Before the endpoint closes its sessions: their shared questions stay open (gateway.stopping).
        gate.gateway.stopping();
        for (const c of cleanup) await c();
        await gate.close(why);
        // A client that keeps stdin open (or a signal) must not keep the process alive.
        if (transport) process.stdin.destroy();
        resolve(0);
      };
      if (transport) {
        process.stdin.once('end', () => void stop('client disconnected'));
        process.stdin.once('close', () => void stop('client disconnected'));
        // Chain, not replace: the SDK's own close handler aborts every call still waiting for a person.
        const sdkOnClose = transport.onclose;
        transport.onclose = () => {
          sdkOnClose?.();
          void stop('client disconnected');
        };
      }
      process.once('SIGINT', () => void stop('SIGINT'));
      process.once('SIGTERM', () => void stop('SIGTERM'));
    });
  } catch (err) {
    await release();
    for (const c of cleanup) await c();
    await gate.close(`failed to start: ${(err as Error).message.slice(0, 200)}`);
    throw err;
  }
}

/**
 * Binds host:port with a plain listener that accepts nothing useful, so that a port in use is found
 * before anything else starts (the endpoint itself needs the gateway, built after the upstreams).
 * @throws LookfirstError `WEB_UNAVAILABLE` with the endpoint's own sentence when the address is taken.
 */
async function holdPort(host: string, port: number): Promise<Server> {
  // Requests that arrive in the short wait are dropped: the client retries once the gate is up.
  const server = createServer((req) => req.socket.destroy());
  await listen(server, host, port, 'MCP endpoint', '--port (or http.port)');
  return server;
}

/** Where the gate keeps its state, in words for the start message. */
function storeWords(config: Config): string {
  const s = config.store;
  if (s.kind === 'sqlite') return s.path;
  if (s.kind === 'postgres') return `PostgreSQL at ${new URL(s.url).host || 'the configured url'}`;
  return 'memory (lost at exit)';
}
