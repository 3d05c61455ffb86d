/**
 * Transport to a stdio upstream: starts the server as a child process and speaks MCP lines on its
 * stdin/stdout (see lines.ts for why not the SDK's own). The child gets the SDK's minimal default
 * environment plus the config's `env`, never the gate's whole environment; its stderr lines go to `onStderr`.
 * Closing ends its stdin, then sends SIGTERM after 2 s and SIGKILL after 2 s more.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_MESSAGE_BYTES, LineReader, serializeLine } from './lines.js';

/** How to start the child. */
export interface ChildSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  onStderr: (line: string) => void;
  maxBytes?: number;
}

const GRACE_MS = 2000;

/** MCP client transport over a child process's stdio. */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;

  constructor(private readonly spec: ChildSpec) {}

  /** Spawns the child; resolves once it runs. @throws Error when it cannot be started (ENOENT, EACCES). */
  start(): Promise<void> {
    const s = this.spec;
    return new Promise((resolve, reject) => {
      const child = spawn(s.command, s.args, { cwd: s.cwd, env: { ...getDefaultEnvironment(), ...s.env }, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
      this.child = child;
      const reader = new LineReader(
        (m) => this.onmessage?.(m),
        (e) => this.onerror?.(e),
        s.maxBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      );
      child.stdout!.on('data', (c: Buffer) => reader.push(c));
      let partial = '';
      child.stderr!.on('data', (c: Buffer) => {
        const lines = (partial + c.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) if (l.trim()) s.onStderr(l.replace(/\r$/, ''));
      });
      child.stdin!.on('error', (e) => this.onerror?.(e));
      child.once('error', (e) => {
        if (this.child === child) this.child = undefined;
        reject(e);
        this.onclose?.();
      });
      child.once('spawn', () => resolve());
      child.once('close', () => {
        if (this.child === child) this.child = undefined;
        this.onclose?.();
      });
    });
  }

  /** Process id of the child while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return reject(new Error('Not connected'));
      if (stdin.write(serializeLine(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    const exited = new Promise<void>((r) => child.once('close', () => r()));
    const wait = () => Promise.race([exited, new Promise<void>((r) => setTimeout(r, GRACE_MS).unref())]);
    child.stdin?.end();
    await wait();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await wait();
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
