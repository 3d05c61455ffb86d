/**
 * Taint tracking (the "Rule of Two": untrusted input plus a state change needs a person). The output of
 * untrusted-source tools (web fetch, inbox, scraper, search) is remembered per client session as
 * distinctive tokens (gateway/taint-scan.ts: URLs and their hosts, e-mail addresses and their domains,
 * paths, IBANs, IPv4 addresses, long strings; as written and as decoded). A later mutation whose arguments
 * carry one of them is forced to a person even when a rule allows it, and the question names the value and
 * the tool it came from. Results reach the memory through one exit, gateway/tool-result.ts.
 *
 * Every part of a result counts: text, structuredContent (keys too), resource contents and embedded
 * resources, resource links (and, once read, the resources they point to), error messages, progress
 * messages. Binary image and audio data, and resource blobs whose type is not textual, are not read (an
 * honest limit: text inside a picture is not recognised).
 *
 * Fails closed, never silently partial. Memory is bounded per class of token (no class can starve another)
 * and nothing is ever evicted: when a result holds more than the memory keeps, or more text than the gate
 * reads ({@link MAX_SCAN_CHARS}), the session is tainted AS A WHOLE, and every mutation needs a person until
 * the session ends; the question says why. Arguments too large to check, in a session that has read
 * untrusted data, are tainted too. Honest limit: paraphrased or re-encoded data (base64, a value split in
 * parts) is not recognised; the un-laundered flow (a copied address, link or path) is.
 *
 * Shared by gate replicas when given a store (gateway/taint-store.ts): every digest is written through
 * under the principal, the principal's memory is read from the store when it is created, and other
 * replicas' additions arrive by change notification; `check` stays synchronous and `sync()` gives a fresh
 * view. Fails closed: until the memory is read (or while a notification could not be followed) a call
 * with no remembered value in it is `unchecked`, and a write the store refused taints the memory as a whole.
 */

import { createHash } from 'node:crypto';
import { systemClock } from '../clock.js';
import { globToRegExp } from '../policy/evaluate.js';
import type { Store } from '../store/store.js';
import { parentDomains } from './taint-canon.js';
import { classOf, resourceUris, scanAll, scanArgs, type TokenClass } from './taint-scan.js';
import { type TaintEntry, TaintShare } from './taint-store.js';
import { walkArgs, walkResult } from './taint-walk.js';

export { classOf, MAX_TOKEN_CHARS, type TokenClass, tokensOf } from './taint-scan.js';

/** Most tokens of one class a session remembers; one more taints the session as a whole. */
export const MAX_TOKENS_PER_CLASS = 4_096;
/** How soon a memory shared through a store re-reads it after a failed read (ms). */
export const TAINT_RETRY_MS = 1_000;
/** Most characters of one result (or of one call's arguments) the gate reads; more taints as a whole. */
export const MAX_SCAN_CHARS = 4 * 1024 * 1024;

/** Where a remembered token came from. */
export interface TaintSource {
  tool: string;
  atMs: number;
}

/** A hit: the value in the arguments and where it came from. */
export interface TaintHit {
  value: string;
  source: TaintSource;
}

/** Why a whole session is tainted: which result went past what the memory keeps, and how. */
export interface WholeTaint {
  source: TaintSource;
  why: string;
}

/**
 * What taint says about one call's arguments: `clean`; `hits` (remembered values it carries); `whole` (the
 * session is tainted as a whole); `unchecked` (the arguments are too large to check, in a session that
 * has read untrusted data; or, `unread`, the memory shared by the gate's replicas is not read yet).
 */
export type TaintCheck =
  | { kind: 'clean' }
  | { kind: 'hits'; hits: TaintHit[] }
  | { kind: 'whole'; whole: WholeTaint }
  | { kind: 'unchecked'; why: string; unread?: true };

const digest = (token: string): string => createHash('sha256').update(token).digest('base64url').slice(0, 22);

/** Where a memory is shared: the store and the principal it belongs to. */
export interface TaintSharing {
  store: Store;
  principal: string;
}

/**
 * One principal's memory of untrusted tokens: a digest per token (never the token itself: bounded memory),
 * at most {@link MAX_TOKENS_PER_CLASS} per class, never evicted.
 */
export class TaintMemory {
  /** digest of a token → where it came from. */
  private readonly tokens = new Map<string, TaintSource>();
  private readonly perClass = new Map<TokenClass, number>();
  /** Digests of resource URIs an untrusted result linked to or embedded → the tool: reading one is untrusted too. */
  private readonly linked = new Map<string, string>();
  private wholeTaint: WholeTaint | undefined;
  /** The store part; absent for a memory of one process. */
  private readonly share: TaintShare | undefined;
  /** False until the principal's memory is read from the store, and again while a change could not be read. */
  private fresh: boolean;
  /** A re-read scheduled after a failed one (the memory stays `unchecked` meanwhile). */
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * @param sharing the store and principal to share the memory with other replicas; without it the memory
   *   is this process's alone (a fresh in-memory store would hold nothing anyone else reads).
   */
  constructor(
    private readonly now: () => number = () => systemClock.nowMs(),
    private readonly limits: { perClass: number; scanChars: number } = { perClass: MAX_TOKENS_PER_CLASS, scanChars: MAX_SCAN_CHARS },
    sharing?: TaintSharing,
  ) {
    this.fresh = sharing === undefined;
    this.share =
      sharing &&
      new TaintShare(
        sharing.store,
        sharing.principal,
        (e) => this.absorb(e),
        () => {
          this.fresh = false;
          this.retry();
        },
      );
    if (this.share) this.load(this.share.start()).catch(() => {});
  }

