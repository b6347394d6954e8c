/**
 * The coordination role (`SharedStore`, SPEC D-2) for a store that serves one instance (SQLite): leases,
 * counters and claims live in this process's memory, the refresh lock is a per-account promise chain, and no
 * other instance ever announces a change. Same contract as the PostgreSQL version, `shared: false`.
 */
import { checkId } from "./rows.ts";
import { type BudgetWindowSpan, CLAIM_KEEP_MS, type ClaimAnswer, type ClaimLease, type CounterWindow, type QuotaShare, type QuotaShareRequest, type QuotaUse, type SharedStore, type StoreChange } from "./shared.ts";
import { StoreError } from "./types.ts";

/** In-process leases, counters and refresh locks. */
export class LocalShared implements SharedStore {
  readonly shared = false;
  private readonly leases = new Map<string, string>();
  private readonly held = new Map<string, number>();
  private readonly counters = new Map<string, { start: number; total: number }>();
  /**
   * Claims: name → its end (ms since the epoch) and whether it is a lease not yet settled (pruned as the
   * map grows, {@link CLAIM_KEEP_MS} after their end).
   */
  private readonly claims = new Map<string, { end: number; lease: boolean }>();
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Budget windows by pool name (`openBudgetWindow`). */
  private readonly budgetWindows = new Map<string, BudgetWindowSpan>();
  private seq = 0;

  /** @param now ms since the epoch (counter windows) */
  constructor(private readonly now: () => number) {}

  /** One of `limit` slots of `scope`, or undefined when all are held. @throws StoreError `invalid`. */
  tryLease(scope: string, limit: number): string | undefined {
    checkId(scope, "lease scope");
    if (!Number.isFinite(limit) || limit < 1) throw new StoreError("invalid", "lease limit must be at least 1");
    const n = this.held.get(scope) ?? 0;
    if (n >= limit) return undefined;
    const id = `local-${++this.seq}`;
    this.leases.set(id, scope);
    this.held.set(scope, n + 1);
    return id;
  }

  /** Gives a lease back; unknown ids are ignored. */
  releaseLease(id: string): void {
    const scope = this.leases.get(id);
    if (scope === undefined) return;
    this.leases.delete(id);
    const n = (this.held.get(scope) ?? 1) - 1;
    if (n <= 0) this.held.delete(scope);
    else this.held.set(scope, n);
  }

  /** Adds to the fixed window containing now; returns its total. @throws StoreError `invalid`. */
  addToCounter(name: string, windowMs: number, amount: number): CounterWindow {
    checkId(name, "counter name");
    if (!Number.isFinite(windowMs) || windowMs < 1) throw new StoreError("invalid", "counter window must be at least 1 ms");
    if (!Number.isFinite(amount)) throw new StoreError("invalid", "counter amount must be a finite number");
    const w = Math.floor(windowMs);
    const start = Math.floor(this.now() / w) * w;
    const key = `${w}\u0000${name}`;
    let c = this.counters.get(key);
    if (!c || c.start !== start) {
      c = { start, total: 0 };
      this.counters.set(key, c);
    }
    c.total += amount;
    return { total: c.total, resetAt: start + w };
  }

  /**
   * Claims `name` until `until`, or leases it for `lease.ms`, unless a claim of it is in force (see
   * `SharedStore.claimOnce`). @throws StoreError `invalid`.
   */
  claimOnce(name: string, until: number, lease?: ClaimLease): ClaimAnswer {
    checkId(name, "claim name");
    if (!Number.isFinite(until)) throw new StoreError("invalid", "claim end must be a time in ms since the epoch");
    if (lease && !(Number.isFinite(lease.ms) && lease.ms > 0)) throw new StoreError("invalid", "claim lease must be a positive number of ms");
    const now = this.now();
    const held = this.claims.get(name);
    if (held !== undefined && held.end > now) return held.lease ? { taken: false, holder: "trying", retryInMs: held.end - now } : { taken: false, holder: "done" };
    // Refused by a lease before: only that lease lapsed is taken; a claim settled since is the lease's
    // work done, even past its end, and a claim gone was ended by an operator (releaseClaims).
    if (lease?.retake && !held?.lease) return { taken: false, holder: "done" };
    if (this.claims.size >= 1024) for (const [k, c] of this.claims) if (c.end + CLAIM_KEEP_MS <= now) this.claims.delete(k);
    this.claims.set(name, lease ? { end: now + lease.ms, lease: true } : { end: until, lease: false });
    return { taken: true };
  }

