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
 * One group per account, by the state its card shows first (src/dashboard/client/pages/accounts.tsx
 * `accountPills`, in that order): `disabled`; `held` when quarantined or locked; `cooling` when a
 * whole-account cooldown runs at `now` (ms since the epoch); `held` when its provider's circuit is open
 * or half-open; `cooling` when one of its models cools down; `ready` when eligible; else `held`. An
 * account behind an open circuit whose model also cools down is held back, as its card's first label,
 * "Circuit open", says (tryout5 read "10 cooling down · 1 held back" over 11 cards saying "Circuit
 * open"). O(accounts × cooldowns).
 */
export function accountCounts(accounts: readonly AccountStatus[], now: number): AccountCounts {
  const out: AccountCounts = { ready: 0, cooling: 0, held: 0, disabled: 0, implicit: 0 };
  for (const a of accounts) {
    if (a.source === "implicit") out.implicit++;
    const running = a.cooldowns.filter((c) => c.until > now);
    if (a.disabled) out.disabled++;
    else if (a.lock || a.reasons.some((r) => r.startsWith("credential quarantined"))) out.held++;
    else if (running.some((c) => c.model === "*")) out.cooling++;
    else if (a.circuit.state !== "closed") out.held++;
    else if (running.length > 0) out.cooling++;
    else if (a.eligible) out.ready++;
    else out.held++;
  }
  return out;
}
