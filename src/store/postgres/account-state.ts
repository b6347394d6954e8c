/**
 * Account state in PostgreSQL (SPEC 6.3, A-2, D-2): cooldowns, locks, removed pairings, quarantines and
 * circuits are written through and announced as "state" so every other instance re-reads them within
 * about a second; quota windows and bindings are buffered (written by the store's flush, which announces
 * them too). A load returns the database's state with this instance's writes still on their way laid
 * over it, so a re-read never undoes a change this instance has just made.
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
import type { PgContext } from "./db.ts";
import { num, numOrNull } from "./values.ts";

/** Recent writes kept for laying over a load, at most. */
const MAX_RECENT = 1000;

/** A write of this instance, replayable onto a loaded state. */
interface RecentWrite {
  apply: (s: AccountState) => void;
  /** The tick at which it was committed (or kept for replay); undefined while in flight. */
  committedAt?: number;
}

/** The `AccountStateStore` role of the PostgreSQL store. */
export class PgAccountState implements AccountStateStore {
  /** Orders commits and load starts. */
  private tick = 0;
  private recent: RecentWrite[] = [];
  /** Ticks at which the loads now running began. */
  private readonly loads = new Set<number>();

  /**
   * @param pending the store's write buffers (quota windows and bindings wait there)
   * @param flush writes the buffers now
   */
  constructor(
    private readonly ctx: PgContext,
    private readonly pending: PendingWrites,
    private readonly flush: () => Promise<void>,
  ) {}

  /** Sets the cooldown of (accountId, model). @throws StoreError `invalid`, `closed`. */
  setCooldown(c: Cooldown): Promise<void> {
    this.ctx.assertOpen();
    const row = {
      accountId: checkId(c?.accountId, "account id"),
      model: checkId(c.model, "model"),
      until: checkTime(c.until, "until"),
      reason: String(c.reason ?? ""),
      level: intOr(c.level, 0),
      since: this.since(c.since),
    };
    return this.write(
      (s) => {
        s.cooldowns = s.cooldowns.filter((x) => !(x.accountId === row.accountId && x.model === row.model));
        s.cooldowns.push(row);
      },
      (sql) => sql`INSERT INTO cooldowns (account_id, model, until, reason, level, since)
                   VALUES (${row.accountId}, ${row.model}, ${row.until}, ${row.reason}, ${row.level}, ${row.since})
                   ON CONFLICT (account_id, model) DO UPDATE SET until = excluded.until, reason = excluded.reason,
                     level = excluded.level, since = excluded.since`,
    );
  }

  /** Clears one cooldown, or all of the account's when model is omitted. */
  clearCooldown(accountId: string, model?: string): Promise<void> {
    this.ctx.assertOpen();
    const a = String(accountId);
    if (model === undefined) {
      return this.write((s) => void (s.cooldowns = s.cooldowns.filter((x) => x.accountId !== a)), (sql) => sql`DELETE FROM cooldowns WHERE account_id = ${a}`);
    }
    const m = String(model);
    return this.write(
      (s) => void (s.cooldowns = s.cooldowns.filter((x) => !(x.accountId === a && x.model === m))),
      (sql) => sql`DELETE FROM cooldowns WHERE account_id = ${a} AND model = ${m}`,
    );
  }

  /** Sets the whole-account lock. @throws StoreError `invalid`, `closed`. */
  setLock(l: AccountLock): Promise<void> {
    this.ctx.assertOpen();
    const row = {
      accountId: checkId(l?.accountId, "account id"),
      until: l.until === null || l.until === undefined ? null : checkTime(l.until, "until"),
      reason: String(l.reason ?? ""),
      since: this.since(l.since),
      fingerprint: typeof l.fingerprint === "string" ? l.fingerprint : null,
    };
    const kept = { accountId: row.accountId, until: row.until, reason: row.reason, since: row.since, ...(row.fingerprint ? { fingerprint: row.fingerprint } : {}) };
    return this.write(
      (s) => {
        s.locks = s.locks.filter((x) => x.accountId !== row.accountId);
        s.locks.push(kept);
      },
      (sql) => sql`INSERT INTO account_locks (account_id, until, reason, since, fingerprint) VALUES (${row.accountId}, ${row.until}, ${row.reason}, ${row.since}, ${row.fingerprint})
                   ON CONFLICT (account_id) DO UPDATE SET until = excluded.until, reason = excluded.reason, since = excluded.since, fingerprint = excluded.fingerprint`,
    );
  }

