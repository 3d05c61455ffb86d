/**
 * The privacy filter's detection: finds the private values in a text (IBANs, payment cards, e-mail
 * addresses, phone numbers, credentials, values behind secret-naming keys, configured names and patterns).
 * Pure: no I/O, clock, randomness or environment; the same options and text always give the same findings.
 *
 * Speed: candidates are found by cheap, rare shapes, and only they are validated (Luhn, mod-97,
 * libphonenumber, the JSON of a JWT header). Runs of 7+ digits with their separators and runs of 15+ token
 * characters come from a sub-linear skip scan (chars.ts forEachRun), and only those are read by the card,
 * phone, IBAN, credential and Base64 detectors; '@', '://', '-----BEGIN', the webhook host and '[[' are
 * found by indexOf; keyed values by reading the key back from each `:` and `=`. No full regex pass per
 * detector. Every scan is linear in the text, hostile text included (bounded quantifiers, each part read
 * once); test/privacy-corpus/pathological.ts holds the hostile inputs, bench/privacy.ts their MB/s.
 *
 * Disguised values (JSON `\u0040`, `%40`, `&#64;`, full-width letters and digits, other scripts' digits,
 * zero-width and bidi characters inside) are read in a decoded view (detectors/normalize.ts), built only
 * when the text holds such a character; findings are mapped back to the ORIGINAL span, escapes included.
 *
 * Overlaps are resolved once at the end: the longest candidate wins, then the most specific kind (a GitHub
 * token over "the value behind a password key"). Nothing is found inside or across an existing
 * placeholder, so masking twice changes nothing.
 *
 * Security posture: the detectors aim at recall on the listed shapes; what they do not know (a password in
 * prose with no key, a name not configured) stays in clear. Each detector's file lists its rules and limits.
 */
import { type CountryCode, isSupportedCountry } from 'libphonenumber-js';
import { findBase64InRun } from './detectors/base64.js';
import { findCards } from './detectors/card.js';
import { countDigits, DIGITISH, forEachRun, isLetterCode, isWordCode, TOKENISH } from './detectors/chars.js';
import { type CompiledPattern, compileNames, compilePattern, findNames, findPattern } from './detectors/custom.js';
import { findEmails } from './detectors/email.js';
import { findIbans } from './detectors/iban.js';
import { findKeyedValues, isSecretKey } from './detectors/keyed.js';
import { decodeView, needsView } from './detectors/normalize.js';
import { DEFAULT_PHONE_REGIONS, findPhones } from './detectors/phone.js';
import { placeholderSpans } from './detectors/placeholder.js';
import { findBlocks, findTokensInRun, MIN_TOKEN_RUN } from './detectors/secret.js';
import type { Candidate, Finding } from './detectors/types.js';

// The default phone regions and the Finding shape are documented where they are defined.
export { DEFAULT_PHONE_REGIONS } from './detectors/phone.js';
export type { Finding } from './detectors/types.js';

/** What the operator configures (privacy.names, privacy.patterns, privacy.phoneRegions). */
export interface DetectOptions {
  /** privacy.names: found as whole words, case-insensitive (label NAME). */
  names?: readonly string[];
  /** privacy.patterns: JavaScript regex source; the whole match, or group 1 when there is a group. Label /^[A-Z][A-Z0-9_]{0,31}$/. */
  patterns?: readonly { label: string; pattern: string }[];
  /** ISO 3166-1 alpha-2 regions for national phone forms (without +); default {@link DEFAULT_PHONE_REGIONS}. */
  phoneRegions?: readonly string[];
}

/** A compiled set of detectors. */
export interface Detector {
  /** Findings sorted by start, never overlapping (longest/most specific wins), never inside an existing placeholder. */
  find(text: string): Finding[];
  /** True when a structured-data key names a secret by one of its parts (password, api_key, accessToken, …; not max_tokens, primary_key, author). */
  isSecretKey(key: string): boolean;
}

