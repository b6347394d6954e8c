/**
 * Coordination across instances in PostgreSQL (SPEC D-2, 9.6): leases (rows with an expiry this
 * instance renews while it lives), fixed-window counters (one upserted row per name and window), claims
 * (a counters row taken while absent or ended), leased shares of key limits, the per-account OAuth
 * refresh lock (a row with an expiry, taken and released with short statements), and the change feed.
 * Times of leases and counters are the database's clock, so instances with skewed clocks still agree.
 */
import { checkId, errMessage } from "../rows.ts";
import { type BudgetWindowSpan, CLAIM_KEEP_MS, type ClaimAnswer, type ClaimLease, type CounterWindow, LEASE_TTL_MS, type QuotaShare, type QuotaShareRequest, type QuotaUse, type SharedStore, type StoreChange } from "../shared.ts";
import { StoreError } from "../types.ts";
import { isUnavailable, type PgContext } from "./db.ts";
import { DB_NOW_MS, num } from "./values.ts";

/** Lifetime of a refresh lock row whose holder stopped renewing it (it died), ms. */
export const REFRESH_LOCK_TTL_MS = 30_000;

/**
 * A share's unpriced count as a report sends it (schema 21, `QuotaUse.unpriced`): a whole number ≥ 0, or
 * undefined (JSON leaves it out, SQL reads NULL, and `GREATEST(q.unpriced, NULL)` keeps the row's).
 */
const unpricedCount = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? Math.max(0, Math.round(n)) : undefined);

/** The `SharedStore` role of the PostgreSQL store. */
export class PgShared implements SharedStore {
  readonly shared = true;
  /** Lease ids this instance holds (renewed by the timer). */
  private readonly held = new Set<string>();
  private readonly renewTimer: ReturnType<typeof setInterval>;
  private lastCounterPrune = 0;
  private lastQuotaPrune = 0;
  /** Whether this instance ever took a quota share (then renewal and release cover them). */
  private quotaHeld = false;

