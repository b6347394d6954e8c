/**
 * A clock for `startGateway`'s `clock` that a test moves: the real clocks (`Date.now`,
 * `performance.now`, real sleeps) plus offsets the test sets, in ms.
 */
import type { Clock } from "../../pipeline/ports.ts";
import { realClock } from "../../src/clock.ts";

/**
 * The real clocks moved by `elapsed` (the wall and the monotonic clock together: time passed, e.g. a
 * day, or a request stamped in the past with a negative value) and by `wall` (the wall clock alone: a
 * step of the system clock, the monotonic one unmoved). Both start at 0; sleeps are real.
 */
export class ShiftedClock implements Clock {
  wall = 0;
  elapsed = 0;
  now(): number {
    return Date.now() + this.wall + this.elapsed;
  }
  monotonic(): number {
    return performance.now() + this.elapsed;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return realClock.sleep(ms, signal);
  }
}
