/**
 * `lookfirst tail` and `lookfirst stats` on logs written by real gate sessions (the real fake upstream,
 * an SDK client answering elicitation): stats counts what happened; tail prints the last decisions, then
 * a decision taken while it runs, follows a log that does not exist yet, says when the log is truncated,
 * waits for a line's newline, colours on a terminal unless NO_COLOR, and stops with exit 0 on Ctrl-C.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { approve, decline, FAKE_UPSTREAM, type Human, MAIN, NODE, runCli, startAgent, tmp, waitFor, writeConfig } from './helpers.js';

/** Generous: a loaded machine takes seconds to start node with the CLI's imports. */
const STARTUP_MS = 30_000;
const dirs: string[] = [];
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A config in a fresh folder: the fake upstream, and a rule that denies store_error. */
function gateDir(): { dir: string; config: string; log: string } {
  const dir = tmp('lf-tail-');
  dirs.push(dir);
  const yaml = `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\nrules:\n  tools:\n    store_error: { action: deny }\n`;
  return { dir, config: writeConfig(dir, yaml), log: join(dir, 'audit.jsonl') };
}

/** One gate session: each step is a tool call, answered by its human when the gate asks. */
async function session(config: string, steps: { tool: string; args?: Record<string, unknown>; human?: Human }[]): Promise<void> {
  let human: Human = approve;
  const agent = await startAgent(config, (m) => human(m));
  try {
    for (const s of steps) {
      human = s.human ?? approve;
      await agent.call(s.tool, s.args ?? {});
    }
  } finally {
    await agent.close();
  }
}

