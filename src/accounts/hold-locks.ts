/**
 * Whole-account locks (SPEC 6.3: a 401 or credential 403 on an API key, quota exhausted, a ban, a 402):
 * until when (null: until changed), why, and the fingerprint of the API key the lock was set under, so
 * that a lock "until changed" ends when the key changes ({@link AccountLocks.dropReplaced}). The
 * registry's memory of them: held here, written through to the store, published (`lock`, `unlock`,
 * with what to do about them, lock-advice.ts) and timed through the registry's hooks
 * ({@link LockHooks}), replaced by each re-read of the account state ({@link AccountLocks.load}).
 */
import type { Account } from "../../pipeline/ports.ts";
import type { AccountStateEvent } from "../events/bus.ts";
import type { AccountState, Store } from "../store/types.ts";
import { lockedElsewhere } from "./cleared-elsewhere.ts";
import { replacedLocks, unlockAdvice, type HeldLockState } from "./lock-advice.ts";

/** What the locks need from the registry that holds them. */
export interface LockHooks {
  /** The registry's clock, ms since the epoch. */
  now(): number;
  /**
   * Writes through to the store. `key` names the row (`lock␀ACCOUNT`, …) and `apply` what the write did
   * to memory: a write the embedded store refuses (a full disk) is written again later and `apply` done
   * again after each re-read meanwhile (retry-writes.ts). Never throws.
   */
  persist(write: (store: Store) => unknown, key?: string, apply?: () => void): void;
  /** Arms the registry's end timer for a state ending at `until` (ms since the epoch). */
  arm(until: number): void;
  /** Publishes an account state change (SPEC 9.4) when somebody listens. */
  publish(account: string, provider: string | undefined, change: string, extra?: Omit<Partial<AccountStateEvent>, "type" | "account" | "change">): void;
  /** The provider of an account the registry knows, else undefined. */
  providerOf(accountId: string): string | undefined;
  /** The registry's accounts (the configuration's and the store's), in priority order. */
  accounts(): readonly Account[];
  /** The fingerprint of the account's credential (quarantines.ts). */
  fingerprint(account: Account): string | undefined;
  /** The registry's `episodeEnded` option, when given: the account's lock episode ended here (its alerts' claims end); never throws. */
  episodeEnded(accountId: string): Promise<void> | undefined;
}

/** The whole-account locks of one registry, keyed by account id. */
export class AccountLocks {
  private readonly map = new Map<string, HeldLockState>();
  private stateRead = false; // whether the state was read once (the first read's locks are no news)

  constructor(private readonly hooks: LockHooks) {}

  /** Every lock held, ended ones included until the next re-read drops them. */
  get all(): ReadonlyMap<string, HeldLockState> {
    return this.map;
  }

  /** The account's lock, ended or not; undefined when none is held. */
  get(accountId: string): HeldLockState | undefined {
    return this.map.get(accountId);
  }

  /** Whether the account holds a lock, ended or not. */
  has(accountId: string): boolean {
    return this.map.has(accountId);
  }

  /** Forgets the account's lock in memory only (the store's was cleared by the caller). */
  delete(accountId: string): void {
    this.map.delete(accountId);
  }

  /** Replaces every lock with the store's rows (a re-read); {@link afterRead} follows once the rest of the state is read. */
  load(rows: AccountState["locks"]): void {
    this.map.clear();
    for (const l of rows) this.map.set(l.accountId, { until: l.until, reason: l.reason, fingerprint: l.fingerprint });
  }

  /**
   * After a re-read: publishes `lock` for each lock another instance set (one not in `before`, the locks
   * held before the re-read, given only while somebody listens; not at the first read), as the instance
   * that set it did: the same alert. Replaced locks are dropped first ({@link dropReplaced}).
   */
  afterRead(before: ReadonlyMap<string, HeldLockState> | undefined): void {
    const locked = before && this.stateRead ? lockedElsewhere(before, this.map, this.hooks.now()) : []; // published as set() does: the same alert
    this.stateRead = true;
    this.dropReplaced();
    for (const [id, l] of locked) if (this.map.get(id) === l) this.hooks.publish(id, this.hooks.providerOf(id), "lock", { reason: l.reason, ...(l.until !== null ? { until: l.until } : {}), advice: unlockAdvice(id, this.hooks.accounts().find((a) => a.id === id)?.credential.type ?? "api_key", l.until) });
  }

  /**
   * Locks the whole account (SPEC 6.3) until `until` (null: until changed) in memory and the store, with
   * the fingerprint of the API key it holds ({@link dropReplaced}), and publishes `lock` with what to
   * do about it (lock-advice.ts).
   */
  set(account: Account, until: number | null, reason: string, now: number): void {
    const fingerprint = account.credential.type === "api_key" ? this.hooks.fingerprint(account) : undefined;
    const held: HeldLockState = { until, reason, fingerprint };
    this.map.set(account.id, held);
    this.hooks.persist((st) => st.setLock({ accountId: account.id, until, reason, since: now, fingerprint: fingerprint ?? null }), lockRow(account.id), () => this.map.set(account.id, held));
    if (until !== null) this.hooks.arm(until);
    this.hooks.publish(account.id, account.providerId, "lock", { reason, ...(until !== null ? { until } : {}), advice: unlockAdvice(account.id, account.credential.type, until) });
  }

  /**
   * SPEC 6.3 "until changed": clears each lock set under an API key its account no longer holds (the key
   * was replaced in the config file: a reload, or a restart), in memory and the store, publishing
   * `unlock` "lock (REASON) cleared: the account's key changed". Run after each new account list and
   * each re-read of the state.
   */
  dropReplaced(): void {
    for (const [id, l] of replacedLocks(this.map, this.hooks.accounts(), (a) => this.hooks.fingerprint(a))) {
      this.map.delete(id);
      void this.hooks.episodeEnded(id);
      this.hooks.persist((st) => st.clearLock(id), lockRow(id), () => this.map.delete(id));
      this.hooks.publish(id, this.hooks.providerOf(id), "unlock", { reason: `lock (${l.reason}) cleared: the account's key changed` });
    }
  }

  /** The end timer's scan: publishes `unlock` for each lock that ended in (from, now] and arms for those still to end. */
  expire(from: number, now: number): void {
    for (const [accountId, l] of this.map) {
      if (l.until === null) continue;
      if (l.until > from && l.until <= now) this.hooks.publish(accountId, this.hooks.providerOf(accountId), "unlock", { reason: `lock (${l.reason}) ended` });
      else if (l.until > now) this.hooks.arm(l.until);
    }
  }

  /** The locks that hold at `now`, for `accounts status` (copies). */
  live(now: number): Array<HeldLockState & { accountId: string }> {
    return [...this.map].filter(([, l]) => l.until === null || l.until > now).map(([accountId, l]) => ({ accountId, ...l }));
  }
}

/** The row key of an account's lock for the writes kept to be written again (retry-writes.ts). */
function lockRow(accountId: string): string {
  return "lock\u0000" + accountId;
}
