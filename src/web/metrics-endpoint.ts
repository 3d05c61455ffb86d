/**
 * `GET /metrics`: the gate's Prometheus endpoint (`metrics.enabled`), on a listener of its own so that a
 * scraper never reaches the approval page or the MCP endpoint, nor they it. Read-only and without a
 * token, as Prometheus scrapes: it shows counts, durations and upstream names, never a tool's
 * arguments, a principal or a token (gateway/metrics.ts). It listens on loopback by default; bound to
 * loopback, a request whose Host is not a loopback name is refused (a web page in the person's browser
 * could otherwise read it through DNS rebinding).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { LOOPBACK } from '../config/schema.js';
import { close, header, listen, send } from './http.js';

/** What the endpoint serves: the exposition text and its Content-Type. */
export interface MetricsSource {
  scrape(): Promise<string>;
  readonly contentType: string;
}

/** A listening metrics endpoint. */
export interface MetricsEndpoint {
  /** `http://host:port/metrics`, with the port the system picked when 0 was asked. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the endpoint.
 * @throws LookfirstError `WEB_UNAVAILABLE` when host:port cannot be bound (the sentence names `metrics.port`).
 */
export async function startMetricsEndpoint(opts: { host: string; port: number; source: MetricsSource }): Promise<MetricsEndpoint> {
  const loopbackOnly = LOOPBACK.has(opts.host);
  const server = createServer((req, res) => void handle(req, res, opts.source, loopbackOnly));
  const port = await listen(server, opts.host, opts.port, 'metrics endpoint', 'metrics.port');
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return { url: `http://${shown}:${port}/metrics`, port, close: () => close(server) };
}

async function handle(req: IncomingMessage, res: ServerResponse, source: MetricsSource, loopbackOnly: boolean): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (loopbackOnly && !isLoopbackHost(header(req, 'host'))) return send(res, 403, 'metrics are served to this machine only\n', 'text/plain; charset=utf-8');
  if (path !== '/metrics') return send(res, 404, 'not found: the metrics are at /metrics\n', 'text/plain; charset=utf-8');
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'use GET\n', 'text/plain; charset=utf-8', { allow: 'GET, HEAD' });
  try {
    const text = await source.scrape();
    send(res, 200, req.method === 'HEAD' ? '' : text, source.contentType);
  } catch (err) {
    send(res, 500, `the metrics could not be collected: ${(err as Error).message}\n`, 'text/plain; charset=utf-8');
  }
}

/**
 * Whether a Host header names this machine (`127.0.0.1:9464`, `localhost`, `[::1]:9464`): the whole
 * header must be a loopback name with at most a port (RFC 9110 §7.2: `uri-host [ ":" port ]`), so that
 * `[::1]evil` or `localhost:80:81` are refused rather than read by their first part.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  const m = host === undefined ? null : /^(?:\[([^\]]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(host);
  if (m === null) return false;
  return LOOPBACK.has((m[1] ?? m[2] ?? '').toLowerCase());
}
