/**
 * The coordination role of the store (SPEC D-2, 9.6): what several instances on one database must agree
 * on beyond rows — concurrency leases, fixed-window counters, claims (first claimer wins), one OAuth
 * refresh at a time per account, and a feed of changes other instances made. The embedded SQLite store serves one instance, so it
 * answers from process memory with the same contract; the PostgreSQL store answers across instances.
 * Conventions: see `./types.ts`.
 */
import type { Awaitable } from "./types.ts";

/** What another instance changed, announced through the shared database (LISTEN/NOTIFY). */
export type StoreChange =
  /** Client keys created or revoked (the store refreshes its own key cache before announcing). */
  | "keys"
  /** Accounts, credentials, credential overrides or discovered models. */
  | "accounts"
  /** Cooldowns, locks, removed pairings, quarantines, circuits, bindings or quota windows. */
  | "state"
  /** A lease was released: a request waiting for a slot may try again. */
  | "leases"
  /** Anything may have changed (notifications were missed: the listener reconnected, the database came back). */
  | "all";

/**
 * Another instance's values of the configuration the instances share (`SharedStore.otherInstanceConfigs`;
 * src/shared-config.ts makes and compares them).
 */
export interface InstanceConfig {
  instanceId: string;
  /** How it is named to an operator (its URL). */
  label: string;
  /** Path (`keys.ci.limits`, `settings.pricing`) → the value as JSON text; never a secret. */
  parts: Record<string, string>;
  /** ms since the epoch (the database's clock) of its last write. */
  updatedAt: number;
  /**
   * Whether its `keys.NAME.secret` fingerprints are salted with the database's salt, as this build's
   * are (schema 17 on; review15 R7): false for a row an instance of an earlier version wrote during a
   * rolling upgrade (it writes no `origin`), whose fingerprints cannot be compared with this build's.
   */
  saltedPerDatabase: boolean;
}

/** One fixed window of a counter after an `addToCounter`. */
export interface CounterWindow {
  /** Sum of every amount added in this window, by every instance, this call's included. */
  total: number;
  /** ms since the epoch when the window ends (and the count starts again from 0). */
  resetAt: number;
}

/**
 * One instance's share of a pool (SPEC 9.6 key limits across instances): the pool is `limit` units of
 * one counter name in one fixed window (requests, tokens or USD), or `limit` concurrency slots.
 */
export interface QuotaShareRequest {
  /** The pool's name, e.g. `key:NAME:rpm`. */
  name: string;
  /** ms since the epoch when the window starts; 0 for concurrency slots. */
  windowStart: number;
  /** ms since the epoch when the window ends; 0 for concurrency slots (held, not used up). */
  windowEnd: number;
  /** The pool's size. */
  limit: number;
  /** The share this instance wants to hold now (more to refill, less to give back). */
  target: number;
  /**
   * What this instance has used of the window so far (reported with the call; slots: ignored). A
   * window's use only grows: a value below the one recorded (a statement sent earlier that reached the
   * database later) leaves the recorded one.
   */
  used: number;
}

/** The answer to a {@link QuotaShareRequest}. */
export interface QuotaShare {
  /** This instance's share now: `target`, or what was left of the pool when that was less (≥ 0). */
  granted: number;
  /** Use reported by every other instance in this window (slots: 0). */
  othersUsed: number;
  /** The database's clock, ms since the epoch (windows are its windows). */
  now: number;
}

/** Use of one share, reported in a batch. */
export interface QuotaUse {
  name: string;
  windowStart: number;
  used: number;
  /**
   * A USD budget's share: the requests of the window that a model without a price served (pipeline/ports.ts
   * BudgetUse `unpriced`), counted like `used` (a window's total so far, which only grows). Absent: left
   * as it was (reported) or 0 (answered).
   */
  unpriced?: number;
}

/**
 * A key budget window's use that a stopping instance could not report while the database was away
 * (`SharedKeyCounters.close`), for the store to keep ({@link SharedStore.keepUnreportedUse}): the next
 * start counts it back into the window when that is still the budget's current one.
 */
