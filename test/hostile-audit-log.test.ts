/**
 * `lookfirst tail` and `lookfirst stats` on a hostile or broken audit log (they read it unverified):
 * escape sequences, C1 controls and bidi overrides in a tool name never reach the terminal raw, in lines
 * or in --json; a `ts` no Date can show is skipped, not a crash; a log replaced by a FIFO, a directory or
 * /dev/zero is refused at once with a sentence; a multi-GB sparse file is read in bounded memory; --since
 * and -n edge values are answered.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, ftruncateSync, mkdirSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MAIN, NODE, runCli, tmp, writeConfig } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function gateDir(): { dir: string; config: string; log: string } {
  const dir = tmp('lf-hostile-log-');
  dirs.push(dir);
  const config = writeConfig(dir, `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: []\n`, { keygen: false });
  return { dir, config, log: join(dir, 'audit.jsonl') };
}

const NOW = Date.now();
const entry = (seq: number, fields: Record<string, unknown>) => `${JSON.stringify({ v: 1, seq, ts: NOW - 60_000 + seq, prev: '0', sig: 'x', ...fields })}\n`;
const EVIL = 'evil\u001b]0;pwned\u0007\u009b31m\u202etxt.exe\u2028next';
/** Anything a terminal acts on or reorders with: C0 but newline, DEL, C1, bidi, line separators. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

describe('tail and stats on a hostile audit log', () => {
  it('never print a control, C1 or bidi character from a tool name, approver or reason raw, in lines or --json', () => {
    const { config, log } = gateDir();
    writeFileSync(
      log,
      entry(0, { event: 'read', tool: EVIL, outcome: 'ok' }) +
        entry(1, { event: 'call_received', call_id: `c1${EVIL}`, tool: EVIL }) +
        entry(2, { event: 'decision', call_id: `c1${EVIL}`, action: 'confirm' }) +
        entry(3, { event: 'approval', call_id: `c1${EVIL}`, approved: false, channel: EVIL, actor: EVIL, reason: EVIL }),
    );
    for (const args of [['tail', '-n', '5'], ['tail', '-n', '5', '--json'], ['stats'], ['stats', '--json']]) {
      const child = args[0] === 'tail' ? tailOnce(args.slice(1), config) : runCli([...args, '--config', config]);
      assert.equal(child.status, 0, `${args.join(' ')}: ${child.stderr}`);
      assert.match(child.stdout, /evil/, args.join(' '));
      assert.doesNotMatch(child.stdout, RAW, `${args.join(' ')} printed a raw control: ${JSON.stringify(child.stdout)}`);
      if (args.includes('--json')) for (const l of child.stdout.trim().split('\n')) JSON.parse(l);
    }
    const json = JSON.parse(runCli(['stats', '--json', '--config', config]).stdout) as { by_tool: Record<string, number> };
    assert.equal(json.by_tool[EVIL], 2, 'the --json output means the same, escapes and all');
  });

  it('skip a line whose ts no Date can show, and count it, instead of crashing', () => {
    const { config, log } = gateDir();
    writeFileSync(
      log,
      `${JSON.stringify({ seq: 0, ts: 1e300, event: 'read', tool: 'x', outcome: 'ok' })}\n${entry(1, { event: 'read', tool: 'fine', outcome: 'ok' })}`,
    );
    const stats = runCli(['stats', '--config', config]);
    assert.equal(stats.status, 0, stats.stderr);
    assert.match(stats.stdout, /^1 call: 1 read, 0 decisions /);
    assert.match(stats.stderr, /1 line .* not entries/);
    const tail = tailOnce(['-n', '5'], config);
    assert.equal(tail.status, 0, tail.stderr);
    assert.match(tail.stdout, /fine/);
  });

  it('answer --since edge values: a duration before 1970 is the whole log, nonsense is a usage error', () => {
    const { config, log } = gateDir();
    writeFileSync(log, entry(0, { event: 'read', tool: 'fine', outcome: 'ok' }));
    for (const since of ['99999999999w', `${'9'.repeat(400)}d`]) {
      const r = runCli(['stats', '--since', since, '--config', config]);
      assert.equal(r.status, 0, `${since}: ${r.stderr}`);
      assert.match(r.stdout, /^1 call: 1 read, 0 decisions from 1970-01-01T00:00:00Z/);
    }
    for (const since of ['0h', '-1h', 'NaN', '3000-01-01', '']) {
      const r = runCli(['stats', '--since', since, '--config', config]);
      assert.equal(r.status, 1, `${since}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /--since/);
    }
  });

  it('refuse -n values that are not a whole number, rather than read them as Number() does', () => {
    const { config, log } = gateDir();
    writeFileSync(log, entry(0, { event: 'read', tool: 'fine', outcome: 'ok' }));
    for (const n of ['-1', 'abc', '', '0x10', '1e3', '1.5', 'Infinity']) {
      const r = runCli(['tail', '-n', n, '--config', config]);
      assert.equal(r.status, 1, `-n ${JSON.stringify(n)}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /whole number/);
    }
    const huge = tailOnce(['-n', '999999999999999'], config);
    assert.equal(huge.status, 0, huge.stderr);
    assert.match(huge.stdout, /fine/);
    const none = tailOnce(['-n', '0'], config);
    assert.equal(none.status, 0, none.stderr);
    assert.equal(none.stdout, '');
  });

  it('refuse a log that is a FIFO, a directory or a device at once, naming what it is', () => {
    const cases: [string, (log: string) => void, RegExp][] = [
      ['a FIFO', (log) => execFileSync('mkfifo', [log]), /FIFO/],
      ['a directory', (log) => mkdirSync(log), /directory/],
      ['a link to /dev/zero', (log) => symlinkSync('/dev/zero', log), /device/],
    ];
    for (const [what, make, said] of cases) {
      const { config, log } = gateDir();
      make(log);
      const started = Date.now();
      const stats = runCli(['stats', '--config', config]);
      assert.equal(stats.status, 1, `${what}: ${stats.stdout}${stats.stderr}`);
      assert.match(stats.stderr, said, what);
      assert.match(stats.stderr, /not a file/, what);
      const tail = tailOnce([], config);
      assert.equal(tail.status, 1, `${what}: ${tail.stdout}${tail.stderr}`);
      assert.match(tail.stderr, said, what);
      assert.ok(Date.now() - started < 20_000, `${what}: answered at once`);
    }
  });

  it('check, pilot-status and verify-log refuse a log, head or public key that is a FIFO or a device at once', { timeout: 180_000 }, () => {
    const cases: [string, (dir: string) => void, RegExp][] = [
      ['a FIFO log', (dir) => execFileSync('mkfifo', [join(dir, 'audit.jsonl')]), /audit\.log .* is a FIFO/],
      ['a log linked to /dev/zero', (dir) => symlinkSync('/dev/zero', join(dir, 'audit.jsonl')), /audit\.log .* is a device/],
      [
        'a FIFO head',
        (dir) => {
          writeFileSync(join(dir, 'audit.jsonl'), '');
          execFileSync('mkfifo', [join(dir, 'audit.jsonl.head')]);
        },
        /head .* is a FIFO/,
      ],
      [
        'a public key linked to /dev/zero',
        (dir) => {
          writeFileSync(join(dir, 'audit.jsonl'), '');
          rmSync(join(dir, 'audit.pub'));
          symlinkSync('/dev/zero', join(dir, 'audit.pub'));
        },
        /audit\.pub .* is a device/,
      ],
    ];
    for (const [what, make, said] of cases) {
      const { dir, config } = gateDir();
      writeConfig(dir, `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ["-e", "1"]\n`);
      make(dir);
      for (const args of [['check', '--timeout', '1'], ['pilot-status', '--timeout', '1'], ['verify-log']]) {
        const started = Date.now();
        const r = runCli([...args, '--config', config]);
        assert.ok(r.status === 1 || r.status === 2, `${what}, ${args[0]}: status ${r.status} ${r.stdout}${r.stderr}`);
        assert.match(r.stdout + r.stderr, said, `${what}, ${args[0]}`);
        assert.ok(Date.now() - started < 25_000, `${what}, ${args[0]}: answered at once`);
      }
    }
  });

  it('read a 3 GB sparse log (zeros, no newline) and a huge line in bounded memory', { timeout: 120_000 }, () => {
    const { config, log } = gateDir();
    writeFileSync(log, entry(0, { event: 'read', tool: 'before', outcome: 'ok' }));
    const fd = openSync(log, 'r+');
    ftruncateSync(fd, 3 * 1024 ** 3);
    closeSync(fd);
    appendFileSync(log, `\n${entry(1, { event: 'read', tool: 'after', outcome: 'ok' })}`);
    // 256 MB of heap: the old reading (readFileSync, then a copy per chunk) could not hold the file.
    const stats = runCli(['stats', '--json', '--config', config], { env: { NODE_OPTIONS: '--max-old-space-size=256' } });
    assert.equal(stats.status, 0, stats.stderr);
    assert.deepEqual((JSON.parse(stats.stdout) as { by_tool: unknown }).by_tool, { after: 1, before: 1 });
    assert.match(stats.stderr, /1 line .* not entries/);
  });
});

/**
 * `tail` until it has read what is there, then Ctrl-C: its output and exit code. Ctrl-C comes a second
 * after its first output, or after 6 s when it prints nothing (-n 0); a refusal exits before that.
 */
function tailOnce(args: string[], config: string): { status: number | null; stdout: string; stderr: string } {
  const script = `
    const { spawn } = require('node:child_process');
    const c = spawn(process.execPath, ${JSON.stringify([MAIN, 'tail'])}.concat(JSON.parse(process.argv[1])), { env: { ...process.env, NO_COLOR: '1' } });
    let out = '', err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    let t = setTimeout(() => c.kill('SIGINT'), 6000);
    const soon = () => { clearTimeout(t); t = setTimeout(() => c.kill('SIGINT'), 1000); };
    c.stdout.once('data', soon);
    c.stderr.once('data', soon);
    c.on('exit', (code) => { clearTimeout(t); process.stdout.write(JSON.stringify({ status: code, stdout: out, stderr: err })); });
  `;
  return JSON.parse(execFileSync(NODE, ['-e', script, JSON.stringify([...args, '--config', config])], { encoding: 'utf8', timeout: 60_000 })) as {
    status: number | null;
    stdout: string;
    stderr: string;
  };
}
