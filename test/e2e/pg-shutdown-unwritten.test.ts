/**
 * SIGTERM while the shared PostgreSQL is away (try20 D2): the instance exited 0 within 80 ms and the
 * usage rows, route traces and key-limit use it had buffered were gone, with no line in the log. Now
 * the last flush is tried again until the shutdown grace period ends: a database back by then gets
 * every row (exit 0). With the database still away then, the rows are kept in the data directory's
 * unwritten-rows.jsonl and the next start there writes them (a warn line, exit 0); what cannot be kept
 * (the key-limit use; rows when that file cannot be written) is lost, counted in an error line, exit 1.
 * A real gateway process on a real PostgreSQL that the test stops and starts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
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

/** The config of the instances: shutdown grace `graceMs`; key dev1 with a daily token budget unless `limits` is false. */
const configYaml = (graceMs: number, limits = true) => `server: { require_api_key: true, shutdown_grace_ms: ${graceMs} }
providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: dev1, key: env:DEV${limits ? ", limits: { budgets: [{ window: 1d, tokens: 1000000 }] }" : ""} }
`;

/** Where a stop keeps the rows it could not write, in `inst`'s data directory. */
const keptFile = (inst: Instance) => join(inst.dataDir, "unwritten-rows.jsonl");

/** An instance on database `db` with shutdown grace `graceMs`, and the database stopped once it has said so; then 3 requests served. */
async function servedWhileAway(db: string, graceMs: number, limits = true): Promise<{ inst: Instance; dbUrl: string }> {
  const dbUrl = await pg.createDatabase(db);
  const inst = await startInstance({ yaml: configYaml(graceMs, limits), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
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

test("SIGTERM with the database away past the grace period: the rows are kept in the data directory (0600) and a warn line says where, exit code 0; the next start there writes them once and removes the file", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_kept", 3000, false);
  inst.kill("SIGTERM");
  const code = await inst.exited;
  await pg.start();
  expect(code).toBe(0);
  const file = keptFile(inst);
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", usage: 0, traces: 0, state: 0, keyLimitWindows: 0, keptUsage: 3, keptTraces: 3, keptIn: file });
  expect(JSON.parse(lines[0]!).msg).toMatch(/: 3 usage rows, 3 route traces and \d+ routing\/budget state changes were not written within the shutdown grace period \(server.shutdown_grace_ms\) and are kept in (\S+), which the next start with this data directory writes to the database; nothing is lost$/);
  expect(JSON.parse(lines[0]!).msg).toContain(`kept in ${file},`);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const text = readFileSync(file, "utf8");
  // what the database would hold: no secret, no request body
  for (const secret of [ENV.DEV, ENV.UP_KEY, "hi 0"]) expect(text).not.toContain(secret);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });

  const next = await startInstance({ yaml: configYaml(3000, false), env: ENV, dataDir: inst.dataDir, args: ["--database", dbUrl], timeoutMs: 90_000 });
  started.push(next);
  await until(() => !existsSync(file), 20_000, "the next start to write the kept rows and remove the file", 100);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 3, traces: 3 });
  expect([...next.stdout, ...next.stderr].some((l) => l.includes("store: written: the 3 usage rows, 3 route traces"))).toBe(true);
  next.kill("SIGTERM");
  expect(await next.exited).toBe(0);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 3, traces: 3 });
  const sql = new SQL(dbUrl);
  try {
    const [r] = await sql`SELECT count(DISTINCT request_id)::int AS n FROM usage`;
    expect(r.n).toBe(3);
  } finally {
    await sql.close();
  }
}, 240_000);

test("SIGTERM with the database away past the grace period and key limits: the rows are kept, the key-limit use is lost: an error line counts it, exit code 1", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_lost", 3000);
  inst.kill("SIGTERM");
  const code = await inst.exited;
  await pg.start();
  expect(code).toBe(1);
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!);
  expect(line.level).toBe("error");
  expect(line).toMatchObject({ usage: 0, traces: 0, keptUsage: 3, keptTraces: 3, keptIn: keptFile(inst) });
  expect(line.keyLimitWindows).toBeGreaterThanOrEqual(1);
  expect(line.msg).toContain("0 usage rows, 0 route traces, 0 routing/budget state changes and the key-limit use of");
  expect(line.msg).toContain("are lost; 3 usage rows, 3 route traces and");
  expect(line.msg).toContain(`routing/budget state changes are kept in ${keptFile(inst)}`);
  expect(lines[0]).not.toContain(ENV.DEV);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });
}, 180_000);

test("SIGTERM with the database away past the grace period and the data directory's file not writable: the rows are lost, the error line counts them and a warn line says why, exit code 1", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_unkept", 3000, false);
  mkdirSync(join(keptFile(inst), "in-the-way"), { recursive: true }); // a directory where the file would go
  inst.kill("SIGTERM");
  const code = await inst.exited;
  await pg.start();
  expect(code).toBe(1);
  const out = [...inst.stdout, ...inst.stderr];
  const lines = out.filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!);
  expect(line).toMatchObject({ level: "error", usage: 3, traces: 3, keyLimitWindows: 0 });
  expect(line.keptIn).toBeUndefined();
  expect(out.some((l) => l.includes(`store: could not keep the unwritten rows in ${keptFile(inst)}`))).toBe(true);
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
  expect(existsSync(keptFile(inst))).toBe(false);
}, 180_000);

test("a second SIGTERM while the database is away ends the last flush's retries too (review20 R4): the instance exits 143 long before its grace period, the rows kept, the key-limit use counted as lost", async () => {
  // a grace period longer than this test's own timeout: only the second signal can end the stop in time
  const { inst, dbUrl } = await servedWhileAway("unwritten_second", 600_000);
  inst.kill("SIGTERM");
  await until(() => inst.stderr.some((l) => l.includes("shutting down")), 10_000, "the instance to start its shutdown", 50);
  await Bun.sleep(1500); // the last flush fails at least once and is being retried
  expect(inst.proc.exitCode).toBeNull();
  inst.kill("SIGTERM");
  expect(await inst.exited).toBe(143);
  await pg.start();
  // the line says the second signal ended the stop, not the grace period (try22 P5)
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("before a second signal ended the stop"));
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", usage: 0, traces: 0, keptUsage: 3, keptTraces: 3 });
  expect([...inst.stdout, ...inst.stderr].some((l) => l.includes("within the shutdown grace period"))).toBe(false);
  expect(existsSync(keptFile(inst))).toBe(true);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });
}, 120_000);
