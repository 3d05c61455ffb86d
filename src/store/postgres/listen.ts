/**
 * The PostgreSQL store's LISTEN connection: one dedicated client (not from the pool) that listens on the
 * store's channel while watchers exist, and reconnects with backoff when it drops. After every (re)connect
 * it calls `onConnected`, which the store uses to notify every live key of the watched kinds: anything
 * written while no LISTEN was active becomes a spurious notification instead of a missed one.
 */
import pg from 'pg';
import { CHANNEL, SQL } from './sql.js';

/** First and longest wait between reconnect attempts (ms). */
export const LISTEN_RETRY_MS = { first: 100, max: 2000 } as const;

/** Keeps one LISTEN client alive while `wanted()` holds. */
export class Listener {
  #client: pg.Client | undefined;
  #connecting = false;
  #retryMs: number = LISTEN_RETRY_MS.first;
  #retryTimer: NodeJS.Timeout | undefined;
  #stopped = false;

  /**
   * @param url the store's connection string.
   * @param wanted whether a LISTEN should be kept (watchers exist and the store is open).
   * @param onNotify called with the payload's kind and key.
   * @param onConnected called after each successful LISTEN (first connect and every reconnect).
   */
  constructor(
    private readonly url: string,
    private readonly wanted: () => boolean,
    private readonly onNotify: (kind: string, key: string) => void,
    private readonly onConnected: () => void,
  ) {}

  /** Resolves true when a LISTEN is active or none is wanted; false when none came up within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    // Counts its own 10 ms waits rather than reading a clock (time is read only through src/clock.ts).
    for (let waitedMs = 0; !this.#stopped && this.wanted() && !this.#client; waitedMs += 10) {
      if (waitedMs >= timeoutMs) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  /** Whether a LISTEN is active now. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Connects unless connected, connecting or not wanted. */
  ensure(): void {
    if (this.#stopped || this.#client || this.#connecting || this.#retryTimer || !this.wanted()) return;
    this.#connecting = true;
    void this.#connect().finally(() => {
      this.#connecting = false;
    });
  }

  /** Drops the client when no longer wanted. */
  release(): void {
    if (this.wanted()) return;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const c = this.#client;
    this.#client = undefined;
    void c?.end().catch(() => {});
  }

  /** Stops for good (store closed). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    const c = this.#client;
    this.#client = undefined;
    await c?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url });
    c.on('error', () => void c.end().catch(() => {}));
    try {
      await c.connect();
      await c.query(SQL.listen);
    } catch {
      void c.end().catch(() => {});
      this.#retry();
      return;
    }
    if (this.#stopped || !this.wanted()) {
      void c.end().catch(() => {});
      return;
    }
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      try {
        const { kind, key } = JSON.parse(n.payload) as { kind: unknown; key: unknown };
        if (typeof kind === 'string' && typeof key === 'string') this.onNotify(kind, key);
      } catch {
        // Not ours: another writer on the channel. Ignore it.
      }
    });
    c.on('end', () => {
      if (this.#client !== c) return;
      this.#client = undefined;
      this.#retry();
    });
    this.#client = c;
    this.#retryMs = LISTEN_RETRY_MS.first;
    this.onConnected();
  }

  #retry(): void {
    if (this.#stopped || !this.wanted() || this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.ensure();
    }, this.#retryMs);
    this.#retryTimer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, LISTEN_RETRY_MS.max);
  }
}
