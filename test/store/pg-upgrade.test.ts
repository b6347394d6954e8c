/**
 * Upgrading a shared PostgreSQL store (SPEC D-2): the instance that migrates it says so once, from and to
 * which schema, and that instances of earlier versions refuse to start on it from then on (they do:
 * migratePg refuses a newer schema), so an operator upgrading one of several instances knows to upgrade
 * them all. A new database says this start created the tables; a current one says nothing. A database
 * that does not exist is named with what to do (newuser12a's tryout, G6 and G14).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { openStore } from "../../src/store/open.ts";
import { PG_MIGRATIONS, migratePg } from "../../src/store/postgres/migrations.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { cleanupTempDirs, tempDir } from "./helpers.ts";

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000); // a loaded machine takes longer than the default 5 s to start PostgreSQL
afterAll(async () => {
  await pg?.destroy();
  cleanupTempDirs();
});

const clock = { now: () => Date.parse("2026-12-05T02:40:00Z"), sleep: (ms: number) => Bun.sleep(ms) };
const LATEST = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

test("the instance that upgrades the shared store says from and to which schema, once", async () => {
  const url = await pg.createDatabase("upgrade_once");
  const sql = new SQL(url, { max: 1 });
  await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 4));
  await sql.close();
  const where = `postgres://${new URL(url).host}${new URL(url).pathname}`;
  const added = PG_MIGRATIONS.filter((m) => m.version > 4).map((m) => m.name);
  expect(added).toContain("client keys disabled");
  expect(added).toContain("transport per request");
  expect(added).toContain("key budget windows open at first use");
  const said = async () => {
    const lines: string[] = [];
    await (await openStore(url, tempDir(), undefined, (l) => lines.push(l), clock, () => {})).close();
    return lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === "warn");
  };
  expect(await said()).toEqual([
    {
      level: "warn",
      time: clock.now(),
      // an instance of the earlier version already running keeps serving on the upgraded schema without
      // what it added: the warning names the steps and what that means for a disabled key (newuser15 N3)
      msg: `shared store upgraded from schema 4 to ${LATEST}: instances of earlier switchyard versions refuse to start on it, and one still running on it serves on without what schemas 5–${LATEST} added (${added.join(", ")}): a client key disabled through an upgraded instance is still served by such an instance until it is upgraded, and the calls it serves are listed with transport unknown; upgrade every instance that shares it now; until then such an instance lists a failed attempt whose usage an upgraded one recorded as a call of its own and counts it among the requests of its usage, and lists that attempt's request with its served reply's tokens and cost only; key budgets: an instance from before schema 22 aligns a key's budget window to multiples of its length since the epoch (a day's to midnight UTC) where upgraded ones open it at the key's first request, so a window opened while both run (a key created meanwhile, or the next window once one ends) is counted apart by each: each lets the key spend the whole budget and posts its own budget alerts (with its own resets_at), and the earlier instance's use is not in the upgraded instances' window once it stops; where budgets matter, stop every instance of an earlier version before starting the first upgraded one`,
      database: where,
      added,
    } as never,
  ]);
  expect(await said()).toEqual([]);
  const fresh = await pg.createDatabase("upgrade_fresh");
  const lines: string[] = [];
  await (await openStore(fresh, tempDir(), undefined, (l) => lines.push(l), clock, () => {})).close();
  // a new database: this start made the tables, and says so (it said only "shared store: PostgreSQL",
  // newuser12a's tryout G6); the next start says nothing of it
  expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([`shared store: PostgreSQL; this start created switchyard's tables in it (schema ${LATEST})`]);
  lines.length = 0;
  await (await openStore(fresh, tempDir(), undefined, (l) => lines.push(l), clock, () => {})).close();
  expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(["shared store: PostgreSQL"]);
}, 60_000); // three opens and a migration from schema 4: seconds on a loaded machine

test("a database that does not exist: the start says to create it first", async () => {
  const url = new URL(await pg.createDatabase("exists_one"));
  url.pathname = "/no_such_db";
  const err = await openStore(url.href, tempDir(), undefined, () => {}, clock, () => {}).then(
    () => undefined,
    (e: Error) => e.message,
  );
  expect(err).toBe(
    `the PostgreSQL database postgres://${url.host}/no_such_db: database "no_such_db" does not exist: create it first (createdb no_such_db, or CREATE DATABASE in psql), owned by or granting CREATE to the role in the URL: the first instance makes switchyard's tables in it`,
  );
});
