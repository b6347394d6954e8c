/**
 * What each instance on one PostgreSQL enforces of the configuration the instances share (SPEC D-2;
 * newuser12a G24): one row per running instance in `instance_configs` with the non-secret values of
 * its config file that count in the shared pool (src/shared-config.ts makes them), written at start,
 * on every reload and every half minute (its `updated_at`, the database's clock, says it still runs),
 * removed when it stops. Another instance reads the rows of the others to tell its operator where they
 * differ. Never a secret: a key's secret is there only as a short, slow (scrypt) fingerprint
 * (src/shared-config.ts secretFingerprint), salted with this database's own random salt ({@link PgInstanceConfigs.salt}).
 */
import type { InstanceConfig } from "../shared.ts";
import type { PgContext } from "./db.ts";
import { DB_NOW_MS, num } from "./values.ts";

/** The instance-config role of the PostgreSQL store. */
export class PgInstanceConfigs {
  constructor(private readonly ctx: PgContext) {}

  /**
   * Writes (or replaces) this instance's row: `label` (how the others name it, e.g. its URL) and its
   * `parts` (path → JSON text of the value). With `origin` (where it runs: one live instance per
   * origin), a row of the same origin under another instance id is this instance's killed predecessor's
   * and is removed (it would read as another instance for up to 90 s). Without one the row's origin is
   * the instance id (its own alone): every row this build writes has an origin, so a row without one
   * was written by an instance of a build before schema 17, whose secret fingerprints are salted
   * otherwise ({@link others}' `saltedPerDatabase`). @throws StoreError `unavailable`, `closed`.
   */
  async publish(label: string, parts: Record<string, string>, origin?: string): Promise<void> {
    // one transaction: a change stopped at its bound leaves neither the delete nor the insert done
    await this.ctx.change((sql) =>
      sql.begin(async (tx) => {
        if (origin) await tx`DELETE FROM instance_configs WHERE origin = ${origin} AND instance_id <> ${this.ctx.instanceId}`;
        await tx.unsafe(
          `INSERT INTO instance_configs (instance_id, label, parts, updated_at, origin) VALUES ($1, $2, $3, ${DB_NOW_MS}, $4)
           ON CONFLICT (instance_id) DO UPDATE SET label = excluded.label, parts = excluded.parts, updated_at = excluded.updated_at, origin = excluded.origin`,
          [this.ctx.instanceId, String(label), JSON.stringify(parts), origin || this.ctx.instanceId],
        );
      }),
    );
  }

  /**
   * The rows of the other instances written within `maxAgeMs` (older ones: the instance stopped
   * without removing its row, e.g. killed; they are deleted once a day old). @throws StoreError `unavailable`, `closed`.
   */
  async others(maxAgeMs: number): Promise<InstanceConfig[]> {
    const rows = await this.ctx.read(async (sql) => {
      await sql.unsafe(`DELETE FROM instance_configs WHERE updated_at < ${DB_NOW_MS} - 86400000`);
      return sql.unsafe(`SELECT instance_id, label, parts, updated_at, origin FROM instance_configs WHERE instance_id <> $1 AND updated_at >= ${DB_NOW_MS} - $2 ORDER BY label, instance_id`, [
        this.ctx.instanceId,
        Math.max(0, Math.floor(maxAgeMs)),
      ]);
    });
    const out: InstanceConfig[] = [];
    for (const r of rows as Array<{ instance_id: string; label: string; parts: string; updated_at: unknown; origin: string | null }>) {
      try {
        const parts = JSON.parse(r.parts) as Record<string, string>;
        if (parts && typeof parts === "object") out.push({ instanceId: r.instance_id, label: r.label, parts, updatedAt: num(r.updated_at), saltedPerDatabase: r.origin !== null });
      } catch {
        // a row this build cannot read is skipped
      }
    }
    return out;
  }

  /**
   * This database's salt for the secret fingerprints in `instance_configs` (migration 17's
   * `deployment_salts`, name `instance_configs`): 32 random hex digits, made by the first instance that
   * asks, the same for every instance after. @throws StoreError `unavailable`, `closed`.
   */
  async salt(): Promise<string> {
    const mine = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
    const rows = await this.ctx.read(async (sql) => {
      await sql`INSERT INTO deployment_salts (name, value, created_at) VALUES ('instance_configs', ${mine}, ${Math.round(this.ctx.now())}) ON CONFLICT (name) DO NOTHING`;
      return sql`SELECT value FROM deployment_salts WHERE name = 'instance_configs'`;
    });
    return String((rows as Array<{ value: string }>)[0]!.value);
  }

  /** Removes this instance's row (it stops). Never throws. */
  async remove(): Promise<void> {
    try {
      await this.ctx.read((sql) => sql`DELETE FROM instance_configs WHERE instance_id = ${this.ctx.instanceId}`);
    } catch {
      // the row ages out
    }
  }
}
