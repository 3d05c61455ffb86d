/**
 * The operator's own values: privacy.names (label NAME) and privacy.patterns (a custom label).
 *
 * Names: whole words, case-insensitive, Unicode-aware (a name is not found inside a longer word, `Ann` not in
 * `Annual`); a space inside a configured name matches any run of whitespace or `_` (`Jane_Doe`); names split by an
 * invisible character are read in the decoded view (./normalize.ts). Longer names are tried first.
 * Patterns: JavaScript regex source compiled with the `g` and `d` flags; the finding is the whole match, or
 * capture group 1 when the pattern has a capture group (`iban:\s*(\S+)` masks only the value). A pattern
 * that does not compile or can match the empty string is refused when the detector is compiled. A pattern
 * is run as given: one that backtracks badly is the operator's to fix.
 */
import { type Candidate, RANK } from './types.js';

/** A compiled privacy.patterns entry. */
export interface CompiledPattern {
  label: string;
  re: RegExp;
  group: boolean;
}

const LABEL_RE = /^[A-Z][A-Z0-9_]{0,31}$/;

/** The regex for privacy.names, or undefined when there are none. */
export function compileNames(names: readonly string[]): RegExp | undefined {
  const alts = [...new Set(names.map((n) => n.trim()).filter((n) => n.length > 0))]
    .sort((a, b) => b.length - a.length)
    .map((n) => n.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&').replace(/\s+/g, '[\\s_]+'));
  if (alts.length === 0) return undefined;
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alts.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
}

/**
 * Compiles one privacy.patterns entry.
 * @throws Error naming the entry when the label is not /^[A-Z][A-Z0-9_]{0,31}$/, the source does not
 *   compile, or the pattern can match the empty string.
 */
export function compilePattern(p: { label: string; pattern: string }, index: number): CompiledPattern {
  const name = `privacy.patterns[${index}] (${p.label})`;
  if (!LABEL_RE.test(p.label)) throw new Error(`${name}: the label must match /^[A-Z][A-Z0-9_]{0,31}$/`);
  let re: RegExp;
  try {
    re = new RegExp(p.pattern, 'gd');
  } catch (e) {
    throw new Error(`${name}: the pattern does not compile: ${(e as Error).message}`, { cause: e });
  }
  for (const probe of ['', 'a', ' ', '0', 'a b', 'A_1-\n']) {
    re.lastIndex = 0;
    for (let m = re.exec(probe); m !== null; m = re.exec(probe)) {
      if (m[0].length === 0) throw new Error(`${name}: the pattern can match the empty string`);
    }
  }
  const groups = new RegExp(`${p.pattern}|`).exec('')!.length - 1;
  return { label: p.label, re, group: groups > 0 };
}

/** Pushes every configured name in `text` onto `out` (label NAME). */
export function findNames(text: string, re: RegExp, out: Candidate[]): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text))
    out.push({ start: m.index, end: m.index + m[0].length, label: 'NAME', detail: 'name', rank: RANK.name });
}

/** Pushes every match of a compiled pattern (or its group 1) in `text` onto `out`. */
export function findPattern(text: string, p: CompiledPattern, out: Candidate[]): void {
  p.re.lastIndex = 0;
  for (let m = p.re.exec(text); m !== null; m = p.re.exec(text)) {
    if (m[0].length === 0) {
      p.re.lastIndex++;
      continue;
    }
    const span: readonly [number, number] | undefined = p.group ? m.indices?.[1] : [m.index, m.index + m[0].length];
    if (span !== undefined && span[1] > span[0]) out.push({ start: span[0], end: span[1], label: p.label, detail: p.label, rank: RANK.custom });
  }
}
