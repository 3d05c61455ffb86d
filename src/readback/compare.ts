/**
 * How a read-back compares an expected value with what the target shows: by JSON value. Numbers compare
 * as numbers (`100` equals `100.0`, also when one side was parsed from text); strings compare exactly;
 * a string never equals a number (`"100"` is not `100`); booleans and null only equal themselves;
 * arrays compare item by item in order, objects key by key (same keys, any order). Pure.
 */

/** Deep JSON equality with the rules above. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (typeof a !== typeof b) return false;
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a === 'object') {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const ak = Object.keys(ao);
    if (ak.length !== Object.keys(bo).length) return false;
    return ak.every((k) => Object.hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
  }
  return a === b;
}
