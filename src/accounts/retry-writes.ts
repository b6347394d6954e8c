/**
 * Account-state writes the embedded store refused, written again later (SPEC 6.3's locks and cooldowns
 * are kept across restarts through the store). The embedded store writes a lock or a cooldown through
 * as it is set (src/store/sqlite/account-state.ts); on a full disk that write throws (SQLITE_FULL), and
 * the registry carried on from memory: the next re-read of the state (10 s) replaced memory with the
 * store's rows, without it, and a restart after space was freed had forgotten the lock.
 *
 * Here each refused write is kept under its row's key (`lock␀ACCOUNT`, `cooldown␀ACCOUNT␀MODEL`,
 * `cooldowns␀ACCOUNT` for all of an account's; the account id second, {@link RetryWrites.forgetAccount}; a
 * later write of the same row replaces it) with what it did to memory, and:
 * - is written again before the next write of account state, before each re-read of the state
 *   (src/accounts/account-list.ts), and at a stop (src/stop-gateway.ts), in the order they were made,
 *   up to the first that fails again; a write made while others wait is queued behind them;
 * - while it waits, what it did to memory is done again after each re-read ({@link RetryWrites.reapply}),
 *   so the lock holds in memory too.
 * Only for a store of this instance alone (not a shared PostgreSQL, where another instance may have
 * changed the row since: there a failed write is left to the periodic re-read, as before).
 */
import type { Store } from "../store/types.ts";

/** One write waiting: the store call, and what it did to the registry's memory (done again after a re-read). */
interface Waiting {
  write: (store: Store) => unknown;
  apply?: () => void;
}

/** The refused account-state writes of one registry (see the module comment). */
export class RetryWrites {
  /** By row key, in the order of their last write. */
  private readonly waiting = new Map<string, Waiting>();

  /** How many writes wait. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Writes `write` to `store` now, or, when writes wait and one of them fails again, queues it behind
   * them; a write that throws is kept under `key` (replacing an older write of that row). `apply`: what
   * the write did to memory (done again by {@link reapply} while it waits). Never throws.
   */
  persist(store: Store, key: string, write: (store: Store) => unknown, apply?: () => void): void {
    if (this.waiting.size > 0 && this.retry(store) > 0) return this.keep(key, { write, apply });
    try {
      write(store);
    } catch {
      this.keep(key, { write, apply });
    }
  }

  /** Writes the waiting writes again, in order, up to the first that fails again. Returns how many still wait. Never throws. */
  retry(store: Store): number {
    for (const [key, w] of this.waiting) {
      try {
        w.write(store);
      } catch {
        break;
      }
      this.waiting.delete(key);
    }
    return this.waiting.size;
  }

  /** Does again what each waiting write did to memory, in order (after a re-read replaced memory with the store's rows). */
  reapply(): void {
    for (const w of this.waiting.values()) w.apply?.();
  }

  /**
   * Drops the waiting writes of the account's rows (its lock and cooldowns are being cleared by hand, a
   * new login or the account's removal: a lock written again after that would bring it back).
   */
  forgetAccount(accountId: string): void {
    for (const key of [...this.waiting.keys()]) if (key.split("\u0000")[1] === accountId) this.waiting.delete(key);
  }

  private keep(key: string, w: Waiting): void {
    this.waiting.delete(key); // the newest write of a row goes last
    this.waiting.set(key, w);
  }
}
