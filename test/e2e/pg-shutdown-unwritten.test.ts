/**
 * SIGTERM while the shared PostgreSQL is away (try20 D2): the instance exited 0 within 80 ms and the
 * usage rows, route traces and key-limit use it had buffered were gone, with no line in the log. Now
 * the last flush is tried again until the shutdown grace period ends: a database back by then gets
 * every row (exit 0). With the database still away then, the rows are kept in the data directory's
 * unwritten-rows.jsonl and the next start there writes them (a warn line, exit 0), with the key budget
 * use the stop could not report, which the next start counts back into the budget's window (try22 P4:
 * it was lost, so a key could spend its budget again by what was served during the outage); the rpm/tpm
 * use is not kept (its minute windows lapse within a minute): said in that warn line, exit 0 (it was an
 * error line and exit 1 until session 37); what else cannot be kept (rows when that file cannot be
 * written) is lost, counted in an error line, exit 1. A real gateway process on a real PostgreSQL that
 * the test stops and starts.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startInstance, type Instance } from "../support/instance.ts";
import { usePostgresAndUpstream } from "../support/postgres-and-upstream.ts";
import { until } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-shutdown-unwritten", DEV: "sy-shutdown-unwritten-dev-key-01", OPS: "sy-shutdown-unwritten-ops-key-02" };

const h = usePostgresAndUpstream();

/** The config of the instances: shutdown grace `graceMs`; key dev1 with a daily token budget unless `limits` is false (or with these limits), key ops with a 5h token budget. */
const configYaml = (graceMs: number, limits: boolean | string = true) => `server: { require_api_key: true, shutdown_grace_ms: ${graceMs} }
providers:
  - { id: up, kind: openai, base_url: "${h.upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: dev1, key: env:DEV${limits === true ? ", limits: { budgets: [{ window: 1d, tokens: 1000000 }] }" : limits ? `, limits: ${limits}` : ""} }
  - { name: ops, key: env:OPS, limits: { budgets: [{ window: 5h, tokens: 1000000 }] } }
`;

/** Where a stop keeps the rows it could not write, in `inst`'s data directory. */
const keptFile = (inst: Instance) => join(inst.dataDir, "unwritten-rows.jsonl");

/** One chat request of key `key` to `inst`, answered 200. */
async function chat(inst: Instance, key: string, text: string): Promise<void> {
  const res = await fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: text }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

/** An instance on database `db` with shutdown grace `graceMs`, and the database stopped once it has said so (after `before`); then 3 requests of dev1 served. */
async function servedWhileAway(db: string, graceMs: number, limits: boolean | string = true, before?: (inst: Instance, dbUrl: string) => Promise<void>): Promise<{ inst: Instance; dbUrl: string }> {
  const dbUrl = await h.pg.createDatabase(db);
  const inst = await startInstance({ yaml: configYaml(graceMs, limits), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(inst);
  await before?.(inst, dbUrl);
  await h.pg.stop();
  await until(() => [...inst.stdout, ...inst.stderr].some((l) => l.includes("database unreachable")), 30_000, "the instance to see the database away", 100);
  for (let i = 0; i < 3; i++) await chat(inst, ENV.DEV, `hi ${i}`);
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
  await h.pg.start();
  expect(code).toBe(0);
  const file = keptFile(inst);
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", usage: 0, traces: 0, state: 0, keyLimitWindows: 0, keptUsage: 3, keptTraces: 3, keptKeyLimitWindows: 0, keptIn: file });
  expect(JSON.parse(lines[0]!).msg).toMatch(/: 3 usage rows, 3 route traces and \d+ routing\/budget state changes were not written within the shutdown grace period \(server.shutdown_grace_ms\) and are kept in (\S+), which the next start with this data directory writes to the database; nothing is lost$/);
  expect(JSON.parse(lines[0]!).msg).toContain(`kept in ${file},`);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const text = readFileSync(file, "utf8");
  // what the database would hold: no secret, no request body
  for (const secret of [ENV.DEV, ENV.UP_KEY, "hi 0"]) expect(text).not.toContain(secret);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });

  const next = await startInstance({ yaml: configYaml(3000, false), env: ENV, dataDir: inst.dataDir, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(next);
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

test("SIGTERM with the database away past the grace period and key limits: the rows and the key budget use are kept, the rpm use is not (its minute window lapses): a warn line says both, exit code 0", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_lost", 3000, "{ rpm: 1000, budgets: [{ window: 1d, tokens: 1000000 }] }");
  inst.kill("SIGTERM");
  const code = await inst.exited;
  await h.pg.start();
  expect(code).toBe(0);
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written within the shutdown grace period"));
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!);
  expect(line.level).toBe("warn");
  expect(line).toMatchObject({ usage: 0, traces: 0, keptUsage: 3, keptTraces: 3, keptKeyLimitWindows: 1, keptIn: keptFile(inst) });
  expect(line.keyLimitWindows).toBeGreaterThanOrEqual(1); // the rpm's minute windows (two when the requests spanned a minute's end)
  expect(line.msg).toStartWith("stopping while the database is away: 3 usage rows, 3 route traces, ");
  expect(line.msg).toContain(`routing/budget state changes and the key budget use of 1 windows were not written within the shutdown grace period (server.shutdown_grace_ms) and are kept in ${keptFile(inst)}`);
  expect(line.msg).toEndWith(`; the rpm/tpm use of ${line.keyLimitWindows} minute windows was not reported (not kept: a minute window lapses within a minute); nothing else is lost`);
  expect(lines[0]).not.toContain(ENV.DEV);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });
}, 180_000);

