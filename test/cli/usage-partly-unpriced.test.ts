/**
 * `switchyard usage` shows a partly unpriced request's row as partly unpriced (README "Cost"): a
 * request served by a model without a price after failed attempts at a priced one whose usage the
 * provider reported (counted since session 46) is `unpriced` with a `costUsd` of the priced part,
 * 0.02406 USD (test/support/partly-unpriced.ts). Its group reads "$0.024 + 1 unpriced", never a plain
 * "$0.024" that looks complete; the legend says the cost counts only the part that had a price (until
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
  expect(json.rows.map((r) => [r.group, r.requests, r.inputTokens, r.outputTokens, r.costUsd, r.unpriced])).toEqual([["ant/house-model", 1, 9000, 54, 0.02406, 1]]);
  for (const by of ["model", "key"]) {
    const r = await usage(["--by", by]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.trimEnd().split("\n");
    const [head, row] = [lines[0]!, lines[1]!].map((l) => l.trim().split(/\s{2,}/));
    expect([by, row![0], row![head!.indexOf("cost")]]).toEqual([by, by === "model" ? "ant/house-model" : "(none)", "$0.024 + 1 unpriced"]);
    expect(lines).toContain(
      "unpriced: requests that used a model without a price (the one that served them or a failed attempt's); the cost counts only the part that had a price (give the model a settings.pricing entry)",
    );
  }
}, 30_000);
