/**
 * Account-state writes the embedded store refused, written again later (SPEC 6.3's locks and cooldowns
 * are kept across restarts through the store). The embedded store writes a lock or a cooldown through
 * as it is set (src/store/sqlite/account-state.ts); on a full disk that write throws (SQLITE_FULL), and
 * the registry carried on from memory: the next re-read of the state (10 s) replaced memory with the
 * store's rows, without it, and a restart after space was freed had forgotten the lock.
 *
 * The same holds for a removed account/model pairing (`removeModel`, SPEC 6.3's 24 h removal) and a
 * provider circuit (`setCircuit` / `clearCircuit`): written once, a refused one was forgotten at the next
 * re-read too (since session 42 they wait here as well).
 *
 * Here each refused write is kept under its row's key (`lock␀ACCOUNT`, `cooldown␀ACCOUNT␀MODEL`,
 * `cooldowns␀ACCOUNT` for all of an account's, `removed␀ACCOUNT␀MODEL` or `removed␀ACCOUNT` for all of an
 * account's, `circuit␀PROVIDER`; the kind first, the id second, {@link RetryWrites.forgetAccount},
 * {@link RetryWrites.forget}; a later write of the same row replaces it) with what it did to memory, and:
 * - is written again before the next write of account state, before each re-read of the state
 *   (src/accounts/account-list.ts), and at a stop (src/stop-gateway.ts), in the order they were made,
 *   up to the first that fails again; a write made while others wait is queued behind them;
 * - while it waits, what it did to memory is done again after each re-read ({@link RetryWrites.reapply}),
 *   so the lock holds in memory too; the removed pairings and the circuits are not replaced by a re-read
 *   where a write of theirs waits ({@link RetryWrites.has}: removed-pairings.ts and circuits.ts `load`),
 *   so no change is announced as made elsewhere meanwhile.
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

  /** Whether a write of the row `key` waits. O(1). */
  has(key: string): boolean {
    return this.waiting.size > 0 && this.waiting.has(key);
  }

  /**
   * Drops the waiting writes of the account's lock and cooldowns (they are being cleared by hand, a new
   * login or the account's removal: a lock written again after that would bring it back). Its removed
   * pairings' writes stay (a new login does not restore them).
   */
  forgetAccount(accountId: string): void {
    for (const key of [...this.waiting.keys()]) {
      const [kind, id] = key.split("\u0000");
      if (id === accountId && (kind === "lock" || kind === "cooldown" || kind === "cooldowns")) this.waiting.delete(key);
    }
  }

  /** Whether a write of a row of `kind` (`removed`, `circuit`, …) for `id` waits. O(waiting writes). */
  waitsFor(kind: string, id: string): boolean {
    if (this.waiting.size === 0) return false;
    for (const key of this.waiting.keys()) {
      const [k, i] = key.split("\u0000");
      if (k === kind && i === id) return true;
    }
    return false;
  }

  /**
   * Drops the waiting writes of the rows of `kind` (`removed`, `circuit`, …) for `id` — only the row
   * `kind␀id␀sub` when `sub` is given, else every row of `id` (a restore by hand or a circuit closed by
   * hand is written at once: a removal or an opening written again after it would bring it back).
   */
  forget(kind: string, id: string, sub?: string): void {
    for (const key of [...this.waiting.keys()]) {
      const [k, i, s] = key.split("\u0000");
      if (k === kind && i === id && (sub === undefined || s === sub)) this.waiting.delete(key);
    }
  }

  private keep(key: string, w: Waiting): void {
    this.waiting.delete(key); // the newest write of a row goes last
    this.waiting.set(key, w);
  }
}
