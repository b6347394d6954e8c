/**
 * A partly unpriced request on the command line (README "Cost", test/support/partly-unpriced.ts): combo
 * `mix`'s four broken claude-sonnet-4-5 streams cost $0.02406, then house-model (no price) serves.
 * - `keys list`: the key's USD budget (the combo's call alone was sent with it) counts the priced part
 *   ($0.0241 used) and its note said "1 request of unpriced models not counted" (until 2026-12-08), as
 *   if nothing of it were; it now reads "1 request used a model without a price: only its priced part
 *   is counted".
 * - `calls list`: the cost column (until 2026-12-08 only `--json` had the cost) reads "$0.031" for the
 *   claude-sonnet-4-5 call with 2 web searches ($0.0305, 0.030499… as a float, which toFixed wrote
 *   "$0.030"), "$0.024 + unpriced" for the combo's and "unpriced" for house-model's, as `usage` writes
 *   them, with a legend line.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PARTLY_UNPRICED_YAML, partlyUnpricedReplies } from "../support/partly-unpriced.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { until } from "../support/until.ts";

const SPEND = "sy-test-partly-unpriced-spend-01";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${PARTLY_UNPRICED_YAML}
keys:
  - { name: spend, key: ${SPEND}, limits: { budgets: [{ window: 1d, usd: 1 }] } }
`);
  gw.fake.handle(partlyUnpricedReplies);
  for (const [model, stream] of [["ant/claude-sonnet-4-5", false], ["mix", true], ["ant/house-model", false]] as const) {
    const r = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      // the combo's call alone with the key: its budget holds only the partly unpriced request
      headers: { "content-type": "application/json", ...(model === "mix" ? { "x-api-key": SPEND } : {}) },
      body: JSON.stringify({ model, stream, max_tokens: 100, messages: [{ role: "user", content: "search" }] }),
    });
    expect([model, r.status]).toEqual([model, 200]);
    await r.text();
  }
});
afterAll(async () => {
  await gw?.stop();
});

/** `switchyard ARGS… --url URL` from source (asynchronously: the gateway answering it runs in this process). */
async function cli(args: string[]) {
  const p = Bun.spawn([...SOURCE_CLI, ...args, "--url", gw.url], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

test("keys list: the USD budget counted the combo's priced part, and its note says only that part is counted", async () => {
  gw.app.settle();
  const budget = async () => ((await (await fetch(`${gw.url}/admin/api/keys`)).json()) as { keys: any[] }).keys.find((k) => k.name === "spend")?.use?.budgets?.[0];
  await until(async () => (await budget())?.unpriced === 1, 10_000, "the budget to count the partly unpriced request");
  expect(await budget()).toMatchObject({ budget: { window: "1d", usd: 1 }, used: 0.02406, unpriced: 1 });
  const list = await cli(["keys", "list"]);
  expect([list.code, list.stderr]).toEqual([0, ""]);
  expect(list.stdout).toMatch(/1d \$0\.0241 \/ \$1\.00 \(2 %\), resets \S+Z, 1 request used a model without a price: only its priced part is counted \(settings\.pricing gives one\)/);
}, 30_000);

test("calls list: a cost column with the usage table's forms, decimals rounded as written ($0.0305 is $0.031), and a legend", async () => {
  const list = await cli(["calls", "list"]);
  expect([list.code, list.stderr]).toEqual([0, ""]);
  const [table, legend] = list.stdout.trimEnd().split("\n\n");
  const [head, ...rows] = table!.split("\n").map((l) => l.trim().split(/\s{2,}/));
  expect(head).toEqual(["time", "route_id", "model", "target", "status", "outcome", "ms", "cost", "transport", "instance", "web_searches"]);
  const at = head!.indexOf("cost");
  expect(rows.map((r) => [r[2], r[at]])).toEqual([
    ["ant/house-model", "unpriced"],
    ["mix", "$0.024 + unpriced"],
    ["ant/claude-sonnet-4-5", "$0.031"],
  ]);
  expect(legend).toBe(
    "unpriced: the call used a model without a price (the one that served it or a failed attempt's); its cost counts only the part that had a price, as a USD budget does (give the model a settings.pricing entry)",
  );
}, 30_000);
