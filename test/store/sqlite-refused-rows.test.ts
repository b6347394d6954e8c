/**
 * Rows the embedded store refuses while its writes fail (README "Not done yet", session 40's list): past
 * its cap of rows waiting (100,000 of each kind) the newest are refused and lost. The log says so once
 * per outage with the count, again at most once a minute while it grows, and when writes work again;
 * a later stop counts them with the rows it could not write and exits 1 (stopGateway resolves false).
 * The full disk is simulated as in sqlite-disk-full.test.ts: `PRAGMA max_page_count` on the store's own
 * connection, so its writes fail with SQLITE_FULL.
 */
import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { stopGateway } from "../../src/stop-gateway.ts";
import { openStore } from "../../src/store/open.ts";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.ts";
import { idleStopParts } from "../support/stop-parts.ts";
import { cleanupTempDirs, countRows, fakeClock, tempDir, trace, usage } from "./helpers.ts";

afterAll(() => {
  cleanupTempDirs();
});

/** Lets the store's file grow no more (SQLITE_FULL on the next write that needs a page), or again. */
function fill(s: SqliteStore, full: boolean): void {
  const db = (s as unknown as { ctx: { db: Database } }).ctx.db;
  if (full) db.run("VACUUM");
  const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  db.run(`PRAGMA max_page_count = ${full ? pages : 1_000_000}`);
}

/** Records usage rows `r{from}`…; `size`: characters of their requested model (a few thousand: each row needs a page of its own). */
const record = (s: SqliteStore, from: number, n: number, size = 50) => {
  for (let i = from; i < from + n; i++) s.record(usage({ requestId: `r${i}`, requestedModel: "m".repeat(size) }));
};

test("through the gateway's store: one error line per outage naming the rows refused, again at most once a minute, the count when writes work again, and a later stop exits 1 saying them", async () => {
  const dir = tempDir();
  // the gateway's store reads the time from the app's clock (openStore gives it the one it is given)
  const clock = { ...fakeClock(), sleep: async () => {} };
  const lines: Record<string, unknown>[] = [];
  const s = (await openStore(undefined, dir, undefined, (l) => lines.push(JSON.parse(l)), clock, () => {})) as SqliteStore;
  const path = join(dir, "switchyard.db");
  const refusedLines = () => lines.filter((l) => "refusedUsage" in l);
  fill(s, true);
  record(s, 0, 100_000);
  s.flush();
  expect(lines).toHaveLength(1);
  expect(lines[0]!.msg).toStartWith("store: database writes failing (");
  expect(s.stats()).toMatchObject({ pendingUsage: 100_000, dropped: 0 });

  record(s, 100_000, 3); // past the cap: refused
  expect(s.stats()).toMatchObject({ pendingUsage: 100_000, dropped: 3 });
  expect(refusedLines()).toHaveLength(0); // not per row: the next flush says them
  s.flush();
  expect(refusedLines()).toEqual([
    {
      level: "error",
      time: clock.now(),
      msg: "store: database writes failing: 3 usage rows and 0 route traces refused so far in this outage, the buffers being full (100,000 of each wait in memory, the oldest, to be written once a write works again; the newest are refused): the refused ones are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them); said again at most once a minute while the count grows, and when writes work again",
      refusedUsage: 3,
      refusedTraces: 0,
    },
  ]);

  record(s, 100_003, 5);
  clock.advance(30_000);
  s.flush();
  s.flush();
  expect(refusedLines()).toHaveLength(1); // within the minute: not again
  clock.advance(30_000);
  s.flush();
  expect(refusedLines()).toHaveLength(2);
  expect(refusedLines()[1]).toMatchObject({ level: "error", refusedUsage: 8, refusedTraces: 0 });
  expect(refusedLines()[1]!.msg).toStartWith("store: database writes failing: 8 usage rows and 0 route traces refused so far in this outage");
  clock.advance(120_000);
  s.flush();
  expect(refusedLines()).toHaveLength(2); // a minute later, but nothing more refused: nothing to say

  fill(s, false);
  s.flush();
  expect(refusedLines()).toHaveLength(3);
  expect(refusedLines()[2]).toEqual({
    level: "warn",
    time: clock.now(),
    msg: "store: database writes work again: 100,000 usage rows and 0 route traces written after 6 failed flushes; 8 usage rows and 0 route traces refused meanwhile at the buffers' cap (100,000 of each) are lost (counted in switchyard_store_dropped_total; a stop exits 1 for them)",
    refusedUsage: 8,
    refusedTraces: 0,
  });
  expect(lines.filter((l) => String(l.msg).startsWith("store: database writes work again"))).toHaveLength(1); // not also the info line
  expect(countRows(path, "usage")).toBe(100_000);

  // Writes work, everything waiting is written: the stop still lost the 8 rows refused earlier.
  record(s, 200_000, 2);
  const stopLines: string[] = [];
  expect(await stopGateway(idleStopParts(stopLines, { store: s }), 0, () => false)).toBe(false); // exit 1
  expect(countRows(path, "usage")).toBe(100_002);
  expect(stopLines).toHaveLength(1);
  expect(JSON.parse(stopLines[0]!)).toMatchObject({ level: "error", usage: 0, traces: 0, state: 0, refusedUsage: 8, refusedTraces: 0, lostUsage: 8, lostTraces: 0 });
  expect(JSON.parse(stopLines[0]!).msg).toBe(
    `stopping: 8 usage rows and 0 route traces refused at the store's cap of 100,000 waiting rows of each while writes to ${path} failed are lost: 8 usage rows and 0 route traces lost in all; the rest was written`,
  );
});

