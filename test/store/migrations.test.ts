import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS, SCHEMA_VERSION, migrate } from "../../src/store/sqlite/migrations.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { cleanupTempDirs, countRows, storedTraces, tempDir, trace, usage, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

const versions = (path: string) =>
  withRaw(path, (db) => (db.query("SELECT version FROM schema_migrations ORDER BY version").all() as { version: number }[]).map((r) => r.version));

describe("migrations", () => {
  test("apply once on a fresh file and survive reopening", () => {
    const path = join(tempDir(), "sy.db");
    const a = openSqliteStore({ path });
    a.close();
    expect(versions(path)).toEqual(MIGRATIONS.map((m) => m.version));
    const b = openSqliteStore({ path });
    b.createKey("k1");
    b.close();
    const c = openSqliteStore({ path });
    expect(versions(path)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(c.listKeys().map((k) => k.name)).toEqual(["k1"]);
    c.close();
  });

  test("migrate() is idempotent and reports what it applied", () => {
    const db = new Database(":memory:");
    expect(migrate(db, () => 1)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(migrate(db, () => 2)).toEqual([]);
    const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    for (const t of ["client_keys", "accounts", "cooldowns", "account_locks", "usage", "trace_blocks", "bindings", "quota_windows"]) {
      expect(tables).toContain(t);
    }
    db.close();
  });

  test("a failing migration rolls back and is retried on the next start", () => {
    const db = new Database(":memory:");
    let fail = true;
    const steps = [
      ...MIGRATIONS,
      {
        version: SCHEMA_VERSION + 1,
        name: "test step",
        up: (d: Database) => {
          d.run("CREATE TABLE half_done (x INTEGER)");
          if (fail) throw new Error("boom");
        },
      },
    ];
    expect(() => migrate(db, () => 1, steps)).toThrow("boom");
    const has = () => db.query("SELECT name FROM sqlite_master WHERE name = 'half_done'").get() !== null;
    expect(has()).toBe(false);
    expect((db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number }).v).toBe(SCHEMA_VERSION);
    fail = false;
    expect(migrate(db, () => 1, steps)).toEqual([SCHEMA_VERSION + 1]);
    expect(has()).toBe(true);
    db.close();
  });

  test("a database from a newer build is refused", () => {
    const path = join(tempDir(), "sy.db");
    openSqliteStore({ path }).close();
    withRaw(path, (db) => db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)"));
    let err: unknown;
    try {
      openSqliteStore({ path });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("schema");
  });

  test("pragmas: WAL, synchronous=NORMAL, foreign keys, busy timeout", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, busyTimeoutMs: 1234 });
    const db = (s as unknown as { ctx: { db: Database } }).ctx.db;
    expect((db.query("PRAGMA journal_mode").get() as any).journal_mode).toBe("wal");
    expect((db.query("PRAGMA synchronous").get() as any).synchronous).toBe(1);
    expect((db.query("PRAGMA foreign_keys").get() as any).foreign_keys).toBe(1);
    expect((db.query("PRAGMA busy_timeout").get() as any).timeout).toBe(1234);
    // credentials are written with FULL and the connection goes back to NORMAL
    s.upsertAccount({ id: "a", providerId: "glm", priority: 1, credential: { type: "api_key", apiKey: "k" }, disabled: false });
    expect((db.query("PRAGMA synchronous").get() as any).synchronous).toBe(1);
    s.close();
  });
});

describe("migration 8", () => {
  test("a version-7 database's traces, in any generation table, become blocks: readable, resolvable, rotated out in turn", () => {
    const path = join(tempDir(), "sy.db");
    const db = new Database(path);
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 7));
    // the ring had rotated: generation 2 holds the newest traces, generation 0 older ones (seq is global)
    const put = (table: string, seq: number) =>
      db.run(`INSERT INTO ${table} (seq, route_id, request_id, ts, body) VALUES (?, ?, ?, ?, ?)`, [seq, `sy_${seq}`, `req-${seq}`, seq, JSON.stringify(trace(seq))]);
    for (const i of [1, 2]) put("route_traces", i);
    for (const i of [3, 4]) put("route_traces_1", i);
    put("route_traces_2", 5);
    db.run(
      `INSERT INTO usage (request_id, ts, client_format, requested_model, estimated, outcome, status, total_ms, attempts, fallback)
       VALUES ('req-4', 1800000000004, 'openai-chat', 'fast', 0, 'ok', 200, 90, 1, 0)`,
    );
    db.close();
    const s = openSqliteStore({ path, traceRingSize: 4, flushIntervalMs: 60_000 });
    expect(versions(path)).toEqual(MIGRATIONS.map((m) => m.version));
    const tables = withRaw(path, (d) => (d.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'route_traces%'").all() as unknown[]).length);
    expect(tables).toBe(0);
    expect(storedTraces(path)).toBe(5);
    expect(s.recentTraces(10).map((t) => t.routeId)).toEqual(["sy_5", "sy_4", "sy_3", "sy_2", "sy_1"]);
    expect(s.getTrace("sy_2")).toEqual(trace(2));
    expect(s.getTrace("req-5")).toEqual(trace(5));
    expect(s.recentCalls(10).map((c) => [c.requestId, c.routeId])).toEqual([["req-4", "sy_4"]]);
    for (let i = 6; i <= 9; i++) s.save(trace(i));
    s.flush();
    // the migrated block goes once the new one holds the ring's 4
    expect(s.recentTraces(10).map((t) => t.routeId)).toEqual(["sy_9", "sy_8", "sy_7", "sy_6"]);
    expect(s.getTrace("sy_1")).toBeUndefined();
    expect(s.recentCalls(10).map((c) => [c.requestId, c.routeId ?? null])).toEqual([["req-4", null]]);
    expect(countRows(path, "trace_blocks")).toBe(1);
    s.close();
  });
});

