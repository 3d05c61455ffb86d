/**
 * Listener bookkeeping shared by every store: listeners by kind, and a delivery that never lets one
 * listener's throw stop the others or the store's own work.
 */

/** The listeners of each kind, and what a store needs to know about them. */
export class Watchers {
  readonly #byKind = new Map<string, Set<(key: string) => void>>();

  /** Adds a listener; returns its unsubscribe function (idempotent). */
  add(kind: string, listener: (key: string) => void): () => void {
    let set = this.#byKind.get(kind);
    if (!set) {
      set = new Set();
      this.#byKind.set(kind, set);
    }
    // Wrap so the same function added twice is two subscriptions, each removed once.
    const entry = (key: string) => listener(key);
    set.add(entry);
    return () => {
      const s = this.#byKind.get(kind);
      if (!s) return;
      s.delete(entry);
      if (s.size === 0) this.#byKind.delete(kind);
    };
  }

  /** Whether any listener exists (stores run their poll and sweep timers only then). */
  get active(): boolean {
    return this.#byKind.size > 0;
  }

  /** The kinds that have listeners. */
  kinds(): string[] {
    return [...this.#byKind.keys()];
  }

  /** Calls every listener of `kind` with `key`; a listener that throws is reported as an uncaught error on a later tick. */
  notify(kind: string, key: string): void {
    const set = this.#byKind.get(kind);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(key);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Drops every listener. */
  clear(): void {
    this.#byKind.clear();
  }
}
