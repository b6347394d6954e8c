/**
 * A USD budget's requests of models without a price (try18 D17), as GET /admin/api/keys lists them
 * (`unpriced` on the budget's use: the Keys page's "3 requests of unpriced models not counted", `keys
 * list`), on the embedded store and on PostgreSQL. review19 R5: the count was a usage query per
 * USD-budgeted key over its window on every list (on SQLite 100–150 ms per key with 300,000 usage rows,
 * on the thread that serves requests; and left out while the store's usage could not be read). Now the
 * key limit counters count them as each request settles, with the window's spend:
 * - 3 requests to a model without a price and 2 to a priced one read `used` $0.036 (the priced two),
 *   `unpriced` 3, on either store, and on PostgreSQL on the other instance too;
 * - the list reads no usage row: it answers with the count while every usage read of the store throws;
 * - a restart keeps the count with the window's spend; the window's end starts it again from 0.
 *
 * Each reply is 18 tokens (the fake upstream's default usage); `oai/gpt-test` costs $0.001 per token
 * (settings.pricing), `chat/gpt-unknown-model` has no price anywhere.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp, type App } from "../../src/app.ts";
import { ShiftedClock } from "../support/shifted-clock.ts";
import { roomInWindow } from "../support/aligned-window.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until } from "../support/until.ts";

const SPEND = "sy-test-unpriced-spend-000000001";
const ADMIN = "sy-test-unpriced-admin-000000002";
const DAY = 86_400_000;

const yamlOf = (head: string) => `${head}
server: { require_api_key: true }
keys:
  - { name: spend, key: ${SPEND}, limits: { budgets: [{ window: 1d, usd: 5 }, { window: 5h, tokens: 100000 }] } }
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
settings:
  pricing:
    oai/gpt-test: { input: 1000, output: 1000 }   # $0.001 per token
`;

/** A Chat request of `model` through the gateway at `url` with the key `spend`; its reply read to the end. */
async function chat(url: string, model: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${SPEND}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

/** `n` requests of the model without a price and `m` of the priced one. */
async function serve(url: string, n: number, m: number): Promise<void> {
  for (let i = 0; i < n; i++) await chat(url, "chat/gpt-unknown-model");
  for (let i = 0; i < m; i++) await chat(url, "oai/gpt-test");
}

/** GET /admin/api/keys at `url`: its status and the key `spend`'s budget use (the 1d USD budget first). */
async function listed(url: string, admin = ADMIN): Promise<{ status: number; budgets?: any[] }> {
  const res = await fetch(`${url}/admin/api/keys`, { headers: { authorization: `Bearer ${admin}` } });
  if (res.status !== 200) return { status: res.status };
  const keys = ((await res.json()) as { keys: any[] }).keys;
  return { status: 200, budgets: keys.find((k) => k.name === "spend")?.use?.budgets };
}

/**
 * Makes every usage read of `store` throw (what a store that cannot read its usage does) until
 * `restore`; `asked`: the names of the reads asked meanwhile.
 */
function failUsageReads(store: object): { asked: string[]; restore(): void } {
  const methods = store as unknown as Record<string, unknown>;
  const reads = ["usageSummary", "usageSeries", "recentCalls", "callsPage", "servedPerModel"];
  const asked: string[] = [];
  for (const name of reads) {
    methods[name] = () => {
      asked.push(name);
      throw new Error(`the test's store cannot read usage (${name})`);
    };
  }
  return { asked, restore: () => reads.forEach((name) => delete methods[name]) };
}


describe("on the embedded store", () => {
  const clock = new ShiftedClock();
  let fake: FakeUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream();
    gw = await startGateway(yamlOf(DEFAULT_YAML), { fake, clock });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("3 requests of a model without a price and 2 of a priced one: the USD budget reads $0.036 and 3 unpriced, the token budget no count", async () => {
    await serve(gw.url, 3, 2);
    const { status, budgets } = await listed(gw.url);
    expect(status).toBe(200);
    expect(budgets![0]).toMatchObject({ budget: { window: "1d", usd: 5 }, used: 0.036, unpriced: 3 });
    expect(budgets![1]).toMatchObject({ budget: { window: "5h", tokens: 100000 }, used: 90 });
    expect(budgets![1]).not.toHaveProperty("unpriced");
  });

  test("the list reads no usage: with every usage read of the store failing it answers 200 with the count", async () => {
    const { asked, restore } = failUsageReads(gw.app.store);
    try {
      await chat(gw.url, "chat/gpt-unknown-model");
      const { status, budgets } = await listed(gw.url);
      expect(status).toBe(200);
      expect(budgets![0]).toMatchObject({ used: 0.036, unpriced: 4 });
      expect(asked).toEqual([]);
    } finally {
      restore();
    }
  });

  test("a restart keeps the count with the window's spend; the window's end starts it again from 0", async () => {
    await gw.stopGatewayOnly();
    gw = await startGateway(yamlOf(DEFAULT_YAML), { fake, clock, dataDir: gw.dataDir });
    expect((await listed(gw.url)).budgets![0]).toMatchObject({ used: 0.036, unpriced: 4 });
    // a day later the 1d window has ended: no window open, no count
    clock.elapsed += DAY + 1000;
    const ended = (await listed(gw.url)).budgets![0];
    expect(ended).toEqual({ budget: { window: "1d", usd: 5 }, used: 0 });
    await serve(gw.url, 1, 1);
    expect((await listed(gw.url)).budgets![0]).toMatchObject({ used: 0.018, unpriced: 1 });
  });
});

describe("on PostgreSQL, two instances", () => {
  // A runs in this process (its store's usage reads can be made to fail), B as a process of its own.
  let pg: TestPostgres;
  let upstream: FakeUpstream;
  let a: App;
  let aDir: string;
  let b: Instance;
  beforeAll(async () => {
    pg = await startPostgres();
    const dbUrl = await pg.createDatabase("unpriced_budget");
    upstream = await startFakeUpstream();
    const yaml = yamlOf(`providers:
  - { id: oai, kind: openai, base_url: "${upstream.url}/v1" }
  - { id: chat, kind: openai-compatible, base_url: "${upstream.url}/v1" }
accounts:
  - { id: oai-1, provider: oai, api_key: env:UP_KEY }
  - { id: chat-1, provider: chat, api_key: env:UP_KEY }`);
    const env = { UP_KEY: "sk-upstream-unpriced-0001" };
    aDir = mkdtempSync(join(tmpdir(), "sy-unpriced-pg-"));
    writeFileSync(join(aDir, "config.yaml"), yaml);
    a = await startApp({ configPath: join(aDir, "config.yaml"), dataDir: aDir, host: "127.0.0.1", port: 0, database: dbUrl, env, log: () => {}, fetchImpl: upstream.fetch });
    b = await startInstance({ yaml, env, args: ["--database", dbUrl], timeoutMs: 90_000 });
  }, 180_000);
  afterAll(async () => {
    await a?.shutdown(1000);
    await stopInstance(b);
    await upstream?.stop();
    await pg?.destroy();
    if (aDir) rmSync(aDir, { recursive: true, force: true });
  }, 60_000);

  test("3 of a model without a price through A and 2 of a priced one through B: both list $0.036 and 3 unpriced; a fourth through A while its usage reads fail: 4", async () => {
    // Inside one 1d window (aligned to the day on PostgreSQL: it ends at midnight UTC, and the count with it).
    await roomInWindow(DAY, 120_000);
    await serve(a.url, 3, 0);
    await serve(b.url, 0, 2);
    // each instance knows its own at once, the other's within about a second (its report)
    for (const [name, url] of [["A", a.url], ["B", b.url]] as const) {
      const shows = async () => {
        const usd = (await listed(url)).budgets?.[0];
        return usd?.unpriced === 3 && usd?.used === 0.036;
      };
      await until(shows, 20_000, `${name} to list 3 unpriced and $0.036`);
    }
    expect((await listed(a.url)).budgets![1]).not.toHaveProperty("unpriced");
    const { asked, restore } = failUsageReads(a.store);
    try {
      await serve(a.url, 1, 0);
      const { status, budgets } = await listed(a.url);
      expect(status).toBe(200);
      expect(budgets![0]).toMatchObject({ used: 0.036, unpriced: 4 });
      expect(asked).toEqual([]);
    } finally {
      restore();
    }
    await until(async () => (await listed(b.url)).budgets?.[0]?.unpriced === 4, 20_000, "B to list A's fourth");
  }, 200_000);
});
