/**
 * Client keys in PostgreSQL (SPEC G-2, D-2): the `client_keys` table holds the SHA-256 of each stored
 * key's secret; `lookup` answers from the in-memory {@link KeyCache}, re-read when this instance changes
 * a key and when another instance announces "keys" (within about a second).
 */
import type { SQL } from "bun";
import { FIRST_STORED_GENERATION, keyIdFor } from "../../../pipeline/index.ts";
import type { KeyLimits } from "../../../pipeline/ports.ts";
import { CachedKeys, type KeyRow } from "../key-cache.ts";
import { changedLimits, checkGrace, checkLimits, checkName, checkScopes, checkTag, errMessage, freezeKey, parseLimits, rotated, type RotatedRow } from "../rows.ts";
import { generateKeySecret, keyPrefix, sha256Hex } from "../secrets.ts";
import { CASE_ONLY, caseTwin, type CreatedKey, type KeyChange, type KeyInfo, type KeyStore, type RotatedKey, StoreError } from "../types.ts";
import type { PgContext } from "./db.ts";
import { lockName } from "./name-locks.ts";
import { UndoneRotates } from "./undo-rotates.ts";
import { num, numOrNull } from "./values.ts";

/** What `rotateKey`'s statement returns besides the row: the secret columns as they were before it. */
interface PriorSecret {
  old_hash: string;
  old_prev_hash: string | null;
  old_prev_until: number | string | null;
  old_prefix: string | null;
  old_rotated_at: number | string | null;
}

/** The `KeyStore` role of the PostgreSQL store. */
export class PgKeys extends CachedKeys implements KeyStore {
  /** Key re-reads started / the newest one applied (see `reloadKeys`). */
  private reloadSeq = 0;
  private appliedSeq = 0;
  /** Rotates of this instance that committed after their 503 (see `rotateKey`). */
  private readonly undoneRotates = new UndoneRotates();
  /** Names whose create committed after its 503 and whose undo is not yet written, kept for later, or failed. */
  private readonly lateCreates = new Set<string>();

  constructor(private readonly ctx: PgContext) {
    super(() => ctx.now());
  }

  /**
   * Creates a stored key; returns its secret once (only the SHA-256 is written). A key created with the
   * name of a revoked key is a new row, one generation later (its own id, pipeline/key-id.ts); the
   * revoked key's row stays listed with its dates. @throws StoreError `conflict`, `read_only`, `invalid`, `closed`, `unavailable`.
   */
  async createKey(name: string, scopes: string[] = [], tag?: string, limits?: KeyLimits): Promise<CreatedKey> {
    this.ctx.assertOpen();
    const n = checkName(name);
    const sc = checkScopes(scopes);
    const tg = checkTag(tag);
    const lim = checkLimits(limits);
    const limJson = lim ? JSON.stringify(lim) : null;
    this.refuseConfigName(n);
    const secret = generateKeySecret();
    const hash = sha256Hex(secret);
    const createdAt = Math.round(this.ctx.now());
    const generation = await this.ctx.change(
      (sql) =>
        sql.begin(async (tx) => {
          // One at a time per name, case folded (two instances creating `ci-bot`, or `ci-Bot` and `ci-bot`, at once: the second sees the first),
          // and per exact name (the previous build's lock, for a rolling upgrade): name-locks.ts.
          await lockName(tx, "client_key:", n, n.toLowerCase());
          const [row] = await tx`SELECT COUNT(*) FILTER (WHERE revoked_at IS NULL)::int AS active, MAX(generation) AS generation FROM client_keys WHERE name = ${n}`;
          if (Number(row?.active ?? 0) > 0) {
            const late = this.lateCreates.has(n) ? ` (if a create of that name was just answered "not done", this is its late write, being undone: try again in a few seconds)` : "";
            throw new StoreError("conflict", `a key named ${JSON.stringify(n)} already exists${late}`);
          }
          const twin = caseTwin(n, ((await tx`SELECT name FROM client_keys WHERE revoked_at IS NULL`) as Array<{ name: string }>).map((r) => r.name));
          if (twin !== undefined) throw new StoreError("conflict", `a key named ${JSON.stringify(twin)} already exists ${CASE_ONLY}`);
          // A name's first stored key is generation 1 (FIRST_STORED_GENERATION): never counted under the
          // bare name, which a config key of that name may have counted under. A revoked key's row stays
          // (its dates in `keys list`); the new key is the next generation, its own row.
          const generation = row?.generation == null ? FIRST_STORED_GENERATION : Number(row.generation) + 1;
          await tx`INSERT INTO client_keys (name, generation, hash, scopes, tag, created_at, revoked_at, limits, prefix)
                   VALUES (${n}, ${generation}, ${hash}, ${JSON.stringify(sc)}, ${tg ?? null}, ${createdAt}, NULL, ${limJson}, ${keyPrefix(secret) ?? null})`;
          return generation;
        }),
      // Committed after the caller was told "the database cannot be reached, so this was not done" (its
      // cancel, PgContext.change, came too late: a stalled server, or a commit that won the race): nobody was shown its secret, so the key goes (else nobody could use
      // it and creating it again would be refused as a duplicate name).
      () => {
        this.lateCreates.add(n);
        this.undoLate(
          (sql) => sql`DELETE FROM client_keys WHERE name = ${n} AND hash = ${hash}`,
          () => this.lateCreates.delete(n),
        );
      },
    );
    await this.reloadKeys();
    this.ctx.announce("keys");
    return { secret, key: freezeKey({ name: n, id: keyIdFor(n, generation), scopes: sc, tag: tg, limits: lim, source: "db" }), createdAt };
  }

