import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackAddress, SessionTable } from './session-table.js';

const caps = { max: 10, perPrincipal: 3, perAddress: 4, idleMs: 1000 };

function fill(t: SessionTable, principal: string, address: string, n: number, fromMs = 0): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${principal}-${address}-${fromMs + i}`;
    const a = t.admit(principal, address, fromMs + i);
    assert.equal(a.kind, 'admit');
    t.add(id, principal, address, fromMs + i);
    ids.push(id);
  }
  return ids;
}

describe('MCP session caps', () => {
  describe('when a principal reaches its own cap', () => {
    it('evicts its oldest idle session, and nobody else’s', () => {
      const t = new SessionTable(caps);
      const other = fill(t, 'B', '127.0.0.1', 1, 0);
      const mine = fill(t, 'A', '127.0.0.1', 3, 10);
      t.begin(mine[0]!, 20, true); // the oldest is busy: the next oldest goes
      const a = t.admit('A', '127.0.0.1', 30);
      assert.deepEqual(a, { kind: 'admit', evict: [mine[1]] });
      assert.ok(!(a.kind === 'admit' && a.evict.includes(other[0]!)));
    });

    it('counts use: the least recently used idle session goes first', () => {
      const t = new SessionTable(caps);
      const mine = fill(t, 'A', '127.0.0.1', 3);
      t.begin(mine[0]!, 50, true)(); // used, then done: now the most recent
      assert.deepEqual(t.admit('A', '127.0.0.1', 60), { kind: 'admit', evict: [mine[1]] });
    });

    it('refuses when every one of its sessions has a request in progress', () => {
      const t = new SessionTable(caps);
      for (const id of fill(t, 'A', '127.0.0.1', 3)) t.begin(id, 5, true);
      const a = t.admit('A', '127.0.0.1', 6);
      assert.equal(a.kind, 'refuse');
      assert.match(a.kind === 'refuse' ? a.reason : '', /already hold 3 sessions .* each with a request in progress/);
    });

    it('does not count a standalone event stream as a request in progress', () => {
      const t = new SessionTable(caps);
      const mine = fill(t, 'A', '127.0.0.1', 3);
      t.begin(mine[0]!, 5, false);
      assert.equal(t.admit('A', '127.0.0.1', 6).kind, 'admit');
    });
  });

  describe('when one remote address reaches its cap', () => {
    it('evicts only the newcomer’s own idle session from that address', () => {
      const t = new SessionTable({ ...caps, perPrincipal: 10 });
      const b = fill(t, 'B', '10.0.0.9', 2);
      const a = fill(t, 'A', '10.0.0.9', 2, 10);
      assert.deepEqual(t.admit('A', '10.0.0.9', 20), { kind: 'admit', evict: [a[0]] });
      const refused = t.admit('C', '10.0.0.9', 20);
      assert.equal(refused.kind, 'refuse', 'C has no session there to give up');
      assert.match(refused.kind === 'refuse' ? refused.reason : '', /your address already holds 4 sessions/);
      assert.equal(t.get(b[0]!, 'B')?.id, b[0]);
    });

    it('does not cap loopback per address (local clients are told apart by principal)', () => {
      const t = new SessionTable({ ...caps, perAddress: 1 });
      fill(t, 'A', '127.0.0.1', 2);
      fill(t, 'B', '::1', 2);
      fill(t, 'C', '::ffff:127.0.0.1', 2);
    });
  });

  describe('when the global cap is reached', () => {
    it('refuses the newcomer and evicts nobody', () => {
      const t = new SessionTable({ ...caps, max: 4 });
      fill(t, 'A', '127.0.0.1', 2);
      fill(t, 'B', '127.0.0.1', 2, 10);
      const a = t.admit('C', '127.0.0.1', 20);
      assert.equal(a.kind, 'refuse');
      assert.match(a.kind === 'refuse' ? a.reason : '', /holds 4 MCP sessions, its limit/);
    });

    it('closes sessions idle past idleMs first, whoever holds them', () => {
      const t = new SessionTable({ ...caps, max: 2 });
      const old = fill(t, 'A', '127.0.0.1', 2);
      assert.deepEqual(t.admit('B', '127.0.0.1', 5000), { kind: 'admit', evict: old });
    });
  });

  describe('when another principal names a session id', () => {
    it('does not find it', () => {
      const t = new SessionTable(caps);
      const [id] = fill(t, 'A', '127.0.0.1', 1);
      assert.equal(t.get(id!, 'B'), undefined);
      assert.equal(t.get(id!, 'A')?.principal, 'A');
    });
  });

  it('knows loopback addresses', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopbackAddress(a), a);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'fe80::1', 'unknown']) assert.ok(!isLoopbackAddress(a), a);
  });
});
