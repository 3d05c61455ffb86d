import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import { Interlock } from './interlock.js';
import { Replicas } from './replicas.js';

/** A promise settled from outside, to hold work open without timers. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

/** Lets queued promise callbacks run. */
const settle = () => new Promise((r) => setImmediate(r));

describe('Interlock', () => {
  describe('when two sessions call the same tool', () => {
    it("asks one session's calls one after another, without waiting for another session's", async () => {
      const gateWide = new Interlock();
      const [a, b] = [gateWide.forSession(), gateWide.forSession()];
      const started: string[] = [];
      const held = gate();
      const a1 = a.exclusive('t', async () => {
        started.push('a1');
        await held.opened;
      });
      const a2 = a.exclusive('t', async () => void started.push('a2'));
      const b1 = b.exclusive('t', async () => void started.push('b1'));
      await b1;
      await settle();
      assert.deepEqual(started, ['a1', 'b1'], "b1 ran while a1's question was open; a2 waits for a1");
      held.open();
      await Promise.all([a1, a2]);
      assert.deepEqual(started, ['a1', 'b1', 'a2']);
    });

    it('runs executions of one tool one at a time across sessions, and other tools freely', async () => {
      const gateWide = new Interlock();
      const [a, b] = [gateWide.forSession(), gateWide.forSession()];
      const order: string[] = [];
      const held = gate();
      const first = a.executing('t', async () => {
        order.push('a start');
        await held.opened;
        order.push('a end');
      });
      const second = b.executing('t', async () => void order.push('b'));
      const other = b.executing('u', async () => void order.push('other tool'));
      await other;
      await settle();
      assert.deepEqual(order, ['a start', 'other tool']);
      held.open();
      await Promise.all([first, second]);
      assert.deepEqual(order, ['a start', 'other tool', 'a end', 'b']);
    });

    it('runs the next execution after one that failed', async () => {
      const one = new Interlock().forSession();
      const failed = one.executing('t', async () => {
        throw new Error('upstream down');
      });
      await assert.rejects(failed, /upstream down/);
      assert.equal(await one.executing('t', async () => 'ran'), 'ran');
    });
  });

  describe('blocks', () => {
    it('are shared by every session view', async () => {
      const gateWide = new Interlock([['t', { sinceMs: 1, reason: 'unclear', callId: 'c0' }]]);
      const view = gateWide.forSession();
      assert.equal(view.blockOf('t')?.callId, 'c0');
      await view.block('u', { sinceMs: 2, reason: 'x', callId: 'c1' });
      assert.equal(gateWide.blockOf('u')?.callId, 'c1');
      assert.deepEqual(
        gateWide.list().map(([tool]) => tool),
        ['t', 'u'],
      );
    });

    it('are lifted by an unlock only when it names the block that stands now', async () => {
      const lock = new Interlock().forSession();
      await lock.block('t', { sinceMs: 1, reason: 'first', callId: 'c1' });
      await lock.block('t', { sinceMs: 2, reason: 'newer', callId: 'c2' });
      assert.equal(await lock.unblock('t', 'c1', 3), false, 'an unlock for the earlier block lifts nothing');
      assert.equal(lock.blockOf('t')?.callId, 'c2');
      assert.equal(await lock.unblock('t', 'c2', 3), true);
      assert.equal(lock.blockOf('t'), undefined);
      assert.equal(await lock.unblock('t', 'c9', 4), true, 'nothing left to lift');
    });
  });

  describe('when two gate replicas share one store', () => {
    const clock = { nowMs: () => 1_000 };

    it('a tool blocked on one is blocked on the other, and an unlock on the other lifts it on both', async () => {
      const store = createMemoryStore({ clock });
      const [a, b] = [await Interlock.open([], { store }), await Interlock.open([], { store })];
      await a.block('t', { sinceMs: 5, reason: 'read-back failed', callId: 'c1' });
      await settle();
      assert.equal(b.blockOf('t')?.callId, 'c1', 'seen through the change notification');
      assert.equal(await b.unblock('t', 'c1', 6), true);
      await settle();
      assert.equal(a.blockOf('t'), undefined);
      a.close();
      b.close();
    });

    it('a block the audit log replays is not put back once the store has cleared it', async () => {
      const store = createMemoryStore({ clock });
      const a = await Interlock.open([['t', { sinceMs: 5, reason: 'cut off', callId: 'c1' }]], { store });
      assert.equal(await a.unblock('t', 'c1', 9), true);
      const restarted = await Interlock.open([['t', { sinceMs: 5, reason: 'cut off', callId: 'c1' }]], { store });
      assert.equal(restarted.blockOf('t'), undefined, 'the store knows the block was lifted after it was set');
      const newer = await Interlock.open([['t', { sinceMs: 20, reason: 'cut off again', callId: 'c2' }]], { store });
      assert.equal(newer.blockOf('t')?.callId, 'c2', 'a block the log holds from after the clear stands');
      for (const l of [a, restarted, newer]) l.close();
    });

    it('runs executions of one tool one at a time across replicas', async () => {
      const store = createMemoryStore({ clock });
      const ra = await Replicas.start(store, clock, 'a');
      const rb = await Replicas.start(store, clock, 'b');
      const [a, b] = [await Interlock.open([], { store, replicas: ra }), await Interlock.open([], { store, replicas: rb })];
      const order: string[] = [];
      const held = gate();
      const first = a.executing('t', async () => {
        order.push('a start');
        await held.opened;
        order.push('a end');
      });
      await settle();
      const second = b.executing('t', async () => void order.push('b'));
      await settle();
      assert.deepEqual(order, ['a start']);
      held.open();
      await Promise.all([first, second]);
      assert.deepEqual(order, ['a start', 'a end', 'b']);
      await ra.stop();
      await rb.stop();
      a.close();
      b.close();
    });

    it('blocks the tool when the replica that held its execution stopped, before anyone runs it again', async () => {
      const store = createMemoryStore({ clock });
      await store.put('exec', 't', { state: 'held', replica: 'gone-1234', sinceMs: 1, untilMs: 10_000_000 });
      const rb = await Replicas.start(store, clock, 'b');
      const b = await Interlock.open([], { store, replicas: rb });
      let ran = false;
      await b.executing('t', async () => {
        ran = true;
        assert.match(b.blockOf('t')?.reason ?? '', /stopped while it was executing/);
      });
      assert.equal(ran, true, 'the work runs and sees the block (the pipeline then denies the call)');
      await rb.stop();
      b.close();
    });

    it('takes over a lease past its time (its replica lost the store while executing) and blocks the tool first', async () => {
      const store = createMemoryStore({ clock });
      const ra = await Replicas.start(store, clock, 'a');
      await store.put('exec', 't', { state: 'held', replica: ra.id, sinceMs: 1, untilMs: 2 });
      const rb = await Replicas.start(store, clock, 'b');
      const b = await Interlock.open([], { store, replicas: rb });
      await b.executing('t', async () => {
        assert.match(b.blockOf('t')?.reason ?? '', /past its time/);
      });
      await ra.stop();
      await rb.stop();
      b.close();
    });

    it('blocks the tool over a lease it cannot read, and hands a lease back only if it is still its own', async () => {
      const store = createMemoryStore({ clock });
      await store.put('exec', 't', { what: 'garbage' });
      const rb = await Replicas.start(store, clock, 'b');
      const b = await Interlock.open([], { store, replicas: rb });
      await b.executing('t', async () => {
        assert.match(b.blockOf('t')?.reason ?? '', /cannot be read/);
      });
      await settle();
      assert.deepEqual((await store.get('exec', 't'))?.value, { state: 'free' });
      await rb.stop();
      b.close();
    });

    it('keeps the lease for executions waiting on the same replica, and hands it back once they are done', async () => {
      const store = createMemoryStore({ clock });
      const ra = await Replicas.start(store, clock, 'a');
      const a = await Interlock.open([], { store, replicas: ra });
      const versions: number[] = [];
      await Promise.all(
        [1, 2, 3].map(() =>
          a.executing('t', async () => {
            versions.push((await store.get('exec', 't'))?.version ?? 0);
          }),
        ),
      );
      await settle();
      assert.deepEqual((await store.get('exec', 't'))?.value, { state: 'free' }, 'handed back when the queue is empty');
      assert.equal(new Set(versions).size, 3, 'each execution renewed the lease it was handed');
      await ra.stop();
      a.close();
    });

    it('hands a kept lease back when the store fails at the handover (no orphan for other replicas)', async () => {
      const real = createMemoryStore({ clock });
      let down = false;
      const fail = () => Promise.reject(new Error('store down'));
      const store: typeof real = {
        ...real,
        kind: real.kind,
        get: (k, key) => (down ? fail() : real.get(k, key)),
        putIfAbsent: (k, key, v, o) => (down ? fail() : real.putIfAbsent(k, key, v, o)),
        compareAndSet: (k, key, ver, v, o) => (down ? fail() : real.compareAndSet(k, key, ver, v, o)),
      };
      const a = await Interlock.open([], { store });
      const held = gate();
      const first = a.executing('t', async () => {
        await held.opened;
        down = true;
      });
      const second = a.executing('t', async () => 'ran').catch((err: Error) => err.message);
      held.open();
      await first;
      assert.equal(await second, 'store down', 'the queued execution could not take the lease: it did not run');
      down = false;
      await new Promise((r) => setTimeout(r, 600));
      assert.deepEqual((await real.get('exec', 't'))?.value, { state: 'free' }, 'the kept lease was handed back');
      a.close();
    });
  });
});
