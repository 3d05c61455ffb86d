/**
 * The one place that reads time. Code takes a Clock so tests can inject one; production uses systemClock.
 */

/** Source of wall-clock time in integer milliseconds since the Unix epoch. */
export interface Clock {
  nowMs(): number;
}

/** The real clock (Date.now). */
export const systemClock: Clock = { nowMs: () => Date.now() };
