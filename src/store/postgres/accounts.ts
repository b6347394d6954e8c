/**
 * Stored accounts in PostgreSQL (SPEC A-1, P-6, P-7, D-2): the `accounts`, `account_models` and
 * `credential_overrides` tables. Every change is announced as "accounts" so the other instances re-read
 * their account list (a rotated credential included) within about a second. Credential writes made
 * while the database is away are kept and replayed when it returns (the new token is in memory).
 */
import type { Account, Credential } from "../../../pipeline/ports.ts";
import { type AccountRow, checkCredential, checkId, intOr, intOrNull, rowToAccount } from "../rows.ts";
import { type AccountInput, type AccountStore, type CredentialOverride, StoreError } from "../types.ts";
import type { PgContext } from "./db.ts";

/** The `AccountStore` role of the PostgreSQL store. */
export class PgAccounts implements AccountStore {
  /** @param forgetPending drops an account's pending bindings and quota windows (it is being deleted) */
  constructor(
    private readonly ctx: PgContext,
    private readonly forgetPending: (accountId: string) => void,
  ) {}

  /** Stored accounts (source `db`), by priority then id. @throws StoreError `closed`, `unavailable`. */
  async listAccounts(): Promise<Account[]> {
    const rows = await this.ctx.read(
      (sql) => sql`SELECT a.id, a.provider_id, a.credential, a.priority, a.max_concurrency, a.proxy, a.disabled, m.models
                   FROM accounts a LEFT JOIN account_models m ON m.account_id = a.id ORDER BY a.priority, a.id COLLATE "C"`,
    );
    return (rows as AccountRow[]).map(rowToAccount);
  }

  /** One stored account, or undefined. @throws StoreError `closed`, `unavailable`. */
  async getAccount(id: string): Promise<Account | undefined> {
    const rows = await this.ctx.read(
      (sql) => sql`SELECT a.id, a.provider_id, a.credential, a.priority, a.max_concurrency, a.proxy, a.disabled, m.models
                   FROM accounts a LEFT JOIN account_models m ON m.account_id = a.id WHERE a.id = ${String(id)}`,
    );
    const row = rows[0] as AccountRow | undefined;
    return row ? rowToAccount(row) : undefined;
  }

  /** Creates or replaces a stored account. @throws StoreError `invalid`, `closed`, `unavailable`. */
  async upsertAccount(account: AccountInput): Promise<void> {
    this.ctx.assertOpen();
    const id = checkId(account?.id, "account id");
    const providerId = checkId(account.providerId, "provider id");
    const credential = JSON.stringify(checkCredential(account.credential, id));
    const now = Math.round(this.ctx.now());
    const priority = intOr(account.priority, 0);
    const maxConcurrency = intOrNull(account.maxConcurrency);
    const proxy = typeof account.proxy === "string" && account.proxy ? account.proxy : null;
    const disabled = Boolean(account.disabled);
    await this.ctx.change(
      (sql) => sql`INSERT INTO accounts (id, provider_id, credential, priority, max_concurrency, proxy, disabled, created_at, updated_at)
                   VALUES (${id}, ${providerId}, ${credential}, ${priority}, ${maxConcurrency}, ${proxy}, ${disabled}, ${now}, ${now})
                   ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, credential = excluded.credential,
                     priority = excluded.priority, max_concurrency = excluded.max_concurrency, proxy = excluded.proxy,
                     disabled = excluded.disabled, updated_at = excluded.updated_at`,
    );
    this.ctx.announce("accounts");
  }

  /**
   * Replaces an account's credential (OAuth refresh), committed before it resolves; kept and replayed
   * while the database is away. @throws StoreError `not_found`, `invalid`, `closed`.
   */
  async updateCredential(id: string, credential: Credential): Promise<void> {
    this.ctx.assertOpen();
    const cred = JSON.stringify(checkCredential(credential, id));
    const now = Math.round(this.ctx.now());
    let changed = -1;
    await this.ctx.write("accounts", async (sql) => {
      const res = await sql`UPDATE accounts SET credential = ${cred}, updated_at = ${now} WHERE id = ${String(id)}`;
      changed = res.count;
    });
    if (changed === 0) throw new StoreError("not_found", `no stored account ${JSON.stringify(id)}`);
  }

