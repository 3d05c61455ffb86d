/**
 * Whose taint memory, and what else an untrusted upstream sends (docs/decisions/0009).
 *
 * One memory per authenticated principal: `stdio` (the one client of a stdio gate), or over HTTP the
 * bearer token's principal (`loopback` when the gate has no tokens), shared by every session of that
 * principal, 2025 sessions and 2026-07-28 requests alike, and kept for the life of the process. A new
 * session, a reconnect or a switch of protocol generation never starts an empty memory. The number of
 * principals is bounded by the token file.
 *
 * An upstream that serves any untrusted-source tool is an untrusted source as a whole: the same server
 * writes its resources, prompts, completions, log messages, notifications, questions (sampling,
 * elicitation), tool definitions and instructions. Everything it relays is remembered, before it is
 * relayed, in the memory of each principal it reaches.
 *
 * Given a store, each principal's memory is shared by every gate replica on it and outlives a restart
 * (gateway/taint-store.ts): read from the store when `of` first creates it, then kept fresh by change
 * notifications; `sync()` re-reads every memory.
 */

import type { Store } from '../store/store.js';
import type { CatalogueTool } from './catalogue.js';
import { isAuthenticated } from './session.js';
import { TaintMemory } from './taint.js';
import { isUntrusted } from './tool-result.js';
import type { Upstream } from './upstream.js';

/** The principals' taint memories, and what untrusted upstreams relay to them. */
export class PrincipalTaint {
  private readonly memories = new Map<string, TaintMemory>();

  /**
   * @param store where the memories are shared with other replicas; without it each memory is this
   *   process's alone and ends with it.
   */
  constructor(
    private readonly tools: () => readonly CatalogueTool[],
    private readonly untrusted: (tool: string) => boolean,
    private readonly store?: Store,
  ) {}

  /**
   * The memory of a principal, created on first sight and kept while the gate runs. An authenticated
   * principal's (a bearer token: the same identity on every replica) is shared through the store: a new
   * memory starts reading it at once, and until it has, `check` answers `unchecked` for arguments carrying
   * nothing remembered (await `sync()` for a fresh view). `stdio` and `loopback` may be several clients
   * under one name (two apps starting the gate with one config), so theirs stays in the process.
   */
  of(principal: string): TaintMemory {
    let t = this.memories.get(principal);
    if (!t) {
      t = this.store && isAuthenticated(principal) ? new TaintMemory(undefined, undefined, { store: this.store, principal }) : new TaintMemory();
      this.memories.set(principal, t);
    }
    return t;
  }

  /**
   * Re-reads every principal's memory from the store (a fresh view before a decision that matters).
   * @throws StoreError when the store cannot be read.
   */
  async sync(): Promise<void> {
    await Promise.all([...this.memories.values()].map((t) => t.sync()));
  }

  /** Stops following the store's changes (the memories stay readable). */
  close(): void {
    for (const t of this.memories.values()) t.close();
  }

  /** The memories of sessions: each one's own principal's, or every principal's for a broadcast relay. */
  memoriesOf(sessions: Iterable<{ taint?: TaintMemory }>): Set<TaintMemory> {
    const out = new Set<TaintMemory>();
    for (const s of sessions) {
      if (s.taint) out.add(s.taint);
      else for (const t of this.memories.values()) out.add(t);
    }
    return out;
  }

  /** Whether an upstream serves any untrusted-source tool (so all it sends is untrusted). */
  untrustedUpstream(upstream: Upstream): boolean {
    return this.tools().some((t) => t.upstream === upstream && isUntrusted({ untrusted: this.untrusted }, t));
  }

  /** Remembers the tool definitions (descriptions, schemas) of each upstream with untrusted tools: the agent reads them. */
  relayedTools(memory: TaintMemory, tools: readonly CatalogueTool[]): void {
    for (const u of new Set(tools.map((t) => t.upstream)))
      this.relayed(
        [memory],
        u,
        'tools/list',
        tools.filter((t) => t.upstream === u).map((t) => t.definition),
      );
  }

  /**
   * Remembers what an upstream relays, when it serves an untrusted tool, in each given memory; the source
   * is named `<upstream>'s <what>` in the question.
   */
  relayed(memories: Iterable<TaintMemory>, upstream: Upstream, what: string, payload: unknown): void {
    if (!this.untrustedUpstream(upstream)) return;
    for (const t of memories) t.record(`${upstream.name}'s ${what.slice(0, 60)}`, payload);
  }
}