describe("the store's own lines (a small cap)", () => {
  function small() {
    const clock = fakeClock();
    const got: { level: string; message: string; counts: { refusedUsage: number; refusedTraces: number } }[] = [];
    const infos: string[] = [];
    const s = openSqliteStore({
      path: join(tempDir(), "switchyard.db"),
      clock,
      flushIntervalMs: 60_000,
      maxPending: 5,
      onError: () => {},
      onInfo: (m) => infos.push(m),
      onRefused: (level, message, counts) => got.push({ level, message, counts }),
    });
    return { s, clock, got, infos };
  }

  test("each outage has its own first line at once, counting only its own rows; route traces are counted apart", () => {
    const { s, clock, got } = small();
    fill(s, true);
    record(s, 0, 7, 5000);
    for (let i = 0; i < 9; i++) s.save(trace(i));
    s.flush();
    expect(got.map((g) => [g.level, g.counts])).toEqual([["error", { refusedUsage: 2, refusedTraces: 4 }]]);
    expect(got[0]!.message).toContain("2 usage rows and 4 route traces refused so far in this outage, the buffers being full (5 of each wait in memory");
    fill(s, false);
    s.flush();
    expect(got.map((g) => [g.level, g.counts])).toEqual([
      ["error", { refusedUsage: 2, refusedTraces: 4 }],
      ["warn", { refusedUsage: 2, refusedTraces: 4 }],
    ]);

    // A second outage ten seconds later: said at once (a new outage), with its own count.
    clock.advance(10_000);
    fill(s, true);
    record(s, 100, 6, 5000);
    s.flush();
    expect(got.at(-1)).toMatchObject({ level: "error", counts: { refusedUsage: 1, refusedTraces: 0 } });
    expect(got).toHaveLength(3);
    s.close();
  });

  test("a stop on a still full disk counts the rows it could not write and those refused earlier, in all", async () => {
    const { s } = small();
    fill(s, true);
    record(s, 0, 9, 5000);
    s.flush();
    const lines: string[] = [];
    expect(await stopGateway(idleStopParts(lines, { store: s }), 0, () => false)).toBe(false);
    const line = JSON.parse(lines.at(-1)!);
    expect(line).toMatchObject({ level: "error", usage: 5, refusedUsage: 4, refusedTraces: 0, lostUsage: 9, lostTraces: 0 });
    expect(line.msg).toStartWith(`stopping while writes to ${s.path} fail: 5 usage rows, 0 route traces`);
    expect(line.msg).toEndWith(`; before, 4 usage rows and 0 route traces refused at the store's cap of 5 waiting rows of each while writes to ${s.path} failed are lost too: 9 usage rows and 0 route traces lost in all`);
    expect(s.stats().dropped).toBe(9);
  });

  test("rows refused with no failed flush (they came faster than a flush ran) are said by the flush that writes the rest", () => {
    const { s, got, infos } = small();
    record(s, 0, 7);
    s.flush();
    expect(got.map((g) => [g.level, g.counts])).toEqual([["warn", { refusedUsage: 2, refusedTraces: 0 }]]);
    expect(got[0]!.message).toStartWith("2 usage rows and 0 route traces were refused at the buffers' cap (5 of each) before this flush wrote the rest, and are lost");
    expect(infos).toHaveLength(0);
    s.flush();
    expect(got).toHaveLength(1);
    s.close();
  });
});
