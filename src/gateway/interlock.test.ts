import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Interlock } from './interlock.js';

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
    it('are shared by every session view', () => {
      const gateWide = new Interlock([['t', { sinceMs: 1, reason: 'unclear', callId: 'c0' }]]);
      const view = gateWide.forSession();
      assert.equal(view.blockOf('t')?.callId, 'c0');
      view.block('u', { sinceMs: 2, reason: 'x', callId: 'c1' });
      assert.equal(gateWide.blockOf('u')?.callId, 'c1');
      assert.deepEqual(
        gateWide.list().map(([tool]) => tool),
        ['t', 'u'],
      );
    });

    it('are lifted by an unlock only when it names the block that stands now', () => {
      const lock = new Interlock().forSession();
      lock.block('t', { sinceMs: 1, reason: 'first', callId: 'c1' });
      lock.block('t', { sinceMs: 2, reason: 'newer', callId: 'c2' });
      assert.equal(lock.unblock('t', 'c1'), false, 'an unlock for the earlier block lifts nothing');
      assert.equal(lock.blockOf('t')?.callId, 'c2');
      assert.equal(lock.unblock('t', 'c2'), true);
      assert.equal(lock.blockOf('t'), undefined);
      assert.equal(lock.unblock('t', 'c9'), true, 'nothing left to lift');
    });
  });
});
