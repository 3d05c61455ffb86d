/**
 * `lookfirst serve --transport http` for end-to-end tests: the fake upstream (its side effects counted),
 * the web page on, a short hold, and a bearer token unless asked otherwise.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { FAKE_UPSTREAM, linesIn, MAIN, NODE, tmp, waitFor, writeConfig } from './helpers.js';
import { pageAddress } from './web-page.js';

export const TOKEN = 't0ken-'.repeat(8);
const procs: ChildProcess[] = [];
after(() => {
  for (const p of procs) p.kill('SIGTERM');
});

/** Starts the gate over HTTP; `extra` is appended to its config; `tokens` go into its token file, one a line. */
export async function httpGate(extra = '', withToken = true, elicitation = false, tokens: string[] = [TOKEN]) {
  const dir = tmp();
  const effects = join(dir, 'effects.txt');
  writeFileSync(join(dir, 'token.txt'), `${tokens.join('\n')}\n`);
  const config = writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', effects])}\nconfirm:\n  elicitation: ${elicitation}\n  timeout_seconds: 30\n  hold_seconds: 2\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\n${withToken ? 'http:\n  token_file: token.txt\n' : ''}${extra}`,
  );
  const served = await serveHttp(config);
  const page = await pageAddress(served.stderr);
  const executed = () => linesIn(effects);
  return { dir, port: served.port, page, stderr: served.stderr, executed, stop: () => served.kill('SIGTERM'), url: served.url };
}

/** A running `lookfirst serve --transport http` (on a free port), killed at the end of the test file. */
export interface ServedHttp {
  proc: ChildProcess;
  port: number;
  url: URL;
  stderr: () => string;
  /** Sends the signal and waits for the exit (nothing when it already exited). */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
}

/** Starts `lookfirst serve --config <config> --transport http --port 0` and waits (15 s) for its endpoint. */
export async function serveHttp(config: string): Promise<ServedHttp> {
  const proc = spawn(NODE, [MAIN, 'serve', '--config', config, '--transport', 'http', '--port', '0'], {
    env: { ...process.env, LOOKFIRST_NO_OPEN: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  procs.push(proc);
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  assert.ok(await waitFor(() => /MCP endpoint at/.test(err), 15_000), err);
  const port = Number(/MCP endpoint at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)![1]);
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    await new Promise((r) => proc.once('exit', r));
  };
  return { proc, port, url: new URL(`http://127.0.0.1:${port}/mcp`), stderr: () => err, kill };
}
