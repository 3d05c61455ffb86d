/**
 * `lookfirst verify-log` on the key it trusts and on a log deleted under its head, through the built CLI:
 * an audit.pub replaced by someone who re-signed an edited log and head with their own key is tampered
 * when audit.key is readable, or when `--expect-key` pins the key; the key the verdict was made with is
 * always named. A head that records entries over a missing log is a cut, for verify-log, the gate's start
 * and promote alike.
 */
import assert from 'node:assert/strict';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sha256Hex } from '../src/audit/canonical.js';
import { encodeEntry, GENESIS_PREV } from '../src/audit/entry.js';
import { generateAuditKey, loadSigner } from '../src/audit/keys.js';
import { CompactTree, leafHash } from '../src/audit/merkle.js';
import { formatCheckpoint, signNote } from '../src/audit/note.js';
import { makeLog } from './audit-logs.js';
import { FAKE_UPSTREAM, NODE, runCli } from './helpers.js';
import { removeTemp, tempDir } from './temp.js';

/** A real log of `n` entries in a folder with its config. */
async function logWithConfig(n: number) {
  const made = await makeLog(n);
  const config = join(made.dir, 'lookfirst.yaml');
  writeFileSync(config, `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\n`);
  return { ...made, config, keyId: readFileSync(made.pubPath, 'utf8').split('+')[1]!, vkey: readFileSync(made.pubPath, 'utf8').trim() };
}

/** What an attacker who can write the folder (not read audit.key) does: edits, re-signs with its own key, replaces audit.pub. */
function reSign(made: { logPath: string; pubPath: string }, edit: (entries: Record<string, unknown>[]) => Record<string, unknown>[]): string {
  const k = tempDir('lf-attacker-');
  generateAuditKey(join(k, 'a.key'), join(k, 'a.pub'));
  const signer = loadSigner(join(k, 'a.key'), '');
  const old = readFileSync(made.logPath, 'utf8')
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  let prev = GENESIS_PREV;
  const tree = new CompactTree();
  const lines = edit(old).map((e, seq) => {
    const { v: _v, seq: _s, ts, prev: _p, sig: _g, ...fields } = e;
    const line = encodeEntry(fields as never, seq, ts as number, prev, signer.key);
    prev = sha256Hex(line);
    tree.appendLeafHash(leafHash(Buffer.from(line)));
    return line;
  });
  writeFileSync(made.logPath, `${lines.join('\n')}\n`);
  writeFileSync(
    `${made.logPath}.head`,
    signNote(formatCheckpoint({ origin: signer.name, size: lines.length, root: tree.root(), extensions: [`lookfirst-chain ${prev}`] }), signer),
  );
  const pub = readFileSync(join(k, 'a.pub'));
  writeFileSync(made.pubPath, pub);
  // The attacker's key is needed no longer; property runs call this many times, so remove it now.
  removeTemp(k);
  return pub.toString('utf8').split('+')[1]!;
}

const json = (args: string[]) => {
  const r = runCli([...args, '--json']);
  return { status: r.status, report: JSON.parse(r.stdout || '{}'), stderr: r.stderr };
};

const edits: [string, (e: Record<string, unknown>[]) => Record<string, unknown>[]][] = [
  ['nothing changed', (e) => e],
  ['an entry removed', (e) => e.filter((_, i) => i !== 2)],
  ['a reason rewritten', (e) => e.map((x, i) => (i === 1 ? { ...x, reason: 'EDITED' } : x))],
  ['the last entries cut', (e) => e.slice(0, 2)],
];

