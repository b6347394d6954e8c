/**
 * Stored accounts in SQLite (SPEC A-1, P-6, P-7, P-9): the `accounts`, `account_models` and
 * `credential_overrides` tables. Credentials are committed with `synchronous=FULL` (fsync of the WAL)
 * so a rotated refresh token survives even a power loss.
 */
import type { Account, Credential } from "../../../pipeline/ports.ts";
import { type AccountRow, checkCredential, checkId, intOr, intOrNull, rowToAccount } from "../rows.ts";
import { type AccountInput, type AccountStore, type CredentialOverride, StoreError } from "../types.ts";
import type { SqliteContext } from "./db.ts";

/** The `AccountStore` role of the SQLite store. */
export class SqliteAccounts implements AccountStore {
  private readonly s;

  /**
   * Prepares the statements.
   * @param forgetState deletes an account's state (cooldowns, locks, pairings, quotas, bindings, also
   *   pending ones); called inside `deleteAccount`'s transaction
   */
  constructor(
    private readonly ctx: SqliteContext,
    private readonly forgetState: (accountId: string) => void,
  ) {
    const db = ctx.db;
    this.s = {
      accountsAll: db.prepare(
        `SELECT a.id, a.provider_id, a.credential, a.priority, a.max_concurrency, a.proxy, a.disabled, m.models
         FROM accounts a LEFT JOIN account_models m ON m.account_id = a.id ORDER BY a.priority, a.id`,
      ),
      accountOne: db.prepare(
        `SELECT a.id, a.provider_id, a.credential, a.priority, a.max_concurrency, a.proxy, a.disabled, m.models
         FROM accounts a LEFT JOIN account_models m ON m.account_id = a.id WHERE a.id = ?`,
      ),
      accountUpsert: db.prepare(
        `INSERT INTO accounts (id, provider_id, credential, priority, max_concurrency, proxy, disabled, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, credential = excluded.credential,
           priority = excluded.priority, max_concurrency = excluded.max_concurrency, proxy = excluded.proxy,
           disabled = excluded.disabled, updated_at = excluded.updated_at`,
      ),
      accountCredential: db.prepare("UPDATE accounts SET credential = ?, updated_at = ? WHERE id = ?"),
      overrideUpsert: db.prepare(
        "INSERT INTO credential_overrides (account_id, base_fingerprint, credential, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(account_id) DO UPDATE SET base_fingerprint = excluded.base_fingerprint, credential = excluded.credential, updated_at = excluded.updated_at",
      ),
      overrideList: db.prepare("SELECT account_id, base_fingerprint, credential FROM credential_overrides"),
      overrideDelete: db.prepare("DELETE FROM credential_overrides WHERE account_id = ?"),
      accountDisabled: db.prepare("UPDATE accounts SET disabled = ?, updated_at = ? WHERE id = ?"),
      accountDelete: db.prepare("DELETE FROM accounts WHERE id = ?"),
      modelsUpsert: db.prepare(
        `INSERT INTO account_models (account_id, models, discovered_at) VALUES (?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET models = excluded.models, discovered_at = excluded.discovered_at`,
      ),
      modelsDelete: db.prepare("DELETE FROM account_models WHERE account_id = ?"),
    };
  }

  /** Stored accounts (source `db`), by priority then id, with their discovered models. */
  listAccounts(): Account[] {
    this.ctx.assertOpen();
    return (this.s.accountsAll.all() as AccountRow[]).map(rowToAccount);
  }

  /** One stored account, or undefined. */
  getAccount(id: string): Account | undefined {
    this.ctx.assertOpen();
    const row = this.s.accountOne.get(String(id)) as AccountRow | null;
    return row ? rowToAccount(row) : undefined;
  }

