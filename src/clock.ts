/** The real clock of a running instance (tests inject their own {@link Clock}). */
import type { Clock } from "../pipeline/ports.ts";

/**
 * The wall clock (Date.now), a monotonic clock (the process's start on the wall clock plus
 * `performance.now()`, which a step of the system clock does not move) and a real, abortable sleep:
 * the default when AppOptions has no clock.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.timeOrigin + performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};
