/**
 * The store side of the checks run on a decision's evidence before its call executes (docs/decisions/
 * 0018): the evidence record a paired device's decision left (kind `evidence`, written by
 * confirm/devices/cards.ts), the card set it was taken from (kind `cardset`), and the use marker (kind
 * `evidence-use`) that exactly one execution, on any replica, can take: `putIfAbsent` is atomic in every
 * store. A record that cannot be read throws: the caller denies (fail closed).
 */
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';

/**
 * The store side of the before-execution checks (createEvidenceLedger below): the evidence record a
 * decision left, and a use marker that exactly one execution can take.
 */
export interface EvidenceLedger {
  /** The evidence record under `ref`, or undefined. @throws StoreError when the store cannot be read. */
  get(ref: string): Promise<EvidenceRecordView | undefined>;
  /** Marks `ref` used: true for exactly one caller across replicas, false for every later one. */
  use(ref: string, ttlMs: number): Promise<boolean>;
  /** Whether card set `setId` listed call `callId`. */
  setHolds(setId: string, callId: string): Promise<boolean>;
}

/** What the before-execution checks read of an evidence record (confirm/devices/evidence.ts has the whole record). */
export interface EvidenceRecordView {
  callId: string;
  argsSha256: string;
  setId?: string;
  approve: boolean;
  expiresAtMs?: number;
}

const EVIDENCE = 'evidence';
const USE = 'evidence-use';
const CARDSET = 'cardset';

/** The evidence ledger over a store (the gate's: shared by its replicas). */
export function createEvidenceLedger(store: Store, clock: Clock): EvidenceLedger {
  return {
    async get(ref) {
      if (!/^ev_[0-9a-f]{16}$/.test(ref)) return undefined;
      const r = await store.get<Record<string, unknown>>(EVIDENCE, ref);
      const v = r?.value;
      if (!v || typeof v.callId !== 'string' || typeof v.argsSha256 !== 'string' || typeof v.approve !== 'boolean') return undefined;
      const view: EvidenceRecordView = { callId: v.callId, argsSha256: v.argsSha256, approve: v.approve };
      if (typeof v.setId === 'string') view.setId = v.setId;
      if (typeof v.expiresAtMs === 'number') view.expiresAtMs = v.expiresAtMs;
      return view;
    },
    async use(ref, ttlMs) {
      return (await store.putIfAbsent(USE, ref, { usedAtMs: clock.nowMs() }, { ttlMs: Math.max(1, ttlMs) })) !== undefined;
    },
    async setHolds(setId, callId) {
      const r = await store.get<{ cards?: { callId?: unknown }[] }>(CARDSET, setId);
      return Array.isArray(r?.value?.cards) && r.value.cards.some((c) => c?.callId === callId);
    },
  };
}