test("SIGTERM with the database away past the grace period and the data directory's file not writable: the rows are lost, the error line counts them and a warn line says why, exit code 1", async () => {
  const { inst, dbUrl } = await servedWhileAway("unwritten_unkept", 3000, false);
  mkdirSync(join(keptFile(inst), "in-the-way"), { recursive: true }); // a directory where the file would go
  inst.kill("SIGTERM");
  const code = await inst.exited;
  await h.pg.start();
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
  await h.pg.start();
  expect(await inst.exited).toBe(0);
  expect([...inst.stdout, ...inst.stderr].filter((l) => l.includes("were not written"))).toEqual([]);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 3, traces: 3 });
  expect(existsSync(keptFile(inst))).toBe(false);
}, 180_000);

test("a second SIGTERM while the database is away ends the last flush's retries too (review20 R4): the instance exits 143 long before its grace period, the rows and the key budget use kept", async () => {
  // a grace period longer than this test's own timeout: only the second signal can end the stop in time
  const { inst, dbUrl } = await servedWhileAway("unwritten_second", 600_000);
  inst.kill("SIGTERM");
  await until(() => inst.stderr.some((l) => l.includes("shutting down")), 10_000, "the instance to start its shutdown", 50);
  await Bun.sleep(1500); // the last flush fails at least once and is being retried
  expect(inst.proc.exitCode).toBeNull();
  inst.kill("SIGTERM");
  expect(await inst.exited).toBe(143);
  await h.pg.start();
  // the line says the second signal ended the stop, not the grace period (try22 P5)
  const lines = [...inst.stdout, ...inst.stderr].filter((l) => l.includes("before a second signal ended the stop"));
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", usage: 0, traces: 0, keyLimitWindows: 0, keptUsage: 3, keptTraces: 3, keptKeyLimitWindows: 1 });
  expect([...inst.stdout, ...inst.stderr].some((l) => l.includes("within the shutdown grace period"))).toBe(false);
  expect(existsSync(keptFile(inst))).toBe(true);
  expect(await rowsIn(dbUrl)).toEqual({ usage: 0, traces: 0 });
}, 120_000);

/** A key's 5h/1d budget use as GET /admin/api/keys lists it on `inst`. */
async function budgetUsed(inst: Instance, name: string): Promise<{ used: number; startedAt?: number }> {
  const res = await fetch(`${inst.url}/admin/api/keys`, { headers: { authorization: `Bearer ${inst.instance().adminToken}` } });
  expect(res.status).toBe(200);
  const keys = ((await res.json()) as { keys: Array<{ name: string; use?: { budgets: Array<{ used: number; startedAt?: number }> } }> }).keys;
  const b = keys.find((k) => k.name === name)!.use!.budgets[0]!;
  return { used: b.used, startedAt: b.startedAt };
}

