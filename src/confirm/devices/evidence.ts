/**
 * Evidence of device decisions (decision 0018): store kind `evidence`, key `ev_` + 16 hex, value
 * `EvidenceRecord`; kind `evidence-of` maps a call id to the ref of its decision (so `lookfirst_confirm`
 * without `evidence_ref` finds it); kind `evidence-use` holds one use marker per ref, put when the
 * evidence is written and taken by `consumeOnce` when it is used: of any number of callers, on any
 * replica, exactly one gets it.
 *
 * Security posture: a ref of the wrong form, a record of the wrong shape, or a store that cannot be read
 * is no evidence; the use marker is spent only after every other before-execution check passed.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '../../clock.js';
import type { Store } from '../../store/store.js';
import type { CheckResult } from '../../types.js';
import type { CardSetRecord, EvidenceRecord } from './card-types.js';
import { executionChecks, firstFailed } from './checks.js';

/** Store kind of evidence records (ref → EvidenceRecord). */
export const EVIDENCE_KIND = 'evidence';
/** Store kind of the call → latest evidence ref map (call id → `{ ref }`). */
export const EVIDENCE_OF_KIND = 'evidence-of';
/** Store kind of the use markers (ref → `{ callId }`), taken once by `consumeUse`. */
export const EVIDENCE_USE_KIND = 'evidence-use';
/** How long evidence outlives its call's deadline (ms): long enough for the receipt, short enough to not pile up. */
export const EVIDENCE_GRACE_MS = 10 * 60_000;

const REF = /^ev_[0-9a-f]{16}$/;

/** Whether `ref` has the form of an evidence ref (`ev_` + 16 lowercase hex). */
export function isEvidenceRef(ref: unknown): ref is string {
  return typeof ref === 'string' && REF.test(ref);
}

function isEvidence(v: unknown, ref: string): v is EvidenceRecord {
  const e = v as Partial<EvidenceRecord> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    e.ref === ref &&
    typeof e.callId === 'string' &&
    typeof e.argsSha256 === 'string' &&
    typeof e.setId === 'string' &&
    typeof e.approve === 'boolean' &&
    typeof e.expiresAtMs === 'number' &&
    Array.isArray(e.checks)
  );
}

/** The outcome of the before-execution checks: the evidence when every check passed. */
export type ExecutionCheck =
  | { ok: true; evidence: EvidenceRecord; checks: CheckResult[] }
  | { ok: false; failed: string; reason: string; checks: CheckResult[] };

/** Evidence records in the shared store. */
export class EvidenceStore {
  private readonly store: Store;
  private readonly clock: Clock;

  /** @param opts the shared `store`; `clock` for TTLs and `not_expired` (default systemClock). */
  constructor(opts: { store: Store; clock?: Clock }) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
  }

  /**
   * Writes the evidence of a decision under a fresh ref, its call → ref entry, and its use marker; all
   * live until the call's deadline plus EVIDENCE_GRACE_MS.
   * @throws StoreError when the store cannot be written (the caller then decides nothing).
   */
  async write(e: Omit<EvidenceRecord, 'ref'>): Promise<EvidenceRecord> {
    const ttlMs = Math.max(1, e.expiresAtMs - this.clock.nowMs()) + EVIDENCE_GRACE_MS;
    for (;;) {
      const ref = `ev_${randomBytes(8).toString('hex')}`;
      const record: EvidenceRecord = { ref, ...e };
      if (!(await this.store.putIfAbsent(EVIDENCE_KIND, ref, record, { ttlMs }))) continue;
      await this.store.put(EVIDENCE_USE_KIND, ref, { callId: e.callId }, { ttlMs });
      await this.store.put(EVIDENCE_OF_KIND, e.callId, { ref }, { ttlMs });
      return record;
    }
  }

  /** The evidence under `ref`, or undefined (wrong form, unknown, expired, wrong shape). @throws StoreError. */
  async get(ref: string): Promise<EvidenceRecord | undefined> {
    if (!isEvidenceRef(ref)) return undefined;
    const r = await this.store.get<unknown>(EVIDENCE_KIND, ref);
    return r && isEvidence(r.value, ref) ? r.value : undefined;
  }

  /** The ref of the latest evidence written for a call, if any. @throws StoreError. */
  async forCall(callId: string): Promise<string | undefined> {
    if (typeof callId !== 'string' || callId.length === 0 || callId.length > 1024 || callId.includes('\u0000')) return undefined;
    const r = await this.store.get<{ ref?: unknown }>(EVIDENCE_OF_KIND, callId);
    return isEvidenceRef(r?.value?.ref) ? r.value.ref : undefined;
  }

  /**
   * Spends the evidence's single use: true for the first caller anywhere, false for every other (and
   * for a ref that never had evidence). @throws StoreError.
   */
  async consumeUse(ref: string): Promise<boolean> {
    if (!isEvidenceRef(ref)) return false;
    return (await this.store.consumeOnce(EVIDENCE_USE_KIND, ref)) !== undefined;
  }

  /**
   * Runs the before-execution checks (checks.executionChecks) for running `callId` with `argsSha256`
   * on the evidence `ref`. The use marker is spent only when every other check passed, so a refused
   * attempt leaves the evidence usable by the right caller.
   * @returns the evidence and the checks, or the first failed check's name and reason (with all checks).
   *   Never throws: a store that cannot be read fails `evidence_exists`.
   */
  async checkExecution(ref: string, callId: string, argsSha256: string): Promise<ExecutionCheck> {
    let evidence: EvidenceRecord | undefined;
    let set: CardSetRecord | undefined;
    try {
      evidence = await this.get(ref);
      if (evidence) set = (await this.store.get<CardSetRecord>('cardset', evidence.setId))?.value;
    } catch {
      evidence = undefined;
    }
    // The set may have expired before execution (pending mode): then its record is gone and the
    // evidence's own copy of the decision-side checks (card_set_open passed for this call) is the proof.
    const setHoldsCall = set
      ? Array.isArray(set.cards) && set.cards.some((c) => c.callId === callId)
      : evidence?.checks.some((c) => c.name === 'card_set_open' && c.ok) === true;
    const input = { ref, evidence, callId, argsSha256, setHoldsCall, nowMs: this.clock.nowMs() };
    let checks = executionChecks({ ...input, consumed: false });
    const othersPass = checks.every((c) => c.ok || c.name === 'evidence_unused');
    if (othersPass) {
      const consumed = await this.consumeUse(ref).catch(() => false);
      checks = executionChecks({ ...input, consumed, nowMs: this.clock.nowMs() });
    }
    // When the use was not spent because another check failed, that other check is the one to name.
    const failed = checks.find((c) => !c.ok && c.name !== 'evidence_unused') ?? firstFailed(checks);
    if (failed || !evidence) return { ok: false, failed: failed?.name ?? 'evidence_exists', reason: failed?.detail ?? 'no evidence', checks };
    return { ok: true, evidence, checks };
  }
}