  /** Turns the lease of `name` into the full claim until `until` (see `SharedStore.settleClaim`). @throws StoreError `invalid`. */
  settleClaim(name: string, until: number): void {
    checkId(name, "claim name");
    if (!Number.isFinite(until)) throw new StoreError("invalid", "claim end must be a time in ms since the epoch");
    const held = this.claims.get(name);
    if (held?.lease) this.claims.set(name, { end: until, lease: false });
  }

  /** Ends the lease of `name` now, unsettled (see `SharedStore.lapseClaim`): the next claim takes it. @throws StoreError `invalid`. */
  lapseClaim(name: string): void {
    checkId(name, "claim name");
    const held = this.claims.get(name);
    const now = this.now();
    if (held?.lease && held.end > now) held.end = now;
  }

  /** Ends the claims whose name starts with `prefix` (see `SharedStore.releaseClaims`). @throws StoreError `invalid`. */
  releaseClaims(prefix: string): void {
    if (prefix === "") throw new StoreError("invalid", "claim prefix must not be empty");
    for (const name of [...this.claims.keys()]) if (name.startsWith(prefix)) this.claims.delete(name);
  }

  /**
   * One instance: the whole pool is this instance's, so the share is `target` capped at `limit` and
   * nobody else uses anything. @throws StoreError `invalid`.
   */
  setQuotaShare(req: QuotaShareRequest): QuotaShare {
    checkId(req.name, "quota name");
    for (const v of [req.windowStart, req.windowEnd, req.limit, req.target, req.used]) {
      if (!Number.isFinite(v)) throw new StoreError("invalid", "quota share numbers must be finite");
    }
    return { granted: Math.max(0, Math.min(req.target, req.limit)), othersUsed: 0, now: this.now() };
  }

  /** The pool's open window, or a new one from now (or `start`); see `SharedStore.openBudgetWindow`. @throws StoreError `invalid`. */
  openBudgetWindow(name: string, lengthMs: number, start?: number): BudgetWindowSpan & { now: number } {
    checkId(name, "budget window name");
    if (!Number.isFinite(lengthMs) || lengthMs < 1) throw new StoreError("invalid", "budget window length must be at least 1 ms");
    if (start !== undefined && !Number.isFinite(start)) throw new StoreError("invalid", "budget window start must be a time in ms since the epoch");
    const now = this.now();
    let w = this.budgetWindows.get(name);
    if (!w || w.end <= now) {
      const from = start !== undefined && start <= now && start + lengthMs > now ? Math.floor(start) : now;
      w = { name, start: from, end: from + Math.floor(lengthMs) };
      for (const [k, v] of this.budgetWindows) if (v.end <= now) this.budgetWindows.delete(k);
      this.budgetWindows.set(name, w);
    }
    return { ...w, now };
  }

  /** The open windows of these pools (see `SharedStore.readBudgetWindows`). */
  readBudgetWindows(names: readonly string[]): { windows: BudgetWindowSpan[]; now: number } {
    const now = this.now();
    const windows = names.flatMap((n) => {
      const w = this.budgetWindows.get(n);
      return w && w.end > now ? [{ ...w }] : [];
    });
    return { windows, now };
  }

  /** One instance: nobody else uses anything. */
  reportQuotaUse(rows: readonly QuotaUse[]): number[] {
    return rows.map(() => 0);
  }

  /** One instance: nobody else uses anything. */
  exchangeQuotaUse(_rows: readonly QuotaUse[]): QuotaUse[] {
    return [];
  }

  /** Runs `fn` after any earlier locked call for the same account has settled. */
  async withRefreshLock<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(accountId) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => {});
    this.locks.set(accountId, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(accountId) === tail) this.locks.delete(accountId);
    }
  }

  /** No other instance: the listener is never called. */
  onChange(_listener: (change: StoreChange) => void): () => void {
    return () => {};
  }
}
