/**
 * Masking and restoring: puts placeholders where the detector found private values (maskText, maskJson),
 * finds placeholders and look-alikes in what an agent sends (findPlaceholders, placeholderIdsIn), and puts
 * the values back (restoreText, restoreJson). Pure: the vault, which issues the placeholders and holds the
 * values, is passed in as an {@link Issuer} or a map.
 *
 * Unchanged input comes back as the same string or object instance (no copy), so callers can compare with
 * `===` and the common case costs no allocation. Inputs are never mutated.
 * Security posture: look-alike placeholders (wrong length, upper case, cut with an ellipsis; disguised by
 * other brackets or separators, escapes, full-width or invisible characters) are reported
 * with no id so that the caller refuses them (fail closed); restore replaces only exact placeholders whose
 * id it was given.
 */
import type { Detector, Finding } from './detect.js';
import { findPlaceholders, isPlaceholder, PLACEHOLDER_RE, type PlaceholderSpan } from './detectors/placeholder.js';

// The placeholder form and its look-alikes are defined (and documented) in detectors/placeholder.ts.
export { findPlaceholders, isPlaceholder, PLACEHOLDER_RE, type PlaceholderSpan };

/** Issues the placeholder text for a value (the vault does it; same value → same placeholder within a session). */
export interface Issuer {
  /** The placeholder (`[[LABEL_<32 hex>]]`) standing for `value`, which `finding` describes. */
  issue(value: string, finding: Finding): string;
}

/** JSON-like data path: object keys and array indices from the root. */
export type JsonPath = readonly (string | number)[];

/**
 * Replaces every finding of `detector` in `text` by the placeholder `issuer` gives for its exact original
 * span (separators and zero-width characters included), so that restoring gives back the same bytes.
 * @returns `text` itself (same instance) when nothing was found.
 */
export function maskText(text: string, detector: Detector, issuer: Issuer): string {
  const findings = detector.find(text);
  if (findings.length === 0) return text;
  let out = '';
  let at = 0;
  for (const f of findings) {
    out += text.slice(at, f.start) + issuer.issue(text.slice(f.start, f.end), f);
    at = f.end;
  }
  return out + text.slice(at);
}

/** Clean strings remembered by one maskJson call: how many, and how long at most. */
const MAX_CLEAN = 4096;
const MAX_CLEAN_LENGTH = 128;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An empty object with the prototype of `o` (null-prototype objects stay so). */
function emptyLike(o: object): Record<string, unknown> {
  return Object.getPrototypeOf(o) === null ? (Object.create(null) as Record<string, unknown>) : {};
}

/** Sets an own property, `__proto__` included (plain assignment would change the prototype). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * Walks JSON-like data (objects, arrays, strings; other scalars untouched) and masks every string value and
 * every object key. Under a key for which `detector.isSecretKey` is true the whole subtree is masked: every
 * string whole as SECRET (detail `value of "<key>"`, the outermost secret key) unless it is empty or already
 * a placeholder, and every number as the placeholder string of its decimal form; booleans and null stay,
 * keys inside stay keys (masked by detection as usual).
 * @param skip - called with the path (keys and indices from the root) of each value; true leaves that
 *   subtree as it is.
 * @returns `value` itself when nothing changed; otherwise a copy of the changed branches. Never mutates.
 */
