/**
 * Account state in SQLite (SPEC 5.3, 6.3, A-2): cooldowns, locks, removed pairings, quarantines and
 * circuits are written through (each call commits before it returns); quota windows and conversation
 * bindings are buffered in {@link PendingWrites} and written by the store's flush.
 */
import { QUOTA_MODELS_PER_ACCOUNT, QUOTA_NO_RESET_STALE_MS, QUOTA_STALE_MS, quotaModelsOverCap } from "../account-state.ts";
import type { PendingWrites } from "../pending.ts";
import { checkId, checkTime, intOr, omitUndefined, parseStringArray, rowToQuota } from "../rows.ts";
import type {
  AccountLock,
  AccountState,
  AccountStateStore,
  Binding,
  Circuit,
  Cooldown,
  Quarantine,
  QuotaWindow,
  RemovedModel,
} from "../types.ts";
import type { SqliteContext } from "./db.ts";

/** The `AccountStateStore` role of the SQLite store. */
export class SqliteAccountState implements AccountStateStore {
  private readonly s;

  /**
   * Prepares the statements.
   * @param pending the store's write buffers (quota windows and bindings wait there)
   * @param flush writes the buffers now (before a load, so it sees every pending write)
   */
  constructor(
    private readonly ctx: SqliteContext,
    private readonly pending: PendingWrites,
    private readonly flush: () => void,
  ) {
    const db = ctx.db;
    this.s = {
      cooldownSet: db.prepare(
        `INSERT INTO cooldowns (account_id, model, until, reason, level, since) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, model) DO UPDATE SET until = excluded.until, reason = excluded.reason,
           level = excluded.level, since = excluded.since`,
      ),
      cooldownClearOne: db.prepare("DELETE FROM cooldowns WHERE account_id = ? AND model = ?"),
      cooldownClearAll: db.prepare("DELETE FROM cooldowns WHERE account_id = ?"),
      lockSet: db.prepare(
        `INSERT INTO account_locks (account_id, until, reason, since, fingerprint) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET until = excluded.until, reason = excluded.reason, since = excluded.since,
           fingerprint = excluded.fingerprint`,
      ),
      lockClear: db.prepare("DELETE FROM account_locks WHERE account_id = ?"),
      removedSet: db.prepare(
        `INSERT INTO removed_models (account_id, model, reason, until, since) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (account_id, model) DO UPDATE SET reason = excluded.reason, until = excluded.until, since = excluded.since`,
      ),
      removedClearOne: db.prepare("DELETE FROM removed_models WHERE account_id = ? AND model = ?"),
      removedClearAll: db.prepare("DELETE FROM removed_models WHERE account_id = ?"),
      quarantineSet: db.prepare(
        `INSERT INTO quarantined_credentials (fingerprint, account_id, reason, since) VALUES (?, ?, ?, ?)
         ON CONFLICT (fingerprint) DO UPDATE SET account_id = excluded.account_id, reason = excluded.reason, since = excluded.since`,
      ),
      quarantineClear: db.prepare("DELETE FROM quarantined_credentials WHERE fingerprint = ?"),
      circuitSet: db.prepare(
        `INSERT INTO provider_circuits (provider_id, open_until, reason, since) VALUES (?, ?, ?, ?)
         ON CONFLICT (provider_id) DO UPDATE SET open_until = excluded.open_until, reason = excluded.reason, since = excluded.since`,
      ),
      circuitClear: db.prepare("DELETE FROM provider_circuits WHERE provider_id = ?"),
      bindClear: db.prepare("DELETE FROM bindings WHERE key = ?"),
      // prune + load
      pruneCooldowns: db.prepare("DELETE FROM cooldowns WHERE until <= ?"),
      pruneLocks: db.prepare("DELETE FROM account_locks WHERE until IS NOT NULL AND until <= ?"),
      pruneRemoved: db.prepare("DELETE FROM removed_models WHERE until IS NOT NULL AND until <= ?"),
      pruneCircuits: db.prepare("DELETE FROM provider_circuits WHERE open_until <= ?"),
      // ?1 now, ?2 the 30-day stale mark, ?3 the 1-day one of a window without a reset time
      pruneQuotas: db.prepare(
        "DELETE FROM quota_windows WHERE (reset_at IS NOT NULL AND reset_at <= ?1) OR updated_at <= ?2 OR (reset_at IS NULL AND updated_at <= ?3)",
      ),
      // past QUOTA_MODELS_PER_ACCOUNT models (other than '*') of an account, the least recently updated go
      pruneQuotaModels: db.prepare(
        `DELETE FROM quota_windows WHERE model <> '*' AND (account_id, model) IN (
           SELECT account_id, model FROM (
             SELECT account_id, model, ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY MAX(updated_at) DESC, model) AS rn
             FROM quota_windows WHERE model <> '*' GROUP BY account_id, model)
           WHERE rn > ?1)`,
      ),
      pruneBindings: db.prepare("DELETE FROM bindings WHERE expires_at <= ?"),
      loadCooldowns: db.prepare(
        "SELECT account_id, model, until, reason, level, since FROM cooldowns WHERE until > ? ORDER BY account_id, model",
      ),
      loadLocks: db.prepare(
        "SELECT account_id, until, reason, since, fingerprint FROM account_locks WHERE until IS NULL OR until > ? ORDER BY account_id",
      ),
      loadRemoved: db.prepare(
        "SELECT account_id, model, reason, until, since FROM removed_models WHERE until IS NULL OR until > ? ORDER BY account_id, model",
      ),
      loadQuarantined: db.prepare(
        "SELECT fingerprint, account_id, reason, since FROM quarantined_credentials ORDER BY since",
      ),
      loadCircuits: db.prepare(
        "SELECT provider_id, open_until, reason, since FROM provider_circuits WHERE open_until > ? ORDER BY provider_id",
      ),
      loadQuotas: db.prepare(
        `SELECT account_id, window, model, used_percent, remaining, quota_limit, reset_at, updated_at, credential FROM quota_windows
         WHERE (reset_at IS NULL OR reset_at > ?1) AND updated_at > ?2 AND (reset_at IS NOT NULL OR updated_at > ?3) ORDER BY account_id, window, model`,
      ),
      loadBindings: db.prepare("SELECT key, account_id, expires_at FROM bindings WHERE expires_at > ?"),
      loadModels: db.prepare("SELECT account_id, models, discovered_at FROM account_models ORDER BY account_id"),
      deleteStateCooldowns: db.prepare("DELETE FROM cooldowns WHERE account_id = ?"),
      deleteStateLocks: db.prepare("DELETE FROM account_locks WHERE account_id = ?"),
      deleteStateRemoved: db.prepare("DELETE FROM removed_models WHERE account_id = ?"),
      deleteStateQuotas: db.prepare("DELETE FROM quota_windows WHERE account_id = ?"),
      deleteStateBindings: db.prepare("DELETE FROM bindings WHERE account_id = ?"),
    };
  }

