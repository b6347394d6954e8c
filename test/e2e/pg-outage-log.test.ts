/**
 * The log while the shared database is away (newuser12a G4): Bun's client re-LISTENed by itself and
 * wrote `bun:sql LISTEN "switchyard_changes" failed, retrying: …` (not JSON) to stderr at every failed
 * retry. Two real instances on a real PostgreSQL, which is stopped for a while and started again: B's
 * output stays JSON lines only, says once that the database is away and once that it is back, and B
 * listens again: a key created through A afterwards is served by B within seconds, though B's own
 * re-reads are ten minutes apart (only the announcement can carry it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until as pollUntil } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-outage-log", ADMIN_KEY: "sy-outage-log-admin-key-000001" };
/** B re-reads keys and state only every ten minutes: within the test only LISTEN/NOTIFY reaches it. */
const B_ENV = { SWITCHYARD_RESYNC_MS: "600000", SWITCHYARD_REREAD_MS: "600000" };

let pg: TestPostgres;
let upstream: FakeUpstream;
let a: Instance;
let b: Instance;

/** Polls every 100 ms until `cond` holds; fails after `ms`. */
const until = (cond: () => boolean | Promise<boolean>, ms: number, what: string) => pollUntil(cond, ms, what, 100);

beforeAll(async () => {
  pg = await startPostgres();
  const dbUrl = await pg.createDatabase("outage_log");
  upstream = await startFakeUpstream();
  const yaml = `server: { require_api_key: true }
providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: ops, key: env:ADMIN_KEY, scopes: [admin] }
`;
  a = await startInstance({ yaml, env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  b = await startInstance({ yaml, env: { ...ENV, ...B_ENV }, args: ["--database", dbUrl], timeoutMs: 90_000 });
}, 300_000);

afterAll(async () => {
  await Promise.all([a && stopInstance(a), b && stopInstance(b)]);
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

test("while PostgreSQL is stopped the log stays JSON, says once that it is away and once that it is back, and B hears A's changes again", async () => {
  const outputOf = (inst: Instance) => [...inst.stdout, ...inst.stderr];
  const linesOf = (inst: Instance, text: string) => outputOf(inst).filter((l) => l.includes(text));
  await pg.stop();
  // Bun's own retries came at 0.25, 0.5, 1, 2, 4 s…: several lines within the next seconds
  await until(() => linesOf(b, "database unreachable").length > 0, 20_000, "B to say the database is away");
  await Bun.sleep(6_000);
  await pg.start();
  await until(() => linesOf(b, "database reachable again").length > 0, 30_000, "B to say the database is back");
  await Bun.sleep(1_000);

  for (const inst of [a, b]) {
    expect(outputOf(inst).filter((l) => l.includes("bun:sql"))).toEqual([]);
    for (const line of outputOf(inst)) expect(() => JSON.parse(line)).not.toThrow();
  }
  expect(linesOf(b, "database unreachable")).toHaveLength(1);
  expect(linesOf(b, "database reachable again")).toHaveLength(1);

  // B listens again: a key created through A is served by B at once (announced), not in ten minutes
  const created = await fetch(`${a.url}/admin/api/keys`, { method: "POST", headers: { authorization: `Bearer ${ENV.ADMIN_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ name: "after-outage" }) });
  expect(created.status).toBe(201);
  const secret = ((await created.json()) as { secret: string }).secret;
  const chat = () =>
    fetch(`${b.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${secret}` }, body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: "hi" }] }) }).then(async (r) => (await r.text(), r.status));
  await until(async () => (await chat()) === 200, 10_000, "B to serve the key created through A");
}, 120_000);
