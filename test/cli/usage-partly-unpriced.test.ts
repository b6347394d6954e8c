/**
 * `switchyard usage` shows a partly unpriced request's row as partly unpriced (README "Cost"): a
 * request served by a model without a price after failed attempts at a priced one whose usage the
 * provider reported (counted since session 46) is `unpriced` with a `costUsd` of the priced part,
 * 0.02406 USD (test/support/partly-unpriced.ts). Its key's group reads "$0.024 + 1 unpriced", never a
 * plain "$0.024" that looks complete (by model, since session 47, the failed attempts' share is its own
 * model's row, "$0.024", and the served model's reads "1 unpriced"); the legend says the cost counts only the part that had a price (until
 * 2026-12-08 it said unpriced requests were left out of the cost, though their priced part was in it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { PARTLY_UNPRICED_YAML, partlyUnpricedReplies, sendMessages } from "../support/partly-unpriced.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(PARTLY_UNPRICED_YAML);
  gw.fake.handle(partlyUnpricedReplies);
  await sendMessages(gw.url, "mix", true);
});
afterAll(async () => {
  await gw?.stop();
});

/** `switchyard usage ARGS… --url URL` from source (asynchronously: the gateway answering it runs in this process). */
async function usage(args: string[]) {
  const p = Bun.spawn([...SOURCE_CLI, "usage", "--url", gw.url, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

test("usage: the partly unpriced request's cost reads '$0.024 + 1 unpriced', the legend says only the priced part counts", async () => {
  let json: { rows: Array<Record<string, unknown>> } = { rows: [] };
  // the usage row is flushed each second
  for (const end = Date.now() + 10_000; json.rows.length === 0 && Date.now() < end; await Bun.sleep(100)) json = JSON.parse((await usage(["--json"])).stdout);
  // by model (since session 47): the failed attempts' priced share under their own model, with no request
  expect(json.rows.map((r) => [r.group, r.requests, r.inputTokens, r.outputTokens, r.costUsd ?? 0, r.unpriced ?? 0])).toEqual([
    ["ant/house-model", 1, 1000, 50, 0, 1],
    ["ant/claude-sonnet-4-5", 0, 8000, 4, 0.02406, 0],
  ]);
  const legend =
    "unpriced: requests that used a model without a price (the one that served them or a failed attempt's); the cost counts only the part that had a price (give the model a settings.pricing entry)";
  const table = async (by: string) => {
    const r = await usage(["--by", by]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.trimEnd().split("\n");
    const head = lines[0]!.trim().split(/\s{2,}/);
    return { lines, cost: (i: number) => { const row = lines[i]!.trim().split(/\s{2,}/); return [row[0], row[head.indexOf("cost")]]; } };
  };
  const byModel = await table("model");
  expect([byModel.cost(1), byModel.cost(2)]).toEqual([["ant/house-model", "1 unpriced"], ["ant/claude-sonnet-4-5", "$0.024"]]);
  expect(byModel.lines).toContain(legend);
  // by key: the request whole, partly unpriced
  const byKey = await table("key");
  expect(byKey.cost(1)).toEqual(["(none)", "$0.024 + 1 unpriced"]);
  expect(byKey.lines).toContain(legend);
}, 30_000);
