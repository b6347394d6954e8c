/**
 * The store's part of issue 15: cost per request with usage (SPEC 9.5), client key limits on stored and
 * config keys (9.6), budget windows persisted across a reopen and with the usage flush (the embedded
 * store's; the shared store keeps none, test/store/pg-budget-windows.test.ts), migration 3 over a
 * version-2 file, and migration 20 (a window's count of unpriced requests) over a version-19 one.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MIGRATIONS, SCHEMA_VERSION, migrate } from "../../src/store/sqlite/migrations.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { cleanupTempDirs, tempDir, usage, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

describe("cost with usage", () => {
  test("cost_usd and unpriced round-trip; the summary sums priced cost and counts unpriced requests", () => {
    const s = openSqliteStore({ path: join(tempDir(), "sy.db") });
    s.record(usage({ requestId: "r1", keyName: "ci", costUsd: 0.0126 }));
    s.record(usage({ requestId: "r2", keyName: "ci", costUsd: 0.00222 }));
    s.record(usage({ requestId: "r3", keyName: "ci", unpriced: true }));
    s.record(usage({ requestId: "r4", keyName: "other" }));
    const calls = s.recentCalls(10);
    const byId = new Map(calls.map((c) => [c.requestId, c]));
    expect(byId.get("r1")!.costUsd).toBe(0.0126);
    expect(byId.get("r3")!.unpriced).toBe(true);
    expect(byId.get("r4")!.costUsd).toBeUndefined();
    expect(byId.get("r4")!.unpriced).toBeUndefined();
    const rows = s.usageSummary({ sinceMs: 0, by: "key" });
    const ci = rows.find((r) => r.group === "ci")!;
    expect(ci.costUsd).toBeCloseTo(0.01482, 12);
    expect(ci.unpriced).toBe(1);
    expect(rows.find((r) => r.group === "other")).toMatchObject({ costUsd: 0, unpriced: 0 });
    s.close();
  });

  test("a negative or non-finite cost is not stored", () => {
    const s = openSqliteStore({ path: join(tempDir(), "sy.db") });
    s.record(usage({ requestId: "bad", costUsd: Number.NaN }));
    s.record(usage({ requestId: "neg", costUsd: -1 }));
    expect(s.recentCalls(10).map((c) => c.costUsd)).toEqual([undefined, undefined]);
    s.close();
  });
});

describe("client key limits", () => {
  const limits = { rpm: 60, tpm: 1000, concurrency: 2, budgets: [{ window: "1d" as const, usd: 5 }], models: ["glm/*"] };

  test("a stored key keeps its limits across a reopen; lookup and list carry them", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path });
    const created = s.createKey("ci", [], undefined, limits);
    expect(created.key.limits).toEqual(limits);
    s.close();
    const t = openSqliteStore({ path });
    expect(t.lookup(created.secret)!.limits).toEqual(limits);
    expect(t.listKeys()[0].limits).toEqual(limits);
    const plain = t.createKey("plain");
    expect(t.lookup(plain.secret)!.limits).toBeUndefined();
    t.close();
  });

  test("config keys carry their limits; malformed limits are refused as invalid", () => {
    const s = openSqliteStore({ path: join(tempDir(), "sy.db") });
    s.setConfigKeys([{ name: "laptop", secret: "sy-config-secret-1", limits: { rpm: 5 } }]);
    expect(s.lookup("sy-config-secret-1")!.limits).toEqual({ rpm: 5 });
    // listed with its prefix: a quarter of its 18 characters
    expect(s.listKeys()).toEqual([{ name: "laptop", scopes: [], limits: { rpm: 5 }, source: "config", prefix: "sy-c" }]);
    for (const bad of [{ rpm: 0 }, { budgets: [{ window: "2h", tokens: 1 }] }, { budgets: [{ window: "1d", tokens: 1, usd: 1 }] }, { models: [1] }]) {
      let code: string | undefined;
      try {
        s.createKey("x", [], undefined, bad as never);
      } catch (e) {
        code = (e as StoreError).code;
      }
      expect(code).toBe("invalid");
    }
    s.close();
  });

  test("budget windows are saved and read back", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path });
    s.saveKeyBudgets([{ keyName: "ci", window: "1d", startedAt: 1000, tokens: 10, usd: 0.5 }]);
    s.saveKeyBudgets([{ keyName: "ci", window: "1d", startedAt: 1000, tokens: 30, usd: 0.75 }, { keyName: "ci", window: "5h", startedAt: 2000, tokens: 30, usd: 0.75 }]);
    s.close();
    const t = openSqliteStore({ path });
    expect(t.loadKeyBudgets().sort((a, b) => a.window.localeCompare(b.window))).toEqual([
      { keyName: "ci", window: "1d", startedAt: 1000, tokens: 30, usd: 0.75 },
      { keyName: "ci", window: "5h", startedAt: 2000, tokens: 30, usd: 0.75 },
    ]);
    t.close();
  });
});

describe("budget windows written with the usage flush (the embedded store only)", () => {
  test("budget windows handed to writeKeyBudgetsWithFlush are written by the usage flush, with the rows that spent them (SPEC 9.6)", async () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
    let changed = [{ keyName: "ci", window: "5h" as const, startedAt: 1_800_000_000_000, tokens: 54, usd: 0.25 }];
    s.writeKeyBudgetsWithFlush(() => {
      const out = changed;
      changed = [];
      return out;
    });
    s.record(usage({ requestId: "b1", keyName: "ci" }));
    await s.flush();
    // A second connection (this process after a kill -9) finds both.
    const r = openSqliteStore({ path, flushIntervalMs: 60_000 });
    expect(r.loadKeyBudgets()).toEqual([{ keyName: "ci", window: "5h", startedAt: 1_800_000_000_000, tokens: 54, usd: 0.25 }]);
    expect(r.recentCalls(10).map((c) => c.requestId)).toEqual(["b1"]);
    // A later change replaces the window with the next flush.
    changed = [{ keyName: "ci", window: "5h", startedAt: 1_800_000_000_000, tokens: 90, usd: 0.5 }];
    s.record(usage({ requestId: "b2", keyName: "ci" }));
    await s.flush();
    expect(r.loadKeyBudgets()).toEqual([{ keyName: "ci", window: "5h", startedAt: 1_800_000_000_000, tokens: 90, usd: 0.5 }]);
    r.close();
    s.close();
  });
});

describe("migration 3", () => {
  test("a version-2 database gains the columns; its rows stay and read as unpriced = false, no limits", () => {
    const path = join(tempDir(), "sy.db");
    const db = new Database(path);
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 2));
    db.run("INSERT INTO client_keys (name, hash, scopes, tag, created_at) VALUES ('old', 'abc', '[]', NULL, 1)");
    db.close();
    const s = openSqliteStore({ path });
    expect(withRaw(path, (d) => (d.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number }).v)).toBe(SCHEMA_VERSION);
    expect(s.listKeys()).toEqual([{ name: "old", scopes: [], source: "db", createdAt: 1 }]);
    s.close();
  });
});

describe("migration 20: a budget window's unpriced requests (review19 R5)", () => {
  test("a version-19 file's windows stay and read with none; a window's count is saved with it, by both writers, and read back", async () => {
    const path = join(tempDir(), "sy.db");
    const db = new Database(path);
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 19));
    db.run("INSERT INTO key_budget_windows (key_name, window, started_at, tokens, usd) VALUES ('ci', '1d', 1000, 36, 0.02)");
    db.close();
    const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
    expect(s.loadKeyBudgets()).toEqual([{ keyName: "ci", window: "1d", startedAt: 1000, tokens: 36, usd: 0.02 }]);
    s.saveKeyBudgets([{ keyName: "ci", window: "1d", startedAt: 1000, tokens: 54, usd: 0.02, unpriced: 1 }]);
    const changed = [{ keyName: "ops", window: "5h" as const, startedAt: 2000, tokens: 40, usd: 0, unpriced: 2 }];
    s.writeKeyBudgetsWithFlush(() => [...changed.splice(0)]);
    s.record(usage({ requestId: "u1", keyName: "ops", unpriced: true }));
    await s.flush();
    s.close();
    const t = openSqliteStore({ path });
    expect(t.loadKeyBudgets().sort((a, b) => a.keyName.localeCompare(b.keyName))).toEqual([
      { keyName: "ci", window: "1d", startedAt: 1000, tokens: 54, usd: 0.02, unpriced: 1 },
      { keyName: "ops", window: "5h", startedAt: 2000, tokens: 40, usd: 0, unpriced: 2 },
    ]);
    t.close();
  });
});
