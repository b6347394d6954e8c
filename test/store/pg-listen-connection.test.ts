/**
 * Only the listening connection's loss re-LISTENs (review14 R10). Every connection of the pool reported
 * its close to the same `onclose`, so a query connection the server ended (`pg_terminate_backend`, a
 * proxy recycling it, a statement timeout) dropped a healthy LISTEN, took it again and told every
 * listener "all": a full re-read of keys, config and state on that instance for nothing (and, had the
 * re-LISTEN failed, "database unreachable" while the database answered). Real PostgreSQL: one store's
 * query connections are ended by the server: it hears no "all", keeps its listening backend and still
 * hears another instance's change; then its listening backend is ended: it listens again on a new
 * backend, hears "all" once (what it may have missed) and hears the next change.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { CHANNEL } from "../../src/store/postgres/db.ts";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/store.ts";
import type { StoreChange } from "../../src/store/shared.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until } from "../support/until.ts";

let pg: TestPostgres;
let admin: SQL;
let store: PostgresStore;
const heard: StoreChange[] = [];
const errors: string[] = [];

/** The store's backends (all but the test's own connection): the listening one and the query ones. */
async function backends(): Promise<{ listening: number[]; query: number[] }> {
  const rows = (await admin`SELECT pid, query FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`) as Array<{ pid: number; query: string }>;
  const listening = rows.filter((r) => r.query.startsWith("LISTEN")).map((r) => r.pid);
  return { listening, query: rows.filter((r) => !r.query.startsWith("LISTEN")).map((r) => r.pid) };
}

/** Another instance's change, as the channel carries it. */
async function notifyFromElsewhere(change: StoreChange): Promise<void> {
  await admin`SELECT pg_notify(${CHANNEL}, ${JSON.stringify({ i: "another-instance", k: change })})`;
}

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase("listen_connection");
  admin = new SQL(url, { max: 1 });
  store = await openPostgresStore({ url, flushIntervalMs: 60_000, resyncMs: 600_000, onError: (m) => errors.push(m) });
  store.onChange((c) => heard.push(c));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await admin?.close();
  await pg?.destroy();
}, 30_000);

test("a query connection ended by the server leaves the LISTEN alone; the listening one's loss takes it again", async () => {
  // several query connections at once (the pool opens one per concurrent statement)
  await Promise.all(Array.from({ length: 4 }, () => store.listKeys()));
  const before = await backends();
  expect(before.listening).toHaveLength(1);
  expect(before.query.length).toBeGreaterThan(0);

  await admin`SELECT pg_terminate_backend(pid) FROM unnest(${admin.array(before.query, "int4")}::int4[]) AS pid`;
  await until(async () => (await backends()).query.every((p) => !before.query.includes(p)), 5_000, "the query backends to end");
  // the re-LISTEN came 250 ms (±25 %) after a close: well past it
  await Bun.sleep(1_500);
  await store.listKeys(); // the pool opens a new query connection: nothing else happens
  expect(heard).toEqual([]);
  expect(errors.filter((e) => /unreachable|listening/.test(e))).toEqual([]);
  expect((await backends()).listening).toEqual(before.listening);
  await notifyFromElsewhere("keys");
  await until(() => heard.includes("keys"), 5_000, "the change to be heard on the same LISTEN");
  expect(heard).toEqual(["keys"]);

  heard.length = 0;
  await admin`SELECT pg_terminate_backend(${before.listening[0]!}::int4)`;
  await until(() => heard.includes("all"), 10_000, "the re-LISTEN's catch-up");
  const after = await backends();
  expect(after.listening).toHaveLength(1);
  expect(after.listening[0]).not.toBe(before.listening[0]);
  await notifyFromElsewhere("accounts");
  await until(() => heard.includes("accounts"), 5_000, "a change heard on the new LISTEN");
  expect(heard).toEqual(["all", "accounts"]);
  expect(errors.filter((e) => /unreachable/.test(e))).toEqual([]);
}, 60_000);
