/**
 * Rows the PostgreSQL store refuses while the database is away (README "Not done yet" until session 41):
 * past its cap of rows waiting (100,000 of each kind) the newest are refused and lost. As the embedded
 * store's (sqlite-refused-rows.test.ts, ../../src/store/refused-rows.ts): the log says so once per
 * outage with the count, again at most once a minute while it grows, and in the `database reachable
 * again` line; a later stop counts them as lost and exits 1 (stopGateway resolves false), also when
 * the database came back and everything else was written, or the rest was kept on disk. Before, only
 * switchyard_store_dropped_total counted them and the stop exited 0. The database is made unreachable
 * by stopping this file's throwaway server (connections refused), and started again on the same port.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import { stopGateway } from "../../src/stop-gateway.ts";
import { openStore } from "../../src/store/open.ts";
import { UNWRITTEN_FILE } from "../../src/store/postgres/keep-unwritten.ts";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/store.ts";
import type { RefusedCounts } from "../../src/store/refused-rows.ts";
import { idleStopParts } from "../support/stop-parts.ts";
import { until } from "../support/until.ts";
import { StoreError } from "../../src/store/types.ts";
import { fakeClock, lockTable, postgresForFile, tempDir, trace, usage } from "./helpers.ts";

const pg = postgresForFile();

// a test that fails while the server is stopped leaves it running for the next one
afterEach(async () => {
  if (!pg.server().pid()) await pg.server().start();
}, 60_000);

/** Usage rows in the database at `url`. */
async function usageRows(url: string): Promise<number> {
  const sql = new SQL(url, { max: 1 });
  try {
    return ((await sql`SELECT count(*)::int AS n FROM usage`)[0] as { n: number }).n;
  } finally {
    await sql.close();
  }
}

/** Records usage rows `r{from}`… */
const record = (s: { record: PostgresStore["record"] }, from: number, n: number) => {
  for (let i = from; i < from + n; i++) s.record(usage({ requestId: `r${i}` }));
};

/**
 * Stops the server and waits for `s` to find it away (its health check's SELECT 1 refused, or the
 * LISTEN connection's close): from then on no flush is tried and the rows wait in memory.
 */
async function away(s: PostgresStore) {
  await pg.server().stop();
  await until(() => !s.health(), 20_000, "the store to find the database away", 100);
}

const REFUSED_ERROR = (n: number, cap: string, traces = 0) =>
  `database unreachable: ${n} usage rows and ${traces} route traces refused so far in this outage, the buffers being full (${cap} of each wait in memory, the oldest, to be written once a write works again; the newest are refused): the refused ones are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them); said again at most once a minute while the count grows, and when writes work again`;

test("through the gateway's store: one error line naming the rows refused, the count in the database reachable again line, and a later stop exits 1 saying them", async () => {
  const url = await pg.database("refused");
  const lines: Record<string, unknown>[] = [];
  const clock = { now: () => Date.now(), sleep: (ms: number) => Bun.sleep(ms) };
  const s = (await openStore(url, tempDir(), undefined, (l) => lines.push(JSON.parse(l)), clock, () => {})) as PostgresStore;
  // the outage's lines (the store also says what it could not do meanwhile: a key refresh, say)
  const outageLines = () => lines.filter((l) => /^store: database (unreachable|reachable again)/.test(String(l.msg)));
  const refusedLines = () => lines.filter((l) => "refusedUsage" in l);
  await away(s);
  expect(outageLines()).toHaveLength(1);
  expect(outageLines()[0]).toMatchObject({ level: "warn" });
  expect(outageLines()[0]!.msg).toStartWith("store: database unreachable (");

  record(s, 0, 100_003); // 100,000 wait in memory, the newest 3 are refused
  expect(s.stats()).toMatchObject({ pendingUsage: 100_000, dropped: 3 });
  await s.flush();
  await s.flush();
  const refusedError = { level: "error", time: expect.any(Number), msg: `store: ${REFUSED_ERROR(3, "100,000")}`, refusedUsage: 3, refusedTraces: 0 };
  expect(refusedLines()).toEqual([refusedError]); // once, not per row nor per flush
  expect(outageLines().slice(1)).toEqual([refusedError]);

  await pg.server().start();
  await until(() => outageLines().length === 3, 20_000, "the database to be reachable again");
  expect(outageLines()[2]).toEqual({
    level: "warn",
    time: expect.any(Number),
    msg: "store: database reachable again: kept writes replayed, catching up; 3 usage rows and 0 route traces refused meanwhile at the buffers' cap (100,000 of each) are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)",
    refusedUsage: 3,
    refusedTraces: 0,
  });
  await until(async () => (await usageRows(url)) === 100_000, 60_000, "the rows waiting in memory to be written");

  // The database answers, everything waiting is written: the stop still lost the 3 rows refused earlier.
  record(s, 200_000, 2);
  const stopLines: string[] = [];
  expect(await stopGateway(idleStopParts(stopLines, { store: s }), 0, () => false)).toBe(false); // exit 1
  expect(await usageRows(url)).toBe(100_002);
  expect(stopLines).toHaveLength(1);
  expect(JSON.parse(stopLines[0]!)).toEqual({
    level: "error",
    time: expect.any(Number),
    msg: "stopping: 3 usage rows and 0 route traces refused at the store's cap of 100,000 waiting rows of each while writes to PostgreSQL failed are lost: 3 usage rows and 0 route traces lost in all; the rest was written",
    usage: 0,
    traces: 0,
    state: 0,
    keyLimitWindows: 0,
    refusedUsage: 3,
    refusedTraces: 0,
    lostUsage: 3,
    lostTraces: 0,
  });
  expect(outageLines()).toHaveLength(3); // no line more (not also the info line of the outage's end)
  expect(refusedLines()).toHaveLength(2);
}, 180_000);

