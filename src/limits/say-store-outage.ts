/**
 * The two lines the shared key-limit counters (src/limits/shared-counters.ts) log about the shared
 * store, once per outage: `shared store unreachable: …` when it first fails, `shared store reachable
 * again: …` as soon as a statement sent after that answers. Statements are told apart by when they were
 * sent: one sent before the outage began that answers late (a stalled database resumed) does not end
 * it, and one sent before the store came back that fails late does not begin another. As a stall ended
 * those late answers and failures came one after another, and each flip logged a line (four of each in
 * 3 s, team-operator tryout, session 37); until session 38 a hold of 10 s of answers stood in for that,
 * so the second line came 10 s late (and a stop within those 10 s had none). The counters themselves
 * still switch at once either way (they count alone from the first failure and across instances from
 * the first answer); only the lines are kept to one pair per outage.
 */
import { monoNow } from "./quota-share.ts";

/** The unreachable / reachable-again lines of one store, logged once per outage; see the module comment. */
export class StoreOutageLines {
  /** When the unreachable line of the outage still running was logged (ms, `now`'s clock); undefined while the store answers. */
  private awaySince: number | undefined;
  /** When the last outage ended (its reachable-again line, ms, `now`'s clock); -Infinity before the first. */
  private backAt = -Infinity;

  constructor(
    private readonly log: (line: string) => void,
    private readonly now: () => number = monoNow,
  ) {}

  /**
   * A statement sent at `sentAt` (ms, `now`'s clock) failed (could not be reached, or did not answer in
   * time): logs the unreachable line, unless this outage's was logged already or the statement was sent
   * before the store last came back (a late failure of the outage that ended).
   */
  down(sentAt: number): void {
    if (this.awaySince !== undefined || sentAt < this.backAt) return;
    this.awaySince = this.now();
    this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "shared store unreachable: client key limits are counted by this instance alone until it is back" }));
  }

  /**
   * A statement sent at `sentAt` (ms, `now`'s clock) was answered: logs the reachable-again line when
   * the store was away and the statement was sent after the outage began (a late answer to one sent
   * before says nothing about the store now).
   */
  up(sentAt: number): void {
    if (this.awaySince === undefined || sentAt < this.awaySince) return;
    this.awaySince = undefined;
    this.backAt = this.now();
    this.log(JSON.stringify({ level: "info", time: Date.now(), msg: "shared store reachable again: client key limits count across instances; the use counted meanwhile is reported" }));
  }
}
