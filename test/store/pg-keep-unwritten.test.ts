/**
 * What a stop while PostgreSQL is away could not write (README "Running several instances"): kept in
 * the data directory's `unwritten-rows.jsonl` (mode 0600) and written by the next open, once (each batch
 * keeps its flush id: a batch written already, by a start that died before it removed the file or by
 * the flush in the air at the stop that committed after all, writes nothing again); when
 * that file cannot be written, the rows are lost and counted in `switchyard_store_dropped_total`, the
 * batch that was in the air too (it was not counted before). A throwaway PostgreSQL whose usage table a
 * test connection locks: the store's flush goes unanswered, as with a stalled database.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GatewayMetrics } from "../../src/http/metrics.ts";
import { emptyBatch, UNWRITTEN_FILE, writeKept } from "../../src/store/postgres/keep-unwritten.ts";
import { usageParams } from "../../src/store/rows.ts";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/store.ts";
import { lockTable, postgresForFile, tempDir, trace, usage } from "./helpers.ts";

const pg = postgresForFile();

/**
 * A store whose flush of 3 usage rows and 3 traces is in the air (unanswered: the usage table is locked
 * through `sql` and the store is away), with 2 more usage rows buffered after it.
 */
async function storeWithRowsInTheAir(url: string, file: string, errors: string[], sql: SQL): Promise<{ s: PostgresStore; lock: { release: () => Promise<void> } }> {
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: 300, unwrittenFile: file, onError: (m) => errors.push(m) });
  const lock = await lockTable(sql, "usage");
  for (let i = 0; i < 3; i++) {
    s.record(usage({ requestId: `air-${i}` }));
    s.save(trace(i, { requestId: `air-${i}` }));
  }
  await s.flush();
  expect(s.health()).toBe(false);
  s.record(usage({ requestId: "buffered-0" }));
  s.record(usage({ requestId: "buffered-1" }));
  return { s, lock };
}

/**
 * Each test's start: a fresh database (`url`; `sql`, a test connection to it) and data directory
 * (`dir`, the unwritten-rows `file` in it), and `errors` for a store's error lines; `done` releases the
 * usage lock the test keeps in `lock` (again is harmless) and closes `sql`.
 */
async function setUp() {
  const url = await pg.database("keep");
  const dir = tempDir();
  const t = {
    url,
    dir,
    file: join(dir, UNWRITTEN_FILE),
    errors: [] as string[],
    sql: new SQL(url, { max: 2 }),
    lock: undefined as { release: () => Promise<void> } | undefined,
    done: async () => {
      await t.lock?.release();
      await t.sql.close();
    },
  };
  return t;
}

const count = async (sql: SQL, where = "true") => ((await sql.unsafe(`SELECT count(*)::int AS n FROM usage WHERE ${where}`))[0] as { n: number }).n;

/** switchyard_store_dropped_total as GET /metrics would say it for this store. */
async function droppedMetric(s: PostgresStore): Promise<number> {
  const m = new GatewayMetrics({ accounts: () => ({ accounts: [], providers: new Map(), cooldowns: [] }), circuit: () => ({ state: "closed" }), store: () => s.stats(), inflight: () => 0 });
  const hit = /^switchyard_store_dropped_total (\d+)$/m.exec(await m.text());
  return Number(hit?.[1]);
}