  /** Clears the whole-account lock. */
  clearLock(accountId: string): Promise<void> {
    this.ctx.assertOpen();
    const a = String(accountId);
    return this.write((s) => void (s.locks = s.locks.filter((x) => x.accountId !== a)), (sql) => sql`DELETE FROM account_locks WHERE account_id = ${a}`);
  }

  /** Removes an account/model pairing. @throws StoreError `invalid`, `closed`. */
  removeModel(r: RemovedModel): Promise<void> {
    this.ctx.assertOpen();
    const row = {
      accountId: checkId(r?.accountId, "account id"),
      model: checkId(r.model, "model"),
      reason: String(r.reason ?? ""),
      until: r.until === null || r.until === undefined ? null : checkTime(r.until, "until"),
      since: this.since(r.since),
    };
    return this.write(
      (s) => {
        s.removedModels = s.removedModels.filter((x) => !(x.accountId === row.accountId && x.model === row.model));
        s.removedModels.push(row);
      },
      (sql) => sql`INSERT INTO removed_models (account_id, model, reason, until, since)
                   VALUES (${row.accountId}, ${row.model}, ${row.reason}, ${row.until}, ${row.since})
                   ON CONFLICT (account_id, model) DO UPDATE SET reason = excluded.reason, until = excluded.until, since = excluded.since`,
    );
  }

  /** Restores one pairing, or all of the account's when model is omitted. */
  restoreModel(accountId: string, model?: string): Promise<void> {
    this.ctx.assertOpen();
    const a = String(accountId);
    if (model === undefined) {
      return this.write((s) => void (s.removedModels = s.removedModels.filter((x) => x.accountId !== a)), (sql) => sql`DELETE FROM removed_models WHERE account_id = ${a}`);
    }
    const m = String(model);
    return this.write(
      (s) => void (s.removedModels = s.removedModels.filter((x) => !(x.accountId === a && x.model === m))),
      (sql) => sql`DELETE FROM removed_models WHERE account_id = ${a} AND model = ${m}`,
    );
  }

  /** Quarantines a credential fingerprint. @throws StoreError `invalid`, `closed`. */
  quarantine(q: Quarantine): Promise<void> {
    this.ctx.assertOpen();
    const row = { fingerprint: checkId(q?.fingerprint, "fingerprint"), accountId: q.accountId ?? null, reason: String(q.reason ?? ""), since: this.since(q.since) };
    return this.write(
      (s) => {
        s.quarantined = s.quarantined.filter((x) => x.fingerprint !== row.fingerprint);
        s.quarantined.push(omitUndefined({ fingerprint: row.fingerprint, accountId: row.accountId ?? undefined, reason: row.reason, since: row.since }));
      },
      (sql) => sql`INSERT INTO quarantined_credentials (fingerprint, account_id, reason, since) VALUES (${row.fingerprint}, ${row.accountId}, ${row.reason}, ${row.since})
                   ON CONFLICT (fingerprint) DO UPDATE SET account_id = excluded.account_id, reason = excluded.reason, since = excluded.since`,
    );
  }

  /** Lifts a quarantine. */
  unquarantine(fingerprint: string): Promise<void> {
    this.ctx.assertOpen();
    const f = String(fingerprint);
    return this.write((s) => void (s.quarantined = s.quarantined.filter((x) => x.fingerprint !== f)), (sql) => sql`DELETE FROM quarantined_credentials WHERE fingerprint = ${f}`);
  }

  /** Opens (or extends) a provider circuit. @throws StoreError `invalid`, `closed`. */
  setCircuit(c: Circuit): Promise<void> {
    this.ctx.assertOpen();
    const row = { providerId: checkId(c?.providerId, "provider id"), openUntil: checkTime(c.openUntil, "openUntil"), reason: c.reason ?? null, since: this.since(c.since) };
    return this.write(
      (s) => {
        s.circuits = s.circuits.filter((x) => x.providerId !== row.providerId);
        s.circuits.push(omitUndefined({ providerId: row.providerId, openUntil: row.openUntil, reason: row.reason ?? undefined, since: row.since }));
      },
      (sql) => sql`INSERT INTO provider_circuits (provider_id, open_until, reason, since) VALUES (${row.providerId}, ${row.openUntil}, ${row.reason}, ${row.since})
                   ON CONFLICT (provider_id) DO UPDATE SET open_until = excluded.open_until, reason = excluded.reason, since = excluded.since`,
    );
  }

