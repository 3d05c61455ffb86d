/**
 * `lookfirst demo`: offline, self-contained, and honest about what it shows.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MAIN, NODE, runCli } from './helpers.js';

/** The folder the demo says it works in. */
const folderOf = (stdout: string): string => {
  const dir = /everything lives in (\S+)/.exec(stdout)?.[1];
  assert.ok(dir, stdout);
  return dir;
};

describe('lookfirst demo', () => {
  it('with --yes: the read passes, the transfer runs, the log verifies, and the edited line is named', () => {
    const r = runCli(['demo', '--yes']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Balance: 1250\.00 EUR/);
    assert.match(r.stdout, /"outcome":"executed"/);
    assert.match(r.stdout, /Balance: 1000\.00 EUR/);
    assert.match(r.stdout, /entries: intact/);
    const edited = /edited line was (\d+)/.exec(r.stdout)?.[1];
    assert.ok(edited);
    assert.match(r.stdout, new RegExp(`line ${edited}: entry edited`));
    assert.equal(existsSync(folderOf(r.stdout)), false, 'the demo removes its folder (key, log) when it ends');
  });

  it('with --keep: keeps its folder and says how to verify it by hand', (t) => {
    const r = runCli(['demo', '--yes', '--keep']);
    const dir = folderOf(r.stdout);
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.ok(existsSync(`${dir}/audit.jsonl`));
    assert.match(r.stdout, /Try it yourself: .*verify-log --config \S+lookfirst\.yaml/);
  });

  it('on SIGTERM: stops the gate and removes its folder', async () => {
    const child = spawn(NODE, [MAIN, 'demo'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
    });
    // Signalled as soon as the folder is named: the gate is starting (a node process, well over the 50 ms
    // poll), so the demo is mid-run, and exit code 143 shows the signal path, not a normal end, ran.
    while (!/everything lives in/.test(stdout)) await new Promise((r) => setTimeout(r, 50));
    const dir = folderOf(stdout);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    assert.equal(code, 143);
    assert.equal(existsSync(dir), false, 'removed on SIGTERM');
  });

  it('without a terminal: no means no, and the money stays', () => {
    const r = runCli(['demo']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\(no terminal to ask: denied\)/);
    assert.match(r.stdout, /result: NOT executed: no terminal to ask, so denied/);
    assert.doesNotMatch(r.stdout, /result: .*the person answered no/, 'nobody was asked: the demo says so');
    assert.match(r.stdout, /transfers 250\.00 EUR to/, 'the prompt shows the currency');
    assert.match(r.stdout, /"outcome":"denied"/);
    assert.doesNotMatch(r.stdout, /Balance: 1000\.00/);
  });
});
