/**
 * Money spent and subscriptions' use at API prices kept apart (SPEC 9.5; newuser12b's tryout: the
 * Overview's cost added a subscription's API-price equivalent to what the API key cost). One request
 * on a Claude Code subscription (a fake vendor) and two on an API key, all priced: GET /usage's
 * `cost` says what was spent and what the subscription's use would have cost, `switchyard usage` says
 * the same below its table, and the Overview's Cost tile (real Chromium) reads the money spent with the
 * subscription's use beside it. The rows and the time series keep them apart too (each row's and
 * bucket's `subscriptionUsd`): `usage`'s cost column, the Usage page's Cost column and the cost charts
 * show money spent, the subscription's use in a column and bars of its own (they added both).
 */
import { expect, test } from "bun:test";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";
import { startFakeVendor, startPaidBesideSubscription } from "../oauth/fake-oauth.ts";
import { usageLines } from "../../src/cli/usage-table.ts";
import { table } from "../../src/cli/table.ts";
import { withStartedGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

// A Claude Code subscription (a fake vendor in front of the fake upstream) and an API key, both priced
// at $100 per million tokens in and out; the fake answers 11 + 7 tokens: $0.0018 a request.
const suite = withStartedGatewayAndBrowser(async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  const gw = await startPaidBesideSubscription(upstream, vendor);
  // the gateway, its fake upstream and data directory, then the vendor
  return Object.assign(Object.create(gw) as typeof gw, { stop: () => gw.stop().then(() => vendor.stop()) });
});

test("GET /usage's cost, `switchyard usage` and the Overview's Cost tile say what was spent apart from the subscription's use at API prices", async () => {
  const gw = suite.gw;
  gw.fake.handle((req) => simpleReply(req.format!, { text: "ok", model: req.model, usage: { input: 11, output: 7 } }, req.stream));
  const post = (model: string) =>
    fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
  expect((await post("cc/claude-v")).status).toBe(200);
  expect((await post("paid/claude-v")).status).toBe(200);
  expect((await post("paid/claude-v")).status).toBe(200);

  for (const by of ["model", "provider", "account", "key"]) {
    const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=${by}`)).json()) as { cost: { spentUsd: number; subscriptionUsd: number }; rows: Array<{ group: string | null; costUsd: number }> };
    expect({ by, cost: usage.cost }).toEqual({ by, cost: { spentUsd: 0.0036, subscriptionUsd: 0.0018 } });
  }
  const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=provider`)).json()) as {
    cost: { spentUsd: number; subscriptionUsd: number };
    rows: Array<Record<string, unknown>>;
    series: { buckets: Array<{ costUsd: number; subscriptionUsd: number }> };
  };
  expect(usage.rows.map((r) => [r.group, r.costUsd, r.subscriptionUsd]).sort()).toEqual([
    ["cc", 0.0018, 0.0018],
    ["paid", 0.0036, 0],
  ]);
  const last = usage.series.buckets.at(-1)!;
  expect([last.costUsd, last.subscriptionUsd]).toEqual([0.0054, 0.0018]);
  // `switchyard usage`: the cost column is money spent, the subscription's use a column of its own (the cc row's cost read $0.0018)
  const lines = usageLines(usage.rows, "provider", table, "24h", usage.cost);
  const shown = lines[0]!.split("\n"); // the table, its head first
  const cells = (group: string) => shown.find((l) => l.startsWith(`${group} `))!.trim().split(/\s+/).slice(-2);
  expect(shown[0]!.trim().split(/\s+/).slice(-2)).toEqual(["cost", "subscription_use"]);
  expect({ cc: cells("cc"), paid: cells("paid") }).toEqual({ cc: ["$0.00", "$0.0018"], paid: ["$0.0036", "-"] });
  expect(lines.at(-1)).toBe(
    "cost is money spent; subscription_use is what subscriptions served at API prices, not billed per request (paid by the month): $0.0036 spent (API keys and other providers); $0.0018 of subscriptions' use",
  );
  // Filtered to the subscription: nothing spent.
  const sub = (await (await fetch(`${gw.url}/admin/api/usage?by=model&provider=cc`)).json()) as typeof usage;
  expect(sub.cost).toEqual({ spentUsd: 0, subscriptionUsd: 0.0018 });

  // The Overview's Cost tile: what was spent, the subscription's use beside it (it read $0.0054, the sum).
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${gw.url}/dashboard`);
    const tile = w.page.locator(".stat", { has: w.page.locator(".stat-label", { hasText: /^Cost$/ }) });
    await tile.locator(".stat-value", { hasText: "$" }).waitFor({ timeout: 10_000 });
    expect({ value: await tile.locator(".stat-value").innerText(), sub: await tile.locator(".stat-sub").innerText() }).toEqual({
      value: "$0.0036",
      sub: "spent; subscriptions' use: $0.0018 at API prices, not billed",
    });
    // The Overview's cost chart: money spent, the subscription's use in bars beside it (it had one series, "cost", the sum)
    const legend = async (title: RegExp) => {
      const card = w.page.locator(".card", { has: w.page.locator("h2", { hasText: title }) });
      await card.locator(".u-legend").waitFor({ timeout: 10_000 });
      return card.locator(".u-legend .u-series").evaluateAll((els) => els.slice(1).map((e) => [e.querySelector(".u-label")?.textContent, e.querySelector(".u-value")?.textContent]));
    };
    expect((await legend(/^Cost \(USD\)/)).map(([label]) => label)).toEqual(["spent", "subscriptions at API prices"]);
    // The Usage page: the Cost column is money spent, the subscription's use a column of its own; its chart as the Overview's (by
    // day: the latest bucket, whose values the legend shows, holds the three requests but at midnight UTC)
    await w.page.goto(`${gw.url}/dashboard/usage?range=7d&by=provider`);
    const row = (group: string) => w.page.locator(`tr[data-group="${group}"]`);
    await row("cc").waitFor({ timeout: 10_000 });
    const cost = async (group: string) => [await row(group).locator('td[data-label="Cost"]').innerText(), await row(group).locator('td[data-label="Subscriptions at API prices"]').innerText()];
    expect({ cc: await cost("cc"), paid: await cost("paid") }).toEqual({ cc: ["$0", "$0.0018"], paid: ["$0.0036", "–"] });
    expect(await legend(/^Cost over time \(USD\)/)).toEqual([
      ["spent", "$0.0036"],
      ["subscriptions at API prices", "$0.0018"],
    ]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
