/**
 * The one place that reads time. Code takes a Clock so tests can inject one; production uses systemClock.
 * The layering test (test/layering.test.ts) refuses `Date.now`, `new Date()` and `performance.now`
 * anywhere else under src/.
 */

/** Source of wall-clock time in integer milliseconds since the Unix epoch. */
export interface Clock {
  nowMs(): number;
}

/** The real clock (Date.now). */
export const systemClock: Clock = { nowMs: () => Date.now() };

/**
 * Source of elapsed time: milliseconds (fractional) from an arbitrary origin, never going back when the
 * wall clock is set. For budgets and durations only, never for timestamps.
 */
export interface MonoClock {
  monoMs(): number;
}

/** The real monotonic clock (performance.now). */
export const systemMonoClock: MonoClock = { monoMs: () => performance.now() };
