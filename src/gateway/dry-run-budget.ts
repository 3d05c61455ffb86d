/**
 * The dry-run recording budget: how many bytes of arguments a gate run may still record for replay
 * (gateway/pipeline/steps/record.ts). One record in the store (`budget` / `dry-run`, value: bytes taken so
 * far), changed only by compare-and-set, so replicas on one store share one budget and two takes never
 * spend the same bytes. Fails closed: a store error refuses the take.
 */
import { createMemoryStore } from '../store/memory/memory.js';
import type { Store } from '../store/store.js';

/** Store kind and key of the budget record. */
export const BUDGET_RECORD = { kind: 'budget', key: 'dry-run' } as const;

/** Compare-and-set attempts before a take gives up (each lost race means another replica took bytes). */
const MAX_ATTEMPTS = 64;

/** A gate run's budget of recorded argument bytes, shared by its sessions and its replicas. */
export class DryRunBudget {
  readonly #store: Store;
  /** Bytes taken, as last read or written by this process (for messages only). */
  #used = 0;

  /**
   * @param total bytes a run may record (MAX_RECORDED_RUN_BYTES).
   * @param store where the budget lives; default a fresh in-memory store (one process).
   */
  constructor(
    readonly total: number,
    store?: Store,
  ) {
    this.#store = store ?? createMemoryStore();
  }

  /**
   * Takes `bytes` from the budget if that many are left.
   * @returns false when fewer are left (nothing is taken).
   * @throws StoreError when the store cannot be read or written, or an Error after {@link MAX_ATTEMPTS}
   *   lost races: either way the caller records nothing.
   */
  async take(bytes: number): Promise<boolean> {
    if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError('a dry-run take is a non-negative number of bytes');
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const rec = await this.#store.get<unknown>(BUDGET_RECORD.kind, BUDGET_RECORD.key);
      const used = typeof rec?.value === 'number' && Number.isFinite(rec.value) && rec.value >= 0 ? rec.value : rec === undefined ? 0 : this.total;
      this.#used = used;
      if (used + bytes > this.total) return false;
      const won = await this.#store.compareAndSet(BUDGET_RECORD.kind, BUDGET_RECORD.key, rec?.version ?? 0, used + bytes);
      if (won) {
        this.#used = used + bytes;
        return true;
      }
    }
    throw new Error(`the dry-run budget changed under ${MAX_ATTEMPTS} attempts in a row: too many replicas recording at once; call again`);
  }

  /** Bytes left as this process last saw them (for messages; `take` decides). */
  left(): number {
    return Math.max(0, this.total - this.#used);
  }
}