  /** Every key, config and stored, sorted by name; no secrets, no hashes. @throws StoreError `closed`, `unavailable`. */
  async listKeys(): Promise<KeyInfo[]> {
    return this.cache.list(await this.rows());
  }

  /**
   * Revokes the active stored key of that name; `lookup` here rejects it on return, other instances
   * within about a second. @returns false when there is none. @throws StoreError `read_only`.
   */
  async revokeKey(name: string): Promise<boolean> {
    this.ctx.assertOpen();
    const now = Math.round(this.ctx.now());
    const res = await this.ctx.change((sql) => sql`UPDATE client_keys SET revoked_at = ${now} WHERE name = ${String(name)} AND revoked_at IS NULL`);
    if (res.count > 0) {
      await this.reloadKeys();
      this.ctx.announce("keys");
      return true;
    }
    this.refuseConfigName(name);
    return false;
  }

  /**
   * Disables or enables the active stored key of that name (KeyStore.setKeyDisabled); here on return,
   * other instances within about a second. @returns false when there is none.
   * @throws StoreError `read_only`, `closed`, `unavailable`.
   */
  async setKeyDisabled(name: string, disabled: boolean): Promise<boolean> {
    this.ctx.assertOpen();
    const now = Math.round(this.ctx.now());
    const res = await this.ctx.change((sql) =>
      disabled
        ? sql`UPDATE client_keys SET disabled_at = COALESCE(disabled_at, ${now}) WHERE name = ${String(name)} AND revoked_at IS NULL`
        : sql`UPDATE client_keys SET disabled_at = NULL WHERE name = ${String(name)} AND revoked_at IS NULL`,
    );
    if (res.count === 0) {
      // The stored key of the name was tried first (one may share its name with a config key: it is the
      // one that can be turned off, as revokeKey does); a config key alone is read-only.
      this.refuseConfigName(name);
      return false;
    }
    await this.reloadKeys();
    this.ctx.announce("keys");
    return true;
  }

  /**
   * A new secret for the active stored key of that name (KeyStore.rotateKey); here on return, other
   * instances within about a second. @throws StoreError `not_found`, `read_only`, `invalid`, `closed`, `unavailable`.
   */
  async rotateKey(name: string, graceMs?: number): Promise<RotatedKey> {
    this.ctx.assertOpen();
    const grace = checkGrace(graceMs);
    const secret = generateKeySecret();
    const hash = sha256Hex(secret);
    const now = Math.round(this.ctx.now());
    const until = grace > 0 ? now + grace : null;
    // The row's secret columns as they were (`old`) come back too, for the undo below.
    const rows = await this.ctx.change(
      (sql) => sql`WITH old AS (SELECT name, generation, hash, prev_hash, prev_until, prefix, rotated_at FROM client_keys WHERE name = ${String(name)} AND revoked_at IS NULL FOR UPDATE)
                   UPDATE client_keys c SET prev_hash = CASE WHEN ${until}::bigint IS NULL THEN NULL ELSE c.hash END, prev_until = ${until}, hash = ${hash}, prefix = ${keyPrefix(secret) ?? null}, rotated_at = ${now}
                   FROM old WHERE c.name = old.name AND c.generation = old.generation
                   RETURNING c.name, c.scopes, c.tag, c.created_at, c.limits, c.generation,
                             old.hash AS old_hash, old.prev_hash AS old_prev_hash, old.prev_until AS old_prev_until, old.prefix AS old_prefix, old.rotated_at AS old_rotated_at`,
      // Committed after the caller was told "the database cannot be reached, so this was not done" (its
      // cancel came too late, as for createKey): nobody was shown the new secret, so the secret before is put back. A retried rotate may have committed
      // late too, after this one (reading this one's secret as its old one), and the undos may land in
      // any order: each reads the row and undoes every late rotate recorded (undo-rotates.ts).
      (late) => {
        const was = (late as Array<RotatedRow & PriorSecret>)[0];
        if (!was) return;
        this.undoneRotates.add(hash, { hash: was.old_hash, prev_hash: was.old_prev_hash, prev_until: was.old_prev_until, prefix: was.old_prefix, rotated_at: was.old_rotated_at });
        this.undoLate((sql) =>
          sql.begin(async (tx) => {
            const [now] = await tx`SELECT hash, prev_hash, prev_until, prefix, rotated_at FROM client_keys WHERE name = ${was.name} AND generation = ${was.generation} FOR UPDATE`;
            const to = now ? this.undoneRotates.undone(now) : undefined;
            if (!to) return;
            await tx`UPDATE client_keys SET hash = ${to.hash}, prev_hash = ${to.prev_hash}, prev_until = ${to.prev_until}, prefix = ${to.prefix}, rotated_at = ${to.rotated_at}
                     WHERE name = ${was.name} AND generation = ${was.generation}`;
          }),
        );
      },
    );
    const row = (rows as RotatedRow[])[0];
    // The stored key of the name first (see setKeyDisabled); a config key alone is read-only.
    if (!row) {
      this.refuseConfigName(name);
      throw new StoreError("not_found", `no active key named ${JSON.stringify(name)}`);
    }
    await this.reloadKeys();
    this.ctx.announce("keys");
    return rotated(secret, row, until, now);
  }

