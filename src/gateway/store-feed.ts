/**
 * Keeps a process's cache of one store kind fresh: the caller holds the values in whatever shape it reads
 * synchronously; the feed loads records (one key, or the whole kind), follows other processes' changes
 * through `store.watch` (a notification only says "look again": the key is re-read), and hands each
 * change to the caller's `apply`. A load that started before a newer one, or before the caller's own
 * write, never lands over it: each key remembers the start of the load (or the write) it holds.
 */
import type { Store } from '../store/store.js';

/** What a feed calls. */
export interface FeedHooks<T> {
  /** Which keys of the kind this cache keeps (default all). */
  accept?: (key: string) => boolean;
  /** A key's value changed (undefined: the record is gone). */
  apply: (key: string, value: T | undefined) => void;
  /** A load that a notification started failed: the cache may be stale until the next `loadAll`. */
  failed?: (err: unknown) => void;
}

/** The loads and notifications of one kind, for one cache. */
export class StoreFeed<T> {
  readonly #stamps = new Map<string, number>();
  #tick = 0;
  #off: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    readonly kind: string,
    private readonly hooks: FeedHooks<T>,
  ) {}

  /** Follows other processes' changes from now on (idempotent). */
  follow(): void {
    this.#off ??= this.store.watch(this.kind, (key) => {
      if (this.hooks.accept && !this.hooks.accept(key)) return;
      this.load(key).catch((err: unknown) => this.hooks.failed?.(err));
    });
  }

  /** Re-reads one key. @throws StoreError when the store cannot be read. */
  async load(key: string): Promise<void> {
    const started = ++this.#tick;
    const rec = await this.store.get<T>(this.kind, key);
    this.#land(key, rec?.value, started);
  }

  /** Re-reads the whole kind (keys gone from the store are applied as gone). @throws StoreError when the store cannot be read. */
  async loadAll(): Promise<void> {
    const started = ++this.#tick;
    const recs = await this.store.list<T>(this.kind);
    const present = new Set<string>();
    for (const rec of recs) {
      if (this.hooks.accept && !this.hooks.accept(rec.key)) continue;
      present.add(rec.key);
      this.#land(rec.key, rec.value, started);
    }
    for (const key of [...this.#stamps.keys()]) if (!present.has(key)) this.#land(key, undefined, started);
  }

  /**
   * Applies a value the caller knows now (its own write that succeeded, or a seed before the first load):
   * older loads never land over it; a later `loadAll` that does not find the key applies it as gone.
   */
  set(key: string, value: T): void {
    this.#land(key, value, ++this.#tick);
  }

  /** Stops following. */
  close(): void {
    this.#off?.();
    this.#off = undefined;
  }

  #land(key: string, value: T | undefined, started: number): void {
    if ((this.#stamps.get(key) ?? 0) >= started) return;
    this.#stamps.set(key, started);
    this.hooks.apply(key, value);
  }
}
