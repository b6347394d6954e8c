/**
 * What a re-read of the shared store (SPEC D-2) learns was cleared by another instance: a cooldown or
 * a lock that held here until the re-read and is not among the rows it brought. Another instance clears
 * one when a request succeeds there or an account is logged in or imported again through its admin API;
 * this instance hears of it only by the re-read its announcement triggers (about a second), and its
 * event stream (SPEC 9.4) said nothing, so an Accounts page open here kept showing the cooldown or lock.
 * The store lays this instance's own writes still on their way over what it read
 * (src/store/postgres/account-state.ts `loadAccountState`), so a cooldown or lock set here a moment
 * before is not taken for cleared. Ends that passed on the clock are published before the re-read
 * (registry `expire`) and are not among those held here.
 */

/** A cooldown (per account and model; model `*` for the whole account) as the registry holds it. */
export interface HeldCooldown {
  until: number;
  reason: string;
}

/** A whole-account lock as the registry holds it; `until` null = until lifted. */
export interface HeldLock {
  until: number | null;
  reason: string;
}

/** One state cleared elsewhere: the `account_state` change it is published as, with its account, model and reason. */
export interface ClearedElsewhere {
  change: "cooldown_end" | "unlock";
  accountId: string;
  /** The cooldown's model (`*` for the whole account); absent for a lock. */
  model?: string;
  /** "cooldown (REASON) cleared elsewhere" / "lock (REASON) cleared elsewhere". */
  reason: string;
}

/**
 * The cooldowns and locks of `before` that held at `now` (ms since the epoch) and are not in `after`
 * (cooldowns keyed `${accountId}\u0000${model}`, locks by account id). A cooldown or lock still there
 * with another end or reason was changed, not cleared: it is not listed. O(size of `before`).
 */
export function clearedElsewhere(
  before: { cooldowns: ReadonlyMap<string, HeldCooldown>; locks: ReadonlyMap<string, HeldLock> },
  after: { cooldowns: ReadonlyMap<string, HeldCooldown>; locks: ReadonlyMap<string, HeldLock> },
  now: number,
): ClearedElsewhere[] {
  const out: ClearedElsewhere[] = [];
  for (const [k, c] of before.cooldowns) {
    if (c.until <= now || after.cooldowns.has(k)) continue;
    const cut = k.indexOf("\u0000");
    out.push({ change: "cooldown_end", accountId: k.slice(0, cut), model: k.slice(cut + 1), reason: `cooldown (${c.reason}) cleared elsewhere` });
  }
  for (const [accountId, l] of before.locks) {
    if ((l.until !== null && l.until <= now) || after.locks.has(accountId)) continue;
    out.push({ change: "unlock", accountId, reason: `lock (${l.reason}) cleared elsewhere` });
  }
  return out;
}
