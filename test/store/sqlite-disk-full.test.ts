/**
 * The embedded store on a full disk (the SRE tryout of 2026-12-07 on a 2 MB tmpfs): simulated without
 * root by `PRAGMA max_page_count` on the store's own connection, which makes SQLite's writes fail with
 * SQLITE_FULL ("database or disk is full") as a full file system does. A run of failed flushes is said
 * once and its end once, the store says its writes fail (GET /health's `db: "failing"`), and a stop
 * whose last flush cannot write counts the rows as lost: an error line, and the stop resolves false
 * (exit 1), not a clean stop.
 */
import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { stopGateway } from "../../src/stop-gateway.ts";
import { idleStopParts } from "../support/stop-parts.ts";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.ts";
import { cleanupTempDirs, countRows, tempDir, usage } from "./helpers.ts";

afterAll(cleanupTempDirs);

/** The store's connection (private): the test's stand-in for the file system under it. */
function connection(s: SqliteStore): Database {
  return (s as unknown as { ctx: { db: Database } }).ctx.db;
}

/** Lets the file grow no more (SQLITE_FULL on the next write that needs a page), or again. */
function fill(s: SqliteStore, full: boolean): void {
  const db = connection(s);
  if (full) db.run("VACUUM"); // no free pages left inside the file either
  const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  db.run(`PRAGMA max_page_count = ${full ? pages : 1_000_000}`);
}

/** A full store with `n` usage rows waiting (bigger than the pages left). */
function fullStore(n: number) {
  const path = join(tempDir(), "switchyard.db");
  const errors: string[] = [];
  const infos: string[] = [];
  const s = openSqliteStore({ path, flushIntervalMs: 60_000, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
  fill(s, true);
  for (let i = 0; i < n; i++) s.record(usage({ requestId: `r${i}`, requestedModel: "m".repeat(200) }));
  return { path, s, errors, infos };
}

describe("flushes on a full disk", () => {
  test("a run of failed flushes is said once, with its cause; the flush that works again says so; the store reads as failing meanwhile", () => {
    const { path, s, errors, infos } = fullStore(192);
    expect(s.writesFailing()).toBe(false);
    for (let i = 0; i < 5; i++) s.flush();
    expect(s.stats()).toMatchObject({ pendingUsage: 192, flushErrors: 5, dropped: 0 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith("database writes failing (");
    expect(errors[0]).toContain("full");
    expect(s.writesFailing()).toBe(true);
    expect(s.health()).toBe(true); // its reads still answer: serving, not down
    expect(infos).toHaveLength(0);

    fill(s, false);
    s.flush();
    expect(s.writesFailing()).toBe(false);
    expect(infos).toEqual(["database writes work again: 192 usage rows and 0 route traces written after 5 failed flushes"]);
    expect(errors).toHaveLength(1);
    expect(countRows(path, "usage")).toBe(192);
    s.close();
  });

  test("close with the disk still full: the rows it could not write are returned and counted as dropped", () => {
    const { s } = fullStore(192);
    s.flush();
    const lost = s.close();
    expect(lost).toMatchObject({ usage: 192, traces: 0, keyUse: 0 });
    expect(lost?.while).toContain("fail");
    expect(s.stats().dropped).toBe(192);
  });
});

test("a stop whose last flush cannot write (disk full): an error line counting the rows lost, and the stop resolves false (exit 1)", async () => {
  const { s } = fullStore(192);
  const lines: string[] = [];
  const parts = idleStopParts(lines, { store: s });
  expect(await stopGateway(parts, 0, () => false)).toBe(false);
  const line = JSON.parse(lines.at(-1)!);
  expect(line).toMatchObject({ level: "error", usage: 192, traces: 0 });
  expect(line.msg).toStartWith(`stopping while writes to ${s.path} fail: 192 usage rows`);
  expect(line.msg).toContain("were not written at the stop and are lost");
  // a longer grace period would not have written them: the line does not send the operator to it
  expect(line.msg).not.toContain("grace period");
  expect(s.stats().dropped).toBe(192);
});
