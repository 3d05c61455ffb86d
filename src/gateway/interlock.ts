/**
 * The execution interlock: one execution at a time per tool, across every client session, and a tool
 * whose last execution cannot be known to have done what it should stays blocked until a person has
 * looked and unlocked it. A blocked tool answers every call by asking, through the confirmation
 * channels, to unlock it; unlocking never runs the call that asked. State survives restarts: it is
 * rebuilt from the audit log at start.
 *
 * Two scopes (docs/decisions/0007-interlock-scope.md): the wait for a person is serialized per session
 * (`exclusive`: a session's calls of one tool are asked one after another), while the execution itself
 * is serialized for the whole gate (`executing`: its outcome, read-back included, is known before the
 * next execution of the same tool starts, and the block is checked again under it). So one client's
 * unanswered question never holds up another client's call of the same tool.
 */

/** Why a tool is blocked. */
export interface BlockInfo {
  /** When it was blocked (ms since epoch). */
  sinceMs: number;
  reason: string;
  callId: string;
}

/** What every session's view shares: the blocks and the executions in progress. */
interface Shared {
  blocked: Map<string, BlockInfo>;
  executions: Map<string, Promise<unknown>>;
}

/** Blocked tools, per-tool serialization of executions (gate-wide) and of questions (per session). */
export class Interlock {
  private readonly shared: Shared;
  /** This view's (session's) calls in progress per tool, question included. */
  private readonly questions = new Map<string, Promise<unknown>>();

  /**
   * @param initial tools blocked when the gate starts (from the audit log's replay).
   * @param shared internal: the state of the gate-wide interlock a session view belongs to.
   */
  constructor(initial: Iterable<[string, BlockInfo]> = [], shared?: Shared) {
    this.shared = shared ?? { blocked: new Map(), executions: new Map() };
    for (const [tool, info] of initial) this.shared.blocked.set(tool, info);
  }

  /**
   * A view for one client session: the same blocks and the same gate-wide execution order, with its
   * own serialization of questions (`exclusive`).
   */
  forSession(): Interlock {
    return new Interlock([], this.shared);
  }

  /** The block on a tool, if any. */
  blockOf(tool: string): BlockInfo | undefined {
    return this.shared.blocked.get(tool);
  }

  /** Blocks a tool until a person unlocks it. */
  block(tool: string, info: BlockInfo): void {
    this.shared.blocked.set(tool, info);
  }

  /**
   * Lifts a tool's block. With `callId`, only the block that call caused: an unlock a person approved for
   * an earlier block never lifts a newer one.
   * @returns true when the tool is not blocked afterwards.
   */
  unblock(tool: string, callId?: string): boolean {
    const current = this.shared.blocked.get(tool);
    if (current && callId !== undefined && current.callId !== callId) return false;
    this.shared.blocked.delete(tool);
    return true;
  }

  /** Tools blocked now, for messages at start. */
  list(): [string, BlockInfo][] {
    return [...this.shared.blocked.entries()];
  }

  /**
   * Runs `work` after this session's earlier calls of the same tool have finished (their question and
   * execution included). Other sessions, and other tools, are not held up.
   */
  exclusive<T>(tool: string, work: () => Promise<T>): Promise<T> {
    return serialize(this.questions, tool, work);
  }

  /**
   * Runs `work` (one execution: sending the call, reading it back, blocking the tool when its outcome is
   * unclear) after every earlier execution of the same tool in any session has finished.
   */
  executing<T>(tool: string, work: () => Promise<T>): Promise<T> {
    return serialize(this.shared.executions, tool, work);
  }
}

async function serialize<T>(tails: Map<string, Promise<unknown>>, key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.catch(() => {});
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
