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
  const proc = spawn(NODE, [MAIN, 'serve', '--config', config, '--transport', 'http', '--port', '0'], {
    env: { ...process.env, LOOKFIRST_NO_OPEN: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  procs.push(proc);
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  assert.ok(await waitFor(() => /MCP endpoint at/.test(err), 10_000), err);
  const port = Number(/MCP endpoint at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)![1]);
  const page = await pageAddress(() => err);
  const executed = () => linesIn(effects);
  const stop = async () => {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  };
  return { dir, port, page, stderr: () => err, executed, stop, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}
