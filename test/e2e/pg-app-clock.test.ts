/**
 * A gateway on PostgreSQL keeps an account's cooldown by its own clock (README "Left from session 41":
 * the PostgreSQL store read `Date.now`): the cooldown a 429 with `Retry-After: 60` sets is still in
 * force after the periodic re-read of the shared state (SWITCHYARD_RESYNC_MS, here 0.2 s). The gateway's
 * clock runs a year behind this machine's; before, the re-read deleted the cooldown as ended (its end
 * was before `Date.now`) and the next request went to the cooling account. In process (startApp), a
 * throwaway PostgreSQL, the scriptable fake upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "../../pipeline/ports.ts";
import { type App, startApp } from "../../src/app.ts";
import { realClock } from "../../src/clock.ts";
import { providersAtFake } from "../support/configs.ts";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const YEAR = 365 * 24 * 3600 * 1000;

/** The wall and monotonic clocks a year behind this machine's; real sleeps. */
const behind: Clock = {
  now: () => Date.now() - YEAR,
  monotonic: () => realClock.monotonic!() - YEAR,
  sleep: (ms, signal) => realClock.sleep(ms, signal),
};

let pg: TestPostgres;
let fake: FakeUpstream;
let app: App;
let dir: string;

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase("app_clock_cooldown");
  fake = await startFakeUpstream();
  dir = mkdtempSync(join(tmpdir(), "sy-pg-app-clock-"));
  const yaml = `${providersAtFake(["p", "anthropic"])}\naccounts:\n  - { id: a1, provider: p, api_key: env:FAKE_KEY }\n`.replaceAll("{{FAKE}}", fake.url);
  writeFileSync(join(dir, "config.yaml"), yaml);
  app = await startApp({
    configPath: join(dir, "config.yaml"),
    dataDir: dir,
    host: "127.0.0.1",
    port: 0,
    database: url,
    env: { FAKE_KEY: "sk-fake-upstream-clock", SWITCHYARD_RESYNC_MS: "200" },
    clock: behind,
    log: () => {},
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
  fetch(`${app.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });

test("a 429's 60 s cooldown outlives the shared state's re-reads: the next request is refused without calling the account", async () => {
  let first = true;
  fake.handle((r) => {
    if (!first) return simpleReply(r.format!, { text: "served", model: r.model }, r.stream);
    first = false;
    return { status: 429, headers: { "retry-after": "60" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
  });
  expect((await post()).status).toBe(429);
  expect(fake.requests).toHaveLength(1);
  // several re-reads of the account state from PostgreSQL (every 0.2 s)
  await Bun.sleep(1_500);
  const again = await post();
  expect(again.status).toBe(429);
  const wait = Number(again.headers.get("retry-after"));
  expect(wait).toBeGreaterThan(50);
  expect(wait).toBeLessThanOrEqual(60);
  expect(fake.requests).toHaveLength(1); // the cooling account was not called
}, 60_000);
