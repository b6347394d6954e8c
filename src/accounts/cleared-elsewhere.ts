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
  /** The REASON the cooldown or lock held for. */
  held: string;
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
    out.push({ change: "cooldown_end", accountId: k.slice(0, cut), model: k.slice(cut + 1), reason: `cooldown (${c.reason}) cleared elsewhere`, held: c.reason });
  }
  for (const [accountId, l] of before.locks) {
    if ((l.until !== null && l.until <= now) || after.locks.has(accountId)) continue;
    out.push({ change: "unlock", accountId, reason: `lock (${l.reason}) cleared elsewhere`, held: l.reason });
  }
  return out;
}

/**
 * The locks of `after` that hold at `now` and were not in `before`: set by another instance (its 401,
 * exhausted quota, ban or 402) and learnt by this re-read, which publishes `lock` for them as the
 * instance that set it did (same reason, end and advice), so an alert raised from it is the same alert
 * and the webhook gets it once (src/alerts/alert-claim.ts; newuser12a G7). A lock still there with
 * another end or reason is not listed. O(size of `after`).
 */
export function lockedElsewhere<L extends HeldLock>(before: ReadonlyMap<string, HeldLock>, after: ReadonlyMap<string, L>, now: number): Array<[string, L]> {
  const out: Array<[string, L]> = [];
  for (const [accountId, l] of after) if ((l.until === null || l.until > now) && !before.has(accountId)) out.push([accountId, l]);
  return out;
}

/**
 * Cooldowns and locks this instance clears itself through its admin API (a new login or import, an
 * account removed): it writes the store, then re-reads it, and that re-read (or a periodic one landing
 * meanwhile) dropped them as if another instance had, so its events said "cleared elsewhere" for what
 * happened here (until 2026-12-04). While such a clear is under way for an account, what a re-read
 * drops of that account is kept for it ({@link LiftsHere.keep}), and the clear announces it, with what
 * the account held when it was asked, under its own reason ({@link LiftsHere.around}).
 */
export class LiftsHere {
  /** Clears under way per account id (two may overlap). */
  private readonly lifting = new Map<string, number>();
  /** What re-reads dropped of those accounts meanwhile, keyed by change, account and model. */
  private readonly dropped = new Map<string, ClearedElsewhere>();

  /** Whether `c`, found by a re-read, belongs to a clear under way here (then it is kept for it, not published). O(1). */
  keep(c: ClearedElsewhere): boolean {
    if (this.lifting.size === 0 || !this.lifting.has(c.accountId)) return false;
    this.dropped.set(clearKey(c), c);
    return true;
  }

  /**
   * Runs `work` (the store's writes and the re-read after them) for `accountId`, whose cooldowns and locks
   * held when asked are `asked`: what to announce afterwards, `asked` and what re-reads dropped of the
   * account meanwhile, once each, without what `stillHeld` says is held again. @throws what `work` throws
   * (nothing is announced then).
   */
  async around(accountId: string, asked: readonly ClearedElsewhere[], work: () => Promise<void>, stillHeld: (c: ClearedElsewhere) => boolean): Promise<ClearedElsewhere[]> {
    this.lifting.set(accountId, (this.lifting.get(accountId) ?? 0) + 1);
    const out = new Map<string, ClearedElsewhere>();
    try {
      await work();
      for (const c of asked) out.set(clearKey(c), c);
    } finally {
      const n = (this.lifting.get(accountId) ?? 1) - 1;
      if (n > 0) this.lifting.set(accountId, n);
      else this.lifting.delete(accountId);
      for (const [k, c] of this.dropped) {
        if (c.accountId !== accountId) continue;
        this.dropped.delete(k);
        out.set(k, c);
      }
    }
    return [...out.values()].filter((c) => !stillHeld(c));
  }
}

function clearKey(c: ClearedElsewhere): string {
  return `${c.change}\u0000${c.accountId}\u0000${c.model ?? ""}`;
}
