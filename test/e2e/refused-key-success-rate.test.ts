/**
 * An upstream that refuses an API-key account's key (401), through the real gateway: the one attempt
 * counts as one failure in the account's success rate (`accounts status`, `GET /admin/api/accounts`
 * `health.successRate`; the `scored` strategy reads it). Until 2026-12-06 the attempt loop recorded it
 * twice — once before the coalesced refresh (which an API key does not have) and once after it — so one
 * 401 read 33 % where src/accounts/stats.ts's prior makes one failure 50 % (try19 D3).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["ec", "openai-compatible"]]));
  gw.fake.handle(() => ({ status: 401, json: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } }));
});
afterAll(async () => {
  await gw?.stop();
});

describe("one 401 from an API-key upstream", () => {
  test("counts once: success 50 % (not 33 %) after one refused request of one attempt", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "ec/gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_auth_failed");
    expect(gw.fake.requests).toHaveLength(1);
    const status = await fetch(`${gw.url}/admin/api/accounts`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } });
    const accounts = ((await status.json()) as { accounts: Array<{ id: string; health: { successRate: number; seen: boolean } }> }).accounts;
    const health = accounts.find((a) => a.id === "ec-1")!.health;
    expect(health.seen).toBe(true);
    // (0 + 1 prior) / (0 + 1 failure + 1 prior); the failure's decay on the real clock (half-life 5 min)
    // moves it by less than 0.005 for 8 s, however slow the machine; two failures would read 0.333.
    expect(health.successRate).toBeCloseTo(0.5, 2);
  });
});
