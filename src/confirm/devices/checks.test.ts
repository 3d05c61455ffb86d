import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvidenceRecord } from './card-types.js';
import {
  actionUnchangedCheck,
  cardSetOpenCheck,
  devicePairedCheck,
  executionChecks,
  nonceConsumedOnceCheck,
  notExpiredCheck,
  wordsChooseCardCheck,
} from './checks.js';

const device = { id: 'dev_0123456789abcdef', user: 'alice', name: 'p', key: 'k', pairedAtMs: 1 };
const set = { user: 'alice', deviceId: device.id, cards: [], createdAtMs: 0, expiresAtMs: 10, open: true };
const nonce = { setId: 'cs_1', callId: 'c1', argsSha256: 'a', stage: 'first' as const, user: 'alice' };
const evidence: EvidenceRecord = {
  ref: 'ev_0123456789abcdef',
  callId: 'c1',
  argsSha256: 'a',
  setId: 'cs_1',
  user: 'alice',
  deviceId: device.id,
  deviceName: 'p',
  approve: true,
  stage: 'first',
  method: 'tap',
  cardText: 't',
  shownAtMs: 0,
  decidedAtMs: 1,
  expiresAtMs: 100,
  checks: [],
};

describe('decision-side checks', () => {
  it('device_paired: fails for no device, a revoked one, another user, or an unknown call user', () => {
    assert.equal(devicePairedCheck(device, 'alice').ok, true);
    assert.equal(devicePairedCheck(undefined, 'alice').ok, false);
    assert.equal(devicePairedCheck({ ...device, revokedAtMs: 2 }, 'alice').ok, false);
    assert.equal(devicePairedCheck(device, 'bob').ok, false);
    assert.equal(devicePairedCheck(device, undefined).ok, false);
  });

  it('card_set_open: fails for a missing, closed, or other device’s set', () => {
    assert.equal(cardSetOpenCheck(set, device.id).ok, true);
    assert.equal(cardSetOpenCheck(undefined, device.id).ok, false);
    assert.equal(cardSetOpenCheck({ ...set, open: false }, device.id).ok, false);
    assert.equal(cardSetOpenCheck(set, 'dev_ffffffffffffffff').ok, false);
  });

  it('not_expired: passes strictly before the expiry and fails at it, or with none', () => {
    assert.equal(notExpiredCheck(10, 9).ok, true);
    assert.equal(notExpiredCheck(10, 10).ok, false);
    assert.equal(notExpiredCheck(undefined, 0).ok, false);
  });

  it('words_choose_card: a tap needs the card in the set; voice needs the words to pick it too', () => {
    assert.equal(wordsChooseCardCheck('tap', true).ok, true);
    assert.equal(wordsChooseCardCheck('tap', false).ok, false);
    assert.equal(wordsChooseCardCheck('voice', true, true).ok, true);
    assert.equal(wordsChooseCardCheck('voice', true).ok, false);
    assert.equal(wordsChooseCardCheck('voice', false, true).ok, false);
  });

  it('action_unchanged: fails when the call is gone or its args_sha256 differs', () => {
    assert.equal(actionUnchangedCheck('a', 'a').ok, true);
    assert.equal(actionUnchangedCheck('a', 'b').ok, false);
    assert.equal(actionUnchangedCheck('a', undefined).ok, false);
    assert.equal(actionUnchangedCheck(undefined, 'a').ok, false);
  });

  it('nonce_consumed_once: passes only for a consumed nonce issued for this card; one negative case per field', () => {
    assert.equal(nonceConsumedOnceCheck(nonce, nonce, true).ok, true);
    assert.equal(nonceConsumedOnceCheck(nonce, nonce, false).ok, false);
    assert.equal(nonceConsumedOnceCheck(undefined, nonce, true).ok, false);
    for (const [k, v] of Object.entries({ setId: 'cs_2', callId: 'c2', argsSha256: 'b', stage: 'second', user: 'bob' }))
      assert.equal(nonceConsumedOnceCheck({ ...nonce, [k]: v }, nonce, true).ok, false, k);
  });
});

describe('before-execution checks', () => {
  const base = { ref: evidence.ref, evidence, callId: 'c1', argsSha256: 'a', setHoldsCall: true, consumed: true, nowMs: 50 };
  const failed = (x: Partial<typeof base> & { evidence?: EvidenceRecord }) =>
    executionChecks({ ...base, ...x })
      .filter((c) => !c.ok)
      .map((c) => c.name);

  it('all pass, in order, for unused evidence of a yes for this call and set, unchanged and in time', () => {
    const checks = executionChecks(base);
    assert.deepEqual(
      checks.map((c) => [c.name, c.ok]),
      ['evidence_exists', 'evidence_for_card_set', 'evidence_unused', 'action_unchanged', 'not_expired'].map((n) => [n, true]),
    );
  });

  it('each fails on its own', () => {
    assert.deepEqual(failed({ evidence: { ...evidence, approve: false } }), ['evidence_exists']);
    assert.deepEqual(failed({ callId: 'c2' }), ['evidence_for_card_set']);
    assert.deepEqual(failed({ setHoldsCall: false }), ['evidence_for_card_set']);
    assert.deepEqual(failed({ consumed: false }), ['evidence_unused']);
    assert.deepEqual(failed({ argsSha256: 'b' }), ['action_unchanged']);
    assert.deepEqual(failed({ nowMs: 100 }), ['not_expired']);
  });

  it('fails every check when there is no evidence', () => {
    assert.equal(failed({ evidence: undefined, consumed: false }).length, 5);
  });
});
