/**
 * One instance's share of one pool of a client key's limit, as src/limits/shared-counters.ts keeps it
 * (SPEC 9.6, D-2; the pools and how shares are refilled and reported: that module's comment).
 */
import type { KeyBudget } from "../../pipeline/ports.ts";
import type { QuotaUse } from "../store/shared.ts";
import { roundUsd } from "./dollars.ts";

/**
 * ms on a clock a step of the system clock does not move (the process's start on the wall clock plus
 * `performance.now()`): idle times, the short-refill pause and the database clock (its offset to this
 * clock, learned from every answer) read it, so a local clock stepped backwards neither refuses from
 * memory for the size of the step nor moves the windows away from the database's.
 */
export const monoNow = () => performance.timeOrigin + performance.now();

/** One instance's share of one pool (a limit of a key in one window, or its concurrency slots). */
export interface Share {
  name: string;
  /** 0 for slots. */
  windowStart: number;
  /** 0 for slots. */
  windowEnd: number;
  limit: number;
  /** Spare room kept ahead of use. */
  block: number;
  granted: number;
  /** Requests, tokens or USD used in the window; slots: held now. */
  used: number;
  /** `used` as last told to the database. */
  reported: number;
  /** Use the other instances reported in this window. */
  othersUsed: number;
  /** ms ({@link monoNow}) of the last admission or settle. */
  lastUse: number;
  /** ms ({@link monoNow}) when the database last granted less than asked; 0 = never. */
  shortAt: number;
  /** The refill or give-back in flight. */
  syncing?: Promise<void>;
  /** Admissions waiting for a refill of this share. */
  waiting: number;
  /** Tokens or USD the waiting admissions expect to spend (what the refill asks room for). */
  waitingAmount: number;
  /** tpm and budget shares: tokens or USD held by this instance's requests in flight (their expected spend). */
  reserved: number;
  /** tpm and budget shares: this instance's requests in flight that hold a reservation here. */
  holding: number;
  /** Budget shares: the key and budget they count (for `SharedKeyCounters.onOthersBudgetChange`). */
  budgetOf?: { key: string; budget: KeyBudget };
  /** The database has this instance's row of the pool (a `setQuotaShare` answered): a report updates it. */
  stored: boolean;
  /** The others' use was read at least once. */
  learned: boolean;
  /** The first read of the others' use is taken as known, raising no alert (watched at start). */
  quiet: boolean;
  /** ms ({@link monoNow}) of the last re-read of the others' use after a refusal blamed them; absent = never. */
  readAt?: number;
  /** The watch pass that last named this share's key (`SharedKeyCounters.watch`). */
  seen?: number;
  /**
   * USD budget shares: this instance's requests in the window that a model without a price served
   * (`BudgetUse.unpriced`), the figure as last told to the database, and the other instances' as last
   * reported (a window's count only grows). Told with the use, by the report each second.
   */
  unpriced: number;
  unpricedReported: number;
  othersUnpriced: number;
  /** `othersUsed + used` when {@link shown} was made; NaN = not yet. */
  shownOf: number;
  /** That sum to 12 significant digits (dollars.ts roundUsd): what readers of the use get (shared-counters.ts usedAll). */
  shown: number;
}

/** A new, empty share of a pool (nothing granted, used or read yet), last used now. */
export function newShare(name: string, windowStart: number, windowEnd: number, limit: number, block: number): Share {
  return { name, windowStart, windowEnd, limit, block, granted: 0, used: 0, reported: 0, othersUsed: 0, lastUse: monoNow(), shortAt: 0, waiting: 0, waitingAmount: 0, reserved: 0, holding: 0, stored: false, learned: false, quiet: false, unpriced: 0, unpricedReported: 0, othersUnpriced: 0, shownOf: NaN, shown: 0 };
}

/**
 * The share of pool `name` in the window from `start` to `end` in `shares` (keyed `name@start`), made
 * empty when there is none; a share of a changed limit (config reload) takes the new size from now on.
 */
export function shareAt(shares: Map<string, Share>, name: string, start: number, end: number, limit: number, block: number): Share {
  const id = `${name}@${start}`;
  let s = shares.get(id);
  if (!s) {
    s = newShare(name, start, end, limit, block);
    shares.set(id, s);
  } else if (s.limit !== limit) {
    s.limit = limit;
    s.block = block;
  }
  return s;
}

/** What a report tells the database of `s`: its use in the window so far, and its unpriced requests when it has some. */
export function reportRow(s: Share): QuotaUse {
  return s.unpriced > 0 ? { name: s.name, windowStart: s.windowStart, used: s.used, unpriced: s.unpriced } : { name: s.name, windowStart: s.windowStart, used: s.used };
}

/** Whether this instance has use of `s` (or unpriced requests) the database was not told yet. */
export function unreported(s: Share): boolean {
  return s.used !== s.reported || s.unpriced !== s.unpricedReported;
}

/**
 * A budget share's use across instances (the others' as last reported plus this instance's), the
 * figure every reader gets (budget use, budget changes and their alerts, a refusal): a USD sum kept to
 * 12 significant digits (dollars.ts roundUsd; tokens are whole and unchanged by it). The rounding is a
 * string round trip (~0.24 µs): it is kept with the sum it was made of and made again only when the sum
 * changed, so a settle rounds once per budget that its request added to, not twice per budget (review14
 * R3; docs/performance.md item 220).
 */
export function usedAll(s: Share): number {
  const sum = s.othersUsed + s.used;
  if (sum !== s.shownOf) {
    s.shownOf = sum;
    s.shown = roundUsd(sum);
  }
  return s.shown;
}
