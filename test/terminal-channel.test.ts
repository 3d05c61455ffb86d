/**
 * The terminal channel under tmux: the gate runs with MCP on stdin/stdout and asks on its controlling
 * terminal (the tmux pane). Only `y` or `yes` approves; Enter, `n`, end of input (Ctrl-D) deny; a gate
 * with no controlling terminal cannot ask there and says so.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FS_SERVER, MAIN, NODE, ROOT, tmp, waitFor, writeConfig } from './helpers.js';

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });

function setup() {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  timeout_seconds: 30\n  elicitation: false\n  terminal: true\n`,
  );
  return { dir, data, config };
}

/** Runs the agent in a fresh tmux session, answers the prompt with `keys`, returns the result and what the pane showed. */
async function inTmux(config: string, args: Record<string, unknown>, keys: string[]): Promise<{ result: Record<string, unknown>; screen: string }> {
  const session = `lf-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const out = join(tmp('lf-tty-'), 'result.json');
  const agent = join(ROOT, 'test/fixtures/tty-agent.mjs');
  const cmd = [NODE, agent, MAIN, config, out, 'write_file', JSON.stringify(args)].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  // The pane gets the tmux server's environment, and a server started by another test file may hold a
  // TMPDIR that test/temp-guard.ts has since removed: pass this file's own.
  tmux('new-session', '-d', '-s', session, '-e', `TMPDIR=${tmpdir()}`, '-x', '160', '-y', '60', `cd '${ROOT}' && ${cmd}; sleep 30`);
  try {
    const screen = () => tmux('capture-pane', '-p', '-t', session);
    assert.ok(await waitFor(() => /Approve\? \[y\/N\]/.test(screen()), 20_000), `no prompt on the terminal:\n${screen()}`);
    const shown = screen();
    for (const k of keys) tmux('send-keys', '-t', session, ...(k === 'C-d' || k === 'Enter' ? [k] : ['-l', k]));
    assert.ok(await waitFor(() => existsSync(out), 20_000), `no result:\n${screen()}`);
    await new Promise((r) => setTimeout(r, 200));
    return { result: JSON.parse(readFileSync(out, 'utf8')), screen: `${shown}\n---\n${screen()}` };
  } finally {
    tmux('kill-session', '-t', session);
  }
}

const verdict = (r: Record<string, unknown>) => (r._meta as { lookfirst?: Record<string, unknown> } | undefined)?.lookfirst;

describe('terminal channel (tmux)', () => {
  it('asks on the terminal with the full arguments, and y approves', async () => {
    const { data, config } = setup();
    const path = join(data, 'tty.txt');
    const { result, screen } = await inTmux(config, { path, content: 'typed \u202e yes' }, ['y', 'Enter']);
    assert.match(screen, /lookfirst holds a call: write_file on files/);
    assert.match(screen, /typed \\u202e yes/, 'the bidi override is shown as an escape');
    assert.equal(verdict(result)?.outcome, 'executed', screen);
    assert.equal(verdict(result)?.approved_by, `terminal:${userInfo().username}`);
    assert.equal(readFileSync(path, 'utf8'), 'typed \u202e yes');
  });

  it('treats yes (any case) as approval', async () => {
    const { data, config } = setup();
    const { result } = await inTmux(config, { path: join(data, 'yes.txt'), content: 'x' }, ['YES', 'Enter']);
    assert.equal(verdict(result)?.outcome, 'executed');
  });

  for (const [what, keys] of [
    ['Enter alone', ['Enter']],
    ['n', ['n', 'Enter']],
    ['yess', ['yess', 'Enter']],
    ['end of input (Ctrl-D)', ['C-d']],
  ] as const) {
    it(`treats ${what} as No: nothing is written`, async () => {
      const { data, config, dir } = setup();
      const path = join(data, 'no.txt');
      const { result, screen } = await inTmux(config, { path, content: 'x' }, [...keys]);
      assert.equal(verdict(result)?.outcome, 'denied', screen);
      assert.equal(existsSync(path), false);
      const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
      assert.match(log, /"trust":"local-terminal"/);
    });
  }

  it('without a controlling terminal, denies and says so', async () => {
    const { data, config } = setup();
    // setsid starts the gate in a new session: it has no controlling terminal, as under a service manager.
    const client = new Client({ name: 'no-tty', version: '1.0.0' }, { capabilities: {} });
    const transport = new StdioClientTransport({
      command: 'setsid',
      args: [NODE, MAIN, 'serve', '--config', config],
      stderr: 'pipe',
      env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1' },
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    await client.connect(transport);
    const path = join(data, 'none.txt');
    const result = (await client.callTool({ name: 'write_file', arguments: { path, content: 'x' } })) as Record<string, unknown>;
    await client.close();
    assert.equal(verdict(result)?.outcome, 'denied');
    assert.match(String(verdict(result)?.reason), /terminal: no controlling terminal/);
    assert.match(stderr, /confirm\.terminal is on but this process has no controlling terminal/);
    assert.equal(existsSync(path), false);
  });
});