describe('when audit.pub is replaced and the log and head re-signed with another key', () => {
  for (const [what, edit] of edits) {
    it(`exits 2 with a key problem naming both key ids when audit.key is readable (${what})`, async () => {
      const made = await logWithConfig(5);
      const theirs = reSign(made, edit);
      const { status, report } = json(['verify-log', '--config', made.config]);
      assert.equal(status, 2, JSON.stringify(report));
      assert.equal(report.verdict, 'tampered');
      const key = report.problems.find((p: { kind: string }) => p.kind === 'key');
      assert.ok(key, JSON.stringify(report.problems));
      assert.ok(key.message.includes(`key id ${made.keyId}`) && key.message.includes(`key id ${theirs}`), key.message);
      assert.match(key.message, /restore audit\.pub from the copy you kept/);
      assert.equal(report.key.key_id, theirs, 'names the key the verdict was made with');
      assert.deepEqual(report.key.checked_against, []);
    });
  }

  it('exits 2 with --expect-key where audit.key cannot be read, for a key id, a verifier key or a kept copy of audit.pub', async () => {
    const made = await logWithConfig(4);
    const kept = join(made.dir, 'kept.pub');
    writeFileSync(kept, `${made.vkey}\n`);
    const theirs = reSign(made, (e) => e.slice(1));
    rmSync(made.keyPath);
    const unpinned = json(['verify-log', '--config', made.config]);
    assert.equal(unpinned.status, 0, 'without audit.key or a pin, a consistent re-signed log verifies: the warning says so');
    assert.ok(unpinned.report.warnings.some((w: string) => /cannot be read here.*--expect-key/.test(w)));
    for (const pin of [made.keyId, made.vkey, kept]) {
      const { status, report } = json(['verify-log', '--config', made.config, '--expect-key', pin]);
      assert.equal(status, 2, pin);
      const key = report.problems.find((p: { kind: string }) => p.kind === 'key');
      assert.ok(key.message.includes(`key id ${theirs}`) && key.message.includes(made.keyId), key.message);
    }
  });
});

describe('when the key checks out', () => {
  it('names the key and what it matched, in text and --json', async () => {
    const made = await logWithConfig(3);
    const text = runCli(['verify-log', '--config', made.config]);
    assert.equal(text.status, 0, text.stdout);
    assert.match(text.stdout, new RegExp(`^key: lookfirst/\\S+ \\(key id ${made.keyId}\\) from .*audit\\.pub, matches audit\\.key$`, 'm'));
    const { status, report } = json(['verify-log', '--config', made.config, '--expect-key', made.keyId]);
    assert.equal(status, 0);
    assert.deepEqual(report.key.checked_against, ['--expect-key', 'audit.key']);
  });

  it('exits 1 for an --expect-key that is not a key, saying what it takes', async () => {
    const made = await logWithConfig(1);
    const r = runCli(['verify-log', '--config', made.config, '--expect-key', 'not-a-key']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--expect-key takes the key you expect/);
  });

  it('accepts any casing of the right key id and refuses every other id (property)', async () => {
    const made = await logWithConfig(1);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{8}$/), (id) => {
        fc.pre(id !== made.keyId);
        const r = runCli(['verify-log', '--config', made.config, '--expect-key', id]);
        assert.equal(r.status, 2);
      }),
      { numRuns: 3 },
    );
    assert.equal(runCli(['verify-log', '--config', made.config, '--expect-key', made.keyId.toUpperCase()]).status, 0);
  });
});

describe('when the log file is deleted while its signed head stays', () => {
  it('verify-log exits 2 with a cut, the gate refuses to start and keeps the head, promote refuses', async () => {
    const made = await logWithConfig(4);
    const head = readFileSync(`${made.logPath}.head`, 'utf8');
    renameSync(made.logPath, `${made.logPath}.away`);
    const { status, report } = json(['verify-log', '--config', made.config]);
    assert.equal(status, 2, JSON.stringify(report));
    const cut = report.problems.find((p: { kind: string }) => p.kind === 'truncated');
    assert.match(cut.message, /records 4 entries.*is missing.*Restore the log from a backup/);
    const serve = runCli(['serve', '--config', made.config]);
    assert.notEqual(serve.status, 0);
    assert.match(serve.stderr, /is missing, but its signed head .* still records entries/);
    assert.equal(readFileSync(`${made.logPath}.head`, 'utf8'), head, 'the head was not overwritten');
    // promote LOG (the moved log, with a copy of its head) through this config: the config's own log,
    // where earlier replays are recorded, is gone under its head.
    writeFileSync(`${made.logPath}.away.head`, head);
    const plan = runCli(['promote', `${made.logPath}.away`, '--config', made.config, '--dry-run']);
    assert.equal(plan.status, 2, plan.stdout + plan.stderr);
    assert.match(plan.stderr, /own audit log .* does not verify \(tampered\)/);
    assert.match(plan.stderr, /refusing to replay: .*audit\.jsonl does not verify \(tampered\).*log truncated/);
  });

  it('still says "no audit log yet" when there is neither a log nor a head', async () => {
    const made = await logWithConfig(1);
    rmSync(made.logPath);
    rmSync(`${made.logPath}.head`);
    const r = runCli(['verify-log', '--config', made.config]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no audit log at .* yet/);
  });
});
