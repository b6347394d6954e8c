/**
 * Admin-API routing objects in SQLite (SPEC 2.3, 9.3): the `stored_combos`, `stored_aliases`,
 * `stored_settings` and `account_flags` tables (migration 4). Every write commits before it returns.
 */
import { lookalikeOf } from "../../config/lookalike-names.ts";
import { type RoutingObjectStore, type StoredAlias, type StoredCombo, StoreError } from "../types.ts";
import type { SqliteContext } from "./db.ts";

interface ComboRow {
  name: string;
  spec: string;
  created_at: number;
  updated_at: number;
}
interface AliasRow {
  name: string;
  target: string;
  created_at: number;
  updated_at: number;
}

const nonEmpty = (what: string, s: unknown): string => {
  if (typeof s !== "string" || s.trim() === "") throw new StoreError("invalid", `${what} must be a non-empty string`);
  return s;
};

/** The `RoutingObjectStore` role of the SQLite store. */
export class SqliteRoutingObjects implements RoutingObjectStore {
  private readonly s;

  /** Prepares the statements. */
  constructor(private readonly ctx: SqliteContext) {
    const db = ctx.db;
    this.s = {
      combosAll: db.prepare("SELECT name, spec, created_at, updated_at FROM stored_combos ORDER BY name"),
      comboPut: db.prepare(
        `INSERT INTO stored_combos (name, spec, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at`,
      ),
      routingNames: db.prepare("SELECT name FROM stored_combos UNION ALL SELECT name FROM stored_aliases"),
      // Inserted only when no combo or alias has the name (run after nameFree, in one transaction).
      comboCreate: db.prepare(
        `INSERT INTO stored_combos (name, spec, created_at, updated_at)
         SELECT ?1, ?2, ?3, ?3 WHERE NOT EXISTS (SELECT 1 FROM stored_aliases WHERE name = ?1)
         ON CONFLICT (name) DO NOTHING`,
      ),
      comboDelete: db.prepare("DELETE FROM stored_combos WHERE name = ?"),
      aliasesAll: db.prepare("SELECT name, target, created_at, updated_at FROM stored_aliases ORDER BY name"),
      aliasPut: db.prepare(
        `INSERT INTO stored_aliases (name, target, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET target = excluded.target, updated_at = excluded.updated_at`,
      ),
      aliasCreate: db.prepare(
        `INSERT INTO stored_aliases (name, target, created_at, updated_at)
         SELECT ?1, ?2, ?3, ?3 WHERE NOT EXISTS (SELECT 1 FROM stored_combos WHERE name = ?1)
         ON CONFLICT (name) DO NOTHING`,
      ),
      aliasDelete: db.prepare("DELETE FROM stored_aliases WHERE name = ?"),
      settingsAll: db.prepare("SELECT key, value FROM stored_settings ORDER BY key"),
      settingPut: db.prepare(
        `INSERT INTO stored_settings (key, value, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      settingDelete: db.prepare("DELETE FROM stored_settings WHERE key = ?"),
      flagsDisabled: db.prepare("SELECT account_id FROM account_flags WHERE disabled = 1 ORDER BY account_id"),
      flagPut: db.prepare(
        `INSERT INTO account_flags (account_id, disabled, updated_at) VALUES (?, 1, ?)
         ON CONFLICT (account_id) DO UPDATE SET disabled = 1, updated_at = excluded.updated_at`,
      ),
      flagDelete: db.prepare("DELETE FROM account_flags WHERE account_id = ?"),
    };
  }

  listCombos(): StoredCombo[] {
    this.ctx.assertOpen();
    return (this.s.combosAll.all() as ComboRow[]).map((r) => ({ name: r.name, spec: JSON.parse(r.spec), createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  putCombo(name: string, spec: Record<string, unknown>): void {
    this.ctx.assertOpen();
    const now = Math.round(this.ctx.now());
    this.s.comboPut.run(nonEmpty("combo name", name), JSON.stringify(spec), now, now);
  }

  createCombo(name: string, spec: Record<string, unknown>): boolean {
    this.ctx.assertOpen();
    const n = nonEmpty("combo name", name);
    const json = JSON.stringify(spec);
    return this.ctx.db.transaction(() => this.nameFree(n) && this.s.comboCreate.run(n, json, Math.round(this.ctx.now())).changes > 0).immediate();
  }

  /**
   * Whether no stored combo or alias has the name `n` or one a person cannot tell apart from it (the
   * same after Unicode NFC, or then differing only in case: src/config/lookalike-names.ts). Run inside
   * the create's transaction, so the check and the insert are one step.
   */
  private nameFree(n: string): boolean {
    const names = (this.s.routingNames.all() as Array<{ name: string }>).map((r) => r.name);
    return !names.includes(n) && lookalikeOf(n, names) === undefined;
  }

  deleteCombo(name: string): boolean {
    this.ctx.assertOpen();
    return this.s.comboDelete.run(name).changes > 0;
  }

  listAliases(): StoredAlias[] {
    this.ctx.assertOpen();
    return (this.s.aliasesAll.all() as AliasRow[]).map((r) => ({ name: r.name, target: r.target, createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  putAlias(name: string, target: string): void {
    this.ctx.assertOpen();
    const now = Math.round(this.ctx.now());
    this.s.aliasPut.run(nonEmpty("alias name", name), nonEmpty("alias target", target), now, now);
  }

  createAlias(name: string, target: string): boolean {
    this.ctx.assertOpen();
    const n = nonEmpty("alias name", name);
    const t = nonEmpty("alias target", target);
    return this.ctx.db.transaction(() => this.nameFree(n) && this.s.aliasCreate.run(n, t, Math.round(this.ctx.now())).changes > 0).immediate();
  }

  deleteAlias(name: string): boolean {
    this.ctx.assertOpen();
    return this.s.aliasDelete.run(name).changes > 0;
  }

  getSettings(): Record<string, unknown> {
    this.ctx.assertOpen();
    const out: Record<string, unknown> = {};
    for (const r of this.s.settingsAll.all() as Array<{ key: string; value: string }>) out[r.key] = JSON.parse(r.value);
    return out;
  }

  setSetting(key: string, value: unknown): void {
    this.ctx.assertOpen();
    nonEmpty("settings key", key);
    if (value === null || value === undefined) this.s.settingDelete.run(key);
    else this.s.settingPut.run(key, JSON.stringify(value), Math.round(this.ctx.now()));
  }

  listDisabledAccounts(): string[] {
    this.ctx.assertOpen();
    return (this.s.flagsDisabled.all() as Array<{ account_id: string }>).map((r) => r.account_id);
  }

  setAccountDisabledFlag(accountId: string, disabled: boolean): void {
    this.ctx.assertOpen();
    nonEmpty("account id", accountId);
    if (disabled) this.s.flagPut.run(accountId, Math.round(this.ctx.now()));
    else this.s.flagDelete.run(accountId);
  }
}