  /**
   * New limits, tag and scopes for the active stored key of that name (KeyStore.updateKey); its secret,
   * id and the use of its limits stay. Here on return, other instances within about a second (announced as
   * "keys", as a revoke). @throws StoreError `not_found`, `read_only`, `invalid`, `closed`, `unavailable`.
   */
  async updateKey(name: string, change: KeyChange): Promise<KeyInfo> {
    this.ctx.assertOpen();
    const n = String(name);
    const tag = change.tag === undefined ? undefined : (checkTag(change.tag) ?? null);
    const scopes = change.scopes === undefined ? undefined : JSON.stringify(checkScopes(change.scopes));
    // read, change and write in one transaction (the row locked): two changes of different fields at once both hold
    const found = await this.ctx.change((sql) =>
      sql.begin(async (tx) => {
        const [row] = await tx`SELECT tag, limits, scopes FROM client_keys WHERE name = ${n} AND revoked_at IS NULL FOR UPDATE`;
        if (!row) return false;
        const limits = changedLimits(parseLimits(row.limits ?? null), change.limits);
        await tx`UPDATE client_keys SET tag = ${tag === undefined ? (row.tag ?? null) : tag}, limits = ${limits ? JSON.stringify(limits) : null}, scopes = ${scopes ?? row.scopes} WHERE name = ${n} AND revoked_at IS NULL`;
        return true;
      }),
    );
    if (!found) {
      // The stored key of the name first (see setKeyDisabled); a config key alone is read-only.
      this.refuseConfigName(n);
      throw new StoreError("not_found", `no active key named ${JSON.stringify(n)}`);
    }
    await this.reloadKeys(n); // its caller raises the change's alerts (src/admin/key-change.ts)
    this.ctx.announce("keys");
    return (await this.listKeys()).find((k) => k.name === n && k.source === "db" && k.revokedAt === undefined)!;
  }

  /**
   * Undoes a key change that committed after its caller was told it was not done (see `PgContext.change`):
   * `fn` is written through (kept and replayed while the database is away), then this instance's key
   * cache is re-read; other instances hear "keys". `written` runs once it is written, kept, or failed; a
   * failed undo (the store closed, a statement error) is logged through `onError`. Never throws.
   */
  private undoLate(fn: (sql: SQL) => Promise<unknown>, written: () => void = () => {}): void {
    void this.ctx
      .write("keys", fn)
      .finally(written)
      .then(
        () => this.reloadKeys(),
        (err) => this.ctx.onError(`undoing a key change that committed after it was answered "not done" failed, so the change stays: ${errMessage(err)}`, err),
      )
      .catch(() => {});
  }

  /** Re-reads the stored keys into the lookup cache. */
  async refreshKeys(): Promise<void> {
    this.ctx.assertOpen();
    await this.reloadKeys();
  }

  /**
   * Re-reads the key cache (another instance changed keys, or the periodic re-read). Re-reads overlap
   * (a change here, an announcement, the timer): an answer older than one already applied is dropped,
   * so a slow read cannot bring back a key revoked since it started. `ownChange`: the name of the key
   * this instance's `updateKey` just changed, whose limits change is not reported to `onKeyLimitsChanged`
   * by this re-read (KeyCache.setStoredKeys).
   */
  async reloadKeys(ownChange?: string): Promise<void> {
    const seq = ++this.reloadSeq;
    const rows = await this.rows();
    if (seq < this.appliedSeq) return;
    this.appliedSeq = seq;
    this.cache.setStoredKeys(rows, ownChange);
  }

  private async rows(): Promise<KeyRow[]> {
    const rows = await this.ctx.read((sql) => sql`SELECT name, hash, scopes, tag, created_at, revoked_at, limits, generation, prev_hash, prev_until, disabled_at, prefix, rotated_at FROM client_keys ORDER BY name COLLATE "C", generation`);
    return (rows as any[]).map((r) => ({
      name: r.name,
      hash: r.hash,
      scopes: r.scopes,
      tag: r.tag,
      created_at: num(r.created_at),
      revoked_at: numOrNull(r.revoked_at),
      limits: r.limits,
      generation: Number(r.generation ?? 0),
      prev_hash: r.prev_hash ?? null,
      prev_until: numOrNull(r.prev_until),
      disabled_at: numOrNull(r.disabled_at),
      prefix: r.prefix ?? null,
      rotated_at: numOrNull(r.rotated_at),
    }));
  }
}
