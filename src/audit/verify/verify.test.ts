import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { makeLog } from '../../../test/audit-logs.js';
import { loadSigner } from '../keys.js';
import { AuditLog } from '../writer.js';
import { verifyLog } from './verify.js';

const join_ = (lines: string[]) => `${lines.join('\n')}\n`;

const { lines, heads, verifier } = await makeLog(6);

describe('verify-log', () => {
  it('calls an untouched log intact', () => {
    const r = verifyLog(join_(lines), verifier, heads);
    assert.equal(r.verdict, 'intact');
    assert.equal(r.entries, 6);
    assert.deepEqual(r.problems, []);
  });

  it('calls an untouched log unproven, not intact, when there is no head', () => {
    const r = verifyLog(join_(lines), verifier, []);
    assert.equal(r.verdict, 'unproven');
    assert.match(r.warnings.join(), /no head/);
  });

  describe('when a line is edited', () => {
    it('reports "edited" at that line only', () => {
      const edited = [...lines];
      edited[2] = edited[2]!.replace('"reason":"r2"', '"reason":"rX"');
      const r = verifyLog(join_(edited), verifier, heads);
      assert.equal(r.verdict, 'tampered');
      assert.deepEqual(
        r.problems.map((p) => [p.kind, p.line]),
        [['edited', 3]],
      );
    });
    it('reports a line that is no longer JSON as edited', () => {
      const edited = [...lines];
      edited[4] = edited[4]!.slice(0, 20);
      const r = verifyLog(join_(edited), verifier, heads);
      assert.deepEqual(
        r.problems.map((p) => [p.kind, p.line]),
        [['edited', 5]],
      );
    });
  });

  describe('when a line is removed', () => {
    it('reports "removed" where the entry belonged', () => {
      const cut = lines.filter((_, i) => i !== 3);
      const r = verifyLog(join_(cut), verifier, heads);
      assert.ok(
        r.problems.some((p) => p.kind === 'removed' && p.line === 4),
        JSON.stringify(r.problems),
      );
    });
  });

  describe('when lines are reordered', () => {
    it('reports "reordered" at the first line out of place, and only there', () => {
      const swapped = [...lines];
      [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
      const r = verifyLog(join_(swapped), verifier, heads);
      assert.deepEqual(
        r.problems.map((p) => [p.kind, p.line]),
        [['reordered', 3]],
      );
      assert.ok(!r.problems.some((p) => p.kind === 'removed'));
    });
  });

  describe('when a line is inserted', () => {
    it('reports a copied entry as "inserted" at the copy', () => {
      const copied = [...lines.slice(0, 4), lines[1]!, ...lines.slice(4)];
      const r = verifyLog(join_(copied), verifier, heads);
      assert.ok(
        r.problems.some((p) => p.kind === 'inserted' && p.line === 5),
        JSON.stringify(r.problems),
      );
    });
    it('reports a made-up entry as "inserted" at its line', () => {
      const fake = JSON.stringify({ event: 'approval', approved: true, seq: 2, prev: 'x', sig: 'AAAA', ts: 1, v: 1 });
      const withFake = [...lines.slice(0, 2), fake, ...lines.slice(2)];
      const r = verifyLog(join_(withFake), verifier, heads);
      assert.deepEqual(
        r.problems.map((p) => [p.kind, p.line]),
        [['inserted', 3]],
      );
    });
  });

  describe('when entries are forged', () => {
    it('reports a rebuilt chain as "forged" from the first rewritten line', async () => {
      const { createHash } = await import('node:crypto');
      const forged = [...lines];
      for (let i = 2; i < forged.length; i++) {
        const e = JSON.parse(forged[i]!);
        if (i === 2) e.reason = 'nothing to see';
        e.prev = createHash('sha256')
          .update(forged[i - 1]!)
          .digest('hex');
        forged[i] = JSON.stringify(e);
      }
      const r = verifyLog(join_(forged), verifier, heads);
      assert.equal(r.verdict, 'tampered');
      assert.equal(r.problems[0]?.line, 3);
      // The rewritten lines, one finding, are one range.
      const forgedRun = r.problems.find((p) => p.kind === 'forged');
      assert.equal(forgedRun?.line, 3, JSON.stringify(r.problems));
      assert.ok((forgedRun?.through ?? 0) >= 5, JSON.stringify(r.problems));
    });
  });

  describe('when the end is cut off', () => {
    it('reports "truncated" against the head', () => {
      const r = verifyLog(join_(lines.slice(0, 4)), verifier, heads);
      assert.ok(
        r.problems.some((p) => p.kind === 'truncated' && p.line === 5),
        JSON.stringify(r.problems),
      );
    });
    it('cannot see it without a head (and says so)', () => {
      const r = verifyLog(join_(lines.slice(0, 4)), verifier, []);
      assert.equal(r.verdict, 'unproven');
    });
    it('catches it with a trusted head kept elsewhere even if the sidecar was replaced', async () => {
      const short = await makeLog(3);
      const r = verifyLog(join_(short.lines), short.verifier, [{ label: 'trusted', note: heads[0]!.note }]);
      assert.equal(r.verdict, 'tampered');
    });
  });

  it('rejects a head signed by another key, naming both key ids', async () => {
    const other = await makeLog(6);
    const r = verifyLog(join_(lines), verifier, other.heads);
    assert.equal(r.verdict, 'tampered');
    const p = r.problems.find((x) => x.kind === 'key');
    assert.ok(p, JSON.stringify(r.problems));
    assert.ok(p.message.includes(verifier.keyId.toString('hex')) && p.message.includes(other.verifier.keyId.toString('hex')), p.message);
  });

  it('fails on any single-byte change of any line (property)', () => {
    const text = join_(lines);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: text.length - 2 }), fc.integer({ min: 1, max: 255 }), (pos, delta) => {
        if (text[pos] === '\n') return;
        const code = (text.charCodeAt(pos) + delta) % 128;
        if (code === 10 || code === text.charCodeAt(pos)) return;
        const mutated = text.slice(0, pos) + String.fromCharCode(code) + text.slice(pos + 1);
        assert.equal(verifyLog(mutated, verifier, heads).verdict, 'tampered');
      }),
      { numRuns: 300 },
    );
  });
});

