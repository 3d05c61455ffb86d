/**
 * The store side of the checks run on a decision's evidence before its call executes (docs/decisions/
 * 0018). A paired device's decision left an evidence record (confirm/devices/evidence.ts), checked by
 * `EvidenceStore.checkExecution`: exists, for this call and card set, unused (its single use is spent
 * atomically in every store), unchanged, not expired. A decision taken on another channel (the page,
 * the webhook, the terminal) has no record: when `lookfirst_confirm` runs it, its use is a marker (kind
 * `decision-use`, `putIfAbsent`: exactly one execution on any replica takes it). A record that cannot be
 * read fails its check: the caller denies (fail closed).
 */
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { CheckResult } from '../types.js';
import { EvidenceStore } from './devices/evidence.js';

const DECISION_USE = 'decision-use';

/** What the before-execution step needs of the evidence store. */
export interface EvidenceLedger {
  /** Whether an evidence record exists under `ref`, and for which call. @throws StoreError. */
  find(ref: string): Promise<{ callId: string } | undefined>;
  /**
   * The before-execution checks of device evidence `ref` for this call; its use is spent only when every
   * other check passed. Never throws (a store that cannot be read fails `evidence_exists`).
   */
  check(ref: string, callId: string, argsSha256: string): Promise<CheckResult[]>;
  /** Spends the single use of a decision that left no evidence record: true for exactly one caller. @throws StoreError. */
  useDecision(callId: string, ttlMs: number): Promise<boolean>;
}

/** The evidence ledger over the gate's store (shared by its replicas). */
export function createEvidenceLedger(store: Store, clock: Clock): EvidenceLedger {
  const evidence = new EvidenceStore({ store, clock });
  return {
    async find(ref) {
      const e = await evidence.get(ref);
      return e && { callId: e.callId };
    },
    async check(ref, callId, argsSha256) {
      return (await evidence.checkExecution(ref, callId, argsSha256)).checks;
    },
    async useDecision(callId, ttlMs) {
      return (await store.putIfAbsent(DECISION_USE, callId, { usedAtMs: clock.nowMs() }, { ttlMs: Math.max(1, ttlMs) })) !== undefined;
    },
  };
}
