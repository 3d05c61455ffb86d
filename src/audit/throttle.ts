/**
 * Rate limiting for security events that an outsider can trigger at will (refused web requests, refused
 * upstream questions): a flood must not fill the signed log. At most one entry per second, then one
 * entry with the count of those left out.
 */
import { type Clock, systemClock } from '../clock.js';

/**
 * Batches refusal events to at most one entry per second (plus a count of the ones left out).
 * @param write called with a reason and how many events were left out before it (0 for a normal entry).
 * @param clock the time source (tests inject one).
 */
export function createRefusalLog(
  write: (reason: string, suppressed: number) => void,
  clock: Clock = systemClock,
): { record(reason: string): void; flush(): void } {
  let windowStart = 0;
  let suppressed = 0;
  let flushPending = false;
  const flush = () => {
    flushPending = false;
    if (suppressed === 0) return;
    write('further requests', suppressed);
    suppressed = 0;
    windowStart = clock.nowMs();
  };
  return {
    record(reason) {
      const now = clock.nowMs();
      if (now - windowStart >= 1000) {
        windowStart = now;
        write(reason, 0);
        return;
      }
      suppressed++;
      if (flushPending) return;
      flushPending = true;
      setTimeout(flush, 1000 - (now - windowStart)).unref();
    },
    flush,
  };
}
