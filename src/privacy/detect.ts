/**
 * The privacy filter's detection: finds the private values in a text (IBANs, payment cards, e-mail
 * addresses, phone numbers, credentials, values behind secret-naming keys, configured names and patterns).
 * Pure: no I/O, clock, randomness or environment; the same options and text always give the same findings.
 *
 * Speed: each detector is one regex pass that finds candidates by a cheap, rare shape (a digit run, an '@',
 * a token prefix, a key word), and only candidates are validated (Luhn, mod-97, libphonenumber, JSON of a
 * JWT header). Overlaps are resolved once at the end: the longest candidate wins, then the most specific
 * kind (a GitHub token over "the value behind a password key"). Nothing is found inside an existing
 * placeholder, so masking twice changes nothing.
 *
 * Security posture: the detectors aim at recall on the listed shapes; what they do not know (a password in
 * prose with no key, a name not configured) stays in clear. Each detector's file lists its rules and limits.
 */
import type { CountryCode } from 'libphonenumber-js';
import { findBase64Secrets } from './detectors/base64.js';
import { findCards } from './detectors/card.js';
import { type CompiledPattern, compileNames, compilePattern, findNames, findPattern } from './detectors/custom.js';
import { findEmails } from './detectors/email.js';
import { findIbans } from './detectors/iban.js';
import { findKeyedValues, isSecretKey } from './detectors/keyed.js';
import { DEFAULT_PHONE_REGIONS, findPhones } from './detectors/phone.js';
import { placeholderSpans } from './detectors/placeholder.js';
import { findShapes } from './detectors/secret.js';
import type { Candidate, Finding } from './detectors/types.js';

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

/** Keeps, from candidates sorted by start, the longest (then lowest rank) of each overlapping cluster, greedily. */
function resolve(candidates: Candidate[], blocked: [number, number][]): Finding[] {
  candidates.sort((a, b) => a.start - b.start || b.end - a.end || a.rank - b.rank);
  const out: Finding[] = [];
  let i = 0;
  while (i < candidates.length) {
    let j = i + 1;
    let clusterEnd = candidates[i]!.end;
    while (j < candidates.length && candidates[j]!.start < clusterEnd) clusterEnd = Math.max(clusterEnd, candidates[j++]!.end);
    const cluster = candidates.slice(i, j);
    if (cluster.length > 1) cluster.sort((a, b) => b.end - b.start - (a.end - a.start) || a.rank - b.rank || a.start - b.start);
    const kept: Candidate[] = [];
    for (const c of cluster) {
      if (blocked.some(([s, e]) => c.start < e && s < c.end)) continue;
      if (kept.every((k) => c.end <= k.start || k.end <= c.start)) kept.push(c);
    }
    kept.sort((a, b) => a.start - b.start);
    for (const { start, end, label, detail } of kept) out.push({ start, end, label, detail });
    i = j;
  }
  return out;
}

/** Digits (ASCII or full-width): what every card, IBAN and phone number needs. */
const DIGIT_RE = /[0-9\uFF10-\uFF19]/;
/** Whether a credential prefix, key word, '@', '://' or a Base64-length run may be present: one cheap test for short texts. */
const WORDY_RE =
  /@|:\/\/|gh[pousr]_|github_pat_|sk|[rp]k_|xox|hf_|AIza|AKIA|ASIA|eyJ|-----BEGIN|pass|pwd|secret|token|auth|cookie|credential|key|session|[A-Za-z0-9+/_-]{28}/i;

/**
 * Compiles the detectors for a set of options, once per configuration.
 * @throws Error naming the bad pattern when a custom pattern (privacy.patterns) has a bad label, does not
 *   compile, or can match the empty string.
 */
export function compileDetector(opts: DetectOptions = {}): Detector {
  const names = compileNames(opts.names ?? []);
  const patterns: CompiledPattern[] = (opts.patterns ?? []).map(compilePattern);
  const regions = (opts.phoneRegions ?? DEFAULT_PHONE_REGIONS).map((r) => r.toUpperCase() as CountryCode);
  return {
    isSecretKey,
    find(text: string): Finding[] {
      const candidates: Candidate[] = [];
      if (DIGIT_RE.test(text)) {
        findCards(text, candidates);
        findIbans(text, candidates);
        findPhones(text, candidates, regions);
      }
      if (text.length > 4096 || WORDY_RE.test(text)) {
        findEmails(text, candidates);
        findShapes(text, candidates);
        findKeyedValues(text, candidates);
        findBase64Secrets(text, candidates);
      }
      if (names) findNames(text, names, candidates);
      for (const p of patterns) findPattern(text, p, candidates);
      if (candidates.length === 0) return [];
      return resolve(candidates, placeholderSpans(text));
    },
  };
}
