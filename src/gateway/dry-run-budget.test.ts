import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import { BUDGET_RECORD, DryRunBudget } from './dry-run-budget.js';

describe('dry-run budget', () => {
  it('takes while bytes are left, then refuses without taking', async () => {
    const b = new DryRunBudget(100);
    assert.equal(await b.take(60), true);
    assert.equal(b.left(), 40);
    assert.equal(await b.take(41), false);
    assert.equal(b.left(), 40);
    assert.equal(await b.take(40), true);
    assert.equal(b.left(), 0);
  });

  it('two replicas on one store share one budget, also when they race', async () => {
    const store = createMemoryStore();
    const a = new DryRunBudget(1000, store);
    const b = new DryRunBudget(1000, store);
    const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take(50)));
    assert.equal(takes.filter(Boolean).length, 20);
    assert.equal((await store.get(BUDGET_RECORD.kind, BUDGET_RECORD.key))?.value, 1000);
    assert.equal(await a.take(1), false);
    assert.equal(a.left(), 0);
  });

  it('fails closed: a store error refuses, and a record it cannot read counts as spent', async () => {
    const store = createMemoryStore();
    await store.put(BUDGET_RECORD.kind, BUDGET_RECORD.key, 'not a number');
    assert.equal(await new DryRunBudget(100, store).take(1), false);
    await store.close();
    await assert.rejects(new DryRunBudget(100, store).take(1), { code: 'STORE_UNAVAILABLE' });
  });
});
