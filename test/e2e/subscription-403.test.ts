/**
 * SPEC 6.3's 403 rows on a subscription pool: a credential-classified 403 refreshes once and retries
 * (like a 401); a model-scoped 403 removes only that account/model pairing; a request-policy 403
 * goes back to the client without touching the account.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startWorld, type SubscriptionWorld } from "../oauth/helpers.ts";

let w: SubscriptionWorld;
let tokens: Record<string, { accessToken: string; refreshToken: string }> = {};
beforeAll(async () => {
  w = await startWorld();
  for (const name of ["p1", "p2"]) {
    tokens[name] = w.vendor.seed({ name, models: ["claude-x", "claude-y"] });
    await w.call("POST", "/accounts", {
      provider: "cc",
      id: `cc-${name}`,
      priority: name === "p1" ? 1 : 2,
      credential: { type: "oauth", access_token: tokens[name].accessToken, refresh_token: tokens[name].refreshToken, expires_at: Date.now() + 3600_000 },
    });
  }
});
afterAll(async () => {
  await w?.stop();
});

const forbidden = (message: string) => Response.json({ type: "error", error: { type: "permission_error", message } }, { status: 403 });
const post = (model: string) =>
  fetch(`${w.gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) });
const status = async (id: string) =>
  ((await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; reasons: string[]; removedModels: Array<{ model: string }>; lock?: unknown }> }).accounts.find((a) => a.id === id)!;

describe("403 on a subscription account", () => {
  test("credential 403 (revoked OAuth token): one refresh, one retry on the same account", async () => {
    const old = tokens.p1.accessToken;
    const refreshes = w.vendor.refreshCalls.length;
    w.vendor.onCall = (c) => (c.token === old && c.path.startsWith("/v1/messages") ? forbidden("OAuth token has been revoked. Please obtain a new token.") : undefined);
    try {
      const res = await post("cc/claude-x");
      expect(res.status).toBe(200);
    } finally {
      w.vendor.onCall = undefined;
    }
    expect(w.vendor.refreshCalls.slice(refreshes)).toEqual([tokens.p1.refreshToken]);
    const last = w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).slice(-2);
    expect(last.map((c) => c.login)).toEqual(["p1", "p1"]);
    expect(last[1].token).not.toBe(old);
    expect((await status("cc-p1")).reasons).toEqual([]);
  });

  test("model-scoped 403: only that account/model pairing is removed", async () => {
    // Whichever account the strategy tries first says the model is not available to it.
    let first: string | undefined;
    w.vendor.onCall = (c) => {
      if (!c.path.startsWith("/v1/messages")) return undefined;
      first ??= c.login;
      return c.login === first ? forbidden("Your plan does not have access to model claude-y. The model claude-y is not available for this account.") : undefined;
    };
    try {
      const res = await post("cc/claude-y");
      expect(res.status).toBe(403); // SPEC 6.3: next target (a model missing on one account is not retried on others), and there is none
    } finally {
      w.vendor.onCall = undefined;
    }
    const other = first === "p1" ? "p2" : "p1";
    const hit = await status(`cc-${first}`);
    expect(hit.removedModels.map((r) => r.model)).toEqual(["claude-y"]);
    expect(hit.lock).toBeUndefined();
    expect((await status(`cc-${other}`)).removedModels).toEqual([]);
    // The pairing is gone, the account is not: claude-y goes to the other account from now on,
    // and the account that refused it still serves claude-x.
    const before = w.vendor.calls.length;
    for (let i = 0; i < 3; i++) expect((await post("cc/claude-y")).status).toBe(200);
    expect(w.vendor.calls.slice(before).filter((c) => c.path.startsWith("/v1/messages")).map((c) => c.login)).toEqual([other, other, other]);
    expect((await status(`cc-${first}`)).reasons).toEqual([]);
    await w.gw.app.store.restoreModel(`cc-${first}`);
  });

  test("request-policy 403: back to the client, no refresh, no account effect", async () => {
    const refreshes = w.vendor.refreshCalls.length;
    w.vendor.onCall = (c) => (c.path.startsWith("/v1/messages") ? forbidden("This request was blocked by our usage policy.") : undefined);
    try {
      const res = await post("cc/claude-x");
      expect(res.status).toBe(403);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect(body.error.message).toContain("usage policy");
    } finally {
      w.vendor.onCall = undefined;
    }
    expect(w.vendor.refreshCalls.length).toBe(refreshes);
    const p1 = await status("cc-p1");
    expect(p1.reasons).toEqual([]);
    expect(p1.lock).toBeUndefined();
  });
});
