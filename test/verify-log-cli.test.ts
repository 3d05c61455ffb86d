/**
 * `lookfirst verify-log` on a log written by a real gate session: every tampering kind is caught at the
 * right line, with exit code 2; intact is 0; a missing head is never a clean verdict.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FAKE_UPSTREAM, NODE, runCli, startAgent, tmp, writeConfig } from './helpers.js';

// One real session, written before the cases are built (they need its line count).
const dir = tmp();
const config = writeConfig(
  dir,
  `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n`,
);
const agent = await startAgent(config, approve);
for (let i = 0; i < 3; i++) await agent.call('echo', { i });
await agent.call('write_note', { text: 'one' });
await agent.close();
const logPath = join(dir, 'audit.jsonl');
const original = readFileSync(logPath, 'utf8');

function verifyWith(text: string, extra: string[] = []) {
  writeFileSync(logPath, text);
  const r = runCli(['verify-log', '--config', config, '--json', ...extra]);
  writeFileSync(logPath, original);
  return {
    status: r.status,
    report: JSON.parse(r.stdout || '{}') as { verdict: string; problems: { kind: string; line: number }[]; warnings: string[] },
    stderr: r.stderr,
  };
}

const lines = () => original.slice(0, -1).split('\n');
const text = (ls: string[]) => `${ls.join('\n')}\n`;

describe('verify-log on a real session', () => {
  it('exits 0 on an intact log', () => {
    const { status, report } = verifyWith(original);
    assert.equal(status, 0);
    assert.equal(report.verdict, 'intact');
    assert.ok(lines().length >= 9, 'start, 3 reads, 4 write entries, stop');
  });

  it('prints a readable verdict without --json', () => {
    const r = runCli(['verify-log', '--config', config]);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^intact: \d+ entries/m);
  });

  const cases: [string, (ls: string[]) => string[], string, number][] = [
    ['an edited line', (ls) => ls.map((l, i) => (i === 4 ? l.replace('"event":"', '"event":"x') : l)), 'edited', 5],
    ['a removed line', (ls) => ls.filter((_, i) => i !== 3), 'removed', 4],
    ['two swapped lines', (ls) => ls.map((l, i) => (i === 2 ? ls[3]! : i === 3 ? ls[2]! : l)), 'reordered', 4],
    ['an inserted copy', (ls) => [...ls.slice(0, 5), ls[2]!, ...ls.slice(5)], 'inserted', 6],
    [
      'a forged entry that links in',
      (ls) => {
        const e = JSON.parse(ls[ls.length - 1]!);
        const forged = { ...e, seq: e.seq + 1, prev: sha(ls[ls.length - 1]!), event: 'approval', approved: true };
        return [...ls, JSON.stringify(forged)];
      },
      'forged',
      lines().length + 1,
    ],
    ['the last two lines cut off', (ls) => ls.slice(0, -2), 'truncated', lines().length - 1],
  ];
  for (const [what, mutate, kind, line] of cases) {
    it(`exits 2 and names ${kind} at line ${line} for ${what}`, () => {
      const { status, report } = verifyWith(text(mutate(lines())));
      assert.equal(status, 2, JSON.stringify(report));
      assert.ok(
        report.problems.some((p) => p.kind === kind && p.line === line),
        JSON.stringify(report.problems),
      );
    });
  }

  it('exits 1 (no verdict) when the head sidecar is missing, and says why', () => {
    renameSync(`${logPath}.head`, `${logPath}.head.away`);
    try {
      const r = runCli(['verify-log', '--config', config, '--json']);
      assert.equal(r.status, 1);
      assert.match(r.stdout, /no head sidecar/);
    } finally {
      renameSync(`${logPath}.head.away`, `${logPath}.head`);
    }
  });

  it('catches a cut end against a trusted head even when the sidecar was rewritten to match', () => {
    const trusted = join(dir, 'trusted.head');
    copyFileSync(`${logPath}.head`, trusted);
    const cut = text(lines().slice(0, 3));
    // A forger cannot sign a new head; reusing the old one still mismatches. Remove it instead.
    renameSync(`${logPath}.head`, `${logPath}.head.away`);
    try {
      const { status, report } = verifyWith(cut, ['--trusted-head', trusted]);
      assert.equal(status, 2);
      assert.ok(report.problems.some((p) => p.kind === 'truncated'));
    } finally {
      renameSync(`${logPath}.head.away`, `${logPath}.head`);
    }
  });

  it('writes the head as a C2SP checkpoint in a signed note', () => {
    const head = readFileSync(`${logPath}.head`, 'utf8');
    const [body, sigs] = head.split('\n\n');
    const [origin, size, root, ext] = body!.split('\n');
    assert.match(origin!, /^lookfirst\/[0-9a-f]{8}$/);
    assert.equal(Number(size), lines().length);
    assert.equal(Buffer.from(root!, 'base64').length, 32);
    assert.match(ext!, /^lookfirst-chain [0-9a-f]{64}$/);
    assert.match(sigs!, new RegExp(`^\u2014 ${origin!.replace('/', '\\/')} [A-Za-z0-9+/=]+\n$`));
  });
});

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
