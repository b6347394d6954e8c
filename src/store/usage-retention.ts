/**
 * Usage retention (`settings.usage_retention_days`, README "Configuration"): the usage rows (one per
 * request: what `usage`, `calls`, the dashboard and the cost figures read) older than that many days are
 * deleted at start (or at the reload that sets or lowers the setting) and then every
 * {@link RETENTION_EVERY_MS}, oldest first, in batches of {@link RETENTION_BATCH} rows, each batch
 * followed by a pause at least as long as it took ({@link RETENTION_MIN_PAUSE_MS} at least): a first
 * prune of millions of rows never holds SQLite's one writer (or the event loop: bun:sqlite is
 * synchronous) for more than one batch at a time, nor for more than half of the time it runs (back to
 * back, the batches of a big prune held a request that needs several event-loop turns a batch per turn:
 * review16 R2 measured 355 ms per 5,000-row delete on a busy machine). Off by default (every row kept): the rows are the cost history (SPEC 9.5) and
 * least-used's lifetime counts (SPEC 5.1), which SPEC does not bound, unlike the route traces (O-2, a
 * ring of `trace_ring_size`). With several instances on one PostgreSQL each one prunes the shared table
 * (a row is deleted once; the others find it gone).
 *
 * The rounds are an Effect schedule (`Schedule.spaced`), loaded only once the setting is set
 * (src/memory/lazy-effect.ts: a gateway that keeps everything never loads Effect for it).
 */
import type * as Fiber from "effect/Fiber";
import { loadEffect, type EffectModules } from "../memory/lazy-effect.ts";
import type { UsageStore } from "./usage.ts";

/** Time between two rounds, ms (the first runs when the setting is first seen: at start, or the reload that sets it). */
export const RETENTION_EVERY_MS = 60 * 60_000;
/**
 * Rows deleted per statement at most: 1,000. Measured for 5,000 rows and their index entries on SQLite
 * (2026-12-05): a median of 5–11 ms on a 1M-row table at load ~15, 355 ms on a 400k-row table at load
 * ~21 (review16); a batch of 1,000 holds the writer about a fifth of that.
 */
export const RETENTION_BATCH = 1_000;
/** The shortest pause after a batch, ms (the pause is otherwise as long as the batch took). */
export const RETENTION_MIN_PAUSE_MS = 5;
const DAY_MS = 86_400_000;

/** What {@link UsageRetention} needs. */
export interface UsageRetentionOptions {
  store: Pick<UsageStore, "pruneUsage">;
  /** The setting now (read at each round: a reload applies from the next round); undefined keeps every row. */
  days: () => number | undefined;
  /** Wall clock, ms since the epoch (rows' `ts` are on it). */
  now: () => number;
  /** One JSON line per call (SPEC O-4). */
  log: (line: string) => void;
  /** Default {@link RETENTION_EVERY_MS} (tests: `SWITCHYARD_RETENTION_MS`). */
  everyMs?: number;
  /** Default {@link RETENTION_BATCH}. */
  batch?: number;
}

/** Deletes usage rows older than the retention setting, periodically (see the module comment). */
export class UsageRetention {
  private running?: Promise<{ E: EffectModules; fiber: Fiber.RuntimeFiber<unknown, never> }>;
  private stopped = false;
  private warned = false;
  /** The setting when {@link ensure} last saw it (a lower one prunes at once). */
  private lastDays: number | undefined;
  /** A round is deleting: another asked meanwhile (a lowered setting's) runs right after it. */
  private inRound = false;
  private again = false;

  constructor(private readonly o: UsageRetentionOptions) {}

  /**
   * Starts the rounds if the setting is set and they have not started, and runs one at once when the
   * setting went down since the last call (call at start and after every configuration change;
   * idempotent otherwise). Never throws.
   */
  ensure(): void {
    const days = this.o.days();
    if (this.stopped || days === undefined) return;
    const lowered = this.lastDays !== undefined && days < this.lastDays;
    this.lastDays = days;
    if (this.running) {
      if (lowered) void this.round(); // a reload that keeps fewer days applies now, not at the next period
      return;
    }
    const every = Math.max(1, Math.floor(this.o.everyMs ?? RETENTION_EVERY_MS));
    this.running = loadEffect().then((E) => {
      const { Duration, Effect, Schedule } = E;
      const round = Effect.promise(() => this.round());
      return { E, fiber: Effect.runFork(Effect.repeat(round, Schedule.spaced(Duration.millis(every)))) };
    });
    this.running.catch(() => {});
  }

  /**
   * One round: deletes the rows older than the setting's days, a batch at a time, until a batch finds
   * fewer rows than it may delete. Logs how many it deleted (when any). Never rejects: a store that is
   * away is logged once and tried again at the next round.
   * @returns rows deleted
   */
  async round(): Promise<number> {
    const days = this.o.days();
    if (days === undefined) return 0;
    if (this.inRound) {
      this.again = true;
      return 0;
    }
    this.inRound = true;
    const batch = Math.max(1, Math.floor(this.o.batch ?? RETENTION_BATCH));
    const before = this.o.now() - days * DAY_MS;
    let total = 0;
    try {
      while (!this.stopped) {
        const started = performance.now();
        const n = await this.o.store.pruneUsage(before, batch);
        total += n;
        if (n < batch) break;
        // requests and the usage flush run between batches, at least half of the time
        const took = performance.now() - started;
        await new Promise((r) => setTimeout(r, Math.max(RETENTION_MIN_PAUSE_MS, took)));
      }
      this.warned = false;
    } catch (e) {
      if (!this.warned && !this.stopped) {
        this.warned = true;
        this.o.log(JSON.stringify({ level: "warn", time: this.o.now(), msg: "usage retention: could not delete old usage rows; trying again at the next round", error: e instanceof Error ? e.message : String(e) }));
      }
    }
    this.inRound = false;
    if (total > 0) this.o.log(JSON.stringify({ level: "info", time: this.o.now(), msg: `usage retention: deleted ${total} usage rows older than ${days} days (settings.usage_retention_days)`, deleted: total, before }));
    if (this.again && !this.stopped) {
      this.again = false;
      return total + (await this.round());
    }
    return total;
  }

  /** Ends the rounds (a round in progress stops after its current batch). Never throws. */
  async stop(): Promise<void> {
    this.stopped = true;
    const r = await this.running?.catch(() => undefined);
    if (r) await r.E.Effect.runPromise(r.E.Fiber.interrupt(r.fiber)).catch(() => {});
  }
}
