/**
 * Client keys in SQLite (SPEC G-2): the `client_keys` table holds the SHA-256 of each stored key's
 * secret; `lookup` answers from the in-memory {@link KeyCache}, which is re-read when another
 * connection commits (`PRAGMA data_version`, checked by the store's timer).
 */
import { FIRST_STORED_GENERATION, keyIdFor } from "../../../pipeline/index.ts";
import type { KeyLimits } from "../../../pipeline/ports.ts";
import { CachedKeys, type KeyRow } from "../key-cache.ts";
import { changedLimits, checkGrace, checkLimits, checkName, checkScopes, checkTag, freezeKey, parseLimits, rotated, type RotatedRow } from "../rows.ts";
import { generateKeySecret, keyPrefix, sha256Hex } from "../secrets.ts";
import { CASE_ONLY, caseTwin, type CreatedKey, type KeyBudgetRow, type KeyChange, type KeyInfo, type KeyStore, type RotatedKey, StoreError } from "../types.ts";
import type { SqliteContext } from "./db.ts";

/**
 * Writes one key budget window (SPEC 9.6), replacing the key's row of that window size: its start, its
 * tokens, USD and unpriced requests (schema 20). Parameters: {@link budgetParams}. Shared with the
 * usage flush (./flush.ts), which writes the changed windows in its transaction.
 */
export const BUDGET_UPSERT = `INSERT INTO key_budget_windows (key_name, window, started_at, tokens, usd, unpriced) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (key_name, window) DO UPDATE SET started_at = excluded.started_at, tokens = excluded.tokens, usd = excluded.usd, unpriced = excluded.unpriced`;

/** {@link BUDGET_UPSERT}'s parameters for a row (numbers that are not finite written as 0). */
export function budgetParams(r: KeyBudgetRow): [string, string, number, number, number, number] {
  return [String(r.keyName), String(r.window), Math.round(r.startedAt), Number(r.tokens) || 0, Number(r.usd) || 0, Math.max(0, Math.round(Number(r.unpriced) || 0))];
}

/** The `KeyStore` role of the SQLite store. */
export class SqliteKeys extends CachedKeys implements KeyStore {
  private dataVersion = 0;
  private readonly s;

  /** Prepares the statements and loads the key cache. */
  constructor(private readonly ctx: SqliteContext) {
    super(() => ctx.now());
    const db = ctx.db;
    this.s = {
      dataVersion: db.prepare("PRAGMA data_version"),
      keysAll: db.prepare("SELECT name, hash, scopes, tag, created_at, revoked_at, limits, generation, prev_hash, prev_until, disabled_at, prefix, rotated_at FROM client_keys ORDER BY name, generation"),
      // The name's keys so far: how many are active (0 or 1) and the newest generation (null: none yet).
      activeNames: db.prepare("SELECT name FROM client_keys WHERE revoked_at IS NULL"),
      keyByName: db.prepare("SELECT COUNT(*) FILTER (WHERE revoked_at IS NULL) AS active, MAX(generation) AS generation FROM client_keys WHERE name = ?"),
      keyInsert: db.prepare("INSERT INTO client_keys (name, generation, hash, scopes, tag, created_at, revoked_at, limits, prefix) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)"),
      budgetsAll: db.prepare("SELECT key_name, window, started_at, tokens, usd, unpriced FROM key_budget_windows"),
      budgetUpsert: db.prepare(BUDGET_UPSERT),
      // SET reads the row as it was: the previous hash is the one being replaced.
      keyRotate: db.prepare(
        `UPDATE client_keys SET prev_hash = CASE WHEN ? IS NULL THEN NULL ELSE hash END, prev_until = ?, hash = ?, prefix = ?, rotated_at = ?
         WHERE name = ? AND revoked_at IS NULL RETURNING name, scopes, tag, created_at, limits, generation`,
      ),
      keyActive: db.prepare("SELECT tag, limits, scopes FROM client_keys WHERE name = ? AND revoked_at IS NULL"),
      keyUpdate: db.prepare("UPDATE client_keys SET tag = ?, limits = ?, scopes = ? WHERE name = ? AND revoked_at IS NULL"),
      keyRevoke: db.prepare("UPDATE client_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL"),
      keyDisable: db.prepare("UPDATE client_keys SET disabled_at = COALESCE(disabled_at, ?) WHERE name = ? AND revoked_at IS NULL"),
      keyEnable: db.prepare("UPDATE client_keys SET disabled_at = NULL WHERE name = ? AND revoked_at IS NULL"),
    };
    this.reloadKeys();
  }