  /**
   * Creates or replaces a stored account, committed with fsync (it carries a credential).
   * @throws StoreError `invalid` for an empty id/provider or a malformed credential, `closed`.
   */
  upsertAccount(account: AccountInput): void {
    this.ctx.assertOpen();
    const id = checkId(account?.id, "account id");
    const providerId = checkId(account.providerId, "provider id");
    const credential = checkCredential(account.credential, id);
    const now = Math.round(this.ctx.now());
    this.ctx.durably(() =>
      this.s.accountUpsert.run(
        id,
        providerId,
        JSON.stringify(credential),
        intOr(account.priority, 0),
        intOrNull(account.maxConcurrency),
        typeof account.proxy === "string" && account.proxy ? account.proxy : null,
        account.disabled ? 1 : 0,
        now,
        now,
      ),
    );
  }

  /**
   * Replaces an account's credential, committed with fsync before returning (SPEC P-7).
   * @throws StoreError `not_found`, `invalid` (malformed credential), `closed`.
   */
  updateCredential(id: string, credential: Credential): void {
    this.ctx.assertOpen();
    const cred = checkCredential(credential, id);
    const changes = this.ctx.durably(
      () => this.s.accountCredential.run(JSON.stringify(cred), Math.round(this.ctx.now()), String(id)).changes,
    );
    if (changes === 0) throw new StoreError("not_found", `no stored account ${JSON.stringify(id)}`);
  }

  /**
   * Records the refreshed credential of a config-file account, durably (fsync), keyed by the
   * fingerprint of the file's credential it replaces. @throws StoreError `invalid`, `closed`.
   */
  setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential): void {
    this.ctx.assertOpen();
    const cred = checkCredential(credential, accountId);
    this.ctx.durably(() =>
      this.s.overrideUpsert.run(String(accountId), String(baseFingerprint), JSON.stringify(cred), Math.round(this.ctx.now())),
    );
  }

  /** Every credential override (config-file accounts refreshed by the gateway). */
  listCredentialOverrides(): CredentialOverride[] {
    this.ctx.assertOpen();
    return (this.s.overrideList.all() as Array<{ account_id: string; base_fingerprint: string; credential: string }>).map((r) => ({
      accountId: r.account_id,
      baseFingerprint: r.base_fingerprint,
      credential: JSON.parse(r.credential) as Credential,
    }));
  }

  /** Forgets the override of an account. */
  clearCredentialOverride(accountId: string): void {
    this.ctx.assertOpen();
    this.s.overrideDelete.run(String(accountId));
  }

  /** Enables or disables a stored account. @throws StoreError `not_found`, `closed`. */
  setAccountDisabled(id: string, disabled: boolean): void {
    this.ctx.assertOpen();
    const changes = this.s.accountDisabled.run(disabled ? 1 : 0, Math.round(this.ctx.now()), String(id)).changes;
    if (changes === 0) throw new StoreError("not_found", `no stored account ${JSON.stringify(id)}`);
  }

  /** Deletes a stored account and its state (not quarantines). @returns false when it did not exist. */
  deleteAccount(id: string): boolean {
    this.ctx.assertOpen();
    const key = String(id);
    let existed = false;
    this.ctx.db
      .transaction(() => {
        existed = this.s.accountDelete.run(key).changes > 0;
        this.s.modelsDelete.run(key);
        this.forgetState(key);
      })
      .immediate();
    return existed;
  }

  /**
   * Records the models an account advertised (config or stored account); null forgets them.
   * @throws StoreError `invalid` when models is not an array of strings, `closed`.
   */
  setAccountModels(id: string, models: string[] | null): void {
    this.ctx.assertOpen();
    const key = checkId(id, "account id");
    if (models === null) {
      this.s.modelsDelete.run(key);
      return;
    }
    if (!Array.isArray(models) || models.some((m) => typeof m !== "string")) {
      throw new StoreError("invalid", `models of account ${JSON.stringify(key)} must be an array of strings`);
    }
    this.s.modelsUpsert.run(key, JSON.stringify([...new Set(models)]), Math.round(this.ctx.now()));
  }

  /** Finalizes the prepared statements (the store is closing). */
  finalize(): void {
    for (const stmt of Object.values(this.s)) stmt.finalize();
  }
}
