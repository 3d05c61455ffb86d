/**
 * Gate replicas sharing one store: each running gate has an id (random per process start) and keeps a
 * heartbeat record (kind `replica`) alive while it runs. Another replica reads it to tell a replica that
 * stopped (its heartbeat expired) from one that is busy: an execution lease or a held question of a
 * stopped replica is taken over (gateway/interlock.ts, gateway/hold.ts). A replica whose heartbeat cannot
 * be written for longer than the TTL is taken for stopped by the others: they fail closed (its tools'
 * executions are treated as unknown outcomes), never open.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';

const KIND = 'replica';
/** How long a heartbeat lasts without renewal (ms). */
export const HEARTBEAT_TTL_MS = 15_000;
/** How often it is renewed (ms). */
const RENEW_MS = 5_000;

/** This replica's identity and the liveness of the others. */
export class Replicas {
  readonly id: string;
  private timer?: NodeJS.Timeout;

  private constructor(
    private readonly store: Store,
    readonly clock: Clock,
    id: string,
  ) {
    this.id = id;
  }

  /**
   * Starts this replica's heartbeat.
   * @param name a readable prefix (host or config), shown in messages; a random suffix makes it unique.
   * @throws StoreError when the first heartbeat cannot be written.
   */
  static async start(store: Store, clock: Clock, name = 'gate'): Promise<Replicas> {
    const r = new Replicas(store, clock, `${name}-${randomUUID().slice(0, 8)}`);
    await r.beat();
    r.timer = setInterval(() => void r.beat().catch(() => {}), RENEW_MS);
    r.timer.unref();
    return r;
  }

  private async beat(): Promise<void> {
    await this.store.put(KIND, this.id, { sinceMs: this.clock.nowMs() }, { ttlMs: HEARTBEAT_TTL_MS });
  }

  /** Whether a replica's heartbeat is current (this one always is). */
  async alive(id: string): Promise<boolean> {
    if (id === this.id) return true;
    return (await this.store.get(KIND, id)) !== undefined;
  }

  /** Stops the heartbeat and removes it: the others see this replica stopped at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.store.delete(KIND, this.id).catch(() => false);
  }
}
