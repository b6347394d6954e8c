/**
 * The log lines of flushes PostgreSQL answers but refuses with an error that is neither a data error
 * nor a lost connection (a constraint every row breaks, a permission taken away, a full disk on its
 * side): a run of them is said once when it begins (`database writes failing (…)`, the error and the
 * rows waiting), again at most once a minute while it lasts (`database writes still failing (…)`, with
 * the failed flushes so far), and once a flush works again (`database writes work again: …`), as the
 * embedded store does (../sqlite/flush.ts). Before, every failed flush, about one a second, logged
 * `flush of N usage rows … failed`, and nothing said when writes worked again. The failed flushes are
 * counted in `switchyard_store_flush_errors_total` as before.
 */
import { num } from "../refused-rows.ts";
import { errMessage } from "../rows.ts";

/** How often, at most, a run of failed flushes is said again while it lasts, ms. */
export const FAILING_LINE_EVERY_MS = 60_000;

/** One store's run of refused flushes (see the module doc). */
export class FlushFailures {
  /** When the run's first failed flush was (ms since the epoch); undefined: no run. */
  private since: number | undefined;
  private failed = 0;
  private saidAt = 0;

  /**
   * @param now the store's clock, ms since the epoch
   * @param say receives a failure line (the store's `onError`)
   */
  constructor(
    private readonly now: () => number,
    private readonly say: (message: string, err: unknown) => void,
  ) {}

  /** A flush of `usage` usage rows and `traces` route traces was refused with `err` (its rows went back to wait). */
  flushFailed(err: unknown, usage: number, traces: number): void {
    const now = this.now();
    this.failed++;
    const waiting = `${num(usage)} usage rows and ${num(traces)} route traces wait in memory and are written once a write works again`;
    if (this.since === undefined) {
      this.since = this.saidAt = now;
      this.say(`database writes failing (${errMessage(err)}): ${waiting}; said again at most once a minute while flushes fail, and when one works again`, err);
    } else if (now - this.saidAt >= FAILING_LINE_EVERY_MS) {
      this.saidAt = now;
      this.say(`database writes still failing (${errMessage(err)}): ${num(this.failed)} failed flushes in ${seconds(now - this.since)}; ${waiting}`, err);
    }
  }

  /**
   * A flush wrote `usage` usage rows and `traces` route traces: the line that says writes work again
   * when it ended a run of failed ones (a new run may begin), else undefined.
   */
  flushWorked(usage: number, traces: number): string | undefined {
    if (this.since === undefined) return undefined;
    const line = `database writes work again: ${num(usage)} usage rows and ${num(traces)} route traces written after ${num(this.failed)} failed flushes in ${seconds(this.now() - this.since)}`;
    this.since = undefined;
    this.failed = 0;
    return line;
  }
}

/** `ms` as whole seconds for a log line (`75 s`). */
function seconds(ms: number): string {
  return `${num(Math.round(ms / 1000))} s`;
}