export interface UnreportedBudgetUse {
  /** The budget's pool, `key:ID:budget:WINDOW:UNIT` (as its shares and its window are named). */
  name: string;
  /** The window as this instance knew it, ms since the epoch on the database's clock. */
  windowStart: number;
  windowEnd: number;
  /** Opened by this instance while the database was away: its start was never confirmed by the database. */
  pending: boolean;
  /** This instance's whole use of the window (tokens or USD; a total, like {@link QuotaUse.used}, the reported part included). */
  used: number;
  /** The part of `used` the database was told. */
  reported: number;
  /** USD budgets: this instance's requests in the window that a model without a price served (a total); absent when none. */
  unpriced?: number;
}

/** {@link UnreportedBudgetUse} as the PostgreSQL store keeps it: with the id of the instance whose use it is (its row of the pool). */
export interface KeptKeyUse extends UnreportedBudgetUse {
  instanceId: string;
}

/**
 * A key budget's current window (SPEC 2.3 "budgets: fixed windows aligned to the first use", 9.6): the
 * pool `name` (`key:ID:budget:WINDOW:UNIT`, as its shares are named) counts from `start` until `end`, ms
 * since the epoch on the database's clock.
 */
export interface BudgetWindowSpan {
  name: string;
  start: number;
  end: number;
}

/** Default lifetime of a lease that is not renewed (its instance died), ms. */
export const LEASE_TTL_MS = 15_000;

/**
 * How long a request waits at most for one answer of the shared store (a key limit's share refill, an
 * account's concurrency lease) before it is counted by this instance alone, as during an outage, ms. A
 * database that stopped answering without closing its connections (a table lock, a network partition,
 * an exhausted pool) otherwise held those requests for as long as it stayed silent. Generous on
 * purpose: counting alone lets each instance admit up to a whole limit, and 2 s was exceeded by a
 * merely busy start (three cold instances taking 120 requests at once on two loaded cores admitted 75
 * against an rpm of 40).
 */
export const SHARED_ANSWER_MS = 10_000;

/**
 * `work`'s value, or `undefined` with `late` called once it settles when it takes longer than `ms`.
 * `work` is not cancelled (a statement already sent may still commit): `late` gets its value to undo it.
 */
export async function answerWithin<T>(work: Promise<T>, ms: number, late: (value: T) => void): Promise<{ value: T } | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  const answered = work.then((value) => ({ value }));
  try {
    const got = await Promise.race([answered, timeout]);
    if (got === undefined) answered.then((v) => late(v.value)).catch(() => {});
    return got;
  } finally {
    clearTimeout(timer);
  }
}

/** A lease of a claim (`SharedStore.claimOnce`'s third argument). */
export interface ClaimLease {
  /** How long the lease holds from now, ms (an alert's webhook tries and their waits, with a margin). */
  ms: number;
  /** Take it only when the lease that refused this caller lapsed; see claimOnce. */
  retake?: boolean;
}

/**
 * What `SharedStore.claimOnce` found: taken (this caller holds the claim, or its lease), or refused by
 * a lease whose holder is still at work (`trying`, ending in `retryInMs` ms, 0 or more) or by a full
 * claim (`done`: made whole, or a lease settled).
 */
export type ClaimAnswer = { readonly taken: true } | { readonly taken: false; readonly holder: "trying"; readonly retryInMs: number } | { readonly taken: false; readonly holder: "done" };

/**
 * How long a claim is kept past its end before it is pruned, ms (an hour): long enough for an instance
 * refused by a lease to claim again with `retake` when the lease ends and find the claim settled, even
 * when the settled claim's own end passed first.
 */
export const CLAIM_KEEP_MS = 3_600_000;

/** Leases, counters, the refresh lock and the change feed. */
export interface SharedStore {
  /** True when counts and leases span every instance on the database (PostgreSQL); false = this process only. */
  readonly shared: boolean;

  /**
   * Takes one of `limit` slots of `scope` (e.g. `account:ID`, `key:NAME`) if one is free across all
   * instances. The lease lasts until `releaseLease`, or until about `LEASE_TTL_MS` after its instance
   * stops renewing it (it died). @returns the lease id, or undefined when all `limit` slots are taken.
   * @throws StoreError `unavailable` when the shared database cannot be reached (callers then count
   *   locally), `invalid` for an empty scope or a limit below 1.
   */
  tryLease(scope: string, limit: number): Awaitable<string | undefined>;

  /** Gives a lease back (unknown or expired ids are ignored). Never throws. */
  releaseLease(id: string): Awaitable<void>;

