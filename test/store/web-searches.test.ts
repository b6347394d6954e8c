/**
 * The web searches priced into a request's cost (Usage.webSearches) are kept in its usage row (SQLite
 * schema 22, PostgreSQL 24, column web_searches) and read back in its call (`usage.webSearches`, what GET
 * /admin/api/calls lists). Until 2026-12-07 only the log line and the `request_finished` event had them:
 * a call cost $0.02 more for two searches and nothing said why. A database of the previous schema
 * upgrades on open; its calls, and those an earlier instance still writes on a shared upgraded store,
 * have none (absent, not 0).
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import { openStore } from "../../src/store/open.ts";
import { PG_MIGRATIONS, migratePg } from "../../src/store/postgres/migrations.ts";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrations.ts";
import type { Store } from "../../src/store/types.ts";
import { postgresForFile, tempDir, usage } from "./helpers.ts";

const pg = postgresForFile();
const clock = { now: () => Date.parse("2026-12-07T22:40:00Z"), sleep: (ms: number) => Bun.sleep(ms) };
const T = 1_800_000_000_000;

/** The usage columns an earlier version's insert names. */
const OLD_COLUMNS = "request_id, ts, client_format, requested_model, provider_id, model, estimated, outcome, status, total_ms, attempts, fallback";

/** Two new calls, one with two web searches, then each call's searches as listed (undefined: none). */
async function newCallsAndReads(s: Store) {
  s.record(usage({ requestId: "req-search", ts: T + 3, usage: { inputTokens: 100, outputTokens: 20, webSearches: 2 }, costUsd: 0.0205 }));
  s.record(usage({ requestId: "req-plain", ts: T + 4 }));
  await s.flush();
  return (await s.recentCalls(10)).map((c) => [c.requestId, c.usage.webSearches, c.costUsd]);
}

describe("SQLite", () => {
  test("a schema-21 file upgrades; a new call keeps its 2 web searches; the others have none", async () => {
    const dir = tempDir();
    const db = new Database(join(dir, "switchyard.db"));
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 21));
    db.run(`INSERT INTO usage (${OLD_COLUMNS}) VALUES ('req-old', ${T + 1}, 'anthropic', 'old', 'anth', 'claude-x', 0, 'ok', 200, 90, 1, 0)`);
    db.close();
    const lines: string[] = [];
    const s = await openStore(undefined, dir, undefined, (l) => lines.push(l), clock, () => {});
    try {
      expect(lines.map((l) => JSON.parse(l).msg as string)).toEqual([expect.stringMatching(/^store upgraded from schema 21 to 23:/)]);
      expect(await newCallsAndReads(s)).toEqual([
        ["req-plain", undefined, undefined],
        ["req-search", 2, 0.0205],
        ["req-old", undefined, undefined],
      ]);
    } finally {
      await s.close();
    }
  }, 30_000);
});

describe("PostgreSQL", () => {
  test("a schema-23 database upgrades; a new call keeps its 2 web searches; an earlier instance's calls have none", async () => {
    const url = await pg.database("web_searches");
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 23));
      const oldInsert = (id: string, ts: number) =>
        sql.unsafe(`INSERT INTO usage (${OLD_COLUMNS}) VALUES ('${id}', ${ts}, 'anthropic', 'old', 'anth', 'claude-x', false, 'ok', 200, 90, 1, false)`);
      await oldInsert("req-old", T + 1);
      const lines: string[] = [];
      const s = await openStore(url, tempDir(), undefined, (l) => lines.push(l), clock, () => {});
      try {
        const warn = lines.map((l) => JSON.parse(l) as { level: string; added?: string[] }).filter((l) => l.level === "warn");
        expect(warn.map((w) => w.added)).toEqual([["web searches per request", "failed attempts' usage under their own provider"]]);
        await oldInsert("req-old-instance", T + 2);
        expect(await newCallsAndReads(s)).toEqual([
          ["req-plain", undefined, undefined],
          ["req-search", 2, 0.0205],
          ["req-old-instance", undefined, undefined],
          ["req-old", undefined, undefined],
        ]);
      } finally {
        await s.close();
      }
    } finally {
      await sql.close();
    }
  }, 60_000);
});
