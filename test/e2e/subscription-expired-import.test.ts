/**
 * An imported subscription login whose access token has expired, and whose first refresh fails
 * (newuser12b's tryout): nothing is sent upstream with the expired token. The model discovery the
 * import starts and a request arriving while that refresh runs both wait for it; when it fails, the
 * request is answered without a call upstream (as its 401 would have been: the refresh failed for a
 * while, 503 with Retry-After; the refresh token was rejected, the credential quarantined) and the
 * discovery asks nothing. Before, both were sent with the expired (or just quarantined) token. Real
 * gateway, fake OAuth server and subscription API (test/oauth/fake-oauth.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { claudeCodePools } from "../oauth/fake-oauth.ts";
import { startWorld, until, type SubscriptionWorld } from "../oauth/helpers.ts";

const POOLS = (vendorUrl: string) => claudeCodePools(vendorUrl, "cci", "ccj");

let w: SubscriptionWorld;
beforeAll(async () => {
  w = await startWorld(POOLS);
});
afterAll(async () => {
  await w?.stop();
});

const post = (model: string) =>
  fetch(`${w.gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 30, messages: [{ role: "user", content: "hi" }] }) });

/** Imports a login whose access token expired a minute ago (the vendor no longer takes it). */
async function importExpired(provider: string, id: string, name: string): Promise<string> {
  const t = w.vendor.seed({ name, models: ["claude-e"] });
  w.vendor.revokeAccess(t.accessToken);
  await w.call("POST", "/accounts", { provider, id, origin: "import", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() - 60_000 } });
  return t.accessToken;
}

test("the first refresh fails for a while: the request that joined it is answered 503 with Retry-After, and neither it nor the discovery is sent with the expired token", async () => {
  w.vendor.refreshDelayMs = 300;
  const busy = { status: 503, body: { error: "temporarily_unavailable" } };
  w.vendor.scriptRefresh(busy, busy, busy);
  try {
    const refreshes = w.vendor.refreshCalls.length;
    const expired = await importExpired("cci", "cci-1", "late");
    const res = await post("cci/claude-e");
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("the token refresh failed temporarily");
    // one refresh round (the import's discovery and the request share it), no second round while it backs off
    expect(w.vendor.refreshCalls.length - refreshes).toBe(3);
    await Bun.sleep(100);
    expect(w.vendor.calls.filter((c) => c.token === expired).map((c) => `${c.method} ${c.path}`)).toEqual([]);
  } finally {
    w.vendor.refreshDelayMs = 0;
  }
});

test("the first refresh is rejected: the credential is quarantined and neither the request that joined it nor the discovery is sent with it", async () => {
  w.vendor.refreshDelayMs = 300;
  w.vendor.scriptRefresh({ status: 400, body: { error: "invalid_grant", error_description: "Refresh token revoked" } });
  try {
    const expired = await importExpired("ccj", "ccj-1", "revoked");
    const res = await post("ccj/claude-e");
    expect(res.status).toBeGreaterThanOrEqual(400);
    await res.text();
    await until(async () => {
      const st = (await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; reasons: string[] }> };
      return st.accounts.find((a) => a.id === "ccj-1")!.reasons.some((r) => r.includes("quarantined"));
    });
    await Bun.sleep(100);
    expect(w.vendor.calls.filter((c) => c.token === expired).map((c) => `${c.method} ${c.path}`)).toEqual([]);
  } finally {
    w.vendor.refreshDelayMs = 0;
  }
});
