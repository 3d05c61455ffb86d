/**
 * `lookfirst verify-log --dir` on folders of real logs, one per replica (decision 0015), against the
 * built CLI: every log gets its own verdict and the exit code is the worst of them; a tampered byte in
 * one log names that log; missing evidence (an empty folder, a log with no key) is never clean.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, tmp } from './helpers.js';
import { twoReplicas } from './replica-logs.js';

interface FolderJson {
  verdict: string;
  logs: { log: string; verdict: string; entries: number; problems: { kind: string; line: number }[]; error?: string; key?: { file: string } }[];
  message?: string;
}

const dir = tmp();
const { b } = await twoReplicas(dir);
const intactB = readFileSync(b, 'utf8');
const verifyDir = (d: string, extra: string[] = []) => {
  const r = runCli(['verify-log', '--dir', d, '--config', join(d, 'no-such.yaml'), ...extra]);
  return { ...r, json: extra.includes('--json') ? (JSON.parse(r.stdout) as FolderJson) : undefined };
};

describe('verify-log --dir', () => {
  describe('when every log is intact', () => {
    it('exits 0 with one intact verdict per log, each under its own <log>.pub', () => {
      const r = verifyDir(dir, ['--json']);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.json?.verdict, 'intact');
      assert.deepEqual(
        r.json?.logs.map((l) => [l.log, l.verdict, l.entries, l.key?.file]),
        [
          ['replica-a.jsonl', 'intact', 4, join(dir, 'replica-a.jsonl.pub')],
          ['replica-b.jsonl', 'intact', 5, join(dir, 'replica-b.jsonl.pub')],
        ],
      );
    });

    it('prints a verdict per log and an overall one', () => {
      const r = verifyDir(dir);
      assert.equal(r.status, 0);
      assert.match(r.stdout, /^replica-a\.jsonl: intact: 4 entries/m);
      assert.match(r.stdout, /^replica-b\.jsonl: intact: 5 entries/m);
      assert.match(r.stdout, /^intact: all 2 logs in .* check out$/m);
    });
  });

  describe('when one byte of one log is changed', () => {
    it('exits 2 and names that log, the other still intact', () => {
      writeFileSync(b, intactB.replace('"outcome":"ok"', '"outcome":"ko"'));
      try {
        const r = verifyDir(dir, ['--json']);
        assert.equal(r.status, 2);
        assert.equal(r.json?.verdict, 'tampered');
        const [la, lb] = r.json?.logs ?? [];
        assert.equal(la?.verdict, 'intact');
        assert.equal(lb?.log, 'replica-b.jsonl');
        assert.equal(lb?.verdict, 'tampered');
        assert.equal(lb?.problems[0]?.line, 4);
        const text = verifyDir(dir);
        assert.equal(text.status, 2);
        assert.match(text.stdout, /^replica-b\.jsonl: TAMPERED/m);
        assert.match(text.stdout, /^TAMPERED: replica-b\.jsonl$/m);
      } finally {
        writeFileSync(b, intactB);
      }
    });
  });

  describe('when the folder holds no log', () => {
    it('exits 1 with no verdict and says what to do', () => {
      const empty = tmp();
      const r = verifyDir(empty);
      assert.equal(r.status, 1);
      assert.match(r.stdout, /no verdict: no audit logs \(\*\.jsonl\) in .*Copy each replica's log/);
      const j = verifyDir(empty, ['--json']);
      assert.equal(j.status, 1);
      assert.equal(j.json?.verdict, 'unproven');
      assert.deepEqual(j.json?.logs, []);
    });
  });

  describe('when a log has no key beside it and no config names one', () => {
    it('gives that log no verdict, never intact (exit 1), saying where the key goes', () => {
      const d = tmp();
      const { a } = twoReplicasSync(d);
      rmSync(`${a}.pub`);
      const r = verifyDir(d, ['--json']);
      assert.equal(r.status, 1);
      const la = r.json?.logs.find((l) => l.log === 'replica-a.jsonl');
      assert.equal(la?.verdict, 'unproven');
      assert.match(la?.error ?? '', /replica-a\.jsonl\.pub/);
    });
  });

  describe('when a log is gone but its head remains', () => {
    it('reports the cut (exit 2), never an absent log', () => {
      const d = tmp();
      const { a } = twoReplicasSync(d);
      rmSync(a);
      const r = verifyDir(d, ['--json']);
      assert.equal(r.status, 2);
      assert.equal(r.json?.logs.find((l) => l.log === 'replica-a.jsonl')?.verdict, 'tampered');
    });
  });

  it('refuses --trusted-head, which names the head of one log', () => {
    const r = runCli(['verify-log', '--dir', dir, '--trusted-head', join(dir, 'replica-a.jsonl.head')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--trusted-head names the head of one log/);
  });
});

/** A copy of the two-replica folder (the logs are written once, above). */
function twoReplicasSync(d: string): { a: string; b: string } {
  for (const f of ['replica-a.jsonl', 'replica-a.jsonl.head', 'replica-a.jsonl.pub', 'replica-b.jsonl', 'replica-b.jsonl.head', 'replica-b.jsonl.pub'])
    writeFileSync(join(d, f), readFileSync(join(dir, f)));
  mkdirSync(join(d, 'other'), { recursive: true });
  return { a: join(d, 'replica-a.jsonl'), b: join(d, 'replica-b.jsonl') };
}
