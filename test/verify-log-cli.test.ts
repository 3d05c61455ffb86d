/**
 * `lookfirst verify-log` on logs written by real gate sessions: every tampering kind is caught at the
 * right line, with exit code 2; intact is 0; a missing head is never a clean verdict. Also: entries of
 * another real log under the same key spliced in past an older head put back, signatures in another
 * base64 text, bytes that are not UTF-8, and a log and head signed wholly by another key.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FAKE_UPSTREAM, linesIn, NODE, runCli, startAgent, tmp, writeConfig } from './helpers.js';

const upstreamYaml = (dir: string) =>
  `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n`;

/** One real gate session: `reads` echo calls and `writes` approved write_note calls (recorded in a dry run). */
async function session(config: string, reads: number, writes: number, serveArgs: string[] = []): Promise<void> {
  const agent = await startAgent(config, approve, {}, serveArgs);
  for (let i = 0; i < reads; i++) await agent.call('echo', { i });
  for (let i = 0; i < writes; i++) await agent.call('write_note', { text: `note ${i}` });
  await agent.close();
}

// Real sessions, written before the cases are built (they need their line counts). The head after the
// first session is kept: put back later, it is an older head that lags behind the log.
const dir = tmp();
const config = writeConfig(dir, upstreamYaml(dir));
const logPath = join(dir, 'audit.jsonl');
await session(config, 3, 1);
const olderHead = readFileSync(`${logPath}.head`, 'utf8');
const olderSize = readFileSync(logPath, 'utf8').split('\n').length - 1;
await session(config, 1, 1);
const original = readFileSync(logPath, 'utf8');
const originalHead = readFileSync(`${logPath}.head`, 'utf8');

// Another log under the same key (its own sessions, its own history), and one under another key.
const twin = tmp();
const twinConfig = writeConfig(twin, upstreamYaml(twin), { keygen: false });
for (const f of ['audit.key', 'audit.pub']) copyFileSync(join(dir, f), join(twin, f));
await session(twinConfig, 12, 3);
const stranger = tmp();
const strangerConfig = writeConfig(stranger, upstreamYaml(stranger));
// A dry run: its recorded write is what a promote under the wrong key pair would replay.
await session(strangerConfig, 1, 1, ['--dry-run']);

/** Runs verify-log on `text` (and a head) in place of the log, then puts the originals back. */
function verifyWith(text: string | Buffer, extra: string[] = [], head: string | null = originalHead) {
  writeFileSync(logPath, text);
  if (head === null) rmSync(`${logPath}.head`);
  else writeFileSync(`${logPath}.head`, head);
  try {
    const r = runCli(['verify-log', '--config', config, '--json', ...extra]);
    return {
      status: r.status,
      report: JSON.parse(r.stdout || '{}') as VerifyJson,
      stderr: r.stderr,
    };
  } finally {
    writeFileSync(logPath, original);
    writeFileSync(`${logPath}.head`, originalHead);
  }
}

/** The --json report. */
interface VerifyJson {
  log: string;
  key: { name: string; key_id: string; file: string };
  verdict: string;
  entries: number;
  problems: { kind: string; line: number; message: string }[];
  warnings: string[];
  trusted_head?: { path: string; beside_log: boolean };
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
    ['two swapped lines (named at the first out of place)', (ls) => ls.map((l, i) => (i === 2 ? ls[3]! : i === 3 ? ls[2]! : l)), 'reordered', 3],
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

  it('catches a cut end against a trusted head even when the sidecar was removed', () => {
    const trusted = join(dir, 'trusted.head');
    copyFileSync(`${logPath}.head`, trusted);
    // A forger cannot sign a new head; reusing the old one still mismatches. Remove it instead.
    const { status, report } = verifyWith(text(lines().slice(0, 3)), ['--trusted-head', trusted], null);
    assert.equal(status, 2);
    assert.ok(report.problems.some((p) => p.kind === 'truncated'));
  });

