/** Shared helpers for the store tests: temp dirs on the real file system, raw reads, sample rows. */
import { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RouteTrace, UsageRecord } from "../../pipeline/ports.ts";
import { StoreError } from "../../src/store/types.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const dirs: string[] = [];

/** A fresh temp directory, removed by `cleanupTempDirs`. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "sy-store-test-"));
  dirs.push(d);
  return d;
}

/** Removes every directory made by `tempDir` (call from afterAll). */
export function cleanupTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A settable clock (ms since the epoch). */
export function fakeClock(start = 1_800_000_000_000) {
  let t = start;
  return {
    now: () => t,
    set: (v: number) => {
      t = v;
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** Runs `fn` against a separate connection to the same file (as another process would see it). */
export function withRaw<T>(path: string, fn: (db: Database) => T): T {
  const db = new Database(path, { readwrite: true, create: false });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    return fn(db);
  } finally {
    db.close(false);
  }
}

/** Row count of a table, read through a separate connection. */
export function countRows(path: string, table: string): number {
  return withRaw(path, (db) => (db.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
}

/** Route traces stored in the SQLite ring (the `n` of its blocks, src/store/sqlite/trace-ring.ts). */
export function storedTraces(path: string): number {
  return withRaw(path, (db) => (db.query("SELECT COALESCE(SUM(n), 0) AS n FROM trace_blocks").get() as { n: number }).n);
}

/** The bytes of the database file and its -wal/-shm companions, concatenated. */
export function fileBytes(path: string): Buffer {
  const parts = [path, `${path}-wal`, `${path}-shm`].filter((p) => existsSync(p)).map((p) => readFileSync(p));
  return Buffer.concat(parts);
}

/** A complete usage record with overridable fields. */
export function usage(over: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId: "req-1",
    ts: 1_800_000_000_000,
    clientFormat: "openai-chat",
    requestedModel: "fast",
    providerId: "openai",
    model: "gpt-5-mini",
    accountId: "acct-1",
    keyName: "laptop",
    usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 1, reasoningTokens: 7 },
    estimated: false,
    outcome: "ok",
    status: 200,
    ttfbMs: 120,
    totalMs: 900,
    attempts: 1,
    fallback: false,
    ...over,
  };
}

/** A minimal route trace. */
export function trace(n: number, over: Partial<RouteTrace> = {}): RouteTrace {
  return {
    routeId: `sy_${n}`,
    requestId: `req-${n}`,
    ts: 1_800_000_000_000 + n,
    clientFormat: "anthropic-messages",
    requestedModel: "coding",
    candidates: ["cc/claude-sonnet-5-5", "glm/glm-5.3"],
    decisions: [{ subject: "cc/claude-sonnet-5-5", verdict: "in", reason: "eligible" }],
    attempts: [{ target: "cc/claude-sonnet-5-5", providerId: "cc", model: "claude-sonnet-5-5", startMs: 1, status: 200 }],
    warnings: [],
    outcome: "ok",
    status: 200,
    totalMs: 42,
    ...over,
  };
}

/** The StoreError code a call fails with (thrown at once or rejected), or undefined when it succeeds. */
export async function code(call: () => unknown): Promise<string | undefined> {
  try {
    await call();
    return undefined;
  } catch (e) {
    return e instanceof StoreError ? e.code : `not a StoreError: ${String(e)}`;
  }
}

/**
 * One throwaway PostgreSQL server for the test file that calls this at its top level (started in
 * beforeAll, destroyed in afterAll with the file's temp dirs): `database(prefix)` makes a fresh,
 * empty database on it and returns its URL (`prefix_1`, `prefix_2`, …); `server()` is the running
 * server itself (to pause it: test/support/stall-postgres.ts).
 */
export function postgresForFile(): { database(prefix: string): Promise<string>; server(): TestPostgres } {
  let pg: TestPostgres | undefined;
  let seq = 0;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 120_000);
  // stopping the server waits for its exit: past the default 5 s on a loaded machine (load 20)
  afterAll(async () => {
    await pg?.destroy();
    cleanupTempDirs();
  }, 60_000);
  return { database: (prefix) => pg!.createDatabase(`${prefix}_${++seq}`), server: () => pg! };
}

/**
 * `table` locked ACCESS EXCLUSIVE by a transaction on `sql` (taken before this resolves) until
 * `release`: the store's statements on it go unanswered while the database answers others, as with a
 * slow statement or, for the store's flushes, a stalled database.
 */
export async function lockTable(sql: SQL, table: string): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = sql.begin(async (tx) => {
    await tx.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    locked();
    await released;
  });
  await Promise.race([isLocked, holder]);
  return {
    release: async () => {
      release();
      await holder.catch(() => {});
    },
  };
}

/**
 * A statement that outlives the store's cancel: a trigger on `table` (BEFORE `event`, for each row)
 * holds the statement until `release()` and, when a cancel comes, catches it (`query_canceled`) and
 * waits again, as a statement whose commit wins the race against the cancel (or that a stalled server
 * runs before it reads the cancel). `cancelled()`: whether a cancel came (the trigger then holds
 * advisory lock 4345, shared, until its transaction ends). The hold is advisory lock 4343, taken on a
 * connection reserved from `sql` before this resolves.
 */
export async function holdPastCancel(sql: SQL, table: string, event: "INSERT" | "UPDATE" | "DELETE"): Promise<{ cancelled(): Promise<boolean>; release(): Promise<void> }> {
  const fn = `hold_past_cancel_${table}_${event.toLowerCase()}`;
  await sql.unsafe(`CREATE FUNCTION ${fn}() RETURNS trigger AS $$
                    BEGIN
                      LOOP
                        BEGIN
                          PERFORM pg_advisory_xact_lock_shared(4343);
                          EXIT;
                        EXCEPTION WHEN query_canceled THEN
                          PERFORM pg_advisory_xact_lock_shared(4345);
                        END;
                      END LOOP;
                      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                      RETURN NEW;
                    END $$ LANGUAGE plpgsql;
                    CREATE TRIGGER ${fn} BEFORE ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}();`);
  const holder = await sql.reserve();
  await holder`SELECT pg_advisory_lock(4343)`;
  return {
    async cancelled() {
      const [row] = await sql`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 4345 AND granted) AS yes`;
      return Boolean(row?.yes);
    },
    async release() {
      await holder`SELECT pg_advisory_unlock(4343)`.catch(() => {});
      holder.release();
    },
  };
}
