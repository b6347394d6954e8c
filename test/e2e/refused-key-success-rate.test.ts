/**
 * An upstream that refuses an API-key account's key (401), through the real gateway: the one attempt
 * counts as one failure in the account's success rate (`accounts status`, `GET /admin/api/accounts`
 * `health`; the `scored` strategy reads the same counts). Until 2026-12-06 the attempt loop recorded it
 * twice — once before the coalesced refresh (which an API key does not have) and once after it — so one
 * 401 read 33 % where src/accounts/stats.ts's prior made one failure 50 % (try19 D3). Since session 36
 * the figure shown has no prior: the one failed attempt reads 0 %, "0 of 1"; two would read 0 of 2.
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
  test("counts once: success 0 of 1 attempt (not 0 of 2) after one refused request of one attempt", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "ec/gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_auth_failed");
    expect(gw.fake.requests).toHaveLength(1);
    const status = await fetch(`${gw.url}/admin/api/accounts`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } });
    const accounts = ((await status.json()) as { accounts: Array<{ id: string; health: { successRate: number; succeeded: number; failed: number; seen: boolean } }> }).accounts;
    const health = accounts.find((a) => a.id === "ec-1")!.health;
    expect(health.seen).toBe(true);
    expect(health).toMatchObject({ successRate: 0, succeeded: 0, failed: 1 });
  });
});