  /**
   * Adds `amount` to the fixed window of `windowMs` that contains now (windows start at multiples of
   * `windowMs` since the epoch) of the counter `name`, and returns the window's total across all
   * instances. `amount` 0 reads without adding. Old windows are pruned.
   * @throws StoreError `unavailable` (shared database unreachable), `invalid` (empty name, windowMs < 1,
   *   non-finite amount).
   */
  addToCounter(name: string, windowMs: number, amount: number): Awaitable<CounterWindow>;

  /**
   * Claims `name` until `until` (ms since the epoch; on PostgreSQL compared with the database's clock):
   * taken when no claim of `name` is in force (none was made, or the last one's end has passed), and
   * this call's claim then holds until `until`; refused while another claim of `name` holds, whichever
   * instance made it. No fixed windows: a claim made just before a window boundary still refuses a
   * claim made just after it. For what must happen once across instances (an alert's delivery,
   * src/alerts/alert-claim.ts). Claims past their end are pruned (kept {@link CLAIM_KEEP_MS} longer,
   * for `retake`).
   *
   * With `lease`, the claim taken is a lease: it holds `lease.ms` from now (not until `until`), for the
   * work it guards (an alert's webhook tries), and {@link settleClaim} turns it into the full claim
   * once that work is done; a lease its holder never settles (the instance died) lapses, and the next
   * claim takes it. A refusal says which claim holds: `trying` (a lease, ending in `retryInMs`; the
   * caller may keep its work and claim again then, with `retake`) or `done` (a full claim, or a lease
   * settled). `lease.retake`: the caller was refused by a lease before, so it takes the claim only when
   * that lease lapsed: a claim settled meanwhile refuses it as `done` even when its end has passed (a
   * circuit change's claim holds a minute, a lease minutes), so the work is done once, and so does a
   * claim ended by {@link releaseClaims} meanwhile (an operator ended what the alert was about).
   * @throws StoreError `unavailable` (shared database unreachable), `invalid` (empty name, `until` not
   *   a finite time, `lease.ms` not a positive number).
   */
  claimOnce(name: string, until: number, lease?: ClaimLease): Awaitable<ClaimAnswer>;

  /**
   * Turns this instance's lease of `name` ({@link claimOnce} with `lease`) into the full claim, holding
   * until `until`: its work is done (an alert delivered, or out of tries). Does nothing when `name` is
   * no lease any more (already settled, or ended by {@link releaseClaims}); a lease that lapsed and was
   * taken by another instance is settled all the same (that instance's work continues; its own settle
   * then does nothing). @throws StoreError `unavailable`, `invalid` (empty name, `until` not finite).
   */
  settleClaim(name: string, until: number): Awaitable<void>;

  /**
   * Ends this instance's lease of `name` ({@link claimOnce} with `lease`) now, unsettled: its work was
   * given up (an instance stopping cleanly before its alert's POST succeeded), so the next claim takes
   * it: a `retake` by an instance the lease refused (within its next ask, seconds) or a fresh claim,
   * where until 2026-12-05 they waited for the lease's end (minutes). Does nothing when `name` is no lease
   * in force (settled, ended by {@link releaseClaims}, lapsed, or none); like {@link settleClaim} it does
   * not tell this instance's lease from another's that took it after it lapsed (the caller gives up only
   * leases well inside their time). @throws StoreError `unavailable`, `invalid` (an empty name).
   */
  lapseClaim(name: string): Awaitable<void>;

  /**
   * Ends every claim whose name starts with `prefix` (the next {@link claimOnce} of such a name takes
   * it): an operator ended the state its alert was about (an unlock, a new login or import), so the
   * next lock or quarantine of the account is a new alert, not the claimed one again (newuser15 N11).
   * @throws StoreError `unavailable`, `invalid` (an empty prefix).
   */
  releaseClaims(prefix: string): Awaitable<void>;

  /**
   * PostgreSQL only (absent on the embedded store, which has no other instances): writes this
   * instance's values of the shared configuration (`label` names it to the others; `parts` path → JSON
   * text, no secrets), replacing the previous ones and saying it still runs. `origin` names where it
   * runs (one live instance per origin: a hash of host and data directory); a row of the same origin
   * left by another instance id (a predecessor killed without a clean stop) is replaced.
   * @throws StoreError `unavailable`, `closed`.
   */
  publishInstanceConfig?(label: string, parts: Record<string, string>, origin?: string): Awaitable<void>;
  /**
   * PostgreSQL only: the other instances' values as last written, of those that wrote within
   * `maxAgeMs` (the ones still running). @throws StoreError `unavailable`, `closed`.
   */
  otherInstanceConfigs?(maxAgeMs: number): Awaitable<InstanceConfig[]>;
  /**
   * PostgreSQL only: the database's own random salt for the secret fingerprints the instances publish
   * (made by the first instance that asks; the same for all). @throws StoreError `unavailable`, `closed`.
   */
  instanceConfigSalt?(): Awaitable<string>;

