/**
 * Read-back rules, evaluated: fill a rule's references from the write's arguments and result, then
 * compare what the read tool returned with what was expected. Pure: no I/O, no clock.
 *
 * References are whole string values `$args.<path>` and `$result.<path>`; `$result` is the write's
 * `structuredContent`, or else its text content parsed as JSON when that works. Outcomes:
 * `ok` (every expected field matches), `failed` (the target shows something else: which field, expected,
 * found), `unclear` (could not verify: a reference or an expected path was not found, or the read did
 * not answer usably).
 * @see ./compare.ts for what "matches" means.
 */
import { jsonEqual } from './compare.js';
import { parsePath, valueAt } from './path.js';

/** What a reference may read. */
export interface ReadbackSources {
  args: Record<string, unknown>;
  /** The write's result as the upstream sent it. */
  result: Record<string, unknown>;
}

/** One field that did not match. */
export interface FieldMismatch {
  path: string;
  expected: unknown;
  found: unknown;
}

/** The outcome of a read-back. */
export type ReadbackOutcome = { outcome: 'ok'; checked: number } | { outcome: 'failed'; mismatches: FieldMismatch[] } | { outcome: 'unclear'; reason: string };

/** The data a result holds: its structuredContent, else its text parsed as JSON, else undefined. */
export function resultData(result: Record<string, unknown>): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content
    .filter((c): c is { type: 'text'; text: string } => typeof c === 'object' && c !== null && c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text)
    .join('');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Replaces `$args.<path>` and `$result.<path>` string values, at any depth, with the values they name.
 * @returns the filled value, or the reference that could not be resolved.
 */
export function fillReferences(template: unknown, sources: ReadbackSources): { ok: true; value: unknown } | { ok: false; missing: string } {
  const resultValue = { resolved: false, value: undefined as unknown };
  const lookup = (text: string): { ok: true; value: unknown } | { ok: false; missing: string } | undefined => {
    const m = /^\$(args|result)\.(.+)$/s.exec(text);
    if (!m) return undefined;
    let root: unknown = sources.args;
    if (m[1] === 'result') {
      if (!resultValue.resolved) [resultValue.resolved, resultValue.value] = [true, resultData(sources.result)];
      root = resultValue.value;
    }
    let steps: ReturnType<typeof parsePath>;
    try {
      steps = parsePath(m[2]!);
    } catch {
      return { ok: false, missing: text };
    }
    const found = valueAt(root, steps);
    return found.found ? { ok: true, value: found.value } : { ok: false, missing: text };
  };
  const walk = (v: unknown): { ok: true; value: unknown } | { ok: false; missing: string } => {
    if (typeof v === 'string') return lookup(v) ?? { ok: true, value: v };
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const item of v) {
        const r = walk(item);
        if (!r.ok) return r;
        out.push(r.value);
      }
      return { ok: true, value: out };
    }
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        const r = walk(item);
        if (!r.ok) return r;
        out[k] = r.value;
      }
      return { ok: true, value: out };
    }
    return { ok: true, value: v };
  };
  return walk(template);
}

/**
 * Compares the read tool's result with the expectations (path in the read result → expected value,
 * references already filled).
 */
export function checkExpectations(readResult: Record<string, unknown>, expect: Record<string, unknown>): ReadbackOutcome {
  const mismatches: FieldMismatch[] = [];
  for (const [path, expected] of Object.entries(expect)) {
    let steps: ReturnType<typeof parsePath>;
    try {
      steps = parsePath(path);
    } catch (err) {
      return { outcome: 'unclear', reason: (err as Error).message };
    }
    // A path is looked up in the result as sent, then in its data (structuredContent or parsed text).
    let found = valueAt(readResult, steps);
    if (!found.found) {
      const data = resultData(readResult);
      if (data !== undefined) found = valueAt(data, steps);
    }
    if (!found.found) return { outcome: 'unclear', reason: `the read result has no "${path}" (stops at "${found.at}")` };
    if (!jsonEqual(found.value, expected)) mismatches.push({ path, expected, found: found.value });
  }
  return mismatches.length > 0 ? { outcome: 'failed', mismatches } : { outcome: 'ok', checked: Object.keys(expect).length };
}
