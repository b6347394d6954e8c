/**
 * Admin-API routing objects in PostgreSQL (SPEC 2.3, 9.3, D-2): the `stored_combos`, `stored_aliases`,
 * `stored_settings` and `account_flags` tables (migration 2). Writes commit before they resolve (they
 * need the database: an admin change is refused while it is away) and are announced as "accounts", so
 * the other instances re-read their accounts at once and pick up the objects at their next re-read.
 */
import { lookalikeOf, nameFold } from "../../config/lookalike-names.ts";
import { type RoutingObjectStore, type StoredAlias, type StoredCombo, StoreError } from "../types.ts";
import type { PgContext } from "./db.ts";
import { lockName } from "./name-locks.ts";

const nonEmpty = (what: string, s: unknown): string => {
  if (typeof s !== "string" || s.trim() === "") throw new StoreError("invalid", `${what} must be a non-empty string`);
  return s;
};

/** The `RoutingObjectStore` role of the PostgreSQL store. */
export class PgRoutingObjects implements RoutingObjectStore {
  constructor(private readonly ctx: PgContext) {}

  async listCombos(): Promise<StoredCombo[]> {
    const rows = await this.ctx.read((sql) => sql`SELECT name, spec, created_at, updated_at FROM stored_combos ORDER BY name COLLATE "C"`);
    return (rows as Array<{ name: string; spec: string; created_at: string | number; updated_at: string | number }>).map((r) => ({
      name: r.name,
      spec: JSON.parse(r.spec),
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    }));
  }

  async putCombo(name: string, spec: Record<string, unknown>): Promise<void> {
    this.ctx.assertOpen();
    const n = nonEmpty("combo name", name);
    const now = Math.round(this.ctx.now());
    const json = JSON.stringify(spec);
    await this.ctx.change(
      (sql) => sql`INSERT INTO stored_combos (name, spec, created_at, updated_at) VALUES (${n}, ${json}, ${now}, ${now})
                   ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at`,
    );
    this.ctx.announce("accounts");
  }

  async createCombo(name: string, spec: Record<string, unknown>): Promise<boolean> {
    this.ctx.assertOpen();
    const n = nonEmpty("combo name", name);
    const created = await this.createIn("combo", n, JSON.stringify(spec));
    if (created) this.ctx.announce("accounts");
    return created;
  }

  /**
   * Inserts a combo or alias named `n` unless a combo or alias of that name, or of one a person cannot
   * tell apart from it (the same after Unicode NFC, or then differing only in case:
   * src/config/lookalike-names.ts), exists. The two tables are checked under the advisory locks of the
   * exact and the folded name (name-locks.ts: `Fast`, `fast` and `FAST` share the folded one; the exact
   * one is the lock the previous build takes, for a rolling upgrade); a plain ON CONFLICT covers one
   * table and one exact name only: a combo and an alias of one name, or `Fast` and `fast`, created at
   * once on two instances would both commit.
   */
  private createIn(kind: "combo" | "alias", n: string, value: string): Promise<boolean> {
    const now = Math.round(this.ctx.now());
    return this.ctx.change((sql) =>
      sql.begin(async (tx) => {
        await lockName(tx, "routing_name:", n, nameFold(n));
        const names = ((await tx`SELECT name FROM stored_combos UNION ALL SELECT name FROM stored_aliases`) as Array<{ name: string }>).map((r) => r.name);
        if (names.includes(n) || lookalikeOf(n, names)) return false;
        if (kind === "combo") await tx`INSERT INTO stored_combos (name, spec, created_at, updated_at) VALUES (${n}, ${value}, ${now}, ${now})`;
        else await tx`INSERT INTO stored_aliases (name, target, created_at, updated_at) VALUES (${n}, ${value}, ${now}, ${now})`;
        return true;
      }),
    );
  }

  async deleteCombo(name: string): Promise<boolean> {
    const res = await this.ctx.change((sql) => sql`DELETE FROM stored_combos WHERE name = ${String(name)}`);
    this.ctx.announce("accounts");
    return (res as { count: number }).count > 0;
  }

  async listAliases(): Promise<StoredAlias[]> {
    const rows = await this.ctx.read((sql) => sql`SELECT name, target, created_at, updated_at FROM stored_aliases ORDER BY name COLLATE "C"`);
    return (rows as Array<{ name: string; target: string; created_at: string | number; updated_at: string | number }>).map((r) => ({
      name: r.name,
      target: r.target,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    }));
  }

  async putAlias(name: string, target: string): Promise<void> {
    this.ctx.assertOpen();
    const n = nonEmpty("alias name", name);
    const t = nonEmpty("alias target", target);
    const now = Math.round(this.ctx.now());
    await this.ctx.change(
      (sql) => sql`INSERT INTO stored_aliases (name, target, created_at, updated_at) VALUES (${n}, ${t}, ${now}, ${now})
                   ON CONFLICT (name) DO UPDATE SET target = excluded.target, updated_at = excluded.updated_at`,
    );
    this.ctx.announce("accounts");
  }

  async createAlias(name: string, target: string): Promise<boolean> {
    this.ctx.assertOpen();
    const created = await this.createIn("alias", nonEmpty("alias name", name), nonEmpty("alias target", target));
    if (created) this.ctx.announce("accounts");
    return created;
  }

  async deleteAlias(name: string): Promise<boolean> {
    const res = await this.ctx.change((sql) => sql`DELETE FROM stored_aliases WHERE name = ${String(name)}`);
    this.ctx.announce("accounts");
    return (res as { count: number }).count > 0;
  }

  async getSettings(): Promise<Record<string, unknown>> {
    const rows = await this.ctx.read((sql) => sql`SELECT key, value FROM stored_settings ORDER BY key COLLATE "C"`);
    const out: Record<string, unknown> = {};
    for (const r of rows as Array<{ key: string; value: string }>) out[r.key] = JSON.parse(r.value);
    return out;
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    this.ctx.assertOpen();
    const k = nonEmpty("settings key", key);
    if (value === null || value === undefined) {
      await this.ctx.change((sql) => sql`DELETE FROM stored_settings WHERE key = ${k}`);
    } else {
      const json = JSON.stringify(value);
      const now = Math.round(this.ctx.now());
      await this.ctx.change(
        (sql) => sql`INSERT INTO stored_settings (key, value, updated_at) VALUES (${k}, ${json}, ${now})
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      );
    }
    this.ctx.announce("accounts");
  }

  async listDisabledAccounts(): Promise<string[]> {
    const rows = await this.ctx.read((sql) => sql`SELECT account_id FROM account_flags WHERE disabled ORDER BY account_id COLLATE "C"`);
    return (rows as Array<{ account_id: string }>).map((r) => r.account_id);
  }

  async setAccountDisabledFlag(accountId: string, disabled: boolean): Promise<void> {
    this.ctx.assertOpen();
    const id = nonEmpty("account id", accountId);
    const now = Math.round(this.ctx.now());
    if (disabled) {
      await this.ctx.change(
        (sql) => sql`INSERT INTO account_flags (account_id, disabled, updated_at) VALUES (${id}, TRUE, ${now})
                     ON CONFLICT (account_id) DO UPDATE SET disabled = TRUE, updated_at = excluded.updated_at`,
      );
    } else {
      await this.ctx.change((sql) => sql`DELETE FROM account_flags WHERE account_id = ${id}`);
    }
    this.ctx.announce("accounts");
  }
}