describe("a stop while the database does not answer", () => {
  test("the rows are kept in unwritten-rows.jsonl (0600, no secret), nothing is dropped; the next open writes them (not a binding lapsed since) and removes the file; a start that died before removing it writes none twice", async () => {
    const t = await setUp();
    const { url, file, errors, sql } = t;
    try {
      const { s, lock } = await storeWithRowsInTheAir(url, file, errors, sql);
      t.lock = lock;
      // conversation bindings: one still valid at the next start, one lapsed by then (not written back)
      const lapsesAt = Date.now() + 1500;
      s.bind({ key: "conv-live", accountId: "acct-1", expiresAt: Date.now() + 600_000 });
      s.bind({ key: "conv-lapsed", accountId: "acct-1", expiresAt: lapsesAt });
      const result = await s.close(Date.now() + 500);
      expect(result).toEqual({ usage: 0, traces: 0, state: 0, keyUse: 0, kept: { file, usage: 5, traces: 3, state: 2, keyUse: 0 } });
      expect(s.stats().dropped).toBe(0);
      expect(await droppedMetric(s)).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const text = readFileSync(file, "utf8");
      expect(text.trim().split("\n")).toHaveLength(1 + 5 + 3 + 2);
      expect(text).toContain("buffered-1");
      // what the database would hold: the key's name, never a request's body or a credential
      expect(text).not.toContain("Bearer");
      await lock.release();
      expect(await count(sql)).toBe(0);
      while (Date.now() <= lapsesAt) await Bun.sleep(50);
      const infos: string[] = [];
      const reopen = () => openPostgresStore({ url, flushIntervalMs: 60_000, unwrittenFile: file, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
      const again = await reopen();
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
        expect(await count(sql)).toBe(5);
        expect(await count(sql, "request_id LIKE 'air-%'")).toBe(3);
        expect(((await sql`SELECT count(*)::int AS n FROM route_traces`)[0] as { n: number }).n).toBe(3);
        expect(infos.some((m) => m.includes("5 usage rows, 3 route traces and 1 routing state changes") && m.includes("the file is removed"))).toBe(true);
        expect(((await sql`SELECT key FROM bindings ORDER BY key`) as { key: string }[]).map((r) => r.key)).toEqual(["conv-live"]);
      } finally {
        await again.close();
      }
      // A start that wrote them and died before it removed the file: the next writes none of them again.
      writeFileSync(file, text, { mode: 0o600 });
      const third = await reopen();
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
      } finally {
        await third.close();
      }
      expect(await count(sql)).toBe(5);
      expect(errors.filter((m) => m.includes(UNWRITTEN_FILE))).toEqual([]);
    } finally {
      await t.done();
    }
  }, 60_000);

  test("the key budget use a stop could not report is kept in the file too and counted back by the next open into each window still current (a window opened while away too), a window ended since dropped and counted; a replay of the same file counts nothing twice", async () => {
    const t = await setUp();
    const { url, file, errors, sql } = t;
    const FIVE_H = 5 * 3_600_000;
    const tokens = "key:dev:budget:5h:tokens";
    const usd = "key:ops:budget:5h:usd";
    const gone = "key:old:budget:1h:tokens";
    const shares = async (name: string) => (await sql`SELECT instance_id, used, unpriced::int AS unpriced FROM quota_shares WHERE name = ${name} ORDER BY window_start`) as Array<{ instance_id: string; used: number; unpriced: number }>;
    const windowOf = async (name: string) => ((await sql`SELECT window_start FROM budget_window_starts WHERE name = ${name}`) as Array<{ window_start: string }>).map((r) => Number(r.window_start));
    try {
      const s = await openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: 300, unwrittenFile: file, onError: (m) => errors.push(m) });
      // dev's window is open in the database with 18 tokens of this instance's reported before the outage
      const w = await s.openBudgetWindow(tokens, FIVE_H);
      await s.setQuotaShare({ name: tokens, windowStart: w.start, windowEnd: w.end, limit: 1000, target: 125, used: 18 });
      t.lock = await lockTable(sql, "usage");
      s.record(usage({ requestId: "in-the-air" }));
      await s.flush();
      expect(s.health()).toBe(false);
      // what the key counters' close could not report: dev's window, ops' window opened while away (never confirmed), old's ended since
      const openedAway = Date.now() - 2000;
      const taken = s.keepUnreportedUse([
        { name: tokens, windowStart: w.start, windowEnd: w.end, pending: false, used: 72, reported: 18 },
        { name: usd, windowStart: openedAway, windowEnd: openedAway + FIVE_H, pending: true, used: 0.25, reported: 0, unpriced: 2 },
        { name: gone, windowStart: Date.now() - 2 * 3_600_000, windowEnd: Date.now() - 3_600_000, pending: false, used: 40, reported: 0 },
      ]);
      expect(taken).toBe(true);
      const result = await s.close(Date.now() + 500);
      // a closing store takes no more: it says so, for the stop to count that use as lost
      expect(s.keepUnreportedUse([{ name: tokens, windowStart: w.start, windowEnd: w.end, pending: false, used: 80, reported: 72 }])).toBe(false);
      expect(result).toEqual({ usage: 0, traces: 0, state: 0, keyUse: 0, kept: { file, usage: 1, traces: 0, state: 0, keyUse: 3 } });
      const text = readFileSync(file, "utf8");
      expect(text.split("\n").filter((l) => l.includes('"keyUse"'))).toHaveLength(3);
      await t.lock!.release();
      t.lock = undefined;
      expect(await shares(tokens)).toEqual([{ instance_id: s.instanceId, used: 18, unpriced: 0 }]);
      const infos: string[] = [];
      const reopen = async () => {
        const again = await openPostgresStore({ url, flushIntervalMs: 60_000, unwrittenFile: file, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
        try {
          for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
          expect(existsSync(file)).toBe(false);
        } finally {
          await again.close();
        }
      };
      await reopen();
      // counted as the stopped instance's use of each window: dev's 72 tokens (not 18 + 72), ops' window opened at its start
      expect(await shares(tokens)).toEqual([{ instance_id: s.instanceId, used: 72, unpriced: 0 }]);
      expect(await windowOf(usd)).toEqual([openedAway]);
      expect(await shares(usd)).toEqual([{ instance_id: s.instanceId, used: 0.25, unpriced: 2 }]);
      expect(await windowOf(gone)).toEqual([]);
      expect(await shares(gone)).toEqual([]);
      expect(infos.some((m) => m.includes("the key budget use of 3 windows: 2 counted back into their windows, 1 dropped (their windows had ended); the file is removed"))).toBe(true);
      // the same file again (a start that died before removing it): nothing counts twice
      writeFileSync(file, text, { mode: 0o600 });
      await reopen();
      expect(await shares(tokens)).toEqual([{ instance_id: s.instanceId, used: 72, unpriced: 0 }]);
      expect(await shares(usd)).toEqual([{ instance_id: s.instanceId, used: 0.25, unpriced: 2 }]);
      expect(infos.some((m) => m.includes("0 counted back into their windows, 0 dropped (their windows had ended), 3 written already by an earlier start"))).toBe(true);
      expect(errors.filter((m) => m.includes(UNWRITTEN_FILE))).toEqual([]);
    } finally {
      await t.done();
    }
  }, 60_000);

  test("a stop keeps in the file what another process on the data directory kept there after this one started, beside its own rows; the next open writes both", async () => {
    const t = await setUp();
    const { url, file, errors, sql } = t;
    try {
      const { s, lock: l } = await storeWithRowsInTheAir(url, file, errors, sql);
      t.lock = l;
      // another process (an instance stopping while this one started on the same data directory) kept a row and a key budget's use
      const other = emptyBatch();
      other.usage.push(usageParams(usage({ requestId: "other-process" })));
      const otherUse = { name: "key:other:budget:5h:tokens", windowStart: Date.now() - 1000, windowEnd: Date.now() + 3_600_000, pending: true, used: 30, reported: 0, instanceId: "other-instance" };
      writeKept(file, [{ id: "other-batch", batch: other }, { id: "other-use", batch: { ...emptyBatch(), keyUse: [otherUse] } }], Date.now());
      const infos: string[] = [];
      const result = await s.close(Date.now() + 500);
      expect(result?.kept).toEqual({ file, usage: 5, traces: 3, state: 0, keyUse: 0 });
      const text = readFileSync(file, "utf8");
      expect(text).toContain("other-process");
      expect(text).toContain("buffered-1");
      expect(text).toContain("other-instance");
      await t.lock!.release();
      t.lock = undefined;
      const again = await openPostgresStore({ url, flushIntervalMs: 60_000, unwrittenFile: file, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
      } finally {
        await again.close();
      }
      expect(await count(sql)).toBe(6);
      expect(await count(sql, "request_id = 'other-process'")).toBe(1);
      expect(((await sql`SELECT used FROM quota_shares WHERE instance_id = 'other-instance'`) as { used: number }[]).map((r) => r.used)).toEqual([30]);
      expect(errors.filter((m) => m.includes(UNWRITTEN_FILE))).toEqual([]);
    } finally {
      await t.done();
    }
  }, 60_000);

  test("a batch of the file read at the start whose rows had all lapsed (an expired binding) is not written back by an outage stop, nor called another process's", async () => {
    const t = await setUp();
    try {
      const lapsed = emptyBatch();
      lapsed.binds.set("conv-old", { key: "conv-old", accountId: "acct-1", expiresAt: Date.now() - 1000 });
      const live = emptyBatch();
      live.usage.push(usageParams(usage({ requestId: "kept-1" })));
      writeKept(t.file, [{ id: "batch-lapsed", batch: lapsed }, { id: "batch-live", batch: live }], Date.now());
      // the schema first, then the usage table locked: the start's write of the file goes unanswered
      await (await openPostgresStore({ url: t.url, flushIntervalMs: 60_000 })).close(Date.now() + 200);
      t.lock = await lockTable(t.sql, "usage");
      const infos: string[] = [];
      const s = await openPostgresStore({ url: t.url, flushIntervalMs: 60_000, flushAnswerMs: 300, unwrittenFile: t.file, onError: (m) => t.errors.push(m), onInfo: (m) => infos.push(m) });
      await s.flush();
      s.record(usage({ requestId: "new-1" }));
      const result = await s.close(Date.now() + 500);
      expect(result?.kept).toEqual({ file: t.file, usage: 2, traces: 0, state: 0, keyUse: 0 });
      const text = readFileSync(t.file, "utf8");
      expect(text).toContain("kept-1");
      expect(text).toContain("new-1");
      expect(text).not.toContain("batch-lapsed");
      expect(text).not.toContain("conv-old");
      expect(infos.filter((l) => l.includes("another process"))).toEqual([]);
    } finally {
      await t.done();
    }
  }, 60_000);

  test("lines of the file that cannot be read are not deleted with it: once the rest is written the file is kept as unwritten-rows.jsonl.unreadable-<ms> (0600), and a stop replacing it first keeps such a copy", async () => {
    const t = await setUp();
    const { url, dir, file, errors, sql } = t;
    const damaged = ['{"batch":"hand-edited","usage":[1,2', "not json at all"];
    const asides = () => readdirSync(dir).filter((n) => /^unwritten-rows\.jsonl\.unreadable-\d+$/.test(n));
    try {
      const { s, lock } = await storeWithRowsInTheAir(url, file, errors, sql);
      t.lock = lock;
      expect((await s.close(Date.now() + 500))?.kept?.usage).toBe(5);
      appendFileSync(file, damaged.join("\n") + "\n");
      // The next start cannot write either (the table still locked), and its stop keeps a row of its own.
      const infos: string[] = [];
      const open = (answerMs?: number) => openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: answerMs, unwrittenFile: file, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
      const second = await open(300);
      await second.flush();
      second.record(usage({ requestId: "second-start" }));
      expect((await second.close(Date.now() + 500))?.kept?.usage).toBe(6);
      const [copy] = asides();
      expect(copy).toBeDefined();
      expect(statSync(join(dir, copy!)).mode & 0o777).toBe(0o600);
      for (const line of damaged) expect(readFileSync(join(dir, copy!), "utf8")).toContain(line);
      expect(errors.some((m) => m.includes("2 lines could not be read") && m.includes(join(dir, copy!)))).toBe(true);
      expect(readFileSync(file, "utf8")).toContain("second-start");
      // The database answers again: the readable rows are written, the damaged file is kept aside, not deleted.
      appendFileSync(file, damaged[1] + "\n");
      await lock.release();
      await Bun.sleep(5); // a later ms than the first copy's name
      const third = await open();
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
        expect(await count(sql)).toBe(6);
      } finally {
        await third.close();
      }
      const kept = asides().filter((n) => n !== copy);
      expect(kept).toHaveLength(1);
      expect(statSync(join(dir, kept[0]!)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, kept[0]!), "utf8")).toContain(damaged[1]);
      expect(errors.some((m) => m.includes("1 lines of") && m.includes(`kept as ${join(dir, kept[0]!)}`))).toBe(true);
      expect(infos.some((m) => m.includes(`the file is kept as ${join(dir, kept[0]!)}`))).toBe(true);
    } finally {
      await t.done();
    }
  }, 60_000);

  test("when the file cannot be written (a directory stands at its path) the rows are lost: counted in switchyard_store_dropped_total, the flush in the air too, and the reason is logged", async () => {
    const t = await setUp();
    const { url, file, errors, sql } = t;
    try {
      const { s, lock } = await storeWithRowsInTheAir(url, file, errors, sql);
      t.lock = lock;
      mkdirSync(join(file, "in-the-way"), { recursive: true }); // after the open: the disk fails at the stop
      const result = await s.close(Date.now() + 500);
      expect(result).toEqual({ usage: 5, traces: 3, state: 0, keyUse: 0 });
      expect(await droppedMetric(s)).toBe(8);
      expect(errors.some((m) => m.startsWith(`could not keep the unwritten rows in ${file}`))).toBe(true);
      expect(statSync(file).isDirectory()).toBe(true);
    } finally {
      await t.done();
    }
  }, 60_000);
});

describe("a stop with the database answering", () => {
  for (const [when, until] of [
    ["the grace period already over (a stream used it up)", () => Date.now() - 1_000],
    ["a second signal (the end moved to now)", () => () => 0],
  ] as const) {
    test(`${when}: the last flush still writes its rows; no unwritten file, no "did not answer" line`, async () => {
      const t = await setUp();
      try {
        const s = await openPostgresStore({ url: t.url, flushIntervalMs: 60_000, unwrittenFile: t.file, onError: (m) => t.errors.push(m) });
        for (let i = 0; i < 3; i++) s.record(usage({ requestId: `late-${i}` }));
        const t0 = Date.now();
        expect(await s.close(until())).toBeUndefined();
        expect(Date.now() - t0).toBeLessThan(2_500);
        expect(await count(t.sql, "request_id LIKE 'late-%'")).toBe(3);
        expect(existsSync(t.file)).toBe(false);
        expect(t.errors).toEqual([]);
      } finally {
        await t.done();
      }
    });
  }
});
