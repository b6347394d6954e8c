/**
 * Account-state writes the embedded store refused, written again later (SPEC 6.3's locks and cooldowns
 * are kept across restarts through the store). The embedded store writes a lock or a cooldown through
 * as it is set (src/store/sqlite/account-state.ts); on a full disk that write throws (SQLITE_FULL), and
 * the registry carried on from memory: the next re-read of the state (10 s) replaced memory with the
 * store's rows, without it, and a restart after space was freed had forgotten the lock.
 *
 * The same holds for a removed account/model pairing (`removeModel`, SPEC 6.3's 24 h removal) and a
 * provider circuit (`setCircuit` / `clearCircuit`): written once, a refused one was forgotten at the next
 * re-read too (since session 42 they wait here as well); and for the delete of an account's quota windows
 * when its key or login changed (`clearQuotas`, row `quotas␀ACCOUNT`): refused once, the old windows came
 * back at the next re-read (since session 45 it waits here too).
 *
 * Here each refused write is kept under its row's key (`lock␀ACCOUNT`, `cooldown␀ACCOUNT␀MODEL`,
 * `cooldowns␀ACCOUNT` for all of an account's, `removed␀ACCOUNT␀MODEL` or `removed␀ACCOUNT` for all of an
 * account's, `circuit␀PROVIDER`; the kind first, the id second, {@link RetryWrites.forgetAccount},
 * {@link RetryWrites.forget}) with what it did to memory. Only the newest write of a row is kept (a later
 * write of the same row replaces it and goes last: an old state is never written over a newer one). The rows
 * of one kind and one id (an account's lock, its cooldowns, its removals; a provider's circuit) form a
 * line ({@link lineOf}): within a line the writes go in the order they were made, and one that fails
 * again holds back the later ones of that line only; other lines' writes go on (until session 43 every
 * waiting write was held back by the first that failed, so a row the store kept refusing held back
 * every later lock, cooldown, removal and circuit). Each waiting write:
 * - is written again before the next write of account state, before each re-read of the state
 *   (src/accounts/account-list.ts), and at a stop (src/stop-gateway.ts); a write made while an earlier
 *   write of its line waits is queued behind it;
 * - while it waits, what it did to memory is done again after each re-read ({@link RetryWrites.reapply}),
 *   so the lock holds in memory too; the removed pairings and the circuits are not replaced by a re-read
 *   where a write of theirs waits ({@link RetryWrites.has}: removed-pairings.ts and circuits.ts `load`),
 *   so no change is announced as made elsewhere meanwhile.
 * At most {@link MAX_WAITING} writes wait: past that the oldest is dropped and counted
 * ({@link RetryWrites.dropped}; the stop counts it lost with those still waiting).
 * Only for a store of this instance alone (not a shared PostgreSQL, where another instance may have
 * changed the row since: there a failed write is left to the periodic re-read, as before).
 */
import type { Store } from "../store/types.ts";

/** Writes kept waiting at most; past it the oldest is dropped (and counted). Rows are per account, model and provider, so a gateway reaches it only with that many distinct rows refused. */
export const MAX_WAITING = 10_000;

/** One write waiting: the store call, what it did to the registry's memory (done again after a re-read), and its line. */
interface Waiting {
  write: (store: Store) => unknown;
  apply?: () => void;
  line: string;
}

/**
 * The line of a row key: its kind (`cooldowns`, all of an account's cooldowns, reads as `cooldown`) and
 * its id, e.g. `cooldown␀a1` for `cooldown␀a1␀m` and `cooldowns␀a1`. Writes of one line stay in order.
 */
export function lineOf(key: string): string {
  const [kind = "", id = ""] = key.split("\u0000");
  return (kind === "cooldowns" ? "cooldown" : kind) + "\u0000" + id;
}

/** The refused account-state writes of one registry (see the module comment). */
export class RetryWrites {
  /** By row key, in the order of their last write. */
  private readonly waiting = new Map<string, Waiting>();
  /** How many writes wait per line. */
  private readonly lines = new Map<string, number>();
  private droppedCount = 0;

  /** @param max writes kept waiting at most ({@link MAX_WAITING}; tests give fewer) */
  constructor(private readonly max = MAX_WAITING) {}

  /** How many writes wait. */
  get size(): number {
    return this.waiting.size;
  }

  /** How many waiting writes were dropped since the start for {@link MAX_WAITING} (never written: lost). */
  get dropped(): number {
    return this.droppedCount;
  }

  /**
   * Writes `write` to `store` now, or, when an earlier write of its line ({@link lineOf}) waits and fails
   * again, queues it behind that one; a write that throws is kept under `key` (replacing an older write
   * of that row). The other lines' waiting writes are written again first. `apply`: what the write did to
   * memory (done again by {@link reapply} while it waits). Never throws.
   */
  persist(store: Store, key: string, write: (store: Store) => unknown, apply?: () => void): void {
    const line = lineOf(key);
    if (this.waiting.size > 0 && this.retry(store) > 0 && this.lines.has(line)) return this.keep(key, { write, apply, line });
    try {
      write(store);
    } catch {
      this.keep(key, { write, apply, line });
    }
  }

  /**
   * Writes the waiting writes again, each line in its order up to its first write that fails again (the
   * other lines go on). Returns how many still wait. Never throws.
   */
  retry(store: Store): number {
    let held: Set<string> | undefined;
    for (const [key, w] of this.waiting) {
      if (held?.has(w.line)) continue;
      try {
        w.write(store);
      } catch {
        (held ??= new Set()).add(w.line);
        continue;
      }
      this.remove(key, w);
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
      if (id === accountId && (kind === "lock" || kind === "cooldown" || kind === "cooldowns")) this.remove(key);
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
      if (k === kind && i === id && (sub === undefined || s === sub)) this.remove(key);
    }
  }

  /**
   * Keeps `w` under `key`, last (an older write of the row goes: the newest write of a row goes last).
   * Past the cap ({@link MAX_WAITING} unless the constructor was given another) the oldest waiting write goes, counted.
   */
  private keep(key: string, w: Waiting): void {
    this.remove(key);
    this.waiting.set(key, w);
    this.lines.set(w.line, (this.lines.get(w.line) ?? 0) + 1);
    while (this.waiting.size > this.max) {
      const [oldest] = this.waiting.keys();
      this.remove(oldest!);
      this.droppedCount++;
    }
  }

  /** Drops the waiting write of `key` (`w` when known), keeping the count of its line. */
  private remove(key: string, w = this.waiting.get(key)): void {
    if (!w || !this.waiting.delete(key)) return;
    const n = (this.lines.get(w.line) ?? 1) - 1;
    if (n > 0) this.lines.set(w.line, n);
    else this.lines.delete(w.line);
  }
}
