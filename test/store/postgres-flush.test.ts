/**
 * The PostgreSQL store's own behaviour beyond the shared contract (SPEC D-2; split from
 * contract.test.ts, 2026-12-05): its versioned migrations, its batched usage flush (a refused row, a
 * stalled database) and what counts as the database being away. A throwaway server is started for this
 * file.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PG_MIGRATIONS, migratePg } from "../../src/store/postgres/migrations.ts";
import { isUnavailable } from "../../src/store/postgres/db.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { postgresForFile, trace, usage } from "./helpers.ts";

const pg = postgresForFile();

describe("postgres migration 5", () => {
  test("a version-4 database loses the unread usage_request_id index and keeps its usage rows and traces", async () => {
    const url = await pg.database("flush");
    const sql = new SQL(url, { max: 1 });
    const indexes = async () =>
      ((await sql`SELECT indexname FROM pg_indexes WHERE tablename = 'usage' ORDER BY indexname`) as { indexname: string }[]).map((r) => r.indexname);
    try {
      await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 4));
      expect(await indexes()).toEqual(["usage_pkey", "usage_request_id", "usage_ts"]);
      for (let i = 1; i <= 3; i++) {
        await sql`INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, estimated, outcome, status, total_ms, attempts, fallback, input_tokens, saved_chars)
          VALUES (${`req-${i}`}, ${1_800_000_000_000 + i}, 'openai-chat', 'fast', 'openai', 'gpt-5-mini', false, 'ok', 200, 90, 1, false, ${100 * i}, ${10 * i})`;
        await sql`INSERT INTO route_traces (route_id, request_id, ts, body)
          VALUES (${`sy_${i}`}, ${`req-${i}`}, ${1_800_000_000_000 + i}, ${JSON.stringify(trace(i, { routeId: `sy_${i}`, requestId: `req-${i}` }))})`;
      }
      const s = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
      expect(((await sql`SELECT version FROM schema_migrations ORDER BY version`) as { version: number }[]).map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      expect(await indexes()).toEqual(["usage_pkey", "usage_ts"]);
      expect((await s.recentCalls(10)).map((c) => [c.requestId, c.routeId, c.usage.inputTokens, c.savedChars])).toEqual([
        ["req-3", "sy_3", 300, 30],
        ["req-2", "sy_2", 200, 20],
        ["req-1", "sy_1", 100, 10],
      ]);
      expect(await s.getTrace("req-2")).toEqual(trace(2, { routeId: "sy_2", requestId: "req-2" }));
      await s.close();
    } finally {
      await sql.close();
    }
  });
});

describe("postgres flush", () => {
  test("a row PostgreSQL refuses for its value is dropped alone (counted, logged); the rows around it are written", async () => {
    const url = await pg.database("flush");
    const errors: string[] = [];
    const s = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: (m) => errors.push(m) });
    const sql = new SQL(url, { max: 1 });
    try {
      // A column narrower than what one row carries: the statement fails with a data exception (22001).
      await sql`ALTER TABLE usage ALTER COLUMN requested_model TYPE VARCHAR(20)`;
      s.record(usage({ requestId: "r1" }));
      s.record(usage({ requestId: "too-long", requestedModel: "m".repeat(30) }));
      s.record(usage({ requestId: "r3" }));
      s.save(trace(1, { requestId: "r1" }));
      await s.flush();
      s.record(usage({ requestId: "r4" }));
      await s.flush();
      expect((await s.recentCalls(10)).map((c) => c.requestId)).toEqual(["r4", "r3", "r1"]);
      expect((await s.getTrace("r1"))?.routeId).toBe("sy_1");
      expect(s.stats()).toMatchObject({ pendingUsage: 0, pendingTraces: 0, dropped: 1, flushErrors: 1 });
      expect(errors.filter((e) => e.includes("refused 1 row(s)"))).toHaveLength(1);
      await s.close();
    } finally {
      await sql.close();
    }
  });
});

describe("postgres flush against a stalled database", () => {
  test("a flush the database does not answer (usage locked) is bounded: the store is away, its rows kept; after the lock they are written once, not twice; the end of the outage is an info line", async () => {
    const url = await pg.database("flush");
    const errors: string[] = [];
    const infos: string[] = [];
    const s = await openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: 300, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
    const sql = new SQL(url, { max: 2 });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = sql.begin(async (tx) => {
      await tx`LOCK TABLE usage IN ACCESS EXCLUSIVE MODE`;
      locked();
      await released;
    });
    try {
      await isLocked;
      for (let i = 0; i < 3; i++) s.record(usage({ requestId: `stall-${i}` }));
      // Before, this waited for as long as the lock was held.
      await s.flush();
      expect(s.health()).toBe(false);
      expect(s.stats().pendingUsage).toBe(3);
      expect(errors.some((e) => e.startsWith("database unreachable (the database did not answer a flush within 300 ms)"))).toBe(true);
      // The probe's SELECT 1 answers, but the kept rows cannot be written: still away. Checked once its replay waits on the lock (2 not granted), not after a fixed 2.5 s.
      const blocked = async () => ((await sql`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'usage'::regclass AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)[0] as { n: number }).n;
      for (const end = Date.now() + 15_000; !s.health() && (await blocked()) < 2 && Date.now() < end; ) await Bun.sleep(50);
      expect({ healthy: s.health(), blocked: await blocked() }).toEqual({ healthy: false, blocked: 2 });
      release();
      await holder;
      const end = Date.now() + 15_000;
      while (!s.health() && Date.now() < end) await Bun.sleep(100);
      expect(s.health()).toBe(true);
      expect(infos.filter((m) => m.startsWith("database reachable again"))).toHaveLength(1);
      expect(errors.filter((m) => m.includes("reachable again"))).toEqual([]);
      await s.flush();
      // The stalled statement committed once the lock was gone; its replay wrote nothing.
      const [row] = await sql`SELECT count(*)::int AS n FROM usage WHERE request_id LIKE 'stall-%'`;
      expect(row.n).toBe(3);
      expect(s.stats().pendingUsage).toBe(0);
      await s.close();
    } finally {
      release();
      await holder.catch(() => {});
      await sql.close();
    }
  }, 30_000);
});

describe("postgres flush: the row-by-row retry after a refused value", () => {
  test("a row whose statement goes unanswered is bounded like a batch (the store is away); after the lock it is written once, the rows after it too, the refused one dropped", async () => {
    const url = await pg.database("flush");
    const errors: string[] = [];
    const s = await openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: 300, onError: (m) => errors.push(m) });
    const sql = new SQL(url, { max: 2 });
    // A column narrower than one row's value (a data exception, 22001: the batch falls back to one
    // statement per row), and a row whose insert waits for an advisory lock the test holds (a stall).
    await sql`ALTER TABLE usage ALTER COLUMN requested_model TYPE VARCHAR(20)`;
    await sql.unsafe(`CREATE FUNCTION stall_one() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.request_id = 'stall' THEN PERFORM pg_advisory_xact_lock(4242); END IF; RETURN NEW; END $$`);
    await sql.unsafe("CREATE TRIGGER stall_one BEFORE INSERT ON usage FOR EACH ROW EXECUTE FUNCTION stall_one()");
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(4242)`;
      locked();
      await released;
    });
    try {
      await isLocked;
      s.record(usage({ requestId: "too-long", requestedModel: "m".repeat(30) }));
      s.record(usage({ requestId: "r1" }));
      s.record(usage({ requestId: "stall" }));
      s.record(usage({ requestId: "r3" }));
      // Before, this waited for as long as the lock was held.
      await s.flush();
      expect(s.health()).toBe(false);
      expect(errors.some((e) => e.startsWith("database unreachable (the database did not answer a flush within 300 ms)"))).toBe(true);
      expect(errors.filter((e) => e.includes("refused 1 row(s)"))).toHaveLength(1);
      release();
      await holder;
      const end = Date.now() + 15_000;
      while (!s.health() && Date.now() < end) await Bun.sleep(100);
      expect(s.health()).toBe(true);
      await s.flush();
      // The stalled statement committed once the lock was gone; its replay (same id) wrote nothing.
      const rows = (await sql`SELECT request_id FROM usage ORDER BY request_id`) as { request_id: string }[];
      expect(rows.map((r) => r.request_id)).toEqual(["r1", "r3", "stall"]);
      expect(s.stats()).toMatchObject({ pendingUsage: 0, dropped: 1 });
      await s.close();
    } finally {
      release();
      await holder.catch(() => {});
      await sql.close();
    }
  }, 30_000);
});

describe("postgres: what counts as the database being away", () => {
  test("a server with no connection left for this role (53300) is away, not a refused statement", async () => {
    const url = await pg.database("flush");
    const root = new SQL(url, { max: 1 });
    await root.unsafe("CREATE ROLE capped LOGIN CONNECTION LIMIT 1");
    const capped = url.replace("//switchyard@", "//capped@");
    const first = new SQL(capped, { max: 1 });
    const second = new SQL(capped, { max: 1, connectionTimeout: 5 });
    try {
      await first`SELECT 1`;
      const err = await second`SELECT 1`.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as { errno?: string }).errno).toBe("53300");
      expect(isUnavailable(err)).toBe(true);
    } finally {
      await second.close().catch(() => {});
      await first.close();
      await root.unsafe("DROP ROLE capped").catch(() => {});
      await root.close();
    }
  });
});
