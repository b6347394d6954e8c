/**
 * Money spent and subscriptions' use at API prices kept apart (SPEC 9.5; newuser12b's tryout: the
 * Overview's cost added a subscription's API-price equivalent to what the API key cost). One request
 * on a Claude Code subscription (a fake vendor) and two on an API key, all priced: GET /usage's
 * `cost` says what was spent and what the subscription's use would have cost, `switchyard usage` says
 * the same below its table, and the Overview's Cost tile (real Chromium) reads the money spent with the
 * subscription's use beside it.
 */
import { afterAll, expect, test } from "bun:test";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { startFakeVendor, vendorProviders } from "../oauth/fake-oauth.ts";
import { usageLines } from "../../src/cli/usage-table.ts";
import { table } from "../../src/cli/table.ts";
import { launchBrowser, openPage, type TestBrowser } from "../support/browser.ts";

let gw: TestGateway | undefined;
let browser: TestBrowser | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  for (const c of cleanups) await c();
});

test("GET /usage's cost, `switchyard usage` and the Overview's Cost tile say what was spent apart from the subscription's use at API prices", async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  cleanups.push(() => vendor.stop());
  const t = vendor.seed({ name: "value", models: ["claude-v"] });
  // $100 per million tokens in and out; the fake answers 11 + 7 tokens: $0.0018 a request.
  const yaml =
    vendorProviders(vendor.url) +
    `  - id: paid
    kind: anthropic
    base_url: "{{FAKE}}/paid"
accounts:
  - id: cc-file
    provider: cc
    access_token: env:CC_ACCESS
    refresh_token: env:CC_REFRESH
    expires_at: ${Date.now() + 3600_000}
  - id: paid-key
    provider: paid
    api_key: env:PAID_KEY
settings:
  pricing:
    cc/claude-v: { input: 100, output: 100 }
    paid/claude-v: { input: 100, output: 100 }
`;
  gw = await startGateway(yaml, { fake: upstream, env: { CC_ACCESS: t.accessToken, CC_REFRESH: t.refreshToken, PAID_KEY: "sk-test-paid-value" } });
  upstream.handle((req) => simpleReply(req.format!, { text: "ok", model: req.model, usage: { input: 11, output: 7 } }, req.stream));
  const post = (model: string) =>
    fetch(`${gw!.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
  expect((await post("cc/claude-v")).status).toBe(200);
  expect((await post("paid/claude-v")).status).toBe(200);
  expect((await post("paid/claude-v")).status).toBe(200);

  for (const by of ["model", "provider", "account", "key"]) {
    const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=${by}`)).json()) as { cost: { spentUsd: number; subscriptionUsd: number }; rows: Array<{ group: string | null; costUsd: number }> };
    expect({ by, cost: usage.cost }).toEqual({ by, cost: { spentUsd: 0.0036, subscriptionUsd: 0.0018 } });
  }
  const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=provider`)).json()) as { cost: { spentUsd: number; subscriptionUsd: number }; rows: Array<Record<string, unknown>> };
  expect(usageLines(usage.rows, "provider", table, "24h", usage.cost).at(-1)).toBe(
    "cost: $0.0036 spent (API keys and other providers); $0.0018 is subscriptions' use at API prices, not billed per request (in the cost column of their rows)",
  );
  // Filtered to the subscription: nothing spent.
  const sub = (await (await fetch(`${gw.url}/admin/api/usage?by=model&provider=cc`)).json()) as typeof usage;
  expect(sub.cost).toEqual({ spentUsd: 0, subscriptionUsd: 0.0018 });

  // The Overview's Cost tile: what was spent, the subscription's use beside it (it read $0.0054, the sum).
  browser = await launchBrowser();
  const w = await openPage(browser, gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${gw.url}/dashboard`);
    const tile = w.page.locator(".stat", { has: w.page.locator(".stat-label", { hasText: /^Cost$/ }) });
    await tile.locator(".stat-value", { hasText: "$" }).waitFor({ timeout: 10_000 });
    expect({ value: await tile.locator(".stat-value").innerText(), sub: await tile.locator(".stat-sub").innerText() }).toEqual({
      value: "$0.0036",
      sub: "spent; subscriptions' use: $0.0018 at API prices, not billed",
    });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
