/**
 * When a key was rotated, kept by the store (try18 D16: a Rotate whose answer a reload lost left the key
 * rotated with nothing in `GET /admin/api/keys` or on the Keys page saying so), on SQLite and PostgreSQL:
 * the admin API lists `rotatedAt` (and, during the grace, `previousUntil`) after a rotation, across a
 * reopen; a key never rotated has none. A database of the previous schema (its keys made by an earlier
 * version) gets the column on open: its keys read null, and a rotation sets it. On PostgreSQL a rotation
 * through an instance of the earlier version (its UPDATE names only its own columns) still works.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { adminApi } from "../../src/admin/admin-api.ts";
import { PG_MIGRATIONS, migratePg } from "../../src/store/postgres/migrations.ts";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrations.ts";
import type { Store } from "../../src/store/types.ts";
import { storeBackends } from "../support/store-backends.ts";

const backends = storeBackends("rotated_at");
const TOKEN = "sy-test-admin-token-rotated-at-0001";

/** The admin API over `store`, asked as the CLI asks (the per-start admin token). */
function adminOf(store: Store) {
  const app = adminApi({ store, keys: store, adminToken: TOKEN, requireApiKey: () => true });
  return async (method: string, path: string, body?: unknown) => {
    const res = await app.handle(
      new Request(`http://127.0.0.1/admin/api${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      }),
    );
    return { status: res.status, body: (await res.json()) as any };
  };
}
const listed = async (ask: ReturnType<typeof adminOf>, name: string) => (await ask("GET", "/keys")).body.keys.find((k: any) => k.name === name && !k.revokedAt);

/**
 * The step that adds the column, by name (its number differs between the stores and moves as steps are
 * added); a build without it has every step "before" it (and the test fails on the missing column).
 */
const SQLITE_STEP = MIGRATIONS.find((m) => m.name === "client key rotation times")?.version ?? Number.POSITIVE_INFINITY;
const PG_STEP = PG_MIGRATIONS.find((m) => m.name === "client key rotation times")?.version ?? Number.POSITIVE_INFINITY;

for (const backend of backends) {
  describe(`rotation time: ${backend.name}`, () => {
    test("GET /admin/api/keys lists rotatedAt after a rotation (and previousUntil during its grace), across a reopen; a key never rotated has none", async () => {
      const { store, reopen } = await backend.open();
      let ask = adminOf(store);
      expect((await ask("POST", "/keys", { name: "ci" })).status).toBe(201);
      expect((await ask("POST", "/keys", { name: "never" })).status).toBe(201);
      expect(await listed(ask, "ci")).not.toHaveProperty("rotatedAt");
      const before = Date.now();
      const r = await ask("POST", "/keys/ci/rotate", { grace: "10m" });
      const after = Date.now();
      expect(r.status).toBe(200);
      expect(r.body.rotatedAt).toBeGreaterThanOrEqual(before);
      expect(r.body.rotatedAt).toBeLessThanOrEqual(after);
      expect(r.body.previousUntil).toBe(r.body.rotatedAt + 600_000);
      expect(await listed(ask, "ci")).toMatchObject({ name: "ci", rotatedAt: r.body.rotatedAt, previousUntil: r.body.previousUntil });
      expect(await listed(ask, "never")).not.toHaveProperty("rotatedAt");
      await store.close();
      const again = await reopen();
      try {
        ask = adminOf(again);
        expect(await listed(ask, "ci")).toMatchObject({ rotatedAt: r.body.rotatedAt, previousUntil: r.body.previousUntil });
        // a second rotation, old secret refused at once: a later time, no grace left
        await Bun.sleep(5);
        const second = await ask("POST", "/keys/ci/rotate", {});
        expect(second.body.rotatedAt).toBeGreaterThan(r.body.rotatedAt);
        const row = await listed(ask, "ci");
        expect(row.rotatedAt).toBe(second.body.rotatedAt);
        expect(row).not.toHaveProperty("previousUntil");
      } finally {
        await again.close();
      }
    }, 30_000);

    test("a database of the previous schema: the column appears on open, its keys read null, a rotation sets it", async () => {
      let where: { path: string } | { url: string } | undefined;
      const { store, reopen } = await backend.openPrepared(async (w) => {
        where = w;
        if ("path" in w) {
          const db = new Database(w.path);
          migrate(db, () => 1, MIGRATIONS.filter((m) => m.version < SQLITE_STEP));
          db.run("INSERT INTO client_keys (name, generation, hash, scopes, tag, created_at) VALUES ('old', 1, 'aa', '[]', NULL, 1), ('other', 1, 'bb', '[]', NULL, 2)");
          db.close();
        } else {
          const sql = new SQL(w.url, { max: 1 });
          await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version < PG_STEP));
          await sql`INSERT INTO client_keys (name, generation, hash, scopes, tag, created_at) VALUES ('old', 1, 'aa', '[]', NULL, 1), ('other', 1, 'bb', '[]', NULL, 2)`;
          await sql.close();
        }
      });
      /** The table's rotated_at column as the database holds it, read apart from the store. */
      const column = async (): Promise<Record<string, number | null>> => {
        let rows: { name: string; rotated_at: unknown }[];
        if ("path" in where!) {
          const db = new Database(where.path, { readonly: true });
          rows = db.query("SELECT name, rotated_at FROM client_keys ORDER BY name").all() as typeof rows;
          db.close();
        } else {
          const sql = new SQL(where!.url, { max: 1 });
          rows = [...(await sql`SELECT name, rotated_at FROM client_keys ORDER BY name`)] as typeof rows;
          await sql.close();
        }
        return Object.fromEntries(rows.map((r) => [r.name, r.rotated_at === null ? null : Number(r.rotated_at)]));
      };
      try {
        expect(await column()).toEqual({ old: null, other: null });
        const ask = adminOf(store);
        const keys = (await ask("GET", "/keys")).body.keys as any[];
        expect(keys.map((k) => [k.name, "rotatedAt" in k])).toEqual([
          ["old", false],
          ["other", false],
        ]);
        const r = await ask("POST", "/keys/old/rotate", {});
        expect(r.status).toBe(200);
        expect(await column()).toEqual({ old: r.body.rotatedAt, other: null });
        expect((await listed(ask, "old")).rotatedAt).toBe(r.body.rotatedAt);
        expect(await listed(ask, "other")).not.toHaveProperty("rotatedAt");
        if ("url" in where!) {
          // an instance of the earlier version, still running on the upgraded schema, rotates "other" with
          // its own UPDATE (no rotated_at): the new secret works, the key reads as before (no time)
          const sql = new SQL(where.url, { max: 1 });
          const newHash = new Bun.CryptoHasher("sha256").update("sy-test-rotated-by-an-older-instance-01").digest("hex");
          await sql`UPDATE client_keys SET prev_hash = NULL, prev_until = NULL, hash = ${newHash}, prefix = NULL WHERE name = 'other' AND revoked_at IS NULL RETURNING name, scopes, tag, created_at, limits, generation`;
          await sql.close();
          await store.refreshKeys();
          expect(store.lookup("sy-test-rotated-by-an-older-instance-01")?.name).toBe("other");
          expect(await listed(ask, "other")).not.toHaveProperty("rotatedAt");
        }
      } finally {
        await store.close();
      }
      const again = await reopen();
      try {
        expect((await listed(adminOf(again), "old")).rotatedAt).toBeNumber();
      } finally {
        await again.close();
      }
    }, 60_000);
  });
}