describe("the store's own lines (a small cap, a settable clock)", () => {
  async function small(unwrittenFile?: string, beforeFlush?: () => void, flushAnswerMs?: number) {
    const url = await pg.database("refused_small");
    const clock = fakeClock();
    const got: { level: string; message: string; counts: RefusedCounts }[] = [];
    const infos: string[] = [];
    const s = await openPostgresStore({
      url,
      clock,
      flushIntervalMs: 60_000,
      maxPending: 5,
      unwrittenFile,
      beforeFlush,
      flushAnswerMs,
      onError: () => {},
      onInfo: (m) => infos.push(m),
      onRefused: (level, message, counts) => got.push({ level, message, counts }),
    });
    return { s, url, clock, got, infos };
  }

  test("again at most once a minute while the count grows; route traces counted apart; each outage its own first line at once, counting only its own rows", async () => {
    const { s, clock, got, infos } = await small();
    await away(s);
    record(s, 0, 7);
    for (let i = 0; i < 9; i++) s.save(trace(i));
    await s.flush();
    expect(got).toEqual([{ level: "error", message: REFUSED_ERROR(2, "5", 4), counts: { refusedUsage: 2, refusedTraces: 4 } }]);

    record(s, 100, 3);
    clock.advance(30_000);
    await s.flush();
    expect(got).toHaveLength(1); // within the minute: not again
    clock.advance(30_000);
    await s.flush();
    expect(got).toHaveLength(2);
    expect(got[1]).toEqual({ level: "error", message: REFUSED_ERROR(5, "5", 4), counts: { refusedUsage: 5, refusedTraces: 4 } });
    clock.advance(120_000);
    await s.flush();
    expect(got).toHaveLength(2); // a minute later, but nothing more refused: nothing to say

    await pg.server().start();
    await until(() => got.length === 3, 20_000, "the database to be reachable again");
    expect(got[2]).toEqual({
      level: "warn",
      message: "database reachable again: kept writes replayed, catching up; 5 usage rows and 4 route traces refused meanwhile at the buffers' cap (5 of each) are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)",
      counts: { refusedUsage: 5, refusedTraces: 4 },
    });
    expect(infos.filter((m) => m.startsWith("database reachable again"))).toEqual([]); // not also the info line

    // A second outage ten seconds later: said at once (a new outage), with its own count.
    await until(() => s.stats().pendingUsage === 0, 20_000, "the rows waiting to be written");
    clock.advance(10_000);
    await away(s);
    record(s, 200, 6);
    await s.flush();
    expect(got.slice(3)).toEqual([{ level: "error", message: REFUSED_ERROR(1, "5"), counts: { refusedUsage: 1, refusedTraces: 0 } }]);
    await pg.server().start();
    await until(() => got.length === 5, 20_000, "the database to be reachable again");
    expect(got[4]!.counts).toEqual({ refusedUsage: 1, refusedTraces: 0 });
    await s.close();
  }, 120_000);

  test("a row the app's queued bookkeeping records as the database comes back (the buffers still full) is counted in the database reachable again line, not in a line of its own", async () => {
    // The gateway hands a request's usage row to the store after the reply (src/after-reply.ts), and
    // settles what is queued before each flush: a reply written just before the outage's end has its
    // row recorded once the store counts the database reachable again, before the first flush after.
    let app: { record: PostgresStore["record"] } | undefined;
    let queued = 1;
    const { s, got, infos } = await small(undefined, () => {
      if (app && queued > 0 && (s as PostgresStore).health()) record(app, 500, queued--);
    });
    await away(s);
    record(s, 0, 7);
    await s.flush();
    expect(got).toEqual([{ level: "error", message: REFUSED_ERROR(2, "5"), counts: { refusedUsage: 2, refusedTraces: 0 } }]);
    app = s;
    await pg.server().start();
    await until(() => got.length >= 2, 20_000, "the database to be reachable again");
    await until(() => s.stats().pendingUsage === 0, 20_000, "the rows waiting to be written");
    await s.flush(); // waits for the flush writing them
    expect(queued).toBe(0);
    expect(got.slice(1)).toEqual([
      {
        level: "warn",
        message: "database reachable again: kept writes replayed, catching up; 3 usage rows and 0 route traces refused meanwhile at the buffers' cap (5 of each) are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)",
        counts: { refusedUsage: 3, refusedTraces: 0 },
      },
    ]);
    expect(infos).toEqual([]);
    expect(s.stats()).toMatchObject({ dropped: 3 });
    await s.close();
  }, 120_000);

  test("rows recorded while the first flush after the outage writes the batches waiting ahead of the buffers (key budget use kept meanwhile) wait: none refused, no line of that flush's own", async () => {
    const { s, url, got, infos } = await small();
    await away(s);
    record(s, 0, 7);
    await s.flush();
    expect(got).toEqual([{ level: "error", message: REFUSED_ERROR(2, "5"), counts: { refusedUsage: 2, refusedTraces: 0 } }]);
    // Key budget use kept while away (a batch of its own, written before the buffers by the next flush).
    expect(s.keepUnreportedUse([{ name: "key:dev:budget:5h:tokens", windowStart: Date.now(), windowEnd: Date.now() + 5 * 3_600_000, pending: true, used: 10, reported: 0 }])).toBe(true);
    // Requests answered as the database comes back: their rows come while that flush writes the key use.
    let recorded = false;
    const lines = got.length;
    const push = got.push.bind(got);
    got.push = (...items) => {
      const n = push(...items);
      // recorded once the line is said, after the code that said it (the probe) went on to the first flush
      if (!recorded && items.some((i) => i.message.startsWith("database reachable again"))) queueMicrotask(() => void ((recorded = true), record(s, 100, 3)));
      return n;
    };
    await pg.server().start();
    await until(() => got.length > lines && recorded, 20_000, "the database to be reachable again");
    await until(() => s.stats().pendingUsage === 0, 20_000, "the rows waiting to be written");
    await s.flush();
    expect(got.slice(1)).toEqual([
      {
        level: "warn",
        message: "database reachable again: kept writes replayed, catching up; 2 usage rows and 0 route traces refused meanwhile at the buffers' cap (5 of each) are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)",
        counts: { refusedUsage: 2, refusedTraces: 0 },
      },
    ]); // until session 43 also "3 usage rows and 0 route traces were refused at the buffers' cap before this flush wrote the rest, …"
    expect(infos).toEqual([]);
    expect([await usageRows(url), s.stats().dropped]).toEqual([8, 2]);
    await s.close();
  }, 120_000);

  test("a write ahead of the buffers that finds the database away again puts the rows the flush took back into the buffers: their cap holds while it is away", async () => {
    const { s, url } = await small(undefined, undefined, 300);
    const sql = new SQL(url, { max: 1 });
    // Every flush statement first inserts its batch id into flush_batches: held, the key use's write goes unanswered.
    const lock = await lockTable(sql, "flush_batches");
    try {
      // An outage as the store sees it (the database itself answers, for the probe to find it back).
      (s as unknown as { ctx: { degrade(err: unknown): void } }).ctx.degrade(new StoreError("unavailable", "away for the test"));
      record(s, 0, 5); // the buffers full
      expect(s.keepUnreportedUse([{ name: "key:dev:budget:5h:tokens", windowStart: Date.now(), windowEnd: Date.now() + 5 * 3_600_000, pending: true, used: 10, reported: 0 }])).toBe(true);
      // Back: the first flush takes the 5 rows, then the key use ahead of them goes unanswered: away again.
      await until(() => s.stats().flushErrors === 1 && !s.health(), 20_000, "the first flush after the outage to find the database away again");
      record(s, 100, 3);
      // the 5 rows wait in the buffers again, so these 3 are refused (without that, 8 rows would wait)
      expect(s.stats()).toMatchObject({ pendingUsage: 5, dropped: 3 });
    } finally {
      await lock.release();
      await sql.close();
    }
    await until(() => s.health() && s.stats().pendingUsage === 0, 20_000, "the rows to be written");
    expect(await usageRows(url)).toBe(5);
    await s.close();
  }, 120_000);

  test("flushes PostgreSQL refuses while it answers (a constraint every usage row breaks): the rows refused meanwhile are said by a failed flush, and once by the flush that writes the rest", async () => {
    const { s, url, got } = await small();
    const sql = new SQL(url, { max: 1 });
    try {
      await sql.unsafe("ALTER TABLE usage ADD CONSTRAINT refuse_all CHECK (false) NOT VALID");
      record(s, 0, 5);
      await s.flush(); // refused by the database: the 5 rows go back, nothing refused at the cap yet
      expect(got).toEqual([]);
      record(s, 5, 2);
      await s.flush();
      await s.flush();
      expect(s.health()).toBe(true);
      const counts = { refusedUsage: 2, refusedTraces: 0 };
      expect(got).toEqual([{ level: "error", message: REFUSED_ERROR(2, "5").replace("database unreachable", "database writes failing"), counts }]);
      await sql.unsafe("ALTER TABLE usage DROP CONSTRAINT refuse_all");
      await s.flush();
      expect(got.slice(1)).toEqual([
        {
          level: "warn",
          // the end of the run of refused flushes says them (pg-flush-failing.test.ts: its line, as on the embedded store)
          message: "database writes work again: 5 usage rows and 0 route traces written after 3 failed flushes in 0 s; 2 usage rows and 0 route traces refused meanwhile at the buffers' cap (5 of each) are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)",
          counts,
        },
      ]);
      expect(await usageRows(url)).toBe(5);
    } finally {
      await sql.close();
    }
    const lines: string[] = [];
    expect(await stopGateway(idleStopParts(lines, { store: s }), 0, () => false)).toBe(false); // exit 1
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", refusedUsage: 2, lostUsage: 2 });
  }, 120_000);

  test("a stop while the database is still away keeps the rest on disk for the next start and still exits 1 for the rows refused", async () => {
    const file = join(tempDir(), UNWRITTEN_FILE);
    const { s } = await small(file);
    await away(s);
    record(s, 0, 9);
    await s.flush();
    expect(s.stats()).toMatchObject({ pendingUsage: 5, dropped: 4 });
    const lines: string[] = [];
    expect(await stopGateway(idleStopParts(lines, { store: s }), 0, () => false)).toBe(false); // exit 1
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      level: "error",
      time: expect.any(Number),
      msg: `stopping while the database is away: 4 usage rows and 0 route traces refused at the store's cap of 5 waiting rows of each while writes to PostgreSQL failed are lost: 4 usage rows and 0 route traces lost in all; 5 usage rows, 0 route traces and 0 routing/budget state changes were not written within the shutdown grace period (server.shutdown_grace_ms) and are kept in ${file}, which the next start with this data directory writes to the database`,
      usage: 0,
      traces: 0,
      state: 0,
      keyLimitWindows: 0,
      keptUsage: 5,
      keptTraces: 0,
      keptState: 0,
      keptKeyLimitWindows: 0,
      keptIn: file,
      refusedUsage: 4,
      refusedTraces: 0,
      lostUsage: 4,
      lostTraces: 0,
    });
    expect(s.stats().dropped).toBe(4);
  }, 120_000);
});
