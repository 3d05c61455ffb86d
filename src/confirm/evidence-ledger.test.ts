import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { systemClock } from '../clock.js';
import { createMemoryStore } from '../store/memory/memory.js';
import { createSqliteStore } from '../store/sqlite/sqlite.js';
import { createEvidenceLedger } from './evidence-ledger.js';

const REF = 'ev_0123456789abcdef';

describe('evidence ledger', () => {
  it('reads a well-formed evidence record, and nothing for a malformed reference or record', async () => {
    const store = createMemoryStore();
    const ledger = createEvidenceLedger(store, systemClock);
    await store.put('evidence', REF, { callId: 'c1', argsSha256: 'a'.repeat(64), approve: true, setId: 'cs_1', expiresAtMs: 5 });
    assert.deepEqual(await ledger.get(REF), { callId: 'c1', argsSha256: 'a'.repeat(64), approve: true, setId: 'cs_1', expiresAtMs: 5 });
    assert.equal(await ledger.get('ev_../../x'), undefined, 'not a reference the gate issues');
    await store.put('evidence', 'ev_aaaaaaaaaaaaaaaa', { callId: 7, approve: 'yes' });
    assert.equal(await ledger.get('ev_aaaaaaaaaaaaaaaa'), undefined, 'a record of the wrong shape is no evidence');
    await store.close();
  });

  it('says whether a card set listed a call', async () => {
    const store = createMemoryStore();
    const ledger = createEvidenceLedger(store, systemClock);
    await store.put('cardset', 'cs_1', { cards: [{ callId: 'c1' }, { callId: 'c2' }] });
    assert.equal(await ledger.setHolds('cs_1', 'c2'), true);
    assert.equal(await ledger.setHolds('cs_1', 'c3'), false);
    assert.equal(await ledger.setHolds('cs_missing', 'c1'), false);
    await store.close();
  });

  it('lets exactly one of many concurrent uses of one evidence through, on a shared SQLite store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-ledger-'));
    try {
      const a = createSqliteStore(join(dir, 's.db'));
      const b = createSqliteStore(join(dir, 's.db'));
      const la = createEvidenceLedger(a, systemClock);
      const lb = createEvidenceLedger(b, systemClock);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? la : lb).use(REF, 60_000)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await la.use(REF, 60_000), false, 'used is used');
      await a.close();
      await b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
