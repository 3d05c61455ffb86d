/**
 * One upstream MCP server, seen from the gate: an SDK Client on stdio or Streamable HTTP, connected at
 * start and, after a crash, lazily reconnected (at most once a second). A request that was in flight when
 * the connection died fails with ConnectionClosed and is never re-sent: replaying a write is worse than
 * reporting that its outcome is unknown.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type Notification, type Result, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamConfig } from '../config/load.js';
import { RAW_RESULT } from './raw.js';

/** Largest message accepted from a stdio upstream (bytes). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const RECONNECT_INTERVAL_MS = 1000;

/** Options of one forwarded request. */
export interface ForwardOptions {
  signal?: AbortSignal;
  /** Called with each progress notification's params (without the upstream's token). */
  onprogress?: (progress: Record<string, unknown>) => void;
}

/** Events an upstream reports to the gateway. */
export interface UpstreamEvents {
  notification: (upstream: Upstream, n: Notification) => void;
  log: (message: string) => void;
}

/** A connection to one upstream server. */
export class Upstream {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private lastAttemptMs = 0;
  private lastError = '';
  /** Lines on stdout that were not JSON-RPC (dropped, counted). */
  noiseLines = 0;

  constructor(
    readonly config: UpstreamConfig,
    private readonly events: UpstreamEvents,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** Capabilities the upstream declared, once connected. */
  get capabilities(): ServerCapabilities | undefined {
    return this.client?.getServerCapabilities();
  }

  /** The upstream's `instructions` from initialize, once connected. */
  get instructions(): string | undefined {
    return this.client?.getInstructions();
  }

  /** True while a connection is open. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /**
   * Connects (or returns the open connection).
   * @throws McpError ConnectionClosed with a sentence naming the upstream when it cannot be reached.
   */
  async connect(): Promise<Client> {
    if (this.client) return this.client;
    if (this.connecting) return this.connecting;
    const now = Date.now();
    if (now - this.lastAttemptMs < RECONNECT_INTERVAL_MS && this.lastError) {
      throw this.unavailable(this.lastError);
    }
    this.lastAttemptMs = now;
    this.connecting = this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<Client> {
    const client = new Client({ name: 'lookfirst', version: '0.1.0' }, { capabilities: {} });
    client.fallbackNotificationHandler = async (n) => this.events.notification(this, n);
    client.onerror = (err) => {
      // Non-protocol lines on a stdio upstream's stdout (version banners, log lines) land here.
      if (err instanceof SyntaxError || err.name === 'ZodError' || /JSON/.test(err.message)) {
        this.noiseLines++;
        this.events.log(`upstream ${this.name}: dropped a non-protocol line on stdout (${this.noiseLines} so far)`);
      } else {
        this.events.log(`upstream ${this.name}: ${err.message}`);
      }
    };
    client.onclose = () => {
      if (this.client === client) {
        this.client = undefined;
        this.lastError = 'the connection closed';
        this.events.log(`upstream ${this.name}: connection closed; it will be reconnected on next use`);
      }
    };
    try {
      await client.connect(this.transport(), { timeout: this.config.timeoutMs });
    } catch (err) {
      this.lastError = (err as Error).message;
      await client.close().catch(() => {});
      throw this.unavailable(this.lastError);
    }
    this.lastError = '';
    this.client = client;
    return client;
  }

  private transport(): Transport {
    const c = this.config;
    if (c.kind === 'http') return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers } });
    const t = new StdioClientTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      // The SDK passes only a handful of variables to the child; the user's `env` is added on top.
      env: { ...getDefaultEnvironment(), ...c.env },
      stderr: 'pipe',
      // The SDK's default stdio buffer (10 MB) fails larger results; lookfirst documents 64 MiB.
      maxBufferSize: MAX_MESSAGE_BYTES,
    });
    let partial = '';
    t.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.events.log(`[${c.name}] ${line}`);
    });
    return t;
  }

  private unavailable(reason: string): McpError {
    return new McpError(ErrorCode.ConnectionClosed, `upstream "${this.name}" is not reachable (${reason}); check its command or url in the config`);
  }

  /**
   * Sends one request and returns the upstream's result exactly as sent.
   * @throws McpError: the upstream's own JSON-RPC error, or ConnectionClosed / RequestTimeout.
   */
  async request(method: string, params: Record<string, unknown> | undefined, opts: ForwardOptions = {}): Promise<Result> {
    const client = this.client ?? (await this.connect());
    return client.request({ method, params } as never, RAW_RESULT, {
      signal: opts.signal,
      timeout: this.config.timeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: opts.onprogress as never,
    });
  }

  /** Sends a notification if connected (dropped otherwise: there is nobody to tell). */
  async notify(n: Notification): Promise<void> {
    await this.client?.notification(n as never).catch(() => {});
  }

  /** Closes the connection (stops a stdio child). */
  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.close().catch(() => {});
  }
}