/** Exact resolution of a cluster of overlapping candidates: the longest (then lowest rank) first, by start. */
function longestFirst(cluster: Candidate[]): Candidate[] {
  if (cluster.length > 1) cluster.sort((a, b) => b.end - b.start - (a.end - a.start) || a.rank - b.rank || a.start - b.start);
  const kept: Candidate[] = [];
  for (const c of cluster) if (kept.every((k) => c.end <= k.start || k.end <= c.start)) kept.push(c);
  return kept.sort((a, b) => a.start - b.start);
}

/** Linear resolution for a long chain of overlaps (hostile text): left to right, the better of two overlapping stays. */
function sweep(cluster: Candidate[]): Candidate[] {
  const kept: Candidate[] = [];
  for (const c of cluster) {
    const last = kept[kept.length - 1];
    if (!last || last.end <= c.start) kept.push(c);
    else if (c.end - c.start > last.end - last.start || (c.end - c.start === last.end - last.start && c.rank < last.rank)) kept[kept.length - 1] = c;
  }
  return kept;
}

/** Clusters larger than this are resolved by {@link sweep}, so resolution stays linear. */
const MAX_CLUSTER = 32;

/**
 * Drops the candidates that overlap a placeholder, then keeps the longest (then lowest rank) of each cluster
 * of overlapping candidates, greedily. `blocked` is sorted and disjoint: one merge, no quadratic check.
 */
function resolve(all: Candidate[], blocked: [number, number][]): Finding[] {
  all.sort((a, b) => a.start - b.start || b.end - a.end || a.rank - b.rank);
  let p = 0;
  const candidates = all.filter((c) => {
    while (p < blocked.length && blocked[p]![1] <= c.start) p++;
    return p === blocked.length || blocked[p]![0] >= c.end;
  });
  const out: Finding[] = [];
  let i = 0;
  while (i < candidates.length) {
    let j = i + 1;
    let clusterEnd = candidates[i]!.end;
    while (j < candidates.length && candidates[j]!.start < clusterEnd) clusterEnd = Math.max(clusterEnd, candidates[j++]!.end);
    const cluster = candidates.slice(i, j);
    const kept = cluster.length > MAX_CLUSTER ? sweep(cluster) : longestFirst(cluster);
    for (const { start, end, label, detail } of kept) out.push({ start, end, label, detail });
    i = j;
  }
  return out;
}

/** Fewest digits of a phone number (7) or a payment card (13); every IBAN's BBAN has a run of 7 or more too. */
const MIN_DIGITS = 7;
const MIN_CARD_DIGITS = 13;
/** Shortest text that can hold a built-in finding (`pwd=x`); names and patterns are looked for in any text. */
const MIN_VALUE = 5;
/** Key verdicts kept by a detector before it starts over (bounds memory on data with ever-new keys). */
const KEY_CACHE_SIZE = 4096;
/** How far before a run of digits an IBAN may start: country code, check digits and a bank code of letters. */
const IBAN_LEAD = 16;

/**
 * Cards, phones and IBANs, looked for only around runs of digits and their separators with 7 digits or more.
 * Cheap gates first, since logs have a run in every timestamp: a card needs 13 digits; a run glued to a
 * word character with no space inside (`2024-01-15T…`, `id_12345678`) holds neither a card nor a phone; an
 * IBAN's digit run follows a letter (its country code or the letters of its bank code).
 */
function findNumbers(text: string, out: Candidate[], regions: readonly CountryCode[]): void {
  let ibanFrom = 0;
  forEachRun(text, DIGITISH, MIN_DIGITS, (start, end) => {
    const digits = countDigits(text, start, end);
    if (digits < MIN_DIGITS) return;
    const glued = isWordCode(text.charCodeAt(end)) || (start > 0 && isWordCode(text.charCodeAt(start - 1)));
    if (!glued || hasSpace(text, start, end)) {
      if (digits >= MIN_CARD_DIGITS) findCards(text, out, start, end);
      if (!gluedNumber(text, start, end)) findPhones(text, out, regions, start, end);
    }
    if (start > 0 && isLetterCode(text.charCodeAt(start - 1))) {
      ibanFrom = Math.max(ibanFrom, start - IBAN_LEAD);
      findIbans(text, out, ibanFrom, end);
      ibanFrom = end;
    }
  });
}

