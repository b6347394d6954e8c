/**
 * The transport step (try17's tryout; SQLite schema 17, PostgreSQL schema 18): a database an earlier
 * version wrote, with calls in it, upgrades on open; its calls read as transport unknown (no value is
 * guessed for them), the calls recorded after say `http` or `websocket`, and the calls filter finds each
 * kind. On PostgreSQL an instance of the earlier version still running on the upgraded schema keeps
 * writing its rows (its insert names only its own columns): they read as unknown too, and the start that
 * upgraded says so.
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
const clock = { now: () => Date.parse("2026-12-05T22:40:00Z"), sleep: (ms: number) => Bun.sleep(ms) };
const T = 1_800_000_000_000;

/** Schema 16's (SQLite) and 17's (PostgreSQL) usage columns, as an earlier version's insert names them. */
const OLD_COLUMNS = "request_id, ts, client_format, requested_model, provider_id, model, estimated, outcome, status, total_ms, attempts, fallback, instance, instance_id";

/** A new call of each transport, then what the calls read and filter say. */
async function newCallsAndReads(s: Store) {
  s.record(usage({ requestId: "req-http", ts: T + 3, transport: "http" }));
  s.record(usage({ requestId: "req-ws", ts: T + 4, transport: "websocket" }));
  await s.flush();
  const ids = async (transport?: string) => (await s.recentCalls(10, transport ? { filter: { transport } } : undefined)).map((c) => c.requestId);
  return {
    calls: (await s.recentCalls(10)).map((c) => [c.requestId, c.transport ?? "unknown"]),
    filtered: [await ids("http"), await ids("websocket"), await ids("unknown")],
  };
}

describe("SQLite", () => {
  test("a schema-16 file's calls read as transport unknown after the upgrade; new calls say http or websocket; the filter finds each kind", async () => {
    const dir = tempDir();
    const path = join(dir, "switchyard.db");
    const db = new Database(path);
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 16));
    db.run(`INSERT INTO usage (${OLD_COLUMNS}) VALUES ('req-old', ${T + 1}, 'openai-responses', 'old', 'anth', 'claude-x', 0, 'ok', 200, 90, 1, 0, 'gw-old', 'id-old')`);
    db.close();
    const lines: string[] = [];
    const s = await openStore(undefined, dir, undefined, (l) => lines.push(l), clock, () => {});
    try {
      expect(lines.map((l) => JSON.parse(l).msg as string)).toEqual([expect.stringMatching(/^store upgraded from schema 16 to \d+:/)]);
      expect(await newCallsAndReads(s)).toEqual({
        calls: [
          ["req-ws", "websocket"],
          ["req-http", "http"],
          ["req-old", "unknown"],
        ],
        filtered: [["req-http"], ["req-ws"], ["req-old"]],
      });
    } finally {
      await s.close();
    }
  }, 30_000); // a migration and a copy of the file: well under a second, seconds on a loaded machine
});

describe("PostgreSQL", () => {
  test("a schema-17 database's calls, and those an instance of the earlier version still writes after the upgrade, read as unknown; the upgrading start says so", async () => {
    const url = await pg.database("transport_upgrade");
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 17));
      const oldInsert = (id: string, ts: number) =>
        sql.unsafe(`INSERT INTO usage (${OLD_COLUMNS}) VALUES ('${id}', ${ts}, 'openai-responses', 'old', 'anth', 'claude-x', false, 'ok', 200, 90, 1, false, 'gw-old', 'id-old')`);
      await oldInsert("req-old", T + 1);
      const lines: string[] = [];
      const s = await openStore(url, tempDir(), undefined, (l) => lines.push(l), clock, () => {});
      try {
        const warn = lines.map((l) => JSON.parse(l) as { level: string; msg: string; added?: string[] }).filter((l) => l.level === "warn");
        // One warning, from schema 17 to the newest (later steps add their own names to it), naming
        // this step and what it means for the earlier instance's calls.
        expect(warn.length).toBe(1);
        expect(warn[0]!.msg).toStartWith("shared store upgraded from schema 17 to ");
        expect(warn[0]!.msg).toContain("instances of earlier switchyard versions refuse to start on it, and one still running on it serves on without what schema");
        expect(warn[0]!.msg).toContain("transport per request");
        expect(warn[0]!.msg).toContain("the calls it serves are listed with transport unknown; upgrade every instance that shares it now");
        expect(warn[0]!.added?.[0]).toBe("transport per request");
        // the earlier version's instance, still running on the upgraded schema, records a call
        await oldInsert("req-old-instance", T + 2);
        expect(await newCallsAndReads(s)).toEqual({
          calls: [
            ["req-ws", "websocket"],
            ["req-http", "http"],
            ["req-old-instance", "unknown"],
            ["req-old", "unknown"],
          ],
          filtered: [["req-http"], ["req-ws"], ["req-old-instance", "req-old"]],
        });
      } finally {
        await s.close();
      }
    } finally {
      await sql.close();
    }
  }, 60_000);
});
