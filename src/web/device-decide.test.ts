import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decisionAnswer, duplicateTopLevelKey, toDecision } from './device-decide.js';

const good = { set_id: 'cs_0123456789abcdef', call_id: 'c1', nonce: 'a'.repeat(32), decision: 'approve' };

describe('toDecision', () => {
  it('reads a well-formed decide body', () => {
    assert.deepEqual(toDecision(good), { setId: good.set_id, callId: 'c1', nonce: good.nonce, approve: true });
    assert.equal((toDecision({ ...good, decision: 'deny' }) as { approve: boolean }).approve, false);
  });
  it('names each malformed field with a sentence, never guessing', () => {
    assert.match(String(toDecision({ ...good, set_id: 'cs_x' })), /set_id/);
    assert.match(String(toDecision({ ...good, call_id: '' })), /call_id/);
    assert.match(String(toDecision({ ...good, nonce: 'A'.repeat(32) })), /nonce/);
    assert.match(String(toDecision({ ...good, decision: 'yes' })), /decision/);
    assert.match(String(toDecision({ ...good, decision: true })), /decision/);
  });
});

describe('decisionAnswer', () => {
  const checks = [{ name: 'device_paired', ok: true }];
  it('answers 200 approved or denied with the evidence reference', () => {
    const a = decisionAnswer({ ok: true, status: 'decided', approve: true, evidenceRef: 'ev_1', checks });
    assert.equal(a.status, 200);
    assert.equal(a.body.outcome, 'approved');
    assert.equal(a.body.message, 'Approved: executes now');
    assert.equal(a.body.evidence_ref, 'ev_1');
    assert.equal(decisionAnswer({ ok: true, status: 'decided', approve: false, evidenceRef: 'ev_2', checks }).body.outcome, 'denied');
  });
  it('says in pending mode that an approval runs when the agent collects it, not now', () => {
    const a = decisionAnswer({ ok: true, status: 'decided', approve: true, evidenceRef: 'ev_1', checks }, true);
    assert.equal(a.body.outcome, 'approved');
    assert.equal(a.body.message, 'Approved: runs when the agent collects it');
    assert.equal(decisionAnswer({ ok: true, status: 'decided', approve: false, evidenceRef: 'ev_2', checks }, true).body.message, 'Denied');
  });
  it('answers 200 second with the new set for a high-risk first yes', () => {
    const a = decisionAnswer({ ok: true, status: 'second_needed', checks, cards: { set_id: 'cs_1', expires_at: '', cards: [] } });
    assert.equal(a.status, 200);
    assert.equal(a.body.outcome, 'second');
    assert.deepEqual(a.body.cards, { set_id: 'cs_1', expires_at: '', cards: [] });
  });
  it('answers a refusal with its status and the first failed check, and keeps the transcript', () => {
    const a = decisionAnswer({ ok: false, failed: 'nonce_consumed_once', reason: 'spent', checks, httpStatus: 409, transcript: 'yes' });
    assert.equal(a.status, 409);
    assert.equal(a.body.failed_check, 'nonce_consumed_once');
    assert.match(String(a.body.error), /nonce_consumed_once failed \(spent\)/);
    assert.equal(a.body.transcript, 'yes');
  });
});

describe('duplicateTopLevelKey', () => {
  it('finds a field named twice at the top level, escaped spellings included', () => {
    assert.equal(duplicateTopLevelKey('{"decision":"deny","decision":"approve"}'), 'decision');
    assert.equal(duplicateTopLevelKey('{"decision":"deny", "\\u0064ecision" : "approve"}'), 'decision');
    assert.equal(duplicateTopLevelKey('{"a":"\\"b\\":1","b":{"a":1,"a":2},"c":[{"a":1}],"d":"x"}'), undefined);
    assert.equal(duplicateTopLevelKey(JSON.stringify({ ...good, note: 'a "decision": "deny"' })), undefined);
    assert.equal(duplicateTopLevelKey('{"s":"\\\\","s":1}'), 's');
  });
});