  /**
   * @param leaseTtlMs how long a lease outlives its instance's last renewal (renewed every third of it)
   * @param refreshLockTtlMs how long a refresh lock outlives its holder's last renewal
   */
  constructor(
    private readonly ctx: PgContext,
    private readonly leaseTtlMs: number = LEASE_TTL_MS,
    private readonly refreshLockTtlMs: number = REFRESH_LOCK_TTL_MS,
  ) {
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(leaseTtlMs / 3)));
    this.renewTimer.unref?.();
  }

  /**
   * One of `limit` slots of `scope` across all instances, or undefined when all are taken. Expired
   * leases (their instance died) no longer count. @throws StoreError `invalid`, `closed`, `unavailable`.
   */
  async tryLease(scope: string, limit: number): Promise<string | undefined> {
    checkId(scope, "lease scope");
    if (!Number.isFinite(limit) || limit < 1) throw new StoreError("invalid", "lease limit must be at least 1");
    const id = crypto.randomUUID();
    const ttl = this.leaseTtlMs;
    const got = await this.ctx.read((sql) =>
      sql.begin(async (tx) => {
        // Serialises takers of this scope: the count below then sees every committed lease.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`lease:${scope}`}))`;
        const rows = await tx.unsafe(
          `INSERT INTO leases (id, scope, instance_id, expires_at)
           SELECT $1, $2, $3, ${DB_NOW_MS} + $4
           WHERE (SELECT count(*) FROM leases WHERE scope = $2 AND expires_at > ${DB_NOW_MS}) < $5
           RETURNING id`,
          [id, scope, this.ctx.instanceId, ttl, Math.floor(limit)],
        );
        return rows.length > 0;
      }),
      // granted after the caller was told "unavailable" (a stalled database): nobody holds it, so it goes
      (late) => {
        if (late) void this.ctx.write("leases", (sql) => sql`DELETE FROM leases WHERE id = ${id}`).catch(() => {});
      },
    );
    if (!got) return undefined;
    this.held.add(id);
    return id;
  }

  /** Gives a lease back and announces "leases" (waiters elsewhere retry). Never throws. */
  async releaseLease(id: string): Promise<void> {
    if (!this.held.delete(id)) return;
    try {
      await this.ctx.write("leases", (sql) => sql`DELETE FROM leases WHERE id = ${id}`);
    } catch (err) {
      this.ctx.onError(`lease release failed: ${errMessage(err)}`, err);
    }
  }

  /** Adds to the counter's current fixed window across instances. @throws StoreError `invalid`, `closed`, `unavailable`. */
  async addToCounter(name: string, windowMs: number, amount: number): Promise<CounterWindow> {
    checkId(name, "counter name");
    if (!Number.isFinite(windowMs) || windowMs < 1) throw new StoreError("invalid", "counter window must be at least 1 ms");
    if (!Number.isFinite(amount)) throw new StoreError("invalid", "counter amount must be a finite number");
    const w = Math.floor(windowMs);
    const [row] = await this.ctx.read((sql) =>
      sql.unsafe(
        `INSERT INTO counters (name, window_start, value, expires_at)
         VALUES ($1, (${DB_NOW_MS} / $2) * $2, $3, (${DB_NOW_MS} / $2) * $2 + $2)
         ON CONFLICT (name, window_start) DO UPDATE SET value = counters.value + excluded.value
         RETURNING value, expires_at`,
        [`${w}:${name}`, w, amount],
      ),
    );
    this.pruneCounters();
    return { total: Number(row.value), resetAt: num(row.expires_at) };
  }

  /**
   * Claims `name` until `until`, or leases it for `lease.ms`, unless a claim of it is in force
   * (`SharedStore.claimOnce`): one upsert of a `counters` row (`claim:NAME`, window start 0; its value 1
   * for a full claim, as before leases existed, and 2 for a lease) that takes the row only when it is
   * absent or its end has passed on the database's clock (with `retake`, an UPDATE that takes only a
   * lapsed lease); two instances claiming at once are serialised by the row. A refusal reads the row
   * that refused (a second statement) to say whether its holder is still trying. An instance of an earlier version sees a lease
   * as a claim in force, and takes a lapsed one as its full claim.
   * @throws StoreError `invalid`, `closed`, `unavailable`.
   */
  async claimOnce(name: string, until: number, lease?: ClaimLease): Promise<ClaimAnswer> {
    checkId(name, "claim name");
    if (!Number.isFinite(until)) throw new StoreError("invalid", "claim end must be a time in ms since the epoch");
    if (lease && !(Number.isFinite(lease.ms) && lease.ms > 0)) throw new StoreError("invalid", "claim lease must be a positive number of ms");
    const row = `claim:${name}`;
    const end = lease ? `${DB_NOW_MS} + $3` : "$3";
    this.pruneCounters();
    for (let round = 0; round < 3; round++) {
      const taken = await this.ctx.read((sql) =>
        lease?.retake
          ? sql.unsafe(`UPDATE counters SET expires_at = ${DB_NOW_MS} + $2 WHERE name = $1 AND window_start = 0 AND value = 2 AND expires_at <= ${DB_NOW_MS} RETURNING value`, [row, Math.floor(lease.ms)])
          : sql.unsafe(
              `INSERT INTO counters (name, window_start, value, expires_at) VALUES ($1, 0, $2, ${end})
               ON CONFLICT (name, window_start) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
                 WHERE counters.expires_at <= ${DB_NOW_MS}
               RETURNING value`,
              [row, lease ? 2 : 1, Math.floor(lease ? lease.ms : until)],
            ),
      );
      if (taken.length > 0) return { taken: true };
      const [held] = await this.ctx.read((sql) => sql.unsafe(`SELECT value, expires_at - ${DB_NOW_MS} AS left_ms FROM counters WHERE name = $1 AND window_start = 0`, [row]));
      // A retake finds the claim gone: ended by an operator (releaseClaims), its alert is over.
      if (held === undefined && lease?.retake) return { taken: false, holder: "done" };
      // Gone (released) since the upsert: claim again.
      if (held === undefined) continue;
      if (Number(held.value) !== 2) return { taken: false, holder: "done" };
      const left = num(held.left_ms);
      if (left > 0) return { taken: false, holder: "trying", retryInMs: left };
    }
    return { taken: false, holder: "trying", retryInMs: 0 };
  }

  /**
   * Turns the lease of `name` into the full claim until `until` (`SharedStore.settleClaim`): one UPDATE
   * of its row while it is a lease. @throws StoreError `invalid`, `closed`, `unavailable`.
   */
  async settleClaim(name: string, until: number): Promise<void> {
    checkId(name, "claim name");
    if (!Number.isFinite(until)) throw new StoreError("invalid", "claim end must be a time in ms since the epoch");
    await this.ctx.read((sql) => sql.unsafe(`UPDATE counters SET value = 1, expires_at = $2 WHERE name = $1 AND window_start = 0 AND value = 2`, [`claim:${name}`, Math.floor(until)]));
  }

  /**
   * Ends the lease of `name` now, unsettled (`SharedStore.lapseClaim`): one UPDATE of its row while it is
   * a lease in force, its end set to the database's now (a retake takes a lease whose end is not after
   * now). @throws StoreError `invalid`, `closed`, `unavailable`.
   */
  async lapseClaim(name: string): Promise<void> {
    checkId(name, "claim name");
    await this.ctx.read((sql) => sql.unsafe(`UPDATE counters SET expires_at = ${DB_NOW_MS} WHERE name = $1 AND window_start = 0 AND value = 2 AND expires_at > ${DB_NOW_MS}`, [`claim:${name}`]));
  }

  /**
   * Ends the claims whose name starts with `prefix` (`SharedStore.releaseClaims`): one DELETE of their
   * `counters` rows (compared with `left()`, not LIKE: account ids hold `_`).
   * @throws StoreError `invalid`, `closed`, `unavailable`.
   */
  async releaseClaims(prefix: string): Promise<void> {
    if (prefix === "") throw new StoreError("invalid", "claim prefix must not be empty");
    const name = `claim:${prefix}`;
    await this.ctx.read((sql) => sql.unsafe(`DELETE FROM counters WHERE window_start = 0 AND left(name, char_length($1)) = $1`, [name]));
  }

  /**
   * Drops ended counter windows, and claims (window start 0) ended {@link CLAIM_KEEP_MS} ago (every
   * instance's), at most once a minute.
   */
  private pruneCounters(): void {
    const now = this.ctx.now();
    if (now - this.lastCounterPrune <= 60_000) return;
    this.lastCounterPrune = now;
    void this.ctx.read((sql) => sql.unsafe(`DELETE FROM counters WHERE expires_at < ${DB_NOW_MS} - CASE WHEN window_start = 0 THEN $1::bigint ELSE 0 END`, [CLAIM_KEEP_MS])).catch(() => {});
  }

  /** This instance's share of a pool (see `SharedStore.setQuotaShare`): one round trip. @throws StoreError `invalid`, `closed`, `unavailable`. */
  async setQuotaShare(req: QuotaShareRequest): Promise<QuotaShare> {
    checkId(req.name, "quota name");
    for (const v of [req.windowStart, req.windowEnd, req.limit, req.target, req.used]) {
      if (!Number.isFinite(v)) throw new StoreError("invalid", "quota share numbers must be finite");
    }
    const [row] = await this.ctx.read((sql) =>
      sql.unsafe(`SELECT granted, others_used, db_now FROM switchyard_quota_share($1, $2, $3, $4, $5, $6, $7, $8)`, [
        req.name,
        Math.floor(req.windowStart),
        Math.floor(req.windowEnd),
        this.ctx.instanceId,
        req.limit,
        Math.max(0, req.target),
        Math.max(0, req.used),
        this.leaseTtlMs,
      ]),
    );
    this.quotaHeld = true;
    this.pruneQuotas();
    return { granted: Number(row.granted), othersUsed: Number(row.others_used), now: num(row.db_now) };
  }

  /**
   * The budget pool's open window, or a new one (`SharedStore.openBudgetWindow`): one upsert of its
   * `budget_window_starts` row (schema 22) that keeps a start whose end has not passed on the database's
   * clock and else writes the new one; two instances opening at once are serialised by the row, the
   * second keeping the first's start. The clock is read once (`n`): the start and the end it keeps or
   * writes are judged at the same instant. @throws StoreError `invalid`, `closed`, `unavailable`.
   */
  async openBudgetWindow(name: string, lengthMs: number, start?: number): Promise<BudgetWindowSpan & { now: number }> {
    checkId(name, "budget window name");
    if (!Number.isFinite(lengthMs) || lengthMs < 1) throw new StoreError("invalid", "budget window length must be at least 1 ms");
    if (start !== undefined && !Number.isFinite(start)) throw new StoreError("invalid", "budget window start must be a time in ms since the epoch");
    const [row] = await this.ctx.read((sql) =>
      sql.unsafe(
        `WITH n AS (SELECT ${DB_NOW_MS} AS now),
         s AS (SELECT now, CASE WHEN $3::bigint IS NOT NULL AND $3::bigint <= now AND $3::bigint + $2::bigint > now THEN $3::bigint ELSE now END AS start FROM n)
         INSERT INTO budget_window_starts AS w (name, window_start, window_end)
           SELECT $1, s.start, s.start + $2::bigint FROM s
         ON CONFLICT (name) DO UPDATE SET
           window_start = CASE WHEN w.window_end > (SELECT now FROM n) THEN w.window_start ELSE excluded.window_start END,
           window_end = CASE WHEN w.window_end > (SELECT now FROM n) THEN w.window_end ELSE excluded.window_end END
         RETURNING w.window_start, w.window_end, (SELECT now FROM n) AS db_now`,
        [name, Math.floor(lengthMs), start === undefined ? null : Math.floor(start)],
      ),
    );
    this.pruneQuotas();
    return { name, start: num(row.window_start), end: num(row.window_end), now: num(row.db_now) };
  }

  /** The open windows of these budget pools (`SharedStore.readBudgetWindows`): one statement. @throws StoreError `closed`, `unavailable`. */
  async readBudgetWindows(names: readonly string[]): Promise<{ windows: BudgetWindowSpan[]; now: number }> {
    const rows = await this.ctx.read((sql) =>
      sql.unsafe(
        `WITH n AS (SELECT ${DB_NOW_MS} AS now)
         SELECT n.now AS db_now, w.name, w.window_start, w.window_end FROM n
           LEFT JOIN budget_window_starts w ON w.name IN (SELECT json_array_elements_text($1::text::json)) AND w.window_end > n.now`,
        [JSON.stringify(names)],
      ),
    );
    const all = rows as Array<{ db_now: unknown; name: string | null; window_start: unknown; window_end: unknown }>;
    const windows = all.filter((r) => r.name !== null).map((r) => ({ name: r.name!, start: num(r.window_start), end: num(r.window_end) }));
    return { windows, now: num(all[0]?.db_now) };
  }

  /** Records the use of several shares in one statement (a window's use and unpriced count only grow: a smaller one sent earlier and committed later is ignored); returns the other instances' use per row. @throws StoreError `closed`, `unavailable`. */
  async reportQuotaUse(rows: readonly QuotaUse[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const json = JSON.stringify(rows.map((r, i) => ({ i, name: r.name, ws: Math.floor(r.windowStart), used: Number.isFinite(r.used) ? Math.max(0, r.used) : 0, unpriced: unpricedCount(r.unpriced) })));
    const out = await this.ctx.read((sql) =>
      sql.unsafe(
        `WITH v AS (SELECT * FROM json_to_recordset($1::text::json) AS v(i int, name text, ws bigint, used float8, unpriced bigint)),
         upd AS (UPDATE quota_shares q SET used = CASE WHEN q.window_end = 0 THEN v.used ELSE GREATEST(q.used, v.used) END,
                   unpriced = GREATEST(q.unpriced, v.unpriced), expires_at = ${DB_NOW_MS} + $3
                 FROM v WHERE q.name = v.name AND q.window_start = v.ws AND q.instance_id = $2)
         SELECT v.i, (SELECT COALESCE(SUM(o.used), 0) FROM quota_shares o
                      WHERE o.name = v.name AND o.window_start = v.ws AND o.instance_id <> $2)::float8 AS others
         FROM v ORDER BY v.i`,
        [json, this.ctx.instanceId, this.leaseTtlMs],
      ),
    );
    return (out as Array<{ others: unknown }>).map((r) => Number(r.others));
  }

  /** See SharedStore.exchangeQuotaUse: one statement, the changed rows in, the pools used elsewhere out. */
  async exchangeQuotaUse(rows: readonly QuotaUse[]): Promise<QuotaUse[]> {
    const json = JSON.stringify(rows.map((r) => ({ name: r.name, ws: Math.floor(r.windowStart), used: Number.isFinite(r.used) ? Math.max(0, r.used) : 0, unpriced: unpricedCount(r.unpriced) })));
    const out = await this.ctx.read((sql) =>
      sql.unsafe(
        `WITH v AS (SELECT * FROM json_to_recordset($1::text::json) AS v(name text, ws bigint, used float8, unpriced bigint)),
         upd AS (UPDATE quota_shares q SET used = CASE WHEN q.window_end = 0 THEN v.used ELSE GREATEST(q.used, v.used) END,
                   unpriced = GREATEST(q.unpriced, v.unpriced), expires_at = ${DB_NOW_MS} + $3
                 FROM v WHERE q.name = v.name AND q.window_start = v.ws AND q.instance_id = $2)
         SELECT name, window_start, SUM(used)::float8 AS used, SUM(unpriced)::float8 AS unpriced FROM quota_shares WHERE instance_id <> $2 GROUP BY name, window_start`,
        [json, this.ctx.instanceId, this.leaseTtlMs],
      ),
    );
    return (out as Array<{ name: string; window_start: unknown; used: unknown; unpriced: unknown }>).map((r) => {
      const unpriced = Number(r.unpriced);
      return unpriced > 0 ? { name: r.name, windowStart: Number(r.window_start), used: Number(r.used), unpriced } : { name: r.name, windowStart: Number(r.window_start), used: Number(r.used) };
    });
  }

  /** Drops ended windows' shares (every instance's) and ended budget windows at most once a minute. */
  private pruneQuotas(): void {
    const now = this.ctx.now();
    if (now - this.lastQuotaPrune < 60_000) return;
    this.lastQuotaPrune = now;
    void this.ctx
      .read((sql) =>
        sql.unsafe(`WITH gone AS (DELETE FROM budget_window_starts WHERE window_end < ${DB_NOW_MS} - 60000)
                    DELETE FROM quota_shares WHERE (window_end <> 0 AND window_end < ${DB_NOW_MS} - 60000)
                    OR (window_end = 0 AND expires_at < ${DB_NOW_MS} - 60000)`),
      )
      .catch(() => {});
  }

  /**
   * Runs `fn` holding the account's refresh lock across instances: a row in `refresh_locks` taken with
   * one short statement (or once the holder's row has expired), renewed every third of its lifetime
   * while `fn` runs, deleted afterwards. No connection is held while `fn` calls the token endpoint, and
   * it works through transaction-pooling proxies (a session advisory lock does neither). A waiter polls
   * every 50 ms; a holder that died leaves a row that lapses after `refreshLockTtlMs`. When the database
   * cannot be reached, `fn` runs without the lock.
   */
  async withRefreshLock<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    this.ctx.assertOpen();
    const holder = `${this.ctx.instanceId}:${crypto.randomUUID()}`;
    const ttl = this.refreshLockTtlMs;
    let held = false;
    try {
      while (this.ctx.reachable && !this.ctx.closed) {
        const rows = await this.ctx.read((sql) =>
          sql.unsafe(
            `INSERT INTO refresh_locks (account_id, holder, expires_at) VALUES ($1, $2, ${DB_NOW_MS} + $3)
             ON CONFLICT (account_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
               WHERE refresh_locks.expires_at < ${DB_NOW_MS}
             RETURNING holder`,
            [accountId, holder, ttl],
          ),
        );
        if (rows.length > 0) {
          held = true;
          break;
        }
        await Bun.sleep(50);
      }
    } catch (err) {
      if (!(err instanceof StoreError && err.code === "unavailable")) {
        this.ctx.onError(`refresh lock of ${JSON.stringify(accountId)} failed: ${errMessage(err)}`, err);
      }
    }
    if (!held) return fn();
    const renew = setInterval(() => {
      void this.ctx
        .read((sql) => sql.unsafe(`UPDATE refresh_locks SET expires_at = ${DB_NOW_MS} + $3 WHERE account_id = $1 AND holder = $2`, [accountId, holder, ttl]))
        .catch(() => {});
    }, Math.max(50, Math.floor(ttl / 3)));
    renew.unref?.();
    try {
      return await fn();
    } finally {
      clearInterval(renew);
      try {
        await this.ctx.read((sql) => sql`DELETE FROM refresh_locks WHERE account_id = ${accountId} AND holder = ${holder}`);
      } catch {
        // the row lapses after its lifetime
      }
    }
  }

  /** Calls `listener` when another instance changed something. */
  onChange(listener: (change: StoreChange) => void): () => void {
    return this.ctx.onChange(listener);
  }

  /** Gives back every lease this instance holds (close). Never throws. */
  async releaseAll(): Promise<void> {
    clearInterval(this.renewTimer);
    if (!this.ctx.reachable) return;
    if (this.quotaHeld) {
      // Unused shares return to their pools now; the reported use keeps counting in its window.
      try {
        await this.ctx.sql.unsafe(`UPDATE quota_shares SET granted = used, expires_at = ${DB_NOW_MS} WHERE instance_id = $1`, [this.ctx.instanceId]);
      } catch {
        // they expire
      }
    }
    if (!this.held.size) return;
    const ids = [...this.held];
    this.held.clear();
    try {
      await this.ctx.sql`DELETE FROM leases WHERE id IN ${this.ctx.sql(ids)}`;
      this.ctx.announce("leases");
    } catch {
      // they expire
    }
  }

  /** Extends this instance's leases (it is alive). */
  private async renew(): Promise<void> {
    if ((!this.held.size && !this.quotaHeld) || !this.ctx.reachable || this.ctx.closed) return;
    try {
      if (this.held.size) {
        await this.ctx.sql.unsafe(`UPDATE leases SET expires_at = ${DB_NOW_MS} + $1 WHERE instance_id = $2`, [this.leaseTtlMs, this.ctx.instanceId]);
      }
      if (this.quotaHeld) {
        await this.ctx.sql.unsafe(
          `UPDATE quota_shares SET expires_at = ${DB_NOW_MS} + $1 WHERE instance_id = $2 AND (window_end = 0 OR window_end > ${DB_NOW_MS})`,
          [this.leaseTtlMs, this.ctx.instanceId],
        );
      }
    } catch (err) {
      if (isUnavailable(err)) this.ctx.degrade(err);
    }
  }
}