  /** Sets the cooldown of (accountId, model); committed on return. @throws StoreError `invalid`, `closed`. */
  setCooldown(c: Cooldown): void {
    this.ctx.assertOpen();
    this.s.cooldownSet.run(
      checkId(c?.accountId, "account id"),
      checkId(c.model, "model"),
      checkTime(c.until, "until"),
      String(c.reason ?? ""),
      intOr(c.level, 0),
      this.ctx.since(c.since),
    );
  }

  /** Clears one cooldown, or all of the account's when model is omitted. Committed on return. */
  clearCooldown(accountId: string, model?: string): void {
    this.ctx.assertOpen();
    if (model === undefined) this.s.cooldownClearAll.run(String(accountId));
    else this.s.cooldownClearOne.run(String(accountId), String(model));
  }

  /** Sets the whole-account lock; committed on return. @throws StoreError `invalid`, `closed`. */
  setLock(l: AccountLock): void {
    this.ctx.assertOpen();
    this.s.lockSet.run(
      checkId(l?.accountId, "account id"),
      l.until === null || l.until === undefined ? null : checkTime(l.until, "until"),
      String(l.reason ?? ""),
      this.ctx.since(l.since),
      typeof l.fingerprint === "string" ? l.fingerprint : null,
    );
  }

  /** Clears the whole-account lock. Committed on return. */
  clearLock(accountId: string): void {
    this.ctx.assertOpen();
    this.s.lockClear.run(String(accountId));
  }

  /** Removes an account/model pairing; committed on return. @throws StoreError `invalid`, `closed`. */
  removeModel(r: RemovedModel): void {
    this.ctx.assertOpen();
    this.s.removedSet.run(
      checkId(r?.accountId, "account id"),
      checkId(r.model, "model"),
      String(r.reason ?? ""),
      r.until === null || r.until === undefined ? null : checkTime(r.until, "until"),
      this.ctx.since(r.since),
    );
  }

  /** Restores one pairing, or all of the account's when model is omitted. Committed on return. */
  restoreModel(accountId: string, model?: string): void {
    this.ctx.assertOpen();
    if (model === undefined) this.s.removedClearAll.run(String(accountId));
    else this.s.removedClearOne.run(String(accountId), String(model));
  }

  /** Quarantines a credential fingerprint; committed on return. @throws StoreError `invalid`, `closed`. */
  quarantine(q: Quarantine): void {
    this.ctx.assertOpen();
    this.s.quarantineSet.run(
      checkId(q?.fingerprint, "fingerprint"),
      q.accountId ?? null,
      String(q.reason ?? ""),
      this.ctx.since(q.since),
    );
  }

  /** Lifts a quarantine. Committed on return. */
  unquarantine(fingerprint: string): void {
    this.ctx.assertOpen();
    this.s.quarantineClear.run(String(fingerprint));
  }