describe('audit log writer', () => {
  it('resumes the chain after reopening and keeps the head in step', async () => {
    const made = await makeLog(2);
    const log = await AuditLog.open({ logPath: made.logPath, signer: loadSigner(made.keyPath, 'x'), clock: { nowMs: () => 5 }, warn: () => {} });
    assert.equal(log.sizeAtOpen, 2);
    await log.appendDurable({ event: 'decision', call_id: 'more', tool: 't', action: 'confirm', reason: 'r' });
    await log.close();
    const text = readFileSync(made.logPath, 'utf8');
    const r = verifyLog(text, made.verifier, [{ label: 'h', note: readFileSync(`${made.logPath}.head`, 'utf8') }]);
    assert.equal(r.verdict, 'intact');
    assert.equal(r.entries, 3);
  });

  it('moves a torn last line to the quarantine file and warns', async () => {
    const made = await makeLog(2);
    writeFileSync(made.logPath, `${readFileSync(made.logPath, 'utf8')}{"event":"dec`);
    const warnings: string[] = [];
    const log = await AuditLog.open({ logPath: made.logPath, signer: loadSigner(made.keyPath, 'x'), clock: { nowMs: () => 5 }, warn: (m) => warnings.push(m) });
    await log.close();
    assert.match(warnings.join(), /torn line/);
    assert.equal(readFileSync(`${made.logPath}.quarantine`, 'utf8'), '{"event":"dec\n');
    assert.equal(
      verifyLog(readFileSync(made.logPath, 'utf8'), made.verifier, [{ label: 'h', note: readFileSync(`${made.logPath}.head`, 'utf8') }]).verdict,
      'intact',
    );
  });

  it('refuses a second writer on the same log', async () => {
    const made = await makeLog(1);
    const signer = loadSigner(made.keyPath, 'x');
    const first = await AuditLog.open({ logPath: made.logPath, signer, clock: { nowMs: () => 5 }, warn: () => {} });
    try {
      await assert.rejects(
        AuditLog.open({ logPath: made.logPath, signer, clock: { nowMs: () => 5 }, warn: () => {} }),
        (e: Error & { code?: string }) => e.code === 'AUDIT_LOCKED' && /another lookfirst/.test(e.message),
      );
    } finally {
      await first.close();
    }
  });

  describe('when the log no longer matches its signed head', () => {
    const open = (made: Awaited<ReturnType<typeof makeLog>>) =>
      AuditLog.open({ logPath: made.logPath, signer: loadSigner(made.keyPath, 'x'), clock: { nowMs: () => 5 }, warn: () => {} });
    it('refuses to start on a log cut at the end, instead of re-signing the cut', async () => {
      const made = await makeLog(5);
      writeFileSync(made.logPath, `${made.lines.slice(0, 3).join('\n')}\n`);
      await assert.rejects(
        open(made),
        (e: Error & { code?: string }) =>
          e.code === 'AUDIT_LOG_UNREADABLE' && /line 4: log truncated: head sidecar records 5 entries, the log ends after 3/.test(e.message),
      );
      assert.equal(readFileSync(made.logPath, 'utf8').split('\n').length, 4, 'nothing was changed');
    });
    it('refuses when the last newline was removed (the last entry would otherwise be quarantined away)', async () => {
      const made = await makeLog(3);
      writeFileSync(made.logPath, made.lines.join('\n'));
      await assert.rejects(open(made), /line 3: the last line has no newline/);
    });
    it('refuses a head that this key did not sign', async () => {
      const made = await makeLog(2);
      const other = await makeLog(2);
      writeFileSync(`${made.logPath}.head`, readFileSync(`${other.logPath}.head`, 'utf8'));
      await assert.rejects(open(made), /not a head signed by this gate's key/);
    });
  });

  it('takes over a lock whose pid now belongs to another process', async () => {
    const made = await makeLog(1);
    writeFileSync(`${made.logPath}.lock`, `${process.pid}\n1\n`);
    const warnings: string[] = [];
    const log = await AuditLog.open({ logPath: made.logPath, signer: loadSigner(made.keyPath, 'x'), clock: { nowMs: () => 5 }, warn: (m) => warnings.push(m) });
    await log.close();
    assert.match(warnings.join(), /stale lock/);
  });

  it('refuses to append to a log whose chain is broken', async () => {
    const made = await makeLog(3);
    const lines = readFileSync(made.logPath, 'utf8').split('\n');
    writeFileSync(made.logPath, [lines[0], lines[2], ''].join('\n'));
    await assert.rejects(
      AuditLog.open({ logPath: made.logPath, signer: loadSigner(made.keyPath, 'x'), clock: { nowMs: () => 5 }, warn: () => {} }),
      (e: Error & { code?: string }) => e.code === 'AUDIT_LOG_UNREADABLE' && /line 2/.test(e.message),
    );
  });
});
