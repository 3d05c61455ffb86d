/**
 * The one contract every store implementation passes (as hono's router tests run one suite against each
 * router). Each implementation's test file calls `storeContract` with a function that opens a fresh store;
 * a case an implementation cannot meet is skipped with its reason, never silently.
 *
 * Tests never sleep for expiry: they move a manual clock. Notification waits poll with a deadline (a
 * liveness bound, not a timing assertion).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Clock } from '../clock.js';
import { cyclic, NOTIFY_DEADLINE_MS, raceAcrossProcesses, seeChange, waitFor } from './contract-race.js';
import { type Store, type StoreConfig, StoreError, type StoreOptions } from './store.js';

/** What an implementation hands the contract for one case. */
export interface ContractSubject {
  store: Store;
  /** Opens another store on the same backing (same file or url); absent when there is none (memory). */
  reopen?: (opts?: StoreOptions) => Promise<Store>;
  /** The config a child process opens the same backing with; absent when processes cannot share it. */
  spawnArgs?: StoreConfig;
}

/** A clock the test moves by hand. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
}

/** A manual clock starting at a fixed instant. */
export function createManualClock(startMs = 1_800_000_000_000): ManualClock {
  let now = startMs;
  return {
    nowMs: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/**
 * Registers the contract suite for one implementation.
 * @param name the implementation, as it appears in test names.
 * @param open opens a fresh store using the given options (its clock).
 */
export function storeContract(name: string, open: (opts: StoreOptions) => Promise<ContractSubject>): void {
  // Every store a case opens is closed when the case ends (a PostgreSQL pool holds connections).
  const opened: Store[] = [];
  const closeAll = async () => {
    for (const s of opened.splice(0)) await s.close().catch(() => {});
  };
  let n = 0;
  const setup = async () => {
    const clock = createManualClock();
    const subject = await open({ clock });
    opened.push(subject.store);
    const reopen = subject.reopen && (async (opts?: StoreOptions) => opened[opened.push(await subject.reopen!(opts ?? { clock })) - 1]!);
    // Kinds unique per case: cases may share one backing (one PostgreSQL server).
    const kind = `k${process.pid}x${++n}`;
    return { ...subject, reopen, clock, store: subject.store, kind };
  };
  const noSecondInstance = `${name} has no second instance: the in-memory store lives in one process and is gone when it closes`;

  describe(`${name} store`, () => {
    afterEach(closeAll);
    describe('when a live record exists', () => {
      it('put-if-absent fails and keeps the first value', async () => {
        const { store, kind } = await setup();
        assert.deepEqual(await store.putIfAbsent(kind, 'a', { n: 1 }), { kind, key: 'a', value: { n: 1 }, version: 1 });
        assert.equal(await store.putIfAbsent(kind, 'a', { n: 2 }), undefined);
        assert.deepEqual((await store.get(kind, 'a'))?.value, { n: 1 });
      });
    });

    describe('when the record has expired', () => {
      it('put-if-absent succeeds over it', async () => {
        const { store, kind, clock } = await setup();
        const first = await store.putIfAbsent(kind, 'a', 1, { ttlMs: 1000 });
        assert.equal(first?.expiresAtMs, clock.nowMs() + 1000);
        clock.advance(999);
        assert.equal(await store.putIfAbsent(kind, 'a', 2), undefined);
        clock.advance(1);
        assert.equal((await store.putIfAbsent(kind, 'a', 3))?.value, 3);
        assert.equal((await store.get(kind, 'a'))?.expiresAtMs, undefined);
      });

      it('get, list and consume-once no longer see it', async () => {
        const { store, kind, clock } = await setup();
        await store.put(kind, 'gone', 'x', { ttlMs: 50 });
        await store.put(kind, 'kept', 'y');
        clock.advance(50);
        assert.equal(await store.get(kind, 'gone'), undefined);
        assert.deepEqual(
          (await store.list(kind)).map((r) => r.key),
          ['kept'],
        );
        assert.equal(await store.consumeOnce(kind, 'gone'), undefined);
        assert.equal(await store.delete(kind, 'gone'), false);
      });

      it('compare-and-set treats it as absent', async () => {
        const { store, kind, clock } = await setup();
        const r = await store.put(kind, 'a', 1, { ttlMs: 10 });
        clock.advance(10);
        assert.equal(await store.compareAndSet(kind, 'a', r.version, 2), undefined);
        assert.equal((await store.compareAndSet(kind, 'a', 0, 3))?.value, 3);
      });

      it('a sweep removes it and tells watchers', async () => {
        const { store, kind, clock } = await setup();
        await store.put(kind, 'old', 1, { ttlMs: 10 });
        await store.put(kind, 'new', 1);
        const seen: string[] = [];
        const off = store.watch(kind, (k) => seen.push(k));
        try {
          clock.advance(10);
          assert.ok((await store.sweep()) >= 1);
          await waitFor(() => seen.includes('old'), 'a notification for the swept key');
        } finally {
          off();
        }
      });
    });

    describe('compare-and-set', () => {
      it('fails with a stale version and leaves the value', async () => {
        const { store, kind } = await setup();
        const v1 = await store.put(kind, 'lock', { owner: 'a' });
        await store.put(kind, 'lock', { owner: 'b' });
        assert.equal(await store.compareAndSet(kind, 'lock', v1.version, { owner: 'c' }), undefined);
        assert.deepEqual((await store.get(kind, 'lock'))?.value, { owner: 'b' });
      });

      it('increments the version by one per write', async () => {
        const { store, kind } = await setup();
        const v1 = await store.put(kind, 'a', 0);
        const v2 = await store.compareAndSet(kind, 'a', v1.version, 1);
        const v3 = await store.put(kind, 'a', 2);
        assert.deepEqual([v1.version, v2?.version, v3.version], [1, 2, 3]);
        assert.equal((await store.get(kind, 'a'))?.version, 3);
      });

      it('with expected version 0 creates only when absent', async () => {
        const { store, kind } = await setup();
        assert.equal((await store.compareAndSet(kind, 'a', 0, 'first'))?.version, 1);
        assert.equal(await store.compareAndSet(kind, 'a', 0, 'second'), undefined);
        assert.equal((await store.get(kind, 'a'))?.value, 'first');
      });
    });

    describe('when 200 callers consume one nonce in this process', () => {
      it('exactly one wins and the nonce is gone', async () => {
        const { store, kind } = await setup();
        await store.put(kind, 'nonce', { callId: 'c1' });
        const results = await Promise.all(Array.from({ length: 200 }, () => store.consumeOnce(kind, 'nonce')));
        const winners = results.filter((r) => r !== undefined);
        assert.equal(winners.length, 1);
        assert.deepEqual(winners[0]?.value, { callId: 'c1' });
        assert.equal(await store.get(kind, 'nonce'), undefined);
      });
    });

    describe('when 200 callers in 4 processes consume one nonce', () => {
      it('exactly one wins across all processes', async (t) => {
        const { store, kind, spawnArgs } = await setup();
        if (!spawnArgs) return t.skip(noSecondInstance);
        await store.put(kind, 'nonce', 'spend me once');
        const { wins, errors } = await raceAcrossProcesses(spawnArgs, kind, 'nonce', 4, 50);
        t.diagnostic(`wins per process: ${wins.join(', ')}; errors: ${errors.length}`);
        assert.deepEqual(errors, []);
        assert.equal(
          wins.reduce((a, b) => a + b, 0),
          1,
        );
        assert.equal(await store.get(kind, 'nonce'), undefined);
      });
    });

    describe('listing by kind', () => {
      it('returns only live records of that kind, ordered by key', async () => {
        const { store, kind, clock } = await setup();
        await store.put(kind, 'b', 2);
        await store.put(kind, 'a', 1);
        await store.put(kind, 'c', 3, { ttlMs: 5 });
        await store.put(`${kind}other`, 'a0', 0);
        clock.advance(5);
        assert.deepEqual(
          (await store.list(kind)).map((r) => [r.kind, r.key, r.value]),
          [
            [kind, 'a', 1],
            [kind, 'b', 2],
          ],
        );
        assert.deepEqual(await store.list(`${kind}none`), []);
      });
    });

    describe('change notification', () => {
      it('a watcher sees a change made through the same store', async (t) => {
        const { store, kind } = await setup();
        const ms = await seeChange(store, store, kind);
        t.diagnostic(`same store: seen after ${ms} ms`);
      });

      it('a watcher sees a change made by a second store on the same backing', async (t) => {
        const { store, kind, reopen } = await setup();
        if (!reopen) return t.skip(noSecondInstance);
        const ms = await seeChange(store, await reopen(), kind);
        t.diagnostic(`second store: seen after ${ms} ms`);
      });

      it('once watching() resolves, a delete by a second store is seen', async (t) => {
        const { store, kind, reopen } = await setup();
        if (!reopen) return t.skip(noSecondInstance);
        const other = await reopen();
        await other.put(kind, 'doomed', 1);
        const seen: string[] = [];
        const off = store.watch(kind, (k) => seen.push(k));
        try {
          await store.watching();
          await new Promise((r) => setTimeout(r, 50)); // let any connect-time notifications pass
          seen.length = 0;
          assert.equal(await other.delete(kind, 'doomed'), true);
          await waitFor(() => seen.includes('doomed'), 'a notification for the deleted key', NOTIFY_DEADLINE_MS);
        } finally {
          off();
        }
      });

      it('an unsubscribed watcher hears nothing more', async () => {
        const { store, kind } = await setup();
        const seen: string[] = [];
        const off = store.watch(kind, (k) => seen.push(k));
        off();
        await store.put(kind, 'quiet', 1);
        await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(seen, []);
      });
    });

    describe('when the store is closed and opened again', () => {
      it('a pending approval and a lock are still there', async (t) => {
        const { store, kind, reopen } = await setup();
        if (!reopen) return t.skip(noSecondInstance);
        const approval = { callId: 'call-1', tool: 'files__write_file', requestedAtMs: 1_800_000_000_000, state: 'pending' };
        await store.put(`${kind}approval`, 'call-1', approval, { ttlMs: 120_000 });
        await store.putIfAbsent(`${kind}lock`, '/srv/data/report.txt', { holder: 'call-1' });
        await store.close();
        const again = await reopen();
        assert.deepEqual((await again.get(`${kind}approval`, 'call-1'))?.value, approval);
        assert.equal((await again.get(`${kind}lock`, '/srv/data/report.txt'))?.version, 1);
        assert.equal(await again.putIfAbsent(`${kind}lock`, '/srv/data/report.txt', { holder: 'call-2' }), undefined);
      });
    });

    describe('when given bad input', () => {
      for (const [what, value] of [
        ['a BigInt', { amount: 10n }],
        ['a cycle', cyclic()],
      ] as const) {
        it(`a value holding ${what} throws STORE_INVALID naming the kind and key`, async () => {
          const { store, kind } = await setup();
          await assert.rejects(store.put(kind, 'k1', value), (err: unknown) => {
            assert.ok(err instanceof StoreError);
            assert.equal(err.code, 'STORE_INVALID');
            assert.match(err.message, new RegExp(`${kind}/"k1"`));
            return true;
          });
          assert.equal(await store.get(kind, 'k1'), undefined);
        });
      }

      it('a bad kind or an empty key throws STORE_INVALID', async () => {
        const { store } = await setup();
        await assert.rejects(store.get('', 'a'), { code: 'STORE_INVALID' });
        await assert.rejects(store.get('9lives', 'a'), { code: 'STORE_INVALID' });
        await assert.rejects(store.put('ok', '', 1), { code: 'STORE_INVALID' });
      });

      it('a closed store throws STORE_UNAVAILABLE', async () => {
        const { store, kind } = await setup();
        await store.close();
        await assert.rejects(store.get(kind, 'a'), { code: 'STORE_UNAVAILABLE' });
      });
    });
  });
}
