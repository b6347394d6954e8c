/**
 * The two lines the shared key-limit counters (src/limits/shared-counters.ts) log about the shared
 * store, once per outage: `shared store unreachable: …` when it first fails, `shared store reachable
 * again: …` once it has answered for a hold without failing again. The counters themselves switch at
 * once either way (they count alone from the first failure and across instances from the first
 * answer); only the lines wait. Without the hold, statements that were already waiting when a stall
 * ended failed one after another while others were answered, and the pair was logged four times each
 * in 3 s (team-operator tryout, session 37), where README says an outage is logged once.
 */
import { SHARED_ANSWER_MS } from "../store/shared.ts";

/** How long the store must answer without a failure before "reachable again" is logged, ms (a statement's longest wait, `SHARED_ANSWER_MS`). */
export const BACK_HOLD_MS = SHARED_ANSWER_MS;

/** The unreachable / reachable-again lines of one store, logged once per outage; see the module comment. */
export class StoreOutageLines {
  /** Whether the unreachable line was logged and its reachable-again line not yet. */
  private away = false;
  /** When the store answered first since its last failure (ms, `now`'s clock); undefined while it fails or is fine. */
  private backSince: number | undefined;

  constructor(
    private readonly log: (line: string) => void,
    private readonly holdMs = BACK_HOLD_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The store failed (could not be reached, or did not answer in time): logs the unreachable line unless this outage's was logged already. */
  down(): void {
    this.backSince = undefined;
    if (this.away) return;
    this.away = true;
    this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "shared store unreachable: client key limits are counted by this instance alone until it is back" }));
  }

  /** The store answered: the hold starts (when it is not running already). */
  up(): void {
    if (this.away && this.backSince === undefined) this.backSince = this.now();
  }

  /** Logs the reachable-again line once the store has answered for the hold without failing; call it regularly (each report tick). */
  check(): void {
    if (!this.away || this.backSince === undefined || this.now() - this.backSince < this.holdMs) return;
    this.away = false;
    this.backSince = undefined;
    this.log(JSON.stringify({ level: "info", time: Date.now(), msg: "shared store reachable again: client key limits count across instances; the use counted meanwhile is reported" }));
  }
}