  /** Records the refreshed credential of a config-file account (kept and replayed while the database is away). */
  async setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential): Promise<void> {
    this.ctx.assertOpen();
    const cred = JSON.stringify(checkCredential(credential, accountId));
    const now = Math.round(this.ctx.now());
    await this.ctx.write(
      "accounts",
      (sql) => sql`INSERT INTO credential_overrides (account_id, base_fingerprint, credential, updated_at)
                   VALUES (${String(accountId)}, ${String(baseFingerprint)}, ${cred}, ${now})
                   ON CONFLICT (account_id) DO UPDATE SET base_fingerprint = excluded.base_fingerprint,
                     credential = excluded.credential, updated_at = excluded.updated_at`,
    );
  }

  /** Every credential override. @throws StoreError `closed`, `unavailable`. */
  async listCredentialOverrides(): Promise<CredentialOverride[]> {
    const rows = await this.ctx.read((sql) => sql`SELECT account_id, base_fingerprint, credential FROM credential_overrides`);
    return (rows as Array<{ account_id: string; base_fingerprint: string; credential: string }>).map((r) => ({
      accountId: r.account_id,
      baseFingerprint: r.base_fingerprint,
      credential: JSON.parse(r.credential) as Credential,
    }));
  }

  /** Forgets the override of an account. */
  async clearCredentialOverride(accountId: string): Promise<void> {
    this.ctx.assertOpen();
    await this.ctx.write("accounts", (sql) => sql`DELETE FROM credential_overrides WHERE account_id = ${String(accountId)}`);
  }

  /** Enables or disables a stored account. @throws StoreError `not_found`, `closed`, `unavailable`. */
  async setAccountDisabled(id: string, disabled: boolean): Promise<void> {
    const now = Math.round(this.ctx.now());
    const res = await this.ctx.change((sql) => sql`UPDATE accounts SET disabled = ${Boolean(disabled)}, updated_at = ${now} WHERE id = ${String(id)}`);
    if (res.count === 0) throw new StoreError("not_found", `no stored account ${JSON.stringify(id)}`);
    this.ctx.announce("accounts");
  }

  /** Deletes a stored account and its state (not quarantines). @returns false when it did not exist. */
  async deleteAccount(id: string): Promise<boolean> {
    this.ctx.assertOpen();
    const key = String(id);
    this.forgetPending(key);
    const existed = await this.ctx.change((sql) =>
      sql.begin(async (tx) => {
        const res = await tx`DELETE FROM accounts WHERE id = ${key}`;
        await tx`DELETE FROM account_models WHERE account_id = ${key}`;
        await tx`DELETE FROM cooldowns WHERE account_id = ${key}`;
        await tx`DELETE FROM account_locks WHERE account_id = ${key}`;
        await tx`DELETE FROM removed_models WHERE account_id = ${key}`;
        await tx`DELETE FROM quota_windows WHERE account_id = ${key}`;
        await tx`DELETE FROM bindings WHERE account_id = ${key}`;
        return res.count > 0;
      }),
    );
    this.ctx.announce("accounts");
    return existed;
  }

  /** Records the models an account advertised; null forgets them. @throws StoreError `invalid`, `closed`. */
  async setAccountModels(id: string, models: string[] | null): Promise<void> {
    this.ctx.assertOpen();
    const key = checkId(id, "account id");
    if (models === null) {
      await this.ctx.write("accounts", (sql) => sql`DELETE FROM account_models WHERE account_id = ${key}`);
      return;
    }
    if (!Array.isArray(models) || models.some((m) => typeof m !== "string")) {
      throw new StoreError("invalid", `models of account ${JSON.stringify(key)} must be an array of strings`);
    }
    const json = JSON.stringify([...new Set(models)]);
    const now = Math.round(this.ctx.now());
    await this.ctx.write(
      "accounts",
      (sql) => sql`INSERT INTO account_models (account_id, models, discovered_at) VALUES (${key}, ${json}, ${now})
                   ON CONFLICT (account_id) DO UPDATE SET models = excluded.models, discovered_at = excluded.discovered_at`,
    );
  }
}