/** Characters a phone's digit run (phone.ts) is read across, but for spaces; a longer run is read in parts. */
const MAX_PHONE_RUN = 25;

/**
 * True when the run, but for spaces and line breaks at its edges, is one short stretch of digits and
 * `-().\/` glued by a digit to a word character (`\n2026-11-30T12…`, `\nid_12345678`): the phone detector
 * would read it as one candidate and drop it as glued, so it is not called.
 */
function gluedNumber(text: string, start: number, end: number): boolean {
  let s = start;
  let e = end;
  while (s < e && isSpaceCode(text.charCodeAt(s))) s++;
  while (e > s && isSpaceCode(text.charCodeAt(e - 1))) e--;
  if (e - s > MAX_PHONE_RUN) return false;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || c === 45 || c === 40 || c === 41 || c === 46 || c === 47)) return false;
  }
  const first = text.charCodeAt(s);
  const last = text.charCodeAt(e - 1);
  return (first >= 48 && first <= 57 && s > 0 && isWordCode(text.charCodeAt(s - 1))) || (last >= 48 && last <= 57 && isWordCode(text.charCodeAt(e)));
}

function isSpaceCode(c: number): boolean {
  return c <= 32 || c === 0xa0;
}

function hasSpace(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (isSpaceCode(text.charCodeAt(i))) return true;
  return false;
}

/**
 * Compiles the detectors for a set of options, once per configuration.
 * @throws Error naming the bad pattern when a custom pattern (privacy.patterns) has a bad label, does not
 *   compile, or can match the empty string; naming the region when a privacy.phoneRegions entry is not a
 *   region libphonenumber knows.
 */
export function compileDetector(opts: DetectOptions = {}): Detector {
  const names = compileNames(opts.names ?? []);
  const patterns: CompiledPattern[] = (opts.patterns ?? []).map(compilePattern);
  const regions = (opts.phoneRegions ?? DEFAULT_PHONE_REGIONS).map((r, i) => {
    const region = r.toUpperCase();
    if (!isSupportedCountry(region)) throw new Error(`privacy.phoneRegions[${i}] (${r}): not an ISO 3166-1 alpha-2 region with a numbering plan`);
    return region as CountryCode;
  });
  // Keys repeat (every object of a JSON array has the same ones): their verdicts are kept, up to a bound.
  const secretKeys = new Map<string, boolean>();
  const detector: Detector = {
    isSecretKey(key: string): boolean {
      let v = secretKeys.get(key);
      if (v === undefined) {
        v = isSecretKey(key);
        if (secretKeys.size >= KEY_CACHE_SIZE) secretKeys.clear();
        secretKeys.set(key, v);
      }
      return v;
    },
    find(text: string): Finding[] {
      const candidates: Candidate[] = [];
      // Escaped, encoded, full-width or invisible-split values are read in a decoded view, mapped back.
      const view = needsView(text) ? decodeView(text) : undefined;
      const t = view ? view.text : text;
      if (t.length >= MIN_VALUE) {
        findNumbers(t, candidates, regions);
        findEmails(t, candidates);
        let after = 0; // the end of the last token: the parts of a JWT are not read again
        forEachRun(t, TOKENISH, MIN_TOKEN_RUN, (start, end) => {
          if (start < after) return;
          after = findTokensInRun(t, candidates, start, end);
          findBase64InRun(t, candidates, start, end);
        });
        findBlocks(t, candidates);
        if (t.includes(':') || t.includes('=')) findKeyedValues(t, candidates, detector.isSecretKey);
      }
      if (names) findNames(t, names, candidates);
      if (view) {
        for (const c of candidates) {
          c.end = view.end[c.end - 1]!;
          c.start = view.start[c.start]!;
        }
      }
      for (const p of patterns) findPattern(text, p, candidates);
      if (candidates.length === 0) return [];
      return resolve(candidates, placeholderSpans(text));
    },
  };
  return detector;
}
