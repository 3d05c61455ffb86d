import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSince } from './since.js';

const NOW = Date.parse('2026-12-02T12:00:00Z');

describe('parseSince', () => {
  it('reads durations back from now in s, m, h, d and w', () => {
    assert.deepEqual(parseSince('30m', NOW), { ok: true, sinceMs: NOW - 30 * 60_000 });
    assert.deepEqual(parseSince('24h', NOW), { ok: true, sinceMs: NOW - 24 * 3_600_000 });
    assert.deepEqual(parseSince('7d', NOW), { ok: true, sinceMs: NOW - 7 * 86_400_000 });
    assert.deepEqual(parseSince('90s', NOW), { ok: true, sinceMs: NOW - 90_000 });
    assert.deepEqual(parseSince('1.5h', NOW), { ok: true, sinceMs: NOW - 5_400_000 });
    assert.deepEqual(parseSince('2w', NOW), { ok: true, sinceMs: NOW - 14 * 86_400_000 });
  });

  it('reads ISO times and dates', () => {
    assert.deepEqual(parseSince('2026-12-01T09:00:00Z', NOW), { ok: true, sinceMs: Date.parse('2026-12-01T09:00:00Z') });
    assert.deepEqual(parseSince('2026-12-01', NOW), { ok: true, sinceMs: Date.parse('2026-12-01T00:00:00Z') });
    assert.deepEqual(parseSince('2026-12-01T09:00:00.250+01:00', NOW), { ok: true, sinceMs: Date.parse('2026-12-01T08:00:00.250Z') });
  });

  it('refuses anything else with a sentence that says what is accepted', () => {
    for (const bad of ['', 'yesterday', '24', 'h', '24x', '-1h', '1 day', '2026-13-45', '12/01/2026']) {
      const r = parseSince(bad, NOW);
      assert.equal(r.ok, false, bad);
      if (!r.ok) assert.match(r.reason, /30m, 24h or 7d/, bad);
    }
  });

  it('refuses a zero duration and a time in the future', () => {
    const zero = parseSince('0h', NOW);
    assert.equal(zero.ok, false);
    const future = parseSince('2027-01-01', NOW);
    assert.equal(future.ok, false);
    if (!future.ok) assert.match(future.reason, /in the future/);
  });
});

describe('when the duration reaches before 1970', () => {
  it('starts the window at the epoch, a time every Date shows (the whole log)', () => {
    for (const long of ['100000000d', '99999999999w', `${'9'.repeat(400)}d`]) {
      const r = parseSince(long, NOW);
      assert.deepEqual(r, { ok: true, sinceMs: 0 }, long);
      if (r.ok) assert.equal(new Date(r.sinceMs).toISOString(), '1970-01-01T00:00:00.000Z');
    }
  });
});
