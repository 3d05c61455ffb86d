/**
 * `--since` for `lookfirst stats`: a duration back from now (`30m`, `24h`, `7d`) or a point in time
 * (ISO 8601, `2026-12-01` or `2026-12-01T09:00:00Z`). Pure: the caller passes the current time.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)\s*([smhdw])$/;
// A date, optionally with a time and a zone: what Date.parse reads the same on every Node version.
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Result of {@link parseSince}: the start of the window in ms since the epoch, or why the text is not one. */
export type SinceResult = { ok: true; sinceMs: number } | { ok: false; reason: string };

/**
 * Reads a `--since` value.
 * @param text what the user wrote.
 * @param nowMs the current time (ms since the epoch), for durations.
 * @returns the window's start (a duration reaching before 1970 starts at the epoch); `{ ok: false, reason }` with a sentence saying what is accepted, for text
 *   that is neither form, a zero duration, or a time in the future.
 */
export function parseSince(text: string, nowMs: number): SinceResult {
  const t = text.trim();
  const accepted = 'use a duration such as 30m, 24h or 7d (units s, m, h, d, w), or an ISO time such as 2026-12-01T09:00:00Z';
  const d = DURATION.exec(t);
  if (d) {
    const ms = Number(d[1]) * UNIT_MS[d[2] as keyof typeof UNIT_MS];
    if (!(ms > 0)) return { ok: false, reason: `--since ${JSON.stringify(text)} is no time at all: ${accepted}` };
    // A duration longer than the time since 1970 (`100000d`, or more digits than a number holds) is the
    // whole log: the window starts at the epoch, a time every Date can show.
    return { ok: true, sinceMs: Math.max(0, nowMs - ms) };
  }
  if (ISO.test(t)) {
    const ms = Date.parse(t);
    if (Number.isNaN(ms)) return { ok: false, reason: `--since ${JSON.stringify(text)} is not a real date: ${accepted}` };
    if (ms > nowMs) return { ok: false, reason: `--since ${JSON.stringify(text)} is in the future: nothing can have happened since` };
    return { ok: true, sinceMs: ms };
  }
  return { ok: false, reason: `--since ${JSON.stringify(text)} is neither a duration nor a time: ${accepted}` };
}