describe("page size", () => {
  test("a new database gets 16 KiB pages; an existing 4 KiB one keeps its pages and its rows", () => {
    const fresh = join(tempDir(), "sy.db");
    openSqliteStore({ path: fresh }).close();
    expect(withRaw(fresh, (db) => (db.query("PRAGMA page_size").get() as { page_size: number }).page_size)).toBe(16_384);

    const old = join(tempDir(), "old.db");
    const db = new Database(old);
    db.run("PRAGMA journal_mode = WAL");
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 5));
    expect((db.query("PRAGMA page_size").get() as { page_size: number }).page_size).toBe(4096);
    db.run("INSERT INTO client_keys (name, hash, scopes, tag, created_at) VALUES ('old', 'abc', '[]', NULL, 1)");
    db.close();
    const s = openSqliteStore({ path: old, flushIntervalMs: 60_000 });
    s.record(usage({ requestId: "req-new" }));
    s.save(trace(1, { requestId: "req-new" }));
    expect(s.listKeys().map((k) => k.name)).toEqual(["old"]);
    expect(s.recentCalls(10).map((c) => [c.requestId, c.routeId])).toEqual([["req-new", "sy_1"]]);
    s.close();
    expect(withRaw(old, (d) => (d.query("PRAGMA page_size").get() as { page_size: number }).page_size)).toBe(4096);
  });
});

describe("file mode", () => {
  test("database, -wal and -shm are 0600 even with a permissive umask", () => {
    const old = process.umask(0);
    try {
      const dir = join(tempDir(), "nested", "data");
      const path = join(dir, "sy.db");
      const s = openSqliteStore({ path, flushIntervalMs: 10_000 });
      s.createKey("k");
      for (const p of [path, `${path}-wal`, `${path}-shm`]) {
        expect((statSync(p).mode & 0o777).toString(8)).toBe("600");
      }
      expect((statSync(dir).mode & 0o777).toString(8)).toBe("700");
      s.close();
      expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
    } finally {
      process.umask(old);
    }
  });

  test("an existing world-readable database is tightened to 0600", () => {
    const path = join(tempDir(), "sy.db");
    writeFileSync(path, "");
    chmodSync(path, 0o644);
    const s = openSqliteStore({ path });
    expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
    s.close();
  });

  test(":memory: works and reports healthy until closed", () => {
    const s = openSqliteStore({ path: ":memory:" });
    expect(s.health()).toBe(true);
    s.close();
    expect(s.health()).toBe(false);
    s.close(); // idempotent
  });
});

describe("migration 6", () => {
  test("a version-5 database loses the unread usage_request_id index and keeps its usage rows and traces", () => {
    const path = join(tempDir(), "sy.db");
    const db = new Database(path);
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 5));
    const indexes = (d: Database) =>
      (d.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('usage', 'route_traces') AND sql IS NOT NULL ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(indexes(db)).toEqual(["route_traces_request_id", "usage_request_id", "usage_ts"]);
    for (let i = 1; i <= 3; i++) {
      db.run(
        `INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, estimated, outcome, status, total_ms, attempts, fallback, input_tokens, saved_chars)
         VALUES (?, ?, 'openai-chat', 'fast', 'openai', 'gpt-5-mini', 0, 'ok', 200, 90, 1, 0, ?, ?)`,
        [`req-${i}`, 1_800_000_000_000 + i, 100 * i, 10 * i],
      );
      db.run("INSERT INTO route_traces (route_id, request_id, ts, body) VALUES (?, ?, ?, ?)", [`sy_${i}`, `req-${i}`, 1_800_000_000_000 + i, JSON.stringify(trace(i, { routeId: `sy_${i}`, requestId: `req-${i}` }))]);
    }
    db.close();
    const s = openSqliteStore({ path });
    expect(versions(path)).toEqual(MIGRATIONS.map((m) => m.version));
    // (the trace tables and their index became blocks in migration 8)
    expect(withRaw(path, indexes)).toEqual(["usage_ts"]);
    const calls = s.recentCalls(10);
    expect(calls.map((c) => [c.requestId, c.routeId, c.usage.inputTokens, c.savedChars])).toEqual([
      ["req-3", "sy_3", 300, 30],
      ["req-2", "sy_2", 200, 20],
      ["req-1", "sy_1", 100, 10],
    ]);
    expect(s.getTrace("req-2")).toEqual(trace(2, { routeId: "sy_2", requestId: "req-2" }));
    s.close();
  });
});
