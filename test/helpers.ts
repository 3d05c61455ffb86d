/**
 * Shared harness for the end-to-end suites: temp folders, configs, the real gate as a child process
 * (the built CLI, exactly as a client starts it), and the SDK's Client as the agent.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateAuditKey } from '../src/audit/keys.js';
import { tempDir } from './temp.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MAIN = join(ROOT, 'dist/cli/main.js');
export const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const MEMORY_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const EVERYTHING_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FAKE_UPSTREAM = join(ROOT, 'test/fixtures/fake-upstream.mjs');
export const NODE = process.execPath;

/** A fresh temp folder, removed when the test process ends at the latest (test/temp.ts). */
export function tmp(prefix = 'lf-e2e-'): string {
  return tempDir(prefix);
}

/** Writes lookfirst.yaml (and, unless told not to, a key pair) into `dir`; returns the config path. */
export function writeConfig(dir: string, yaml: string, opts: { keygen?: boolean } = {}): string {
  const path = join(dir, 'lookfirst.yaml');
  writeFileSync(path, yaml);
  if (opts.keygen !== false) generateAuditKey(join(dir, 'audit.key'), join(dir, 'audit.pub'));
  return path;
}

/** YAML for a stdio upstream running a node script. */
export function nodeUpstream(name: string, script: string, args: string[] = [], extra = ''): string {
  return `  ${name}:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([script, ...args])}\n${extra}`;
}

/** How the stand-in human answers elicitation. */
export type Human = (message: string) => Promise<ElicitResult> | ElicitResult;

export const approve: Human = () => ({ action: 'accept', content: { approve: true } });
export const decline: Human = () => ({ action: 'decline' });

/** A connected agent: the SDK Client talking to a real gate process. */
export interface Agent {
  client: Client;
  stderr: () => string;
  /** Messages the human was shown. */
  asked: string[];
  call(
    name: string,
    args?: Record<string, unknown>,
    opts?: { timeout?: number; signal?: AbortSignal; onprogress?: (p: unknown) => void },
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * Starts `lookfirst serve --config <config>` and connects an SDK Client to it.
 * @param human elicitation handler; undefined → the client does not declare elicitation;
 *   'declared-but-unhandled' → it declares elicitation but answers -32601 (shared cases BR-15 b).
 */
export async function startAgent(
  config: string,
  human?: Human | 'declared-but-unhandled',
  env: Record<string, string> = {},
  serveArgs: string[] = [],
): Promise<Agent> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' }, { capabilities: human ? { elicitation: { form: {} } } : {} });
  const asked: string[] = [];
  if (typeof human === 'function') {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return human(req.params.message);
    });
  }
  const transport = new StdioClientTransport({
    command: NODE,
    args: [MAIN, 'serve', '--config', config, ...serveArgs],
    stderr: 'pipe',
    maxBufferSize: 64 * 1024 * 1024,
    // Tests never open a browser window.
    env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1', ...env },
  });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  await client.connect(transport);
  return {
    client,
    stderr: () => err,
    asked,
    call: (name, args = {}, opts = {}) =>
      client.request({ method: 'tools/call', params: { name, arguments: args } }, ResultSchema, {
        timeout: opts.timeout ?? 30_000,
        signal: opts.signal,
        onprogress: opts.onprogress as never,
      }) as Promise<Record<string, unknown>>,
    close: async () => {
      await client.close();
      // Let the gate write its final head before the test reads the log.
      await waitFor(() => transport.pid === null || !isAlive(transport.pid), 5000);
    },
  };
}

/** A plain SDK client straight to a server (the "direct" baseline). */
export async function connectDirect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'pipe' }));
  return client;
}

export { CallToolResultSchema, ResultSchema };

/** The lookfirst verdict from a result's `_meta`. */
export function verdictOf(result: Record<string, unknown>): Record<string, unknown> | undefined {
  return (result._meta as { lookfirst?: Record<string, unknown> } | undefined)?.lookfirst;
}

/** Text of all text blocks. */
export function textOf(result: Record<string, unknown>): string {
  return ((result.content as { type: string; text?: string }[]) ?? []).map((c) => c.text ?? '').join('');
}

/**
 * A gate config in front of server-filesystem serving a fresh `data` folder that holds `files` (name →
 * text); `extra` is more YAML after `upstreams`.
 */
export function filesystemGate(extra = '', files: Record<string, string> = {}): { dir: string; data: string; config: string } {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(data, name), text);
  const config = writeConfig(dir, `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${extra}`);
  return { dir, data, config };
}

/** Runs the CLI to completion. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(NODE, [MAIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', LOOKFIRST_NO_OPEN: '1', ...opts.env },
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs the CLI to completion without blocking this process (a command that starts servers of its own, as
 * `check` does, while the test serves something too); killed after `timeoutMs`.
 */
export function runCliAsync(args: string[], timeoutMs = 120_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [MAIN, ...args], { env: { ...process.env, NO_COLOR: '1', LOOKFIRST_NO_OPEN: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Polls until `check` is true or `ms` pass. */
export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Lines in a side-effects file written by the fake upstream: how many writes really ran (0 when absent). */
export function linesIn(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0;
}

/** The entries of `<dir>/audit.jsonl`, parsed. */
export function auditEntries(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
