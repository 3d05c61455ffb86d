/**
 * The named checks of a device confirmation (decision 0018, "Named checks"), as pure functions: every
 * value they compare is passed in (no store, no clock, no randomness), so each can be tested alone and
 * the same inputs always give the same verdict. cards.ts runs the decision-side checks, evidence.ts and
 * the pipeline the before-execution ones (`executionChecks`).
 *
 * Security posture: a missing input fails its check (undefined evidence, set, device or nonce is never
 * "nothing to compare, so fine"). Details name ids and reasons, never a nonce, key or argument.
 */
import type { CheckResult } from '../../types.js';
import type { CardNonceRecord, CardSetRecord, CardStage, EvidenceRecord } from './card-types.js';
import type { DeviceRecord } from './registry.js';

const pass = (name: string, detail?: string): CheckResult => (detail === undefined ? { name, ok: true } : { name, ok: true, detail });
const fail = (name: string, detail: string): CheckResult => ({ name, ok: false, detail });

/** `device_paired`: the device is paired, not revoked, and belongs to the call's user. */
export function devicePairedCheck(device: DeviceRecord | undefined, callUser: string | undefined): CheckResult {
  const n = 'device_paired';
  if (!device) return fail(n, 'no device is paired with this id');
  if (device.revokedAtMs !== undefined) return fail(n, `device ${device.id} was revoked`);
  if (callUser === undefined) return fail(n, 'the call is not waiting, so its user is unknown');
  if (device.user !== callUser) return fail(n, `device ${device.id} belongs to another user than this call's`);
  return pass(n, `device ${device.id} of ${device.user}`);
}

/** `card_set_open`: the set exists, was issued to this device, and no decision has closed it. */
export function cardSetOpenCheck(set: CardSetRecord | undefined, deviceId: string): CheckResult {
  const n = 'card_set_open';
  if (!set) return fail(n, 'no such card set (expired or never issued): fetch the cards again');
  if (set.deviceId !== deviceId) return fail(n, 'this card set was issued to another device');
  if (!set.open) return fail(n, 'a decision was already taken from this card set: fetch the cards again');
  return pass(n);
}

/** `not_expired`: now is before the expiry instant (ms since epoch); no expiry known fails. */
export function notExpiredCheck(expiresAtMs: number | undefined, nowMs: number, what = 'the card'): CheckResult {
  const n = 'not_expired';
  if (expiresAtMs === undefined) return fail(n, `${what} has no known expiry`);
  if (nowMs >= expiresAtMs) return fail(n, `${what} expired ${Math.ceil((nowMs - expiresAtMs) / 1000)} s ago`);
  return pass(n, `${Math.floor((expiresAtMs - nowMs) / 1000)} s left`);
}

/**
 * `words_choose_card`: by tap, the tapped card is in the set; by voice, the consent parser's reading of
 * the user's words picks exactly this card (and it is in the set).
 */
export function wordsChooseCardCheck(method: 'tap' | 'voice', inSet: boolean, wordsChoose?: boolean): CheckResult {
  const n = 'words_choose_card';
  if (!inSet) return fail(n, 'the card is not in this card set');
  if (method === 'voice' && wordsChoose !== true) return fail(n, 'the words do not pick exactly this card');
  return pass(n, method === 'tap' ? 'tapped card is in the set' : 'the words pick this card');
}

/** `action_unchanged`: the args_sha256 shown is the one the pending call (or the call to run) has now. */
export function actionUnchangedCheck(shown: string | undefined, current: string | undefined): CheckResult {
  const n = 'action_unchanged';
  if (current === undefined) return fail(n, 'the call is no longer waiting (decided, timed out, or withdrawn)');
  if (shown === undefined || shown !== current) return fail(n, 'the arguments shown are not the arguments of the call');
  return pass(n, `args_sha256 ${current.slice(0, 12)}…`);
}

/**
 * `nonce_consumed_once`: the nonce's record was taken (atomically, once) and names this set, call,
 * arguments, stage and user. `consumed` says whether the record came from a real consume: when an
 * earlier check failed, the caller only reads it (the decision must change nothing), and the check fails
 * with that reason even if the record matches.
 */
export function nonceConsumedOnceCheck(
  nonce: CardNonceRecord | undefined,
  expected: { setId: string; callId: string; argsSha256: string; stage: CardStage; user: string },
  consumed: boolean,
): CheckResult {
  const n = 'nonce_consumed_once';
  if (!nonce) return fail(n, 'the nonce is unknown, expired, or was used before');
  const same =
    nonce.setId === expected.setId &&
    nonce.callId === expected.callId &&
    nonce.argsSha256 === expected.argsSha256 &&
    nonce.stage === expected.stage &&
    nonce.user === expected.user;
  if (!same) return fail(n, 'the nonce is not the one issued for this card');
  if (!consumed) return fail(n, 'not consumed: an earlier check failed, so nothing was spent');
  return pass(n, 'consumed once');
}

/**
 * The before-execution checks, in order: `evidence_exists` (a yes under that ref), `evidence_for_card_set`
 * (same call id, and the set it names holds the call), `evidence_unused` (this caller's consume of the
 * use marker won), `action_unchanged`, `not_expired` (the evidence's own expiry).
 * @param consumed whether this caller's `EvidenceStore.consumeUse(ref)` returned true.
 */
export function executionChecks(input: {
  ref: string;
  evidence?: EvidenceRecord;
  callId: string;
  argsSha256: string;
  setHoldsCall: boolean;
  consumed: boolean;
  nowMs: number;
}): CheckResult[] {
  const { evidence: ev } = input;
  const exists = !ev
    ? fail('evidence_exists', 'no evidence under this ref (invented, or expired)')
    : !ev.approve
      ? fail('evidence_exists', 'the evidence under this ref records a no')
      : pass('evidence_exists', input.ref);
  const forSet = !ev
    ? fail('evidence_for_card_set', 'no evidence to compare')
    : ev.callId !== input.callId
      ? fail('evidence_for_card_set', 'the evidence is about another call')
      : !input.setHoldsCall
        ? fail('evidence_for_card_set', `card set ${ev.setId} does not hold this call`)
        : pass('evidence_for_card_set', ev.setId);
  const unused = input.consumed
    ? pass('evidence_unused')
    : fail('evidence_unused', ev ? 'this evidence was used before (or not spent: an earlier check failed)' : 'no evidence to spend');
  return [exists, forSet, unused, actionUnchangedCheck(ev?.argsSha256, input.argsSha256), notExpiredCheck(ev?.expiresAtMs, input.nowMs, 'the evidence')];
}

/** The first failed check, if any. */
export function firstFailed(checks: readonly CheckResult[]): CheckResult | undefined {
  return checks.find((c) => !c.ok);
}