  /**
   * Creates a stored key; returns its secret once (only the SHA-256 is written). A key created with the
   * name of a revoked key is a new row, one generation later (its own id, pipeline/key-id.ts); the
   * revoked key's row stays listed with its dates.
   * @throws StoreError `conflict` (active key of that name), `read_only` (config key of that name),
   *   `invalid` (bad name, scopes or tag), `closed`.
   */
  createKey(name: string, scopes: string[] = [], tag?: string, limits?: KeyLimits): CreatedKey {
    this.ctx.assertOpen();
    const n = checkName(name);
    const sc = checkScopes(scopes);
    const tg = checkTag(tag);
    const lim = checkLimits(limits);
    this.refuseConfigName(n);
    const secret = generateKeySecret();
    const createdAt = Math.round(this.ctx.now());
    const generation = this.ctx.db
      .transaction(() => {
        const row = this.s.keyByName.get(n) as { active: number; generation: number | null };
        if (row.active > 0) throw new StoreError("conflict", `a key named ${JSON.stringify(n)} already exists`);
        const twin = caseTwin(n, (this.s.activeNames.all() as Array<{ name: string }>).map((r) => r.name));
        if (twin !== undefined) throw new StoreError("conflict", `a key named ${JSON.stringify(twin)} already exists ${CASE_ONLY}`);
        // A name's first stored key is generation 1 (pipeline/key-id.ts FIRST_STORED_GENERATION): never
        // counted under the bare name, which a config key of that name may have counted under. A revoked
        // key's row stays (its dates in `keys list`); the new key is the next generation, its own row.
        const generation = row.generation === null ? FIRST_STORED_GENERATION : row.generation + 1;
        this.s.keyInsert.run(n, generation, sha256Hex(secret), JSON.stringify(sc), tg ?? null, createdAt, lim ? JSON.stringify(lim) : null, keyPrefix(secret) ?? null);
        return generation;
      })
      .immediate();
    this.reloadKeys();
    return { secret, key: freezeKey({ name: n, id: keyIdFor(n, generation), scopes: sc, tag: tg, limits: lim, source: "db" }), createdAt };
  }

  /** Every key, config and stored (active and revoked), sorted by name; no secrets, no hashes. */
  listKeys(): KeyInfo[] {
    this.ctx.assertOpen();
    return this.cache.list(this.s.keysAll.all() as KeyRow[]);
  }

  /**
   * Revokes the active stored key of that name; effective for `lookup` on return.
   * @returns false when there is none. @throws StoreError `read_only` for a config key's name.
   */
  revokeKey(name: string): boolean {
    this.ctx.assertOpen();
    const changed = this.s.keyRevoke.run(Math.round(this.ctx.now()), String(name)).changes > 0;
    if (changed) {
      this.reloadKeys();
      return true;
    }
    this.refuseConfigName(name);
    return false;
  }

  /** Disables or enables the active stored key of that name (KeyStore.setKeyDisabled). @returns false when there is none. @throws StoreError `read_only`, `closed`. */
  setKeyDisabled(name: string, disabled: boolean): boolean {
    this.ctx.assertOpen();
    // The stored key of the name first (one may share its name with a config key: it is the one that can
    // be turned off, as revokeKey does); a config key alone is read-only.
    const res = disabled ? this.s.keyDisable.run(Math.round(this.ctx.now()), String(name)) : this.s.keyEnable.run(String(name));
    if (res.changes === 0) {
      this.refuseConfigName(name);
      return false;
    }
    this.reloadKeys();
    return true;
  }