/** The tokens of `key`'s usage rows in the database (what `usage --by key` sums), and their count. */
async function tokensOf(dbUrl: string, key: string): Promise<{ rows: number; tokens: number }> {
  const sql = new SQL(dbUrl);
  try {
    const [r] = await sql`SELECT count(*)::int AS n, COALESCE(SUM(COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) + COALESCE(cache_read_tokens, 0) + COALESCE(cache_write_tokens, 0)), 0)::int AS t FROM usage WHERE key_name = ${key}`;
    return { rows: r.n, tokens: r.t };
  } finally {
    await sql.close();
  }
}

test("the key budget use a stop could not report while the database was away is counted back by the next start (try22 P4): each key's budget use is then the sum of its usage rows in the window, also for a window first opened while away; a start replaying the same file again counts nothing twice", async () => {
  // dev1 (5h budget) spends 18 tokens before the outage, reported; then 3 requests while away; ops only while away (its window opens then)
  const five = "{ budgets: [{ window: 5h, tokens: 1000000 }] }";
  let before: { used: number; startedAt?: number } = { used: 0 };
  const { inst, dbUrl } = await servedWhileAway("unwritten_key_use", 3000, five, async (i) => {
    await chat(i, ENV.DEV, "before");
    await until(async () => (before = await budgetUsed(i, "dev1")).used === 18, 10_000, "the first request's budget use", 100);
    await Bun.sleep(1500); // reported (every second)
  });
  expect(before.startedAt).toBeNumber();
  await chat(inst, ENV.OPS, "ops while away");
  inst.kill("SIGTERM");
  expect(await inst.exited).toBe(0);
  await h.pg.start();
  const line = JSON.parse([...inst.stdout, ...inst.stderr].find((l) => l.includes("were not written within the shutdown grace period"))!);
  expect(line).toMatchObject({ level: "warn", keyLimitWindows: 0, keptUsage: 4, keptKeyLimitWindows: 2 });
  expect(line.msg).toContain("and the key budget use of 2 windows were not written within the shutdown grace period (server.shutdown_grace_ms) and are kept in");
  const file = keptFile(inst);
  const text = readFileSync(file, "utf8");
  for (const secret of [ENV.DEV, ENV.OPS, ENV.UP_KEY]) expect(text).not.toContain(secret);

  /** Starts on the data directory, waits for the kept file to be written and removed, and reads both keys' budget use once the reports have gone round. */
  const startAgain = async () => {
    const next = await startInstance({ yaml: configYaml(3000, five), env: ENV, dataDir: inst.dataDir, args: ["--database", dbUrl], timeoutMs: 90_000 });
    h.started.push(next);
    await until(() => !existsSync(file), 20_000, "the next start to write the kept rows and remove the file", 100);
    await until(async () => (await budgetUsed(next, "dev1")).used >= 4 * 18 && (await budgetUsed(next, "ops")).used >= 18, 10_000, "the counted-back use to be read", 200).catch(() => {});
    await Bun.sleep(2500); // another report or two: nothing more comes
    const use = { dev1: await budgetUsed(next, "dev1"), ops: await budgetUsed(next, "ops") };
    return { next, use };
  };
  const first = await startAgain();
  expect([...first.next.stdout, ...first.next.stderr].some((l) => l.includes("the key budget use of 2 windows: 2 counted back into their windows, 0 dropped"))).toBe(true);
  expect(await tokensOf(dbUrl, "dev1")).toEqual({ rows: 4, tokens: 4 * 18 });
  expect(await tokensOf(dbUrl, "ops")).toEqual({ rows: 1, tokens: 18 });
  expect(first.use.dev1).toEqual({ used: 4 * 18, startedAt: before.startedAt });
  expect(first.use.ops.used).toBe(18);
  first.next.kill("SIGTERM");
  expect(await first.next.exited).toBe(0);

  // the same file again (as a start that died before removing it would leave it): nothing twice
  writeFileSync(file, text, { mode: 0o600 });
  const second = await startAgain();
  expect(second.use.dev1).toEqual({ used: 4 * 18, startedAt: before.startedAt });
  expect(second.use.ops.used).toBe(18);
  expect(await tokensOf(dbUrl, "dev1")).toEqual({ rows: 4, tokens: 4 * 18 });
  second.next.kill("SIGTERM");
  expect(await second.next.exited).toBe(0);
}, 240_000);