  /** Closes a provider circuit. */
  clearCircuit(providerId: string): Promise<void> {
    this.ctx.assertOpen();
    const p = String(providerId);
    return this.write((s) => void (s.circuits = s.circuits.filter((x) => x.providerId !== p)), (sql) => sql`DELETE FROM provider_circuits WHERE provider_id = ${p}`);
  }

  /** Buffers a quota window for the next flush. Never throws. */
  setQuota(q: QuotaWindow): void {
    this.pending.setQuota(q);
  }

  /** Buffers a conversation binding for the next flush. Never throws. */
  bind(b: Binding): void {
    this.pending.bind(b);
  }

  /** Drops every quota window of the account, pending and stored (its API key was replaced). */
  clearQuotas(accountId: string): Promise<void> {
    this.ctx.assertOpen();
    const a = String(accountId);
    this.pending.forgetQuotas(a);
    return this.write((s) => void (s.quotas = s.quotas.filter((x) => x.accountId !== a)), (sql) => sql`DELETE FROM quota_windows WHERE account_id = ${a}`);
  }

  /** Drops a binding, pending or stored. */
  unbind(key: string): Promise<void> {
    this.ctx.assertOpen();
    this.pending.unbind(key);
    const k = String(key);
    return this.write((s) => void (s.bindings = s.bindings.filter((x) => x.key !== k)), (sql) => sql`DELETE FROM bindings WHERE key = ${k}`);
  }

  /**
   * Flushes pending writes, deletes expired state and returns what is live, with this instance's
   * writes that are still on their way laid over it. @throws StoreError `closed`, `unavailable`.
   */
  async loadAccountState(): Promise<AccountState> {
    this.ctx.assertOpen();
    await this.flush();
    const startedAt = ++this.tick;
    this.loads.add(startedAt);
    try {
      const state = await this.read();
      // This instance's writes not yet committed when the read began win over what was read.
      for (const w of this.recent) if (w.committedAt === undefined || w.committedAt > startedAt) w.apply(state);
      return state;
    } finally {
      this.loads.delete(startedAt);
      this.prune();
    }
  }