  /**
   * Re-reads the principal's memory from the store (a fresh view before a decision that matters); a no-op
   * for a memory of one process.
   * @throws StoreError when the store cannot be read (`check` then stays `unchecked` for clean arguments).
   */
  sync(): Promise<void> {
    if (!this.share) return Promise.resolve();
    return this.load(this.share.sync());
  }

  /** Stops following the store's changes (what is remembered stays readable). */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.share?.close();
  }

  private async load(read: Promise<void>): Promise<void> {
    try {
      await read;
      this.fresh = true;
    } catch (err) {
      this.fresh = false;
      this.retry();
      throw err;
    }
  }

  /** Re-reads the memory in a second, until a read succeeds. */
  private retry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.sync().catch(() => {});
    }, TAINT_RETRY_MS);
    this.retryTimer.unref();
  }

  /** Takes in an entry read from the store, under the same bounds as {@link record}. */
  private absorb(e: TaintEntry): void {
    if (e.kind === 'whole') {
      this.wholeTaint ??= { source: { tool: e.tool, atMs: e.atMs }, why: e.why };
      return;
    }
    if (e.kind === 'linked') {
      if (this.linked.size >= this.limits.perClass && !this.linked.has(e.digest))
        this.wholeTaint ??= {
          source: { tool: e.tool, atMs: this.now() },
          why: `its results linked more resources than the ${this.limits.perClass} the gate remembers per session`,
        };
      else this.linked.set(e.digest, e.tool);
      return;
    }
    const source: TaintSource = { tool: e.tool, atMs: e.atMs };
    if (this.tokens.has(e.digest)) {
      this.tokens.set(e.digest, source);
      return;
    }
    const count = this.perClass.get(e.cls) ?? 0;
    if (count >= this.limits.perClass) {
      this.wholeTaint ??= {
        source,
        why: `its results held more ${e.cls === 'long' ? 'long strings' : `${e.cls}s`} than the ${this.limits.perClass} the gate remembers per session`,
      };
      return;
    }
    this.perClass.set(e.cls, count + 1);
    this.tokens.set(e.digest, source);
  }

  /**
   * Writes what `record` added through to the store. A write the store refused taints the memory as a
   * whole (this replica can no longer vouch for what the others know), and the returned promise rejects.
   */
  private writeThrough(entries: TaintEntry[], source: TaintSource): Promise<void> {
    if (!this.share || entries.length === 0) return Promise.resolve();
    const done = this.share.write(entries).catch((err: unknown) => {
      this.wholeTaint ??= { source, why: "its result could not be written to the gate's state store, which other gate replicas read" };
      throw err;
    });
    // A caller that does not await must not crash the process; one that awaits still gets the error.
    done.catch(() => {});
    return done;
  }

  /** Set once the memory is tainted as a whole (it stays so while the gate runs: the memory is the principal's). */
  get whole(): WholeTaint | undefined {
    return this.wholeTaint;
  }

  /**
   * Remembers the tokens of an untrusted tool's result (the whole result: every part counts). The memory
   * here holds them at once; with a store, the returned promise settles when the other replicas can read
   * them too (it rejects when the store refused them, and the memory is then tainted as a whole).
   */
  record(tool: string, result: unknown): Promise<void> {
    if (this.wholeTaint) return Promise.resolve();
    const source: TaintSource = { tool, atMs: this.now() };
    const shared: TaintEntry[] = [];
    let full: string | undefined;
    for (const uri of resourceUris(result)) {
      const key = digest(uri);
      if (this.linked.size >= this.limits.perClass && !this.linked.has(key)) {
        full = `its result linked more resources than the ${this.limits.perClass} the gate remembers per session`;
        break;
      }
      if (this.share && this.linked.get(key) !== tool) shared.push({ kind: 'linked', digest: key, tool });
      this.linked.set(key, tool);
    }
    // Each distinct token of this result is hashed once (a page repeats its links); bounded, since every
    // new one counts against its class's budget.
    const seen = new Set<string>();
    let unreadable: string | undefined;
    const complete = walkResult(
      result,
      this.limits.scanChars,
      (text) =>
        scanAll(text, (t) => {
          if (seen.has(t)) return true;
          seen.add(t);
          const key = digest(t);
          const had = this.tokens.get(key);
          if (had) {
            // Only a change of tool is shared again: the time alone stays this replica's.
            if (this.share && had.tool !== source.tool) shared.push({ kind: 'token', digest: key, cls: classOf(t), tool, atMs: source.atMs });
            this.tokens.set(key, source);
            return true;
          }
          const cls = classOf(t);
          const count = this.perClass.get(cls) ?? 0;
          if (count >= this.limits.perClass) {
            full = `its result held more ${cls === 'long' ? 'long strings' : `${cls}s`} than the ${this.limits.perClass} the gate remembers per session`;
            return false;
          }
          this.perClass.set(cls, count + 1);
          this.tokens.set(key, source);
          if (this.share) shared.push({ kind: 'token', digest: key, cls, tool, atMs: source.atMs });
          return true;
        }),
      (why) => {
        unreadable ??= why;
      },
    );
    if (!complete && full === undefined) full = `its result held more than the ${this.limits.scanChars} characters the gate reads from one result`;
    if (full === undefined && unreadable !== undefined) full = `its result held ${unreadable}, which the gate cannot read for addresses`;
    if (full) {
      this.wholeTaint = { source, why: full };
      shared.push({ kind: 'whole', tool: source.tool, atMs: source.atMs, why: full });
    }
    return this.writeThrough(shared, source);
  }

  /**
   * The untrusted tool whose result linked to (or embedded) a resource, if any: reading that resource
   * (`resources/read`) is reading the untrusted source, so its contents are remembered under that tool.
   */
  linkedFrom(uri: string): string | undefined {
    return this.linked.get(digest(uri));
  }

  /** The remembered tokens that a call's arguments carry (first few). */
  find(args: unknown): TaintHit[] {
    const c = this.check(args);
    return c.kind === 'hits' ? c.hits : [];
  }

  /** Where a token came from: itself, or for a host a planted parent domain (a planted host taints its subdomains). */
  private lookup(t: string): TaintSource | undefined {
    const own = this.tokens.get(digest(t));
    if (own !== undefined || classOf(t) !== 'host') return own;
    for (const parent of parentDomains(t)) {
      const source = this.tokens.get(digest(parent));
      if (source !== undefined) return source;
    }
    return undefined;
  }

  /** What taint says about a call's arguments (see {@link TaintCheck}). */
  check(args: unknown): TaintCheck {
    if (this.wholeTaint) return { kind: 'whole', whole: this.wholeTaint };
    if (this.tokens.size === 0 && this.fresh) return { kind: 'clean' };
    const hits: TaintHit[] = [];
    const seen = new Set<string>();
    const complete = walkArgs(args, this.limits.scanChars, (text) =>
      scanArgs(text, (t) => {
        if (seen.has(t)) return true;
        seen.add(t);
        const source = this.lookup(t);
        if (source) hits.push({ value: t, source });
        return hits.length < 5;
      }),
    );
    if (hits.length > 0) return { kind: 'hits', hits };
    if (!this.fresh)
      return { kind: 'unchecked', unread: true, why: "its memory of untrusted data is not read from the gate's state store yet (or the store cannot be read)" };
    if (!complete)
      return { kind: 'unchecked', why: `its arguments hold more than the ${this.limits.scanChars} characters the gate checks against untrusted data` };
    return { kind: 'clean' };
  }
}

