/**
 * Judging one share of a key limit's pool from memory (src/limits/shared-counters.ts, SPEC 9.6 with
 * D-2; the pools, their blocks and refills: that module's comment): how large a share's block is,
 * whether it admits a request now, whether it should talk to the database now. Pure functions of the
 * share (and of whether the instance counts alone); no I/O.
 */
import { monoNow, type Share } from "./quota-share.ts";

/** A share the database could not refill is refused from memory this long before asking again, ms. */
export const SHORT_RETRY_MS = 1000;

/** The block of a pool of `limit` (the spare room a share keeps ahead of use): an eighth of it, at least one token; requests and slots whole. */
export function blockOf(limit: number, unit: "requests" | "tokens" | "usd"): number {
  if (unit === "requests") return Math.floor(limit / 8);
  if (unit === "tokens") return Math.max(1, limit / 8);
  return limit / 8;
}

/** rpm shares count whole requests (the others tokens or USD). */
export function isRequests(s: Share): boolean {
  return s.name.endsWith(":rpm");
}

/** The database could not grant all that was asked less than {@link SHORT_RETRY_MS} ago. */
export function recentlyShort(s: Share): boolean {
  return s.shortAt !== 0 && monoNow() - s.shortAt < SHORT_RETRY_MS;
}

/** The database said the pool was short less than a second ago: refuse from memory. */
export function knownShort(s: Share): boolean {
  // Slots free when a request anywhere ends: a request finding none always asks (exact concurrency).
  return s.windowEnd !== 0 && recentlyShort(s);
}

/**
 * Whether `s` admits one more request now, expected to spend `amount` there (tpm and budgets). With
 * none of this instance's requests in flight on a tpm or budget share, a request is admitted while
 * the share has room and the window's known use is under the limit; with some in flight, only when
 * their reservations, its own and the window's use fit the share and the limit. `degraded`: the
 * instance counts alone (the whole limit less the others' use as last known; slots: the whole limit).
 */
export function hasRoom(s: Share, amount: number, degraded: boolean): boolean {
  const granted = !degraded ? s.granted : s.windowEnd === 0 ? s.limit : Math.max(s.granted, s.limit - s.othersUsed);
  if (s.windowEnd === 0 || isRequests(s)) return s.used + 1 <= granted;
  if (s.holding === 0) return s.used < granted && s.othersUsed + s.used < s.limit;
  const held = s.used + s.reserved;
  return held < granted && held + amount <= granted && s.othersUsed + held + amount <= s.limit;
}

/** Whether `s` should talk to the database now: spare under half a block, an overrun, or slots to give back. */
export function needsSync(s: Share): boolean {
  // Admissions waiting for a refill decide first (a give-back now would take their room).
  if (s.syncing || s.waiting > 0) return false;
  // tpm and budgets: a window used up as known here, or a share used up (the pool may be), is told at
  // once (not at the next second's report), so another instance refuses the next request with the
  // window's use and reset, not as held elsewhere.
  if (s.windowEnd !== 0 && !isRequests(s) && s.used !== s.reported && (s.othersUsed + s.used >= s.limit || s.granted - s.used - s.reserved < s.block / 2)) return true;
  const spare = s.granted - s.used - s.reserved;
  if (s.windowEnd === 0) return spare > s.block || (spare < s.block && !recentlyShort(s));
  if (s.used > s.granted) return s.used !== s.reported;
  // More than two blocks spare (reservations of ended requests): the excess goes back to the pool,
  // where other instances may be waiting for it.
  if (!isRequests(s) && spare > 2 * s.block) return true;
  return spare < s.block / 2 && !recentlyShort(s) && s.granted < s.limit;
}
