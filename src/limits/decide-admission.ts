/**
 * The admission decision of the shared key counters (src/limits/shared-counters.ts `admit`, SPEC 9.6
 * with D-2), taken from memory once the shares a request needs are at hand: refuse with the longest
 * wait, or count the request on every share. No I/O: the caller refills what needs it afterwards.
 */
import type { LimitRefusal } from "../../pipeline/ports.ts";
import { monoNow, type Share } from "./quota-share.ts";
import { hasRoom, isRequests } from "./weigh-shares.ts";

/** One limit a request needs: its share, the refusal it would get, and what it expects to spend there. */
export type Need = [share: Share, refuse: (s: Share) => LimitRefusal, amount: number];

/** What `admit` hands to `settle`. */
export interface Ticket {
  /** The concurrency share a slot was taken from. */
  slots?: Share;
  /** tpm and budget shares the request holds its expected spend on, and how much. */
  holds?: Array<[Share, number]>;
}

/**
 * Decides from memory: refuses with the longest wait (a tpm or budget share not used up whose room
 * requests in flight hold: Retry-After 1 s, `inFlight` here or `heldElsewhere`), or counts the request
 * (a slot taken, a request counted, tokens/USD held on tpm and budget shares as its expected spend),
 * every share then last used now.
 * @param degraded the instance counts alone (against the whole limit, not its share)
 * @param inFlightHere the key's requests in flight on this instance (named by an `inFlight` refusal)
 */
export function decideAdmission(shares: readonly Need[], degraded: boolean, inFlightHere: number | undefined): { ok: true; ticket: Ticket } | { ok: false; refusal: LimitRefusal } {
  let refusal: LimitRefusal | undefined;
  for (const [s, refuse, amount] of shares) {
    if (hasRoom(s, amount, degraded)) continue;
    const r = refuse(s);
    if (s.windowEnd !== 0 && !isRequests(s) && s.othersUsed + s.used < s.limit) {
      // tpm or a budget not reached yet: requests in flight hold the rest, here (one ends soon) or on
      // other instances (their spare returns when they end, see needsSync): retry shortly.
      r.retryAfterMs = 1000;
      r.resetsAt = undefined;
      if (s.holding > 0) r.inFlight = inFlightHere ?? s.holding;
      else r.heldElsewhere = true;
    }
    if (!refusal || r.retryAfterMs > refusal.retryAfterMs) refusal = r;
  }
  if (refusal) return { ok: false, refusal };
  const at = monoNow();
  let slots: Share | undefined;
  let holds: Array<[Share, number]> | undefined;
  for (const [s, , amount] of shares) {
    s.lastUse = at;
    if (s.windowEnd === 0) {
      s.used++;
      slots = s;
    } else if (isRequests(s)) s.used++;
    else {
      s.holding++;
      s.reserved += amount;
      (holds ??= []).push([s, amount]);
    }
  }
  return { ok: true, ticket: { slots, holds } };
}
