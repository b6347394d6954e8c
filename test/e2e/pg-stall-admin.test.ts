/**
 * The admin API, /health and the CLI with the shared database STALLED (a team-operator tryout:
 * PostgreSQL's processes paused with SIGSTOP, so its sockets stay open and nothing answers): the admin
 * API never answered (`curl -m 30 …/admin/api/keys`), `/health` said `db: ok` for minutes and
 * `switchyard keys list` waited two minutes, then said no instance was running. Now a query waits at
 * most 10 s, then the admin API's documented 503, /health says unreachable, and once the database is
 * resumed the admin API answers again without a restart. A real instance on a real PostgreSQL, whose
 * postmaster and backends the test pauses (and always resumes in a `finally`).
 */
import { expect, test } from "bun:test";
import { SOURCE_CLI, startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { budgetKeyConfig, usePostgresAndUpstream } from "../support/postgres-and-upstream.ts";
import { stallPostgres } from "../support/stall-postgres.ts";
import { until } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-pg-stall-admin", DEV: "sy-pg-stall-admin-dev-key-01", OPS: "sy-pg-stall-admin-ops-key-02" };

const h = usePostgresAndUpstream();

const yaml = () => budgetKeyConfig(h.upstream.url, 3000);

/** An admin API GET with the admin key, given at most `ms`: its status, body and how long it took. */
async function admin(inst: Instance, path: string, ms: number): Promise<{ status: number; body: any; tookMs: number }> {
  const t0 = Date.now();
  try {
    const res = await fetch(`${inst.url}${path}`, { headers: { authorization: `Bearer ${ENV.OPS}` }, signal: AbortSignal.timeout(ms) });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, tookMs: Date.now() - t0 };
  } catch (e) {
    return { status: 0, body: String(e), tookMs: Date.now() - t0 };
  }
}

/** Polls `/health` of `inst` every 0.5 s until its `db` is `want`: how long that took, ms; fails after `ms`. */
async function healthSays(inst: Instance, want: string, ms: number): Promise<number> {
  const t0 = Date.now();
  await until(async () => (await admin(inst, "/health", 5_000)).body?.db === want, ms, `/health to say db ${want}`, 500);
  return Date.now() - t0;
}

test("an idle instance's /health says db unreachable within seconds of a stall, and ok again after SIGCONT", async () => {
  const dbUrl = await h.pg.createDatabase("stall_health");
  const inst = await startInstance({ yaml: yaml(), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(inst);
  expect((await admin(inst, "/health", 5_000)).body.db).toBe("ok");
  let tookMs: number;
  try {
    h.stall = stallPostgres(h.pg);
    tookMs = await healthSays(inst, "unreachable", 20_000);
  } finally {
    h.stall?.resume();
  }
  expect(tookMs).toBeLessThan(12_000);
  await healthSays(inst, "ok", 30_000);
  await stopInstance(inst);
}, 180_000);

test("with the database stalled: the admin API answers 503 in its error shape within 10 s, the CLI prints that 503's message (not \"no running instance\"); after SIGCONT the admin API answers 200 again without a restart", async () => {
  const dbUrl = await h.pg.createDatabase("stall_admin");
  const inst = await startInstance({ yaml: yaml(), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(inst);
  expect((await admin(inst, "/admin/api/keys", 10_000)).status).toBe(200);
  try {
    h.stall = stallPostgres(h.pg);
    const keys = await admin(inst, "/admin/api/keys", 30_000);
    expect(keys.status).toBe(503);
    expect(keys.tookMs).toBeLessThan(12_000);
    expect(keys.body).toMatchObject({ error: { message: expect.stringContaining("the database cannot be reached, so this was not done") } });
    const usage = await admin(inst, "/admin/api/usage", 30_000);
    expect(usage.status).toBe(503);
    expect(usage.tookMs).toBeLessThan(12_000);
    const cli = Bun.spawnSync([...SOURCE_CLI, "keys", "list", "--data-dir", inst.dataDir], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: inst.dataDir, SWITCHYARD_ADMIN_KEY: ENV.OPS },
      timeout: 60_000,
    });
    const out = `${cli.stdout.toString()}${cli.stderr.toString()}`;
    expect(out).not.toContain("no running switchyard instance answers");
    expect(out).toContain("error 503: the database cannot be reached");
  } finally {
    h.stall?.resume();
  }
  await until(async () => (await admin(inst, "/admin/api/keys", 10_000)).status === 200, 40_000, "the admin API to answer again after SIGCONT", 500);
  await stopInstance(inst);
}, 180_000);
