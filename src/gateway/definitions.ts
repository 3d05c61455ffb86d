/**
 * What changed in a tool's definition, in words a person reads when asked to accept it
 * (gateway/pipeline/steps/pins.ts).
 */
import { canonicalJson } from '../audit/canonical.js';

/**
 * The part of two texts that differs, with a little of what surrounds it, so that a change at the end of
 * a long description is shown rather than cut off (`…same text «old» more… → …same text «new» more…`).
 */
export function differingPart(a: string, b: string, context = 40, most = 300): string {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  const show = (t: string) => {
    const mid = t.slice(start, t.length - end);
    const before = start > context ? `…${t.slice(start - context, start)}` : t.slice(0, start);
    const after = end > context ? `${t.slice(t.length - end, t.length - end + context)}…` : t.slice(t.length - end);
    return `${before}«${mid.length > most ? `${mid.slice(0, most - 1)}…` : mid}»${after}`;
  };
  return `${show(a)} → ${show(b)}`;
}

/** What changed between two pinned parts, field by field, in words. */
export function describeChange(previous: Record<string, unknown> | undefined, current: Record<string, unknown>): string {
  if (!previous) return 'a new tool, not seen when its upstream was first pinned';
  const parts: string[] = [];
  for (const key of ['title', 'description', 'inputSchema', 'outputSchema', 'annotations']) {
    const a = previous[key] === undefined ? undefined : canonicalJson(previous[key]);
    const b = current[key] === undefined ? undefined : canonicalJson(current[key]);
    if (a === b) continue;
    if (a === undefined || b === undefined) {
      const show = (v: string | undefined) => (v === undefined ? '(none)' : v.length > 200 ? `${v.slice(0, 199)}…` : v);
      parts.push(`${key}: ${show(a)} → ${show(b)}`);
    } else parts.push(`${key}: ${differingPart(a, b)}`);
  }
  return parts.length > 0 ? parts.join('; ') : 'the definition differs in a field not shown';
}