  /** Opens (or extends) a provider circuit; committed on return. @throws StoreError `invalid`, `closed`. */
  setCircuit(c: Circuit): void {
    this.ctx.assertOpen();
    this.s.circuitSet.run(
      checkId(c?.providerId, "provider id"),
      checkTime(c.openUntil, "openUntil"),
      c.reason ?? null,
      this.ctx.since(c.since),
    );
  }

  /** Closes a provider circuit. Committed on return. */
  clearCircuit(providerId: string): void {
    this.ctx.assertOpen();
    this.s.circuitClear.run(String(providerId));
  }

  // -- buffered ---------------------------------------------------------------------------------

  /** Buffers a quota window (coalesced per account/window/model) for the next flush. Never throws. */
  setQuota(q: QuotaWindow): void {
    this.pending.setQuota(q);
  }

  /** Buffers a conversation binding (coalesced per key) for the next flush. Never throws. */
  bind(b: Binding): void {
    this.pending.bind(b);
  }

  /** Drops every quota window of the account, pending and stored (its API key was replaced). Committed on return. */
  clearQuotas(accountId: string): void {
    this.ctx.assertOpen();
    this.pending.forgetQuotas(String(accountId));
    this.s.deleteStateQuotas.run(String(accountId));
  }

  /** Drops a binding, pending or stored. Committed on return. */
  unbind(key: string): void {
    this.ctx.assertOpen();
    this.pending.unbind(key);
    this.s.bindClear.run(String(key));
  }

  /**
   * Flushes pending writes, deletes expired state and returns what is live (see `AccountState`).
   * @throws StoreError `closed`.
   */
  loadAccountState(): AccountState {
    this.ctx.assertOpen();
    this.flush();
    const now = Math.round(this.ctx.now());
    const staleBefore = now - QUOTA_STALE_MS;
    const noResetBefore = now - QUOTA_NO_RESET_STALE_MS;
    const readQuotas = (): AccountState["quotas"] => (this.s.loadQuotas.all(now, staleBefore, noResetBefore) as any[]).map(rowToQuota);
    let state!: AccountState;
    this.ctx.db
      .transaction(() => {
        this.s.pruneCooldowns.run(now);
        this.s.pruneLocks.run(now);
        this.s.pruneRemoved.run(now);
        this.s.pruneCircuits.run(now);
        this.s.pruneQuotas.run(now, staleBefore, noResetBefore);
        this.s.pruneBindings.run(now);
        let quotas = readQuotas();
        if (quotaModelsOverCap(quotas)) {
          this.s.pruneQuotaModels.run(QUOTA_MODELS_PER_ACCOUNT);
          quotas = readQuotas();
        }
        state = {
          cooldowns: (this.s.loadCooldowns.all(now) as any[]).map((r) => ({
            accountId: r.account_id,
            model: r.model,
            until: r.until,
            reason: r.reason,
            level: r.level,
            since: r.since,
          })),
          locks: (this.s.loadLocks.all(now) as any[]).map((r) => ({
            accountId: r.account_id,
            until: r.until,
            reason: r.reason,
            since: r.since,
            ...(r.fingerprint ? { fingerprint: r.fingerprint as string } : {}),
          })),
          removedModels: (this.s.loadRemoved.all(now) as any[]).map((r) => ({
            accountId: r.account_id,
            model: r.model,
            reason: r.reason,
            until: r.until,
            since: r.since,
          })),
          quarantined: (this.s.loadQuarantined.all() as any[]).map((r) =>
            omitUndefined({ fingerprint: r.fingerprint, accountId: r.account_id ?? undefined, reason: r.reason, since: r.since }),
          ),
          circuits: (this.s.loadCircuits.all(now) as any[]).map((r) =>
            omitUndefined({ providerId: r.provider_id, openUntil: r.open_until, reason: r.reason ?? undefined, since: r.since }),
          ),
          quotas,
          bindings: (this.s.loadBindings.all(now) as any[]).map((r) => ({
            key: r.key,
            accountId: r.account_id,
            expiresAt: r.expires_at,
          })),
          discoveredModels: (this.s.loadModels.all() as any[]).map((r) => ({
            accountId: r.account_id,
            models: parseStringArray(r.models),
            discoveredAt: r.discovered_at,
          })),
        };
      })
      .immediate();
    return state;
  }

  /**
   * Deletes every state row of an account (cooldowns, locks, pairings, quota windows, bindings) and
   * its pending bindings and quota windows; quarantines are kept. Runs inside the caller's transaction.
   */
  forgetAccount(accountId: string): void {
    this.pending.forgetAccount(accountId);
    this.s.deleteStateCooldowns.run(accountId);
    this.s.deleteStateLocks.run(accountId);
    this.s.deleteStateRemoved.run(accountId);
    this.s.deleteStateQuotas.run(accountId);
    this.s.deleteStateBindings.run(accountId);
  }

  /** Finalizes the prepared statements (the store is closing). */
  finalize(): void {
    for (const stmt of Object.values(this.s)) stmt.finalize();
  }
}
