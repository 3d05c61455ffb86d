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
// Every repeat is bounded (see INNER): an untrusted page of `a.a.a.…` must not cost the gate quadratic time.
const TOKEN =
  /https?:\/\/[^\s"'<>()[\]{}]{1,2048}|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}|(?:~|\.{1,2})?\/[\w.@%+-]{1,255}(?:\/[\w.@%+-]{1,255}){1,32}|[A-Za-z0-9_+/=-]{24,}/gi;

/** Longest token kept (characters). */
export const MAX_TOKEN_CHARS = 256;

/**
 * Addresses and paths wherever they stand, also inside a larger token (an address in a URL's query, a
 * path after `--script=`), so that a copied one is found whatever surrounds it on either side.
 */
// Bounded repeats: on a long run of word characters and dots an unbounded local part would rescan the
// run from every position (quadratic); 64 is the longest local part RFC 5321 allows.
// Also IBANs (ISO 13616; spaced in groups of four or not: spaces are dropped when normalised), IPv4
// addresses, and Windows paths.
const INNER =
  /[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}|(?:~|\.{1,2})?\/[\w.@%+-]{1,255}(?:\/[\w.@%+-]{1,255}){1,32}|\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[A-Za-z]:\\[^\s"'<>|*?]{1,255}/gi;
const TRAILING = new Set('.,;:!?)]}\'"');

/** Distinctive tokens of a text, normalised. */
export function tokensOf(text: string): string[] {
  const out = new Set<string>();
  const add = (raw: string) => {
    // Kept to their first 256 characters on both sides (memory, and what the log quotes), so a long
    // token still matches itself.
    // Trailing punctuation is stripped with a loop: a regex anchored at the end rescans a run of dots
    // from each of its positions. Spaces go (a spaced IBAN is the same IBAN).
    let end = raw.length;
    while (end > 0 && TRAILING.has(raw[end - 1] as string)) end--;
    const t = raw.slice(0, end).replace(/\s+/g, '').slice(0, MAX_TOKEN_CHARS).toLowerCase();
    if (t.length >= 6) out.add(t);
  };
  for (const m of text.matchAll(TOKEN)) {
    add(m[0]);
    // `GITHUB_TOKEN=ghp_…`: the value alone is the secret that was copied.
    if (m[0].includes('=') && !m[0].includes('://')) for (const part of m[0].split('=')) if (part.length >= 24) add(part);
  }
  for (const m of text.matchAll(INNER)) add(m[0]);
  return [...out];
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