/** A running `lookfirst tail`, its output gathered as it comes. */
function startTail(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(NODE, [MAIN, 'tail', ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () => out.split('\n').filter((l) => l !== '');
  return {
    lines,
    stderr: () => err,
    /** Ctrl-C, as a person stops it: resolves to the exit code. */
    stop: async () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

// The log of one real session: a read, an approved write, a declined one, one a rule denies, and an
// approved write whose read-back the fake upstream cannot confirm (it has none: executed ok).
const main = gateDir();
await session(main.config, [
  { tool: 'echo', args: { i: 1 } },
  { tool: 'write_note', args: { text: 'a' } },
  { tool: 'write_note', args: { text: 'b' }, human: decline },
  { tool: 'store_error', args: { key: 'x' } },
  { tool: 'store_lie', args: { key: 'k', value: 'v' } },
]);

interface StatsJson {
  total: number;
  reads: number;
  decisions: number;
  by_outcome: Record<string, number>;
  by_tool: Record<string, number>;
  by_channel: Record<string, number>;
  by_approver: Record<string, number>;
  time_to_decision: { answered: number; median_ms?: number; max_ms?: number };
  denied: { tool: string; call_id: string; approver?: string; rule?: string }[];
  lapsed: unknown[];
  waiting: unknown[];
}

describe('lookfirst stats on a real session', () => {
  it('counts by outcome, tool, channel and who decided, with the median time to decision', () => {
    const r = runCli(['stats', '--config', main.config, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout) as StatsJson;
    assert.equal(s.total, 5);
    assert.equal(s.reads, 1);
    assert.equal(s.decisions, 4);
    assert.deepEqual(s.by_outcome, { 'executed ok': 2, denied: 2, 'read ok': 1 });
    assert.deepEqual(s.by_tool, { write_note: 2, echo: 1, store_error: 1, store_lie: 1 });
    assert.deepEqual(s.by_channel, { elicitation: 3, none: 2 });
    assert.deepEqual(s.by_approver, { 'elicitation:test-agent': 3, none: 1, 'rule store_error': 1 });
    assert.equal(s.time_to_decision.answered, 3);
    assert.ok(typeof s.time_to_decision.median_ms === 'number' && s.time_to_decision.median_ms >= 0);
    assert.ok((s.time_to_decision.max_ms ?? -1) >= s.time_to_decision.median_ms);
    assert.deepEqual(
      s.denied.map((d) => [d.tool, d.approver ?? `rule ${d.rule}`]),
      [
        ['write_note', 'elicitation:test-agent'],
        ['store_error', 'rule store_error'],
      ],
    );
    assert.deepEqual(s.lapsed, []);
    assert.deepEqual(s.waiting, []);
  });

  it('prints small aligned tables', () => {
    const r = runCli(['stats', '--config', main.config]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^5 calls: 1 read, 4 decisions from /);
    assert.match(r.stdout, /By outcome\n {2}executed ok {2}2\n {2}denied {7}2\n {2}read ok {6}1\n/);
    assert.match(r.stdout, /By channel\n {2}elicitation {2}3\n {2}none {9}2\n/);
    assert.match(r.stdout, /Time to decision\n {2}answered by a person +3\n {2}median +\d/);
    assert.match(r.stdout, /Denied \(2\)\n.*write_note .*elicitation:test-agent .*the person declined\n.*store_error .*rule store_error/);
  });

  it('leaves out what was decided before --since', () => {
    const last = readFileSync(main.log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ts: number })
      .at(-1)!;
    const r = runCli(['stats', '--config', main.config, '--since', new Date(last.ts + 1).toISOString(), '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as StatsJson).total, 0);
    const week = runCli(['stats', '--config', main.config, '--since', '7d', '--json']);
    assert.equal((JSON.parse(week.stdout) as StatsJson).total, 5);
  });

  it('refuses a --since it cannot read, saying what it takes (exit 1)', () => {
    const r = runCli(['stats', '--config', main.config, '--since', 'yesterday']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--since "yesterday" is neither a duration nor a time: use a duration such as 30m, 24h or 7d/);
  });

  it('says where the log will be when there is none yet (exit 1)', () => {
    const empty = gateDir();
    const r = runCli(['stats', '--config', empty.config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no audit log at .*audit\.jsonl yet: the gate creates it when it first runs/);
  });
});

/**
 * Runs tail with a pty as its stdout (script(1)) until it has printed an executed call, then sends it
 * Ctrl-C's signal; returns what the terminal showed, which ends with tail's exit code (`EXIT=0`).
 */
async function onTerminal(noColor: boolean): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOOKFIRST_NO_OPEN: '1' };
  if (noColor) env.NO_COLOR = '1';
  else delete env.NO_COLOR;
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const cmd = `${q(NODE)} ${q(MAIN)} tail --config ${q(main.config)} -n 2 & echo "PID=$!"; wait $!; echo "EXIT=$?"`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  assert.ok(await waitFor(() => /executed ok/.test(out), STARTUP_MS), out);
  const pid = Number(/PID=(\d+)/.exec(out)?.[1]);
  assert.ok(pid > 0, out);
  process.kill(pid, 'SIGINT');
  assert.ok(await waitFor(() => /EXIT=\d+/.test(out), STARTUP_MS), out);
  assert.match(out, /EXIT=0/, 'Ctrl-C exits 0');
  child.stdin.end();
  return out;
}

describe('lookfirst tail', () => {
  it('prints the last N decisions, then one decided while it runs; Ctrl-C exits 0', async () => {
    const tail = startTail(['--config', main.config, '-n', '3']);
    assert.ok(await waitFor(() => tail.lines().length >= 3, STARTUP_MS), tail.stderr());
    const [denied, ruled, executed] = tail.lines();
    assert.match(
      denied ?? '',
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}denied +elicitation +elicitation:test-agent {2}[0-9a-f]{8} {2}write_note {2}the person declined$/,
    );
    assert.match(ruled ?? '', /denied +- +rule store_error +[0-9a-f]{8} {2}store_error {2}rule/);
    assert.match(executed ?? '', /executed ok +elicitation +elicitation:test-agent {2}[0-9a-f]{8} {2}store_lie$/);
    await session(main.config, [{ tool: 'write_note', args: { text: 'while tailing' } }]);
    assert.ok(await waitFor(() => tail.lines().length >= 4, STARTUP_MS), `no new line: ${tail.stderr()}`);
    assert.match(tail.lines()[3] ?? '', /executed ok +elicitation .* write_note$/);
    assert.equal(tail.lines().join('').includes('\u001b['), false, 'no colour into a pipe');
    assert.equal(await tail.stop(), 0);
  });

  it('--json: one JSON object per decision, each parses', async () => {
    const tail = startTail(['--config', main.config, '--json', '-n', '100']);
    assert.ok(await waitFor(() => tail.lines().length >= 6, STARTUP_MS), tail.stderr());
    const records = tail.lines().map((l) => JSON.parse(l) as { outcome: string; tool: string; call_id?: string; time: string });
    assert.deepEqual(
      records.map((r) => r.outcome),
      ['read ok', 'executed ok', 'denied', 'denied', 'executed ok', 'executed ok'],
    );
    assert.equal(records[0]?.call_id, undefined, 'a read has no call id');
    assert.match(records[1]?.call_id ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(await tail.stop(), 0);
  });

  it('waits for a log that does not exist yet, then shows its first decision', async () => {
    const fresh = gateDir();
    const tail = startTail(['--config', fresh.config]);
    assert.ok(await waitFor(() => /no audit log at .* yet: waiting/.test(tail.stderr()), STARTUP_MS), tail.stderr());
    await session(fresh.config, [{ tool: 'echo', args: { i: 2 } }]);
    assert.ok(await waitFor(() => tail.lines().length >= 1, STARTUP_MS), tail.stderr());
    assert.match(tail.lines()[0] ?? '', /read ok .* echo$/);
    assert.equal(await tail.stop(), 0);
  });

  it('says when the log is truncated, and waits for a line to end before reading it', async () => {
    // A copy of the real log, so that the gate's own stays intact.
    const copy = gateDir();
    copyFileSync(main.log, copy.log);
    const entries = readFileSync(main.log, 'utf8').trim().split('\n');
    const read = entries.find((l) => (JSON.parse(l) as { event: string }).event === 'read')!;
    const tail = startTail(['--config', copy.config, '-n', '1']);
    assert.ok(await waitFor(() => tail.lines().length === 1, STARTUP_MS), tail.stderr());
    writeFileSync(copy.log, '');
    assert.ok(await waitFor(() => /was truncated: reading it again from its start/.test(tail.stderr()), STARTUP_MS), tail.stderr());
    appendFileSync(copy.log, read.slice(0, 40));
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(tail.lines().length, 1, 'half a line is not read');
    appendFileSync(copy.log, `${read.slice(40)}\n`);
    assert.ok(await waitFor(() => tail.lines().length === 2, STARTUP_MS), tail.stderr());
    assert.match(tail.lines()[1] ?? '', /read ok .* echo$/);
    assert.equal(await tail.stop(), 0);
  });

  it('colours outcomes on a terminal, and not with NO_COLOR', async () => {
    assert.match(await onTerminal(false), /\u001b\[32mexecuted ok/);
    const plain = await onTerminal(true);
    assert.match(plain, /executed ok/);
    assert.equal(plain.includes('\u001b['), false);
  });
});