/**
 * The taint line of a decision (`TAINTED: …`), shown first to the approver, or undefined when clean.
 * Names the value and its source, or why the whole session is tainted.
 */
export function taintText(c: TaintCheck): string | undefined {
  const rule = 'untrusted input plus a state change needs a person (Rule of Two)';
  switch (c.kind) {
    case 'clean':
      return undefined;
    case 'hits': {
      const first = c.hits[0] as TaintHit;
      const more = c.hits.length > 1 ? ` and ${c.hits.length - 1} more value${c.hits.length > 2 ? 's' : ''}` : '';
      // A long unbroken string is most often a key or token: the question and the log show its start only.
      const shown =
        classOf(first.value) === 'long' ? `${JSON.stringify(first.value.slice(0, 8))}… (${first.value.length} characters)` : JSON.stringify(first.value);
      return `TAINTED: ${shown} came from ${first.source.tool} (an untrusted source)${more}; ${rule}`;
    }
    case 'whole':
      return `TAINTED: this whole session, since ${c.whole.source.tool} (an untrusted source) was read: ${c.whole.why}, so every state change of this client (and of every session with its credentials) needs a person while the gate remembers it (24 hours in its store, restarts included); ${rule}`;
    case 'unchecked':
      return c.unread
        ? `TAINTED: this session's principal may have read untrusted data: ${c.why}; ${rule}`
        : `TAINTED: this session has read untrusted data and ${c.why}; ${rule}`;
  }
}

/** Compiles untrusted-source patterns into a test on exposed tool names. */
export function untrustedTest(patterns: readonly string[]): (tool: string) => boolean {
  const res = patterns.map((p) => globToRegExp(p.toLowerCase()));
  return (tool) => res.some((r) => r.test(tool.toLowerCase()));
}