  /**
   * PostgreSQL only: the key budget use a stop could not report (`SharedKeyCounters.close` while the
   * database was away), to be written with the store's last flush or, when that fails too, kept with
   * the unwritten rows (src/store/postgres/keep-unwritten.ts) for the next start, which counts it back
   * into each window still current then (src/store/postgres/count-back-key-use.ts). Call before `close`.
   * @returns whether the use was taken: false once the store is closing (`close` called), when it can
   *   neither write nor keep it; the caller then counts those windows' use as lost. Never throws.
   */
  keepUnreportedUse?(uses: readonly UnreportedBudgetUse[]): boolean;

  /**
   * Sets this instance's share of a pool (see {@link QuotaShareRequest}) to `target`, or to what is left
   * when other instances hold the rest, and records `used`. A pool holds at most `limit`: other
   * instances' shares count while they renew them (they live); an expired share (its instance died)
   * counts only its reported use (windows) or nothing (slots), so its unused part returns. Shares are
   * renewed with leases (every third of `LEASE_TTL_MS`).
   * @throws StoreError `unavailable` (shared database unreachable), `invalid` (empty name, non-finite numbers).
   */
  setQuotaShare(req: QuotaShareRequest): Awaitable<QuotaShare>;

  /**
   * Opens the window of the budget pool `name` unless one is open (SPEC 2.3: windows start at the first
   * use): an open window (its end after now, on the database's clock) is returned as it is, whichever
   * instance opened it; else a new one of `lengthMs` starts now, or at `start` when given (a window this
   * instance opened while the database was away; used only when it has not ended and is not in the
   * future). Atomic across instances: two opening at once get one start. Returns it with the
   * database's clock. @throws StoreError `unavailable`, `invalid` (empty name, lengthMs < 1, non-finite start).
   */
  openBudgetWindow(name: string, lengthMs: number, start?: number): Awaitable<BudgetWindowSpan & { now: number }>;

  /**
   * The open windows (end after now) of the budget pools `names`, opened by any instance (a pool with
   * none open is absent), and the database's clock. Opens nothing. @throws StoreError `unavailable`.
   */
  readBudgetWindows(names: readonly string[]): Awaitable<{ windows: BudgetWindowSpan[]; now: number }>;

  /**
   * Records the use of several of this instance's shares at once (their windows' totals so far, not
   * increments; a total below the recorded one is ignored, see {@link QuotaShareRequest.used}) and
   * returns, per row in order, the use every other instance has reported in that window.
   * @throws StoreError `unavailable`.
   */
  reportQuotaUse(rows: readonly QuotaUse[]): Awaitable<number[]>;

  /**
   * The shared key counters' report (src/limits/shared-counters.ts): records the use of the shares in
   * `rows` as {@link reportQuotaUse} does (the ones whose use changed since the last report; none is
   * fine), their `unpriced` counts too, and returns the use the other instances have reported in every
   * pool and window they have a share of (`used` and `unpriced` summed over them; a pool none of them
   * uses is absent: its use elsewhere is 0). One
   * statement; what it sends grows with the shares whose use changed here, what it answers with the
   * pools used elsewhere, not with every pool this instance watches.
   * @throws StoreError `unavailable`.
   */
  exchangeQuotaUse(rows: readonly QuotaUse[]): Awaitable<QuotaUse[]>;

  /**
   * Runs `fn` while holding the refresh lock of an account: at most one OAuth refresh of an account runs
   * at a time across all instances (SPEC D-2, P-7); the others wait, then find the rotated credential
   * in the store and adopt it. When the shared database cannot be reached `fn` runs without the lock.
   * `fn`'s result or error is passed through.
   */
  withRefreshLock<T>(accountId: string, fn: () => Promise<T>): Promise<T>;

  /**
   * Calls `listener` when another instance changed something (within about a second); returns a
   * function that removes the listener. The embedded store never calls it (it has no other instance).
   */
  onChange(listener: (change: StoreChange) => void): () => void;
}
