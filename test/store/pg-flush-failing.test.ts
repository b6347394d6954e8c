/**
 * PostgreSQL answers but refuses every flush with an error that is neither a data error nor a lost
 * connection (here a CHECK constraint every usage row breaks, added NOT VALID so the rows already
 * there stay): the store says so once when the run begins, again at most once a minute while it lasts
 * (with the failed flushes so far), and once a flush works again, as an `info` line (until session 41
 * each failed flush, about one a second, logged `flush of N usage rows … failed`, and nothing said the
 * end). The rows wait and are written by the flush that works. Against the real test PostgreSQL.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { fakeClock, postgresForFile, usage } from "./helpers.ts";

const pg = postgresForFile();

test("one line when flushes start failing, one a minute while they do, one when a flush works again", async () => {
  const url = await pg.database("flush_failing");
  const clock = fakeClock();
  const errors: string[] = [];
  const infos: string[] = [];
  const s = await openPostgresStore({ url, clock, flushIntervalMs: 60_000, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
  const sql = new SQL(url, { max: 1 });
  try {
    await sql.unsafe("ALTER TABLE usage ADD CONSTRAINT refuse_all CHECK (false) NOT VALID");
    for (let i = 0; i < 3; i++) s.record(usage({ requestId: `r${i}` }));
    const flushes = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await s.flush();
        clock.advance(1_000);
      }
    };
    await flushes(60); // a second apart: the 60th is 59 s after the first
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith('database writes failing (new row for relation "usage" violates check constraint "refuse_all"');
    expect(errors[0]).toEndWith("): 3 usage rows and 0 route traces wait in memory and are written once a write works again; said again at most once a minute while flushes fail, and when one works again");
    await flushes(1); // the 61st, 60 s after the first
    expect(errors).toHaveLength(2);
    expect(errors[1]).toStartWith("database writes still failing (");
    expect(errors[1]).toEndWith("): 61 failed flushes in 60 s; 3 usage rows and 0 route traces wait in memory and are written once a write works again");
    expect(s.stats()).toMatchObject({ pendingUsage: 3, flushErrors: 61 });
    await flushes(5);
    expect(errors).toHaveLength(2);

    await sql.unsafe("ALTER TABLE usage DROP CONSTRAINT refuse_all");
    await s.flush();
    expect(errors).toHaveLength(2);
    expect(infos.filter((m) => m.startsWith("database writes"))).toEqual(["database writes work again: 3 usage rows and 0 route traces written after 66 failed flushes in 66 s"]);
    expect(((await sql`SELECT count(*)::int AS n FROM usage`)[0] as { n: number }).n).toBe(3);

    // a later run is said at once again
    await sql.unsafe("ALTER TABLE usage ADD CONSTRAINT refuse_all CHECK (false) NOT VALID");
    s.record(usage({ requestId: "r9" }));
    await flushes(2);
    expect(errors).toHaveLength(3);
    expect(errors[2]).toStartWith("database writes failing (");
  } finally {
    await sql.close();
    await s.close();
  }
}, 120_000);
