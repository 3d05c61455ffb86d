/**
 * `lookfirst timeline` on real logs of two replicas (decision 0015), against the built CLI: one call
 * received on replica a and retried, approved and executed on replica b reads as one story; a log that
 * does not verify is named and left out (exit 2) unless --include-unverified, which marks its entries.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, tmp } from './helpers.js';
import { twoReplicas } from './replica-logs.js';

interface TimelineJson {
  verdict: string;
  logs: { log: string; verdict: string; included: boolean }[];
  entries: { log: string; replica?: string; event: string; seq: number; ts: number; call_id?: string; unverified?: boolean }[];
}

const dir = tmp();
const { b, t0 } = await twoReplicas(dir);
const intactB = readFileSync(b, 'utf8');
const timeline = (extra: string[]) => runCli(['timeline', dir, '--config', join(dir, 'no-such.yaml'), ...extra]);

describe('lookfirst timeline', () => {
  it('merges every entry of both logs by time', () => {
    const r = timeline(['--json']);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout) as TimelineJson;
    assert.equal(j.verdict, 'intact');
    assert.equal(j.entries.length, 9);
    assert.deepEqual(
      j.entries.map((e) => e.ts),
      [...j.entries.map((e) => e.ts)].sort((x, y) => x - y),
    );
    assert.equal(j.entries[0]?.log, 'replica-a');
    assert.equal(j.entries.find((e) => e.event === 'executed')?.replica, 'host-b-2222');
  });

  it("with --call, prints one call's story across replicas, one line per entry", () => {
    const r = timeline(['--call', 'c1']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.deepEqual(
      lines.map((l) => l.split(/\s+/).slice(1, 3).join(' ')),
      ['replica-a call_received', 'replica-a decision', 'replica-b call_retried', 'replica-b approval', 'replica-b executed'],
    );
    assert.equal(lines[0]?.split(/\s+/)[0], new Date(t0 + 100).toISOString());
    assert.match(lines[1] ?? '', /c1\s+fs\/write_file\s+action=confirm$/);
    assert.match(lines[3] ?? '', /approved=true actor=ana channel=web$/);
  });

  describe('when one log is tampered', () => {
    it('names it, leaves it out and exits 2', () => {
      writeFileSync(b, intactB.replace('"outcome":"ok"', '"outcome":"ko"'));
      try {
        const r = timeline(['--call', 'c1', '--json']);
        assert.equal(r.status, 2);
        const j = JSON.parse(r.stdout) as TimelineJson;
        assert.deepEqual(
          j.logs.map((l) => [l.log, l.verdict, l.included]),
          [
            ['replica-a.jsonl', 'intact', true],
            ['replica-b.jsonl', 'tampered', false],
          ],
        );
        assert.deepEqual(
          j.entries.map((e) => e.event),
          ['call_received', 'decision'],
        );
        assert.match(r.stderr, /replica-b\.jsonl: TAMPERED.*left out/);
      } finally {
        writeFileSync(b, intactB);
      }
    });

    it('with --include-unverified, shows its entries marked, still exiting 2', () => {
      writeFileSync(b, intactB.replace('"outcome":"ok"', '"outcome":"ko"'));
      try {
        const r = timeline(['--call', 'c1', '--include-unverified']);
        assert.equal(r.status, 2);
        const marked = r.stdout.split('\n').filter((l) => l.startsWith('? '));
        assert.equal(marked.length, 3);
        assert.ok(marked.every((l) => l.includes('replica-b')));
      } finally {
        writeFileSync(b, intactB);
      }
    });
  });

  it('shows hidden characters from a log as escapes', () => {
    const d = tmp();
    // A read whose reason a hostile upstream shaped: the timeline must not pass the escape to the terminal.
    return import('./replica-logs.js').then(async ({ writeReplicaLog }) => {
      await writeReplicaLog(d, 'r', [[1, { event: 'gate_stopped', reason: 'bye\u001b[2J\u202e' }]]);
      const r = runCli(['timeline', d, '--config', join(d, 'no-such.yaml')]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /reason=bye\\u001B\[2J\\u202E$/m);
    });
  });
});
