/**
 * A gateway on PostgreSQL whose database rejects an account's lock (a trigger raising P0001, as a policy
 * or a constraint would): the operator reads one `error` line naming the account and the SQLSTATE,
 * `switchyard_store_dropped_total` counts it, and the stop says the state change the database rejected
 * earlier is lost and exits 1
 * (until session 43 the rejection was swallowed: no row, no line, no count). An unlock through the admin
 * API that the database refuses with a transient SQLSTATE is tried again (until session 44 it was the
 * request's error). In process (startApp), a
 * throwaway PostgreSQL, the scriptable fake upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { type App, startApp } from "../../src/app.ts";
import { providersAtFake } from "../support/configs.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { until } from "../support/until.ts";

let pg: TestPostgres;
let fake: FakeUpstream;
let app: App | undefined;
let dir: string;
let url: string;
const logs: string[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.createDatabase("app_state_rejected");
  fake = await startFakeUpstream();
  dir = mkdtempSync(join(tmpdir(), "sy-pg-state-rejected-"));
  const yaml = `${providersAtFake(["p", "anthropic"])}\naccounts:\n  - { id: a1, provider: p, api_key: env:FAKE_KEY }\n`.replaceAll("{{FAKE}}", fake.url);
  writeFileSync(join(dir, "config.yaml"), yaml);
  app = await startApp({
    configPath: join(dir, "config.yaml"),
    dataDir: dir,
    host: "127.0.0.1",
    port: 0,
    database: url,
    env: { FAKE_KEY: "sk-fake-upstream-rejected" },
    log: (l) => void logs.push(l),
    fetchImpl: fake.fetch,
  });
}, 180_000);

afterAll(async () => {
  await app?.shutdown(1000);
  await fake?.stop();
  await pg?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

const post = () =>
  fetch(`${app!.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });

const dropped = async () => Number(/^switchyard_store_dropped_total (\d+)$/m.exec(await (await fetch(`${app!.url}/metrics`)).text())?.[1]);

test("POST /admin/api/accounts/a1/unlock (switchyard accounts unlock) whose delete the database refuses with 40001 twice: tried again, 200 and the lock gone, not a failed request", async () => {
  const admin = new SQL(url, { max: 1 });
  try {
    fake.handle(() => ({ status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } }));
    expect((await post()).status).toBe(503); // the key rejected upstream: the account is locked
    await until(async () => (await admin`SELECT account_id FROM account_locks`).length === 1, 10_000, "the lock row", 20);
    await admin.unsafe(`CREATE SEQUENCE unlock_tries`);
    await admin.unsafe(`CREATE FUNCTION busy_twice() RETURNS trigger AS $$ BEGIN IF nextval('unlock_tries') <= 2 THEN RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001'; END IF; RETURN OLD; END $$ LANGUAGE plpgsql`);
    await admin.unsafe(`CREATE TRIGGER busy BEFORE DELETE ON account_locks FOR EACH ROW EXECUTE FUNCTION busy_twice()`);
    const res = await fetch(`${app!.url}/admin/api/accounts/a1/unlock`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: "a1", unlocked: { reason: expect.stringContaining("401") } });
    expect((await admin`SELECT count(*)::int AS n FROM account_locks`)[0].n).toBe(0);
    expect(Number((await admin`SELECT last_value FROM unlock_tries`)[0].last_value)).toBe(3);
    expect(await dropped()).toBe(0);
    await admin.unsafe(`DROP TRIGGER busy ON account_locks`);
  } finally {
    await admin.close();
  }
}, 60_000);

const admin = (path: string) => fetch(`${app!.url}/admin/api${path}`).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

test("POST /admin/api/accounts/a1/unlock whose delete the database refuses with P0001: 503 store_rejected naming the change, the SQLSTATE and the database's message (not the generic 500), the lock kept here and in the database", async () => {
  const sql = new SQL(url, { max: 1 });
  try {
    fake.handle(() => ({ status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } }));
    expect((await post()).status).toBe(503); // locked again
    await until(async () => (await sql`SELECT account_id FROM account_locks`).length === 1, 10_000, "the lock row", 20);
    await sql.unsafe(`CREATE FUNCTION keep_locks() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'locks are lifted by the operator only' USING ERRCODE = 'P0001'; END $$ LANGUAGE plpgsql`);
    await sql.unsafe(`CREATE TRIGGER keep_locks BEFORE DELETE ON account_locks FOR EACH ROW EXECUTE FUNCTION keep_locks()`);
    const res = await fetch(`${app!.url}/admin/api/accounts/a1/unlock`, { method: "POST" });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      error: {
        message: "The database refused the unlock of account a1 (SQLSTATE P0001: locks are lifted by the operator only; not tried again), so it was not done: the account stays locked. Try again once the database accepts the change.",
        type: "unavailable_error",
        param: null,
        code: "store_rejected",
      },
    });
    expect((await sql`SELECT count(*)::int AS n FROM account_locks`)[0].n).toBe(1);
    // switchyard accounts unlock prints it and exits 1
    const cli = Bun.spawn([...SOURCE_CLI, "accounts", "unlock", "a1", "--url", app!.url], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SWITCHYARD_ADMIN_KEY: app!.adminToken }, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([cli.exited, new Response(cli.stdout).text(), new Response(cli.stderr).text()]);
    expect({ code, out }).toEqual({ code: 1, out: "" });
    expect(err).toContain("error 503: The database refused the unlock of account a1 (SQLSTATE P0001: locks are lifted by the operator only; not tried again), so it was not done: the account stays locked.");
    expect((await sql`SELECT count(*)::int AS n FROM account_locks`)[0].n).toBe(1);
    // memory agrees: a second unlock still finds the lock (and is refused again)
    await sql.unsafe(`DROP TRIGGER keep_locks ON account_locks`);
    const again = await fetch(`${app!.url}/admin/api/accounts/a1/unlock`, { method: "POST" });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: "a1", unlocked: { reason: expect.stringContaining("401") } });
    expect((await sql`SELECT count(*)::int AS n FROM account_locks`)[0].n).toBe(0);
    expect(await dropped()).toBe(0);
  } finally {
    await sql.close();
  }
}, 60_000);

test("POST /admin/api/providers/p/close-circuit whose delete the database refuses with P0001: 503 store_rejected, and the circuit stays open here as in the database, also after a re-read (until session 44 it closed here only)", async () => {
  const sql = new SQL(url, { max: 1 });
  const state = async () => ((await admin("/providers")).body.providers as { id: string; circuit: { state: string } }[]).find((p) => p.id === "p")!.circuit.state;
  const reread = () => sql.unsafe(`NOTIFY switchyard_changes, '{"i":"another-instance","k":"state"}'`);
  try {
    await sql`INSERT INTO provider_circuits (provider_id, open_until, reason, since) VALUES ('p', ${Date.now() + 300_000}, '10 consecutive 5xx', ${Date.now()})`;
    await reread();
    await until(async () => (await state()) === "open", 10_000, "the circuit opened elsewhere", 20);
    await sql.unsafe(`CREATE FUNCTION keep_circuits() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'circuits close by themselves' USING ERRCODE = 'P0001'; END $$ LANGUAGE plpgsql`);
    await sql.unsafe(`CREATE TRIGGER keep_circuits BEFORE DELETE ON provider_circuits FOR EACH ROW EXECUTE FUNCTION keep_circuits()`);
    const res = await fetch(`${app!.url}/admin/api/providers/p/close-circuit`, { method: "POST" });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      error: {
        message: "The database refused the close of provider p's circuit (SQLSTATE P0001: circuits close by themselves; not tried again), so it was not done: the circuit stays open. Try again once the database accepts the change.",
        type: "unavailable_error",
        param: null,
        code: "store_rejected",
      },
    });
    expect(await state()).toBe("open");
    expect((await sql`SELECT count(*)::int AS n FROM provider_circuits`)[0].n).toBe(1);
    // a re-read keeps it open (the database's row): memory and database agree
    await reread();
    await Bun.sleep(500);
    expect(await state()).toBe("open");
    await sql.unsafe(`DROP TRIGGER keep_circuits ON provider_circuits`);
    const again = await fetch(`${app!.url}/admin/api/providers/p/close-circuit`, { method: "POST" });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ provider: "p", closed: { state: "open", reason: "10 consecutive 5xx" } });
    expect(await state()).toBe("closed");
    expect((await sql`SELECT count(*)::int AS n FROM provider_circuits`)[0].n).toBe(0);
    expect(await dropped()).toBe(0);
  } finally {
    await sql.close();
  }
}, 60_000);

test("a lock the database rejects with P0001: one error line, counted in switchyard_store_dropped_total, and the stop exits 1 saying the state change is lost", async () => {
  const admin = new SQL(url, { max: 1 });
  try {
    await admin.unsafe(`CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'locks are written by the operator only' USING ERRCODE = 'P0001'; END $$ LANGUAGE plpgsql`);
    await admin.unsafe(`CREATE TRIGGER refuse BEFORE INSERT ON account_locks FOR EACH ROW EXECUTE FUNCTION refuse()`);
    expect(await dropped()).toBe(0);
    fake.handle(() => ({ status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } }));
    expect((await post()).status).toBe(503); // the key rejected upstream: the account is locked
    const rejected = () => logs.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.msg.startsWith("the database rejected"));
    await until(() => rejected().length > 0, 10_000, "the rejected-write line", 20);
    const [line] = rejected();
    expect(line).toMatchObject({
      level: "error",
      msg: "the database rejected the write of account a1's lock (SQLSTATE P0001: locks are written by the operator only), not tried again: the change is lost (the database keeps no row of it, other instances do not see it, and this one forgets it at its next re-read of the state; counted in switchyard_store_dropped_total)",
      kind: "lock",
      accountId: "a1",
      sqlstate: "P0001",
      tries: 1,
    });
    expect(JSON.stringify(logs)).not.toContain("sk-fake-upstream-rejected");
    expect(await dropped()).toBe(1);
    expect((await admin`SELECT count(*)::int AS n FROM account_locks`)[0].n).toBe(0);
    const before = logs.length;
    const clean = await app!.shutdown(1000);
    app = undefined;
    expect(clean).toBe(false); // exit 1
    const stop = logs.slice(before).map((l) => JSON.parse(l) as { level: string; msg: string; state?: number }).find((l) => l.state !== undefined);
    // said as what happened: rejected earlier (its error line above), not "not written at the stop"
    expect(stop).toMatchObject({
      level: "error",
      msg: "stopping: 1 account state changes rejected earlier (each said in its error line then) are lost: 1 routing/budget state changes lost in all; the rest was written",
      state: 0,
      rejectedState: 1,
      droppedState: 0,
      lostState: 1,
    });
  } finally {
    await admin.close();
  }
}, 60_000);