  it('says the log continues the trusted head when it does', () => {
    const trusted = join(tmp(), 'trusted-ok.head');
    copyFileSync(`${logPath}.head`, trusted);
    const r = runCli(['verify-log', '--config', config, '--trusted-head', trusted]);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /intact: .* and the log continues the trusted head /);
    assert.doesNotMatch(r.stdout, /warning/);
    const json = JSON.parse(runCli(['verify-log', '--config', config, '--trusted-head', trusted, '--json']).stdout) as VerifyJson;
    assert.deepEqual(json.trusted_head, { path: trusted, beside_log: false });
  });

  describe('when the "trusted" head is kept beside the log (as pilot-status fails it)', () => {
    const beside = join(dir, 'copy.head');
    copyFileSync(`${logPath}.head`, beside);
    for (const [what, path] of [
      ["the log's own head file", `${logPath}.head`],
      ["a copy in the log's folder", beside],
    ] as const) {
      it(`warns that ${what} proves nothing against a rollback, in plain and --json output`, () => {
        const r = runCli(['verify-log', '--config', config, '--trusted-head', path]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /warning: the trusted head .* proves nothing against a rollback/);
        assert.doesNotMatch(r.stdout, /and the log continues the trusted head/);
        assert.match(r.stdout, /intact: .*but that copy sits beside the log/);
        const json = JSON.parse(runCli(['verify-log', '--config', config, '--trusted-head', path, '--json']).stdout) as VerifyJson;
        assert.deepEqual(json.trusted_head, { path, beside_log: true });
        assert.ok(json.warnings.some((w) => /proves nothing against a rollback/.test(w)));
      });
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

const twinLines = () => readFileSync(join(twin, 'audit.jsonl'), 'utf8').slice(0, -1).split('\n');

describe('verify-log on splices, encodings and keys', () => {
  it('exits 2 and names the first spliced line when another log under the same key follows an older head put back', () => {
    assert.ok(twinLines().length >= lines().length, 'the other log is long enough to splice from');
    const spliced = [...lines().slice(0, olderSize), ...twinLines().slice(olderSize, lines().length)];
    const { status, report } = verifyWith(text(spliced), [], olderHead);
    assert.equal(status, 2, JSON.stringify(report));
    assert.equal(report.verdict, 'tampered');
    assert.equal(report.problems[0]?.kind, 'spliced', JSON.stringify(report.problems));
    assert.equal(report.problems[0]?.line, olderSize + 1);
  });

  it('exits 2 and names the spliced line when another log\u2019s entries are appended past a head that lags', () => {
    const n = lines().length;
    assert.ok(twinLines().length >= n + 2, 'the other log is long enough to splice from');
    const spliced = [...lines(), ...twinLines().slice(n, n + 2)];
    const { status, report } = verifyWith(text(spliced));
    assert.equal(status, 2, JSON.stringify(report));
    assert.deepEqual(
      report.problems.map((p) => [p.kind, p.line]),
      [['spliced', n + 1]],
    );
  });

  for (const [what, reencode] of [
    ['without its padding', (sig: string) => sig.replace(/=+$/, '')],
    [
      'with unused low bits set',
      (sig: string) => sig.replace(/([A-Za-z0-9+/])==$/, (_, c: string) => `${c === 'A' ? 'B' : c === 'Q' ? 'R' : c === 'g' ? 'h' : 'x'}==`),
    ],
    ['with a stray character', (sig: string) => `${sig.slice(0, 10)}.${sig.slice(10)}`],
  ] as const) {
    it(`exits 2 and names the line whose signature is written ${what}`, () => {
      const ls = lines();
      const sig = (JSON.parse(ls[4]!) as { sig: string }).sig;
      const other = reencode(sig);
      assert.ok(other !== sig && Buffer.from(other, 'base64').equals(Buffer.from(sig, 'base64')), 'a lenient decoder reads the same bytes');
      const { status, report } = verifyWith(text(ls.map((l, i) => (i === 4 ? l.replace(sig, other) : l))));
      assert.equal(status, 2);
      assert.deepEqual(
        report.problems.map((p) => [p.kind, p.line]),
        [['encoding', 5]],
      );
    });
  }

  it('exits 2, not 1, on a log and head signed wholly by another key, naming both key ids and how to tell a wrong key from a forgery', () => {
    const otherLog = readFileSync(join(stranger, 'audit.jsonl'));
    const otherHead = readFileSync(join(stranger, 'audit.jsonl.head'), 'utf8');
    const { status, report } = verifyWith(otherLog, [], otherHead);
    assert.equal(status, 2);
    assert.equal(report.verdict, 'tampered');
    const ours = readFileSync(join(dir, 'audit.pub'), 'utf8').split('+')[1]!;
    const theirs = readFileSync(join(stranger, 'audit.pub'), 'utf8').split('+')[1]!;
    assert.equal(report.key.key_id, ours);
    const key = report.problems.find((p) => p.kind === 'key');
    assert.ok(key, JSON.stringify(report.problems));
    assert.ok(key.message.includes(`key id ${ours}`) && key.message.includes(`key id ${theirs}`), key.message);
    assert.match(key.message, /wrong key or a forgery\?.*audit\.pub.*forged/i);
    // The readable form says the same.
    writeFileSync(logPath, otherLog);
    writeFileSync(`${logPath}.head`, otherHead);
    try {
      const r = runCli(['verify-log', '--config', config]);
      assert.equal(r.status, 2);
      assert.match(r.stdout, new RegExp(`^key: .*key id ${ours}.*key id ${theirs}`, 'm'));
      assert.match(r.stdout, /^TAMPERED/m);
    } finally {
      writeFileSync(logPath, original);
      writeFileSync(`${logPath}.head`, originalHead);
    }
  });

  it('pins the --json report: log, configured key (and what it was checked against), verdict, entries, problems, warnings', () => {
    const { report } = verifyWith(original);
    assert.deepEqual(Object.keys(report).sort(), ['entries', 'key', 'log', 'omitted', 'problems', 'verdict', 'warnings']);
    assert.deepEqual(Object.keys(report.key).sort(), ['checked_against', 'file', 'key_id', 'name']);
    assert.equal(report.key.file, join(dir, 'audit.pub'));
    assert.equal(report.entries, lines().length);
  });
});

describe('promote holds the log it replays to the gate start\u2019s checks', () => {
  it('refuses a spliced copy of the log, naming the line', () => {
    const copy = join(dir, 'copy.jsonl');
    writeFileSync(copy, text([...lines().slice(0, olderSize), ...twinLines().slice(olderSize, lines().length)]));
    writeFileSync(`${copy}.head`, olderHead);
    const r = runCli(['promote', copy, '--config', config, '--dry-run']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, new RegExp(`refusing to replay: .*copy\\.jsonl does not verify \\(tampered\\).*line ${olderSize + 1}: chain broken`));
  });

  it('refuses a log that verifies under audit.pub but not under the key the gate signs with', () => {
    // audit.pub was swapped for another key's, and LOG is signed by that key: verify-log alone says intact.
    const mixed = tmp();
    const mixedConfig = writeConfig(mixed, upstreamYaml(mixed), { keygen: false });
    copyFileSync(join(dir, 'audit.key'), join(mixed, 'audit.key'));
    copyFileSync(join(stranger, 'audit.pub'), join(mixed, 'audit.pub'));
    const log = join(stranger, 'audit.jsonl');
    const ours = readFileSync(join(dir, 'audit.pub'), 'utf8').split('+')[1]!;
    const theirs = readFileSync(join(stranger, 'audit.pub'), 'utf8').split('+')[1]!;
    for (const mode of ['--dry-run', '--yes']) {
      const r = runCli(['promote', log, '--config', mixedConfig, mode]);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /refusing to replay: .* does not verify \(tampered\)/);
      assert.ok(r.stderr.includes(`key id ${ours}`) && r.stderr.includes(`key id ${theirs}`), r.stderr);
    }
    assert.equal(linesIn(join(mixed, 'effects.txt')), 0, 'the recorded write was not replayed');
    assert.equal(linesIn(join(stranger, 'effects.txt')), 0);
  });

  it('plans with audit.pub where audit.key cannot be read, says so, and never replays without the gate key', () => {
    const pubOnly = tmp();
    const pubOnlyConfig = writeConfig(pubOnly, upstreamYaml(pubOnly), { keygen: false });
    copyFileSync(join(dir, 'audit.pub'), join(pubOnly, 'audit.pub'));
    const copy = join(pubOnly, 'copy.jsonl');
    writeFileSync(copy, original);
    writeFileSync(`${copy}.head`, originalHead);
    const plan = runCli(['promote', copy, '--config', pubOnlyConfig, '--dry-run']);
    assert.equal(plan.status, 0, plan.stdout + plan.stderr);
    assert.match(plan.stderr, /audit\.key cannot be read here, so the gate's start-up check ran with .*audit\.pub/);
    const run = runCli(['promote', copy, '--config', pubOnlyConfig, '--yes']);
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /no audit key at .*audit\.key/);
  });

  it('refuses a copy of the log whose sidecar head another key signed', () => {
    const copy = join(dir, 'copy2.jsonl');
    writeFileSync(copy, original);
    writeFileSync(`${copy}.head`, readFileSync(join(stranger, 'audit.jsonl.head'), 'utf8'));
    const r = runCli(['promote', copy, '--config', config, '--dry-run']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
  });
});

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
