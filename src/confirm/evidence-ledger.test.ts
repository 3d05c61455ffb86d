import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { systemClock } from '../clock.js';
import { createMemoryStore } from '../store/memory/memory.js';
import { createSqliteStore } from '../store/sqlite/sqlite.js';
import { createEvidenceLedger } from './evidence-ledger.js';

describe('evidence ledger', () => {
  it('finds nothing under a reference that is not one the gate issues, and fails every check for it', async () => {
    const store = createMemoryStore();
    const ledger = createEvidenceLedger(store, systemClock);
    assert.equal(await ledger.find('ev_../../x'), undefined);
    assert.equal(await ledger.find('ev_0123456789abcdef'), undefined);
    const checks = await ledger.check('ev_0123456789abcdef', 'c1', 'a'.repeat(64));
    assert.equal(checks.find((c) => c.name === 'evidence_exists')?.ok, false);
    assert.ok(checks.every((c) => c.name === 'action_unchanged' || c.name === 'not_expired' || !c.ok || c.name === 'evidence_exists'));
    await store.close();
  });

  it('lets exactly one of many concurrent uses of one decision through, on a shared SQLite store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-ledger-'));
    try {
      const a = createSqliteStore(join(dir, 's.db'));
      const b = createSqliteStore(join(dir, 's.db'));
      const la = createEvidenceLedger(a, systemClock);
      const lb = createEvidenceLedger(b, systemClock);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? la : lb).useDecision('call-1', 60_000)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await la.useDecision('call-1', 60_000), false, 'used is used');
      await a.close();
      await b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