  /** A new secret for the active stored key of that name (KeyStore.rotateKey). @throws StoreError `not_found`, `read_only`, `invalid`, `closed`. */
  rotateKey(name: string, graceMs?: number): RotatedKey {
    this.ctx.assertOpen();
    const grace = checkGrace(graceMs);
    const secret = generateKeySecret();
    const now = Math.round(this.ctx.now());
    const until = grace > 0 ? now + grace : null;
    // The stored key of the name first (see setKeyDisabled); a config key alone is read-only.
    const row = this.s.keyRotate.get(until, until, sha256Hex(secret), keyPrefix(secret) ?? null, now, String(name)) as RotatedRow | null;
    if (!row) {
      this.refuseConfigName(name);
      throw new StoreError("not_found", `no active key named ${JSON.stringify(name)}`);
    }
    this.reloadKeys();
    return rotated(secret, row, until, now);
  }

  /**
   * New limits, tag and scopes for the active stored key of that name (KeyStore.updateKey); its secret,
   * id and the use of its limits stay. @throws StoreError `not_found`, `read_only`, `invalid`, `closed`.
   */
  updateKey(name: string, change: KeyChange): KeyInfo {
    this.ctx.assertOpen();
    const n = String(name);
    const tag = change.tag === undefined ? undefined : (checkTag(change.tag) ?? null);
    const scopes = change.scopes === undefined ? undefined : JSON.stringify(checkScopes(change.scopes));
    // read, change and write in one transaction: two changes of different fields at once both hold
    const found = this.ctx.db
      .transaction(() => {
        const row = this.s.keyActive.get(n) as { tag: string | null; limits: string | null; scopes: string } | null;
        if (!row) return false;
        const limits = changedLimits(parseLimits(row.limits), change.limits);
        this.s.keyUpdate.run(tag === undefined ? row.tag : tag, limits ? JSON.stringify(limits) : null, scopes ?? row.scopes, n);
        return true;
      })
      .immediate();
    if (!found) {
      // The stored key of the name first (see setKeyDisabled); a config key alone is read-only.
      this.refuseConfigName(n);
      throw new StoreError("not_found", `no active key named ${JSON.stringify(n)}`);
    }
    this.reloadKeys(n);
    return this.listKeys().find((k) => k.name === n && k.source === "db" && k.revokedAt === undefined)!;
  }

  /** The persisted budget windows (SPEC 9.6). @throws StoreError `closed`. */
  loadKeyBudgets(): KeyBudgetRow[] {
    this.ctx.assertOpen();
    return (this.s.budgetsAll.all() as { key_name: string; window: KeyBudgetRow["window"]; started_at: number; tokens: number; usd: number; unpriced: number }[]).map((r) => ({
      keyName: r.key_name,
      window: r.window,
      startedAt: r.started_at,
      tokens: r.tokens,
      usd: r.usd,
      ...(r.unpriced > 0 ? { unpriced: r.unpriced } : {}),
    }));
  }

  /** Writes budget windows in one transaction. @throws StoreError `closed`. */
  saveKeyBudgets(rows: KeyBudgetRow[]): void {
    this.ctx.assertOpen();
    if (rows.length === 0) return;
    this.ctx.db
      .transaction(() => {
        for (const r of rows) this.s.budgetUpsert.run(...budgetParams(r));
      })
      .immediate();
  }

  /** Re-reads the stored keys into the lookup cache. */
  refreshKeys(): void {
    this.ctx.assertOpen();
    this.reloadKeys();
  }

  /**
   * Re-reads the key cache when another connection (another process) committed since the last read
   * (`PRAGMA data_version` changed). Failures go to `onError`.
   */
  refreshIfChanged(): void {
    try {
      const v = (this.s.dataVersion.get() as { data_version: number }).data_version;
      if (v !== this.dataVersion) this.reloadKeys();
    } catch (err) {
      this.ctx.onError(`key refresh failed: ${err instanceof Error ? err.message : String(err)}`, err);
    }
  }

  /** Finalizes the prepared statements (the store is closing). */
  finalize(): void {
    for (const stmt of Object.values(this.s)) stmt.finalize();
  }

  /** Re-reads the key cache; `ownChange`: the key this process's `updateKey` just changed (not reported, KeyCache.setStoredKeys). */
  private reloadKeys(ownChange?: string): void {
    this.cache.setStoredKeys(this.s.keysAll.all() as KeyRow[], ownChange);
    this.dataVersion = (this.s.dataVersion.get() as { data_version: number }).data_version;
  }
}
