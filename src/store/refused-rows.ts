/**
 * Rows refused at the buffers' cap (`PendingWrites.maxPending`, 100,000 of each kind by default): while
 * writes fail (a full disk for the embedded store, PostgreSQL away or refusing its flushes) the oldest
 * rows wait in memory and the newest are refused, lost, counted in `switchyard_store_dropped_total`.
 * Both stores say them the same way through {@link RefusedRows}: one `error` line per outage with the
 * count (at the first failed flush after the first refusal), again at most once a minute
 * ({@link REFUSED_LINE_EVERY_MS}) while the count grows, and the outage's count in the `warn` line that
 * says writes work again (instead of that line's usual `info`); a stop counts them as lost
 * ({@link refusedAtClose}: its line is an error, exit 1).
 */
import type { PendingWrites } from "./pending.ts";
import type { UnwrittenAtClose } from "./types.ts";

/** Least time between two lines of one outage's refused rows (ms): said again at most once a minute. */
export const REFUSED_LINE_EVERY_MS = 60_000;

/** Usage rows and route traces refused at the cap. */
export interface RefusedCounts {
  refusedUsage: number;
  refusedTraces: number;
}

/**
 * Receives a line about rows refused at the buffers' cap (lost): `error` while writes fail (the running
 * count of the outage), `warn` when writes work again (the outage's final count). The counts are the
 * outage's usage rows and route traces refused; the message says them too and carries no secret.
 */
export type RefusedLine = (level: "error" | "warn", message: string, counts: RefusedCounts) => void;

/** The default {@link RefusedLine}: one line on stderr. */
export const refusedOnStderr: RefusedLine = (_level, message) => console.error(`[switchyard store] ${message}`);

/** `100000` → `100,000`. */
export const num = (n: number): string => n.toLocaleString("en-US");

/** What the lines say after the count: lost, where they are counted, and the stop's exit code. */
const LOST = "are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)";

/**
 * One store's lines about its refused rows (module comment). A run of refusals is what the buffers
 * refused since the last flush that wrote (or the end of an outage); its lines count only its rows.
 */
export class RefusedRows {
  /** The buffers' refused counts when the current run began. */
  private base = { usage: 0, traces: 0 };
  /** Rows of the current run said by its last line (0: none said yet), and when (ms since the epoch). */
  private said = 0;
  private saidAt = 0;

  /**
   * @param pending the buffers, whose `refusedUsage`/`refusedTraces` count since they were made
   * @param now the store's clock (ms since the epoch): the once-a-minute bound
   */
  constructor(
    private readonly pending: PendingWrites,
    private readonly now: () => number,
    private readonly onRefused: RefusedLine = refusedOnStderr,
  ) {}

  /** The current run's refused rows. */
  private run(): RefusedCounts {
    return { refusedUsage: this.pending.refusedUsage - this.base.usage, refusedTraces: this.pending.refusedTraces - this.base.traces };
  }

  /** "3 usage rows and 0 route traces". */
  private what(r: RefusedCounts): string {
    return `${num(r.refusedUsage)} usage rows and ${num(r.refusedTraces)} route traces`;
  }

  /** A new run from now (its rows said). */
  private restart(): void {
    this.base = { usage: this.pending.refusedUsage, traces: this.pending.refusedTraces };
    this.said = 0;
  }

  /**
   * After a flush that failed, or one not tried because the database is away: the outage's refused rows
   * as an `error` line headed `head` (`database writes failing`), when some were refused since its last
   * line and that line is a minute old (the first line of an outage at once). One line per outage, not per row.
   */
  failed(head: string): void {
    const r = this.run();
    const n = r.refusedUsage + r.refusedTraces;
    if (n <= this.said) return;
    const now = this.now();
    if (this.said > 0 && now - this.saidAt < REFUSED_LINE_EVERY_MS) return;
    const cap = num(this.pending.maxPending);
    this.onRefused(
      "error",
      `${head}: ${this.what(r)} refused so far in this outage, the buffers being full (${cap} of each wait in memory, the oldest, to be written once a write works again; the newest are refused): the refused ones ${LOST}; said again at most once a minute while the count grows, and when writes work again`,
      r,
    );
    this.said = n;
    this.saidAt = now;
  }

  /**
   * Writes work again after an outage, which `again` says (`database writes work again: …`): when the
   * outage refused rows, `again` is said here as a `warn` line with their count, and true is returned
   * (the caller does not say `again` itself); false when none were refused. A new run begins.
   */
  again(again: string): boolean {
    const r = this.run();
    this.restart();
    if (r.refusedUsage + r.refusedTraces === 0) return false;
    this.onRefused("warn", `${again}; ${this.what(r)} refused meanwhile at the buffers' cap (${num(this.pending.maxPending)} of each) ${LOST}`, r);
    return true;
  }

  /**
   * A flush wrote with no outage to end: rows refused since the last one (they came faster than a flush
   * ran) are said once, as a `warn` line. A new run begins.
   */
  wrote(): void {
    const r = this.run();
    this.restart();
    if (r.refusedUsage + r.refusedTraces === 0) return;
    this.onRefused("warn", `${this.what(r)} were refused at the buffers' cap (${num(this.pending.maxPending)} of each) before this flush wrote the rest, and ${LOST}`, r);
  }
}

/**
 * What a stop says of the rows `pending` refused at its cap since the store opened (`UnwrittenAtClose.refused`):
 * undefined when none; `writesTo` names where writes failed (`/data/switchyard.db`, `PostgreSQL`).
 */
export function refusedAtClose(pending: PendingWrites, writesTo: string): UnwrittenAtClose["refused"] {
  if (pending.refusedUsage + pending.refusedTraces === 0) return undefined;
  return { usage: pending.refusedUsage, traces: pending.refusedTraces, while: `at the store's cap of ${num(pending.maxPending)} waiting rows of each while writes to ${writesTo} failed` };
}
