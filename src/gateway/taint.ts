/**
 * Taint tracking (the "Rule of Two": untrusted input plus a state change needs a person). The output of
 * untrusted-source tools (web fetch, inbox, scraper, search) is remembered per client session as
 * distinctive tokens: URLs, e-mail addresses, paths and long unbroken strings, normalised (lower case, no
 * trailing punctuation). A later mutation whose arguments carry one of them is forced to a person even when
 * a rule allows it, and the preview names the value and the call it came from.
 *
 * Bounded: at most 500 tokens from one result and 5,000 per session, oldest evicted first, so one hostile
 * page cannot flush what earlier results left. Honest limit: paraphrased or re-encoded data is not
 * recognised; the un-laundered flow (a copied address, link or path) is.
 */
import { globToRegExp } from '../policy/evaluate.js';

const PER_RESULT = 500;
const PER_SESSION = 5_000;

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

// Case-insensitive: `HTTPS://EVIL.TEST/x` is the same URL as `https://evil.test/x` (tokens are lower-cased).
const TOKEN = /https?:\/\/[^\s"'<>()[\]{}]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:~|\.{1,2})?\/[\w.@%+-]+(?:\/[\w.@%+-]+)+|[A-Za-z0-9_+/=-]{24,}/gi;

/** Longest token kept (characters). */
export const MAX_TOKEN_CHARS = 256;

/** Distinctive tokens of a text, normalised. */
export function tokensOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN)) {
    // Kept to their first 256 characters on both sides (memory, and what the log quotes), so a long
    // token still matches itself.
    const t = m[0]
      .toLowerCase()
      .replace(/[.,;:!?)\]}'"]+$/, '')
      .slice(0, MAX_TOKEN_CHARS);
    if (t.length >= 6) out.push(t);
  }
  return out;
}

/** Every string in a JSON value, joined (bounded). */
function textOf(value: unknown, budget = { left: 1_000_000 }): string {
  if (budget.left <= 0) return '';
  if (typeof value === 'string') {
    budget.left -= value.length;
    return value;
  }
  if (typeof value !== 'object' || value === null) return '';
  const parts: string[] = [];
  for (const v of Array.isArray(value) ? value : Object.values(value)) parts.push(textOf(v, budget));
  return parts.join('\n');
}

/** One session's memory of untrusted tokens. */
export class TaintMemory {
  /** token → source; insertion order is age. */
  private readonly tokens = new Map<string, TaintSource>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Remembers the tokens of an untrusted tool's result. */
  record(tool: string, result: unknown): void {
    const seen = new Set<string>();
    for (const t of tokensOf(textOf(result))) {
      if (seen.size >= PER_RESULT) break;
      if (seen.has(t)) continue;
      seen.add(t);
      this.tokens.delete(t);
      this.tokens.set(t, { tool, atMs: this.now() });
      while (this.tokens.size > PER_SESSION) {
        const oldest = this.tokens.keys().next().value;
        if (oldest === undefined) break;
        this.tokens.delete(oldest);
      }
    }
  }

  /** The remembered tokens that a call's arguments carry (first few). */
  find(args: unknown): TaintHit[] {
    if (this.tokens.size === 0) return [];
    const hits: TaintHit[] = [];
    for (const t of new Set(tokensOf(textOf(args)))) {
      const source = this.tokens.get(t);
      if (source) hits.push({ value: t, source });
      if (hits.length >= 5) break;
    }
    return hits;
  }
}

/** Compiles untrusted-source patterns into a test on exposed tool names. */
export function untrustedTest(patterns: readonly string[]): (tool: string) => boolean {
  const res = patterns.map((p) => globToRegExp(p.toLowerCase()));
  return (tool) => res.some((r) => r.test(tool.toLowerCase()));
}
