/**
 * SIGTERM while the shared PostgreSQL is away (try20 D2): the instance exited 0 within 80 ms and the
 * usage rows, route traces and key-limit use it had buffered were gone, with no line in the log. Now
 * the last flush is tried again until the shutdown grace period ends: a database back by then gets
 * every row (exit 0); one still away then costs the rows, and the instance says how many, as an
 * error, and exits 1. A real gateway process on a real PostgreSQL that the test stops and starts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-shutdown-unwritten", DEV: "sy-shutdown-unwritten-dev-key-01" };

let pg: TestPostgres;
let upstream: FakeUpstream;
const started: Instance[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  upstream = await startFakeUpstream();
  upstream.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((i) => stopInstance(i)));
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

/** An instance on database `db` with shutdown grace `graceMs`, and the database stopped once it has said so; then 3 requests served. */
async function servedWhileAway(db: string, graceMs: number): Promise<{ inst: Instance; dbUrl: string }> {
  const dbUrl = await pg.createDatabase(db);
  const yaml = `server: { require_api_key: true, shutdown_grace_ms: ${graceMs} }
providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: dev1, key: env:DEV, limits: { budgets: [{ window: 1d, tokens: 1000000 }] } }
`;
  const inst = await startInstance({ yaml, env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  started.push(inst);
  await pg.stop();
  await until(() => [...inst.stdout, ...inst.stderr].some((l) => l.includes("database unreachable")), 30_000, "the instance to see the database away", 100);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${inst.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ENV.DEV}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: `hi ${i}` }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
  }
  return { inst, dbUrl };
}

/** Usage rows and route traces in the database at `dbUrl`. */
async function rowsIn(dbUrl: string): Promise<{ usage: number; traces: number }> {
  const sql = new SQL(dbUrl);
  try {
    const [u] = await sql`SELECT count(*)::int AS n FROM usage`;
    const [t] = await sql`SELECT count(*)::int AS n FROM route_traces`;
    return { usage: u.n, traces: t.n };
  } finally {
    await sql.close();
  }
}

test("SIGTERM with the database away past the grace period: an error line counts the lost rows, exit code 1", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_lost", 3000);
  inst.kill("SIGTERM");
  const code = await inst.exited;
  await pg.start();
  expect(code).toBe(1);
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!);
  expect(line.level).toBe("error");
  expect(line).toMatchObject({ usage: 3, traces: 3 });
  expect(line.keyLimitWindows).toBeGreaterThanOrEqual(1);
  expect(line.msg).toContain("3 usage rows, 3 route traces");
  expect(lines[0]).not.toContain(ENV.DEV);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });
}, 180_000);

test("SIGTERM with the database back within the grace period: every usage row and trace is written, exit code 0", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_saved", 60_000);
  inst.kill("SIGTERM");
  await until(() => inst.stderr.some((l) => l.includes("shutting down")), 10_000, "the instance to start its shutdown", 50);
  await Bun.sleep(1500); // the last flush fails at least once
  expect(inst.proc.exitCode).toBeNull();
  await pg.start();
  expect(await inst.exited).toBe(0);
  expect([...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written"))).toEqual([]);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 3, traces: 3 });
}, 180_000);

test("a second SIGTERM while the database is away ends the last flush's retries too (review20 R4): the instance exits 143 long before its grace period, counting the lost rows", async () => {
  // a grace period longer than this test's own timeout: only the second signal can end the stop in time
  const { inst, dbUrl } = await servedWhileAway("unwritten_second", 600_000);
  inst.kill("SIGTERM");
  await until(() => inst.stderr.some((l) => l.includes("shutting down")), 10_000, "the instance to start its shutdown", 50);
  await Bun.sleep(1500); // the last flush fails at least once and is being retried
  expect(inst.proc.exitCode).toBeNull();
  inst.kill("SIGTERM");
  expect(await inst.exited).toBe(143);
  await pg.start();
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", usage: 3, traces: 3 });
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });
}, 120_000);