export function maskJson(value: unknown, detector: Detector, issuer: Issuer, skip?: (path: JsonPath) => boolean): unknown {
  const path: (string | number)[] = [];
  // Keys repeat across the objects of an array: each distinct key is masked once per call.
  const maskedKeys = new Map<string, string>();
  const maskKey = (k: string): string => {
    let m = maskedKeys.get(k);
    if (m === undefined) {
      m = maskText(k, detector, issuer);
      maskedKeys.set(k, m);
    }
    return m;
  };
  /** Maps the children of an array or object at their path (keys masked too); see {@link mapChildren}. */
  const children = (v: unknown, f: (item: unknown, key: string | number) => unknown): unknown =>
    mapChildren(
      v,
      (item, key) => {
        path.push(key);
        const m = f(item, key);
        path.pop();
        return m;
      },
      maskKey,
    );
  // The whole subtree under a secret-naming key: every string whole, numbers as placeholder strings.
  const secret = (v: unknown, key: string): unknown => {
    if (skip?.(path)) return v;
    if (typeof v === 'string') {
      if (v === '' || isPlaceholder(v)) return v;
      return issuer.issue(v, { start: 0, end: v.length, label: 'SECRET', detail: `value of "${key}"` });
    }
    if (typeof v === 'number' || typeof v === 'bigint') {
      const s = String(v);
      return issuer.issue(s, { start: 0, end: s.length, label: 'SECRET', detail: `value of "${key}"` });
    }
    return children(v, (item) => secret(item, key));
  };
  // Values repeat too (dates, enums, tags): a short string found clean once is not read again in this call.
  const clean = new Set<string>();
  const maskValue = (s: string): string => {
    if (s.length > MAX_CLEAN_LENGTH) return maskText(s, detector, issuer);
    if (clean.has(s)) return s;
    const m = maskText(s, detector, issuer);
    if (m === s) {
      if (clean.size >= MAX_CLEAN) clean.clear();
      clean.add(s);
    }
    return m;
  };
  const walk = (v: unknown): unknown => {
    if (skip?.(path)) return v;
    if (typeof v === 'string') return maskValue(v);
    return children(v, (item, k) => (typeof k === 'string' && detector.isSecretKey(k) ? secret(item, k) : walk(item)));
  };
  return walk(value);
}

/**
 * Replaces each exact placeholder whose id is in `values` by its value; others (unknown ids, look-alikes)
 * are left as they are.
 * @returns `text` itself when nothing was replaced.
 */
export function restoreText(text: string, values: ReadonlyMap<string, string>): string {
  if (!text.includes('[[')) return text;
  PLACEHOLDER_RE.lastIndex = 0;
  let changed = false;
  const out = text.replace(PLACEHOLDER_RE, (whole: string, _label: string, id: string) => {
    const v = values.get(id);
    if (v === undefined) return whole;
    changed = true;
    return v;
  });
  return changed ? out : text;
}

/** Applies `f` to every string value and object key of JSON-like data; same instance when `f` changed nothing. */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  return mapChildren(value, (item) => mapStrings(item, f), f);
}

/**
 * Maps the items of an array, or the values and keys of an object, copying only when something changed
 * (the same instance back otherwise; never mutates). Anything else comes back as it is.
 */
function mapChildren(v: unknown, f: (item: unknown, key: string | number) => unknown, mapKey: (k: string) => string): unknown {
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const m = f(v[i], i);
      if (m !== v[i] && copy === undefined) copy = v.slice(0, i);
      copy?.push(m);
    }
    return copy ?? v;
  }
  if (!isRecord(v)) return v;
  let copy: Record<string, unknown> | undefined;
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const item = v[k];
    const m = f(item, k);
    const mk = mapKey(k);
    if ((m !== item || mk !== k) && copy === undefined) {
      copy = emptyLike(v);
      for (let j = 0; j < i; j++) setOwn(copy, keys[j] as string, v[keys[j] as string]);
    }
    if (copy) setOwn(copy, mk, m);
  }
  return copy ?? v;
}

/** {@link restoreText} over every string value and object key of JSON-like data; same instance when unchanged. */
export function restoreJson(value: unknown, values: ReadonlyMap<string, string>): unknown {
  return mapStrings(value, (s) => restoreText(s, values));
}

/**
 * The ids of the exact placeholders in the strings and keys of JSON-like data, and the number of look-alikes
 * (placeholder attempts with no valid id, see {@link findPlaceholders}), which the caller refuses.
 */
export function placeholderIdsIn(value: unknown): { ids: Set<string>; attempts: number } {
  const ids = new Set<string>();
  let attempts = 0;
  mapStrings(value, (s) => {
    for (const p of findPlaceholders(s)) {
      if (p.id === undefined) attempts++;
      else ids.add(p.id);
    }
    return s;
  });
  return { ids, attempts };
}