  private async read(): Promise<AccountState> {
    const now = Math.round(this.ctx.now());
    const staleBefore = now - QUOTA_STALE_MS;
    const noResetBefore = now - QUOTA_NO_RESET_STALE_MS;
    const state = await this.ctx.read((sql) =>
      sql.begin(async (tx) => {
        await tx`DELETE FROM cooldowns WHERE until <= ${now}`;
        await tx`DELETE FROM account_locks WHERE until IS NOT NULL AND until <= ${now}`;
        await tx`DELETE FROM removed_models WHERE until IS NOT NULL AND until <= ${now}`;
        await tx`DELETE FROM provider_circuits WHERE open_until <= ${now}`;
        await tx`DELETE FROM quota_windows WHERE (reset_at IS NOT NULL AND reset_at <= ${now}) OR updated_at <= ${staleBefore} OR (reset_at IS NULL AND updated_at <= ${noResetBefore})`;
        await tx`DELETE FROM bindings WHERE expires_at <= ${now}`;
        const selectQuotas = () => tx`SELECT account_id, "window", model, used_percent, remaining, quota_limit, reset_at, updated_at, credential FROM quota_windows
             WHERE (reset_at IS NULL OR reset_at > ${now}) AND updated_at > ${staleBefore} AND (reset_at IS NOT NULL OR updated_at > ${noResetBefore}) ORDER BY account_id COLLATE "C", "window" COLLATE "C", model COLLATE "C"`;
        const [cooldowns, locks, removed, quarantined, circuits, quotas, bindings, models] = await Promise.all([
          tx`SELECT account_id, model, until, reason, level, since FROM cooldowns WHERE until > ${now} ORDER BY account_id COLLATE "C", model COLLATE "C"`,
          tx`SELECT account_id, until, reason, since, fingerprint FROM account_locks WHERE until IS NULL OR until > ${now} ORDER BY account_id COLLATE "C"`,
          tx`SELECT account_id, model, reason, until, since FROM removed_models WHERE until IS NULL OR until > ${now} ORDER BY account_id COLLATE "C", model COLLATE "C"`,
          tx`SELECT fingerprint, account_id, reason, since FROM quarantined_credentials ORDER BY since`,
          tx`SELECT provider_id, open_until, reason, since FROM provider_circuits WHERE open_until > ${now} ORDER BY provider_id COLLATE "C"`,
          selectQuotas(),
          tx`SELECT key, account_id, expires_at FROM bindings WHERE expires_at > ${now}`,
          tx`SELECT account_id, models, discovered_at FROM account_models ORDER BY account_id COLLATE "C"`,
        ]);
        const s: AccountState = {
          cooldowns: (cooldowns as any[]).map((r) => ({ accountId: r.account_id, model: r.model, until: num(r.until), reason: r.reason, level: r.level, since: num(r.since) })),
          locks: (locks as any[]).map((r) => ({ accountId: r.account_id, until: numOrNull(r.until), reason: r.reason, since: num(r.since), ...(r.fingerprint ? { fingerprint: r.fingerprint as string } : {}) })),
          removedModels: (removed as any[]).map((r) => ({ accountId: r.account_id, model: r.model, reason: r.reason, until: numOrNull(r.until), since: num(r.since) })),
          quarantined: (quarantined as any[]).map((r) => omitUndefined({ fingerprint: r.fingerprint, accountId: r.account_id ?? undefined, reason: r.reason, since: num(r.since) })),
          circuits: (circuits as any[]).map((r) => omitUndefined({ providerId: r.provider_id, openUntil: num(r.open_until), reason: r.reason ?? undefined, since: num(r.since) })),
          quotas: (quotas as any[]).map(rowToQuota),
          bindings: (bindings as any[]).map((r) => ({ key: r.key, accountId: r.account_id, expiresAt: num(r.expires_at) })),
          discoveredModels: (models as any[]).map((r) => ({ accountId: r.account_id, models: parseStringArray(r.models), discoveredAt: num(r.discovered_at) })),
        };
        if (quotaModelsOverCap(s.quotas)) {
          // past QUOTA_MODELS_PER_ACCOUNT models (other than '*') of an account, the least recently updated go
          await tx`DELETE FROM quota_windows WHERE model <> '*' AND (account_id, model) IN (
                     SELECT account_id, model FROM (
                       SELECT account_id, model, ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY MAX(updated_at) DESC, model COLLATE "C") AS rn
                       FROM quota_windows WHERE model <> '*' GROUP BY account_id, model) ranked
                     WHERE rn > ${QUOTA_MODELS_PER_ACCOUNT})`;
          s.quotas = ((await selectQuotas()) as any[]).map(rowToQuota);
        }
        return s;
      }),
    );
    return state;
  }

  /** Drops an account's pending bindings and quota windows (it is being deleted). */
  forgetPending(accountId: string): void {
    this.pending.forgetAccount(accountId);
  }

  private since(v: number | undefined): number {
    return typeof v === "number" && Number.isFinite(v) ? Math.round(v) : Math.round(this.ctx.now());
  }

  /** A write-through statement, remembered for laying over loads that may not see it. */
  private async write(apply: (s: AccountState) => void, fn: Parameters<PgContext["write"]>[1]): Promise<void> {
    const w: RecentWrite = { apply };
    this.recent.push(w);
    if (this.recent.length > MAX_RECENT) this.recent.splice(0, this.recent.length - MAX_RECENT);
    try {
      await this.ctx.write("state", fn);
    } finally {
      w.committedAt = ++this.tick;
      this.prune();
    }
  }

  /** Forgets writes every running (and future) load reads from the database. */
  private prune(): void {
    const oldest = this.loads.size ? Math.min(...this.loads) : Infinity;
    this.recent = this.recent.filter((w) => w.committedAt === undefined || w.committedAt > oldest);
  }
}
