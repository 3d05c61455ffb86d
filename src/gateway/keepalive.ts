/**
 * Progress notifications while a call waits for a person. Clients that reset their own timeout on
 * progress (MCP spec 2025-11-25, basic/utilities/progress; the TS SDK's `resetTimeoutOnProgress`) then
 * keep waiting for as long as the person takes. Sent only when the client gave a progress token; the
 * progress value is the seconds waited so far (millisecond precision), strictly increasing as the spec
 * requires, and `total` is the seconds the confirmation may take.
 */
import { type Clock, systemClock } from '../clock.js';
import type { ForwardOptions } from './upstream.js';

/**
 * Runs `work`, sending a progress notification every `intervalMs` until it settles.
 * @param message what the client may show, e.g. `waiting for a person to approve write_file`.
 */
export async function withKeepalive<T>(
  progress: ForwardOptions['onprogress'],
  intervalMs: number,
  totalMs: number,
  message: string,
  work: () => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  if (!progress) return work();
  const started = clock.nowMs();
  let last = 0;
  const timer = setInterval(() => {
    // Seconds waited, to the millisecond, and never equal to the one before (spec: progress MUST increase).
    last = Math.max(last + 0.001, (clock.nowMs() - started) / 1000);
    progress({ progress: Number(last.toFixed(3)), total: totalMs / 1000, message });
  }, intervalMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
