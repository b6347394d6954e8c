/**
 * The Accounts page header's counts ("5 accounts · 2 ready · 2 cooling down · 1 held back · 1
 * disabled"): each account in exactly one group, so the groups add up to the accounts listed. Until
 * 2026-12-05 "held back" was every account not eligible, which counted a disabled account (and one
 * whose whole account cools down) twice (newuser12b H17: 6 of 5).
 */
import type { AccountStatus } from "./types.ts";

/** How many accounts are in each group, and how many of them are implicit (keyless). */
export interface AccountCounts {
  ready: number;
  cooling: number;
  held: number;
  disabled: number;
  implicit: number;
}

/**
 * One group per account, the first that applies: `disabled`; `cooling` (any cooldown of the account or
 * of one of its models runs at `now`, ms since the epoch); `ready` (eligible and its provider's circuit
 * closed); else `held` (quarantined, locked, circuit open or half-open). O(accounts × cooldowns).
 */
export function accountCounts(accounts: readonly AccountStatus[], now: number): AccountCounts {
  const out: AccountCounts = { ready: 0, cooling: 0, held: 0, disabled: 0, implicit: 0 };
  for (const a of accounts) {
    if (a.source === "implicit") out.implicit++;
    if (a.disabled) out.disabled++;
    else if (a.cooldowns.some((c) => c.until > now)) out.cooling++;
    else if (a.eligible && a.circuit.state === "closed") out.ready++;
    else out.held++;
  }
  return out;
}
