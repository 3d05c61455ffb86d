/**
 * The execution interlock: one call at a time per tool, and a tool whose last execution cannot be known
 * to have done what it should stays blocked until a person has looked and unlocked it.
 * A blocked tool answers every call by asking, through the confirmation channels, to unlock it; unlocking
 * never runs the call that asked. State survives restarts: it is rebuilt from the audit log at start.
 */

/** Why a tool is blocked. */
export interface BlockInfo {
  /** When it was blocked (ms since epoch). */
  sinceMs: number;
  reason: string;
  callId: string;
}

/** Blocked tools and per-tool serialization. */
export class Interlock {
  private readonly blocked = new Map<string, BlockInfo>();
  private readonly tails = new Map<string, Promise<unknown>>();

  /** @param initial tools blocked when the gate starts (from the audit log's replay). */
  constructor(initial: Iterable<[string, BlockInfo]> = []) {
    for (const [tool, info] of initial) this.blocked.set(tool, info);
  }

  /** The block on a tool, if any. */
  blockOf(tool: string): BlockInfo | undefined {
    return this.blocked.get(tool);
  }

  block(tool: string, info: BlockInfo): void {
    this.blocked.set(tool, info);
  }

  unblock(tool: string): void {
    this.blocked.delete(tool);
  }

  /** Tools blocked now, for messages at start. */
  list(): [string, BlockInfo][] {
    return [...this.blocked.entries()];
  }

  /**
   * Runs `work` after every earlier call of the same tool has finished (confirmation and execution
   * included); other tools are not held up.
   */
  async exclusive<T>(tool: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(tool) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => {});
    this.tails.set(tool, tail);
    try {
      return await run;
    } finally {
      if (this.tails.get(tool) === tail) this.tails.delete(tool);
    }
  }
}
