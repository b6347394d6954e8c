/**
 * Costs in the admin API (SPEC 9.5) are rounded to 12 significant digits: a request's cost is a sum
 * of token counts times prices in binary floating point, and `GET /admin/api/calls` answered
 * `"costUsd":0.00041999999999999996` (newuser11 F10; the CLI and the dashboard round it, a script
 * reading the API got the noise). `GET /usage`'s rows and buckets too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { postHi, startPricedGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startPricedGateway({
    price: "{ input: 0.15, output: 0.6, cache_read: 0.075 }",
    key: "sk-test-cost-rounding",
    text: "ok",
    usage: { input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  });
  for (let i = 0; i < 3; i++) {
    const res = await postHi(gw.url, "p/claude-a");
    expect(res.status).toBe(200);
    await res.text();
  }
});
afterAll(async () => {
  await gw?.stop();
});

const get = async (path: string) => ((await (await fetch(`${gw.url}/admin/api${path}`)).json()) as any);
const noisy = (n: number) => Number(n.toPrecision(12)) !== n;

test("GET /calls and GET /usage give costs without float noise", async () => {
  // The price computed in binary floating point is noisy (else this test proves nothing); since
  // newuser12a's G8 the request's cost is rounded where it is priced, so the store holds it clean too.
  expect(noisy((11 * 0.15 + 7 * 0.6) * (1 / 1_000_000))).toBe(true);
  const stored = (await gw.app.store.recentCalls(10)).map((c) => c.costUsd!);
  expect(stored).toEqual([0.00000585, 0.00000585, 0.00000585]);
  const calls = (await get("/calls")).calls as Array<{ costUsd: number }>;
  expect(calls.map((c) => c.costUsd)).toEqual(stored);
  expect(calls.some((c) => noisy(c.costUsd))).toBe(false);
  const usage = await get("/usage?since=1h");
  expect(usage.rows.some((r: any) => noisy(r.costUsd))).toBe(false);
  expect(usage.series.buckets.some((b: any) => noisy(b.costUsd))).toBe(false);
});
