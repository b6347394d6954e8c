/**
 * The Usage page (newuser12b's tryout, H8): its Cost column mixed cents and four-decimal amounts
 * ("$0.05" above "$0.000043"), and its range and grouping were not in the address, so a reload or a
 * shared link fell back to "1 day, by model". Real Chromium; a model priced at dollars per million
 * tokens beside one priced at a few cents. Its 7-day chart's days were UTC's: in California each bar
 * (and the legend) began at 4 PM the day before; the page now asks for the reader's days.
 */
import { expect, test } from "bun:test";
import { openPage } from "../support/browser.ts";
import { usdColumn } from "../../src/dashboard/client/format.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";
import { until } from "../support/until.ts";

const suite = withGatewayAndBrowser(`
${providersAtFake(["shop", "openai-compatible"])}
accounts:
  - { id: shop-1, provider: shop, api_key: "env:FAKE_KEY" }
settings:
  pricing:
    # the fake's reply uses 11 tokens in and 7 out
    shop/dear: { input: 3000, output: 3000 }   # 18 × $0.003 = $0.054
    shop/mini: { input: 2, output: 3 }         # 11 × $2 + 7 × $3 per million = $0.000043
`, {
  ready: async (gw) => {
    for (const model of ["shop/dear", "shop/mini"]) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(200);
      await res.text();
    }
  },
});

test("usdColumn: one number of decimals down a column, as many as its smallest amount needs", () => {
  const f = usdColumn([0.054, 0.000043, 0]);
  expect([0.054, 0.000043, 0, 1.25].map(f)).toEqual(["$0.054000", "$0.000043", "$0", "$1.250000"]);
  const cents = usdColumn([1.25, 0.5]);
  expect([1.25, 0.5].map(cents)).toEqual(["$1.25", "$0.50"]);
  expect(usdColumn([0.0012, 3])(3)).toBe("$3.0000");
  // between a cent and a dime: the second digit stays (two $0.025 calls read "$0.03" each beside a total of $0.05)
  expect([0.025, 0.05, 1].map(usdColumn([0.025, 0.05, 1]))).toEqual(["$0.025", "$0.050", "$1.000"]);
  expect([0.001, 0.1].map(usdColumn([0.001, 0.1]))).toEqual(["$0.0010", "$0.1000"]);
  expect(usdColumn([0.1, 2])(0.1)).toBe("$0.10");
});

test("Usage's Cost column reads one number of decimals, and the range and grouping are kept in the address across a reload", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/usage`);
    await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 10_000 });
    const costs = async () => Object.fromEntries(await w.page.locator("table.usage tbody tr").evaluateAll((rows) => rows.map((r) => [(r as unknown as { dataset: { group: string } }).dataset.group, ((r as unknown as { querySelector(s: string): { textContent: string } | null }).querySelector('td[data-label="Cost"]')?.textContent ?? "").trim()])));
    expect(await costs()).toEqual({ "shop/dear": "$0.054000", "shop/mini": "$0.000043" });

    await w.page.getByRole("button", { name: "by account" }).click();
    await w.page.getByRole("button", { name: "7 days" }).click();
    await w.page.locator("table.usage tbody tr[data-group='shop-1']").waitFor({ timeout: 10_000 });
    // The row shows after "by account"; the address takes "7 days" when that click's answer is drawn.
    const search = () => new URL(w.page.url()).search;
    await until(() => search() === "?range=7d&by=account", 10_000, "the address to read ?range=7d&by=account");
    expect(search()).toBe("?range=7d&by=account");
    await w.page.reload();
    await w.page.locator("table.usage tbody tr[data-group='shop-1']").waitFor({ timeout: 10_000 });
    expect(await w.page.locator(".seg button.on").allInnerTexts()).toEqual(["by account", "7 days"]);
    // one amount, two significant digits as in any column (it read usd()'s cents, "$0.05", until a $0.025 call read "$0.03")
    expect(await costs()).toEqual({ "shop-1": "$0.054" });
    // Back to the defaults: the address is plain again.
    await w.page.getByRole("button", { name: "by model" }).click();
    await w.page.getByRole("button", { name: "1 day" }).click();
    await w.page.locator("table.usage tbody tr[data-group='shop/dear']").waitFor({ timeout: 10_000 });
    await until(() => search() === "", 10_000, "the address to be plain");
    expect(search()).toBe("");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("7 days: each day's bar is the reader's day, from local midnight (in California it started at 4 PM the day before: UTC's midnight)", async () => {
  // GET /usage: tz_offset (minutes east of UTC) moves the buckets' starts to that local time
  const answer = async (tz?: number) =>
    ((await (await fetch(`${suite.gw.url}/admin/api/usage?since=7d&bucket=1d${tz === undefined ? "" : `&tz_offset=${tz}`}`)).json()) as { series: { buckets: Array<{ t: number; requests: number }> } }).series.buckets;
  const DAY = 86_400_000;
  const pst = await answer(-480);
  expect({ startsAt: (((pst.at(-1)!.t % DAY) + DAY) % DAY) / 3_600_000, requests: pst.reduce((n, b) => n + b.requests, 0) }).toEqual({ startsAt: 8, requests: 2 });
  expect((await answer()).at(-1)!.t % DAY).toBe(0); // without it, UTC's days
  expect((await fetch(`${suite.gw.url}/admin/api/usage?tz_offset=900`)).status).toBe(400);

  // the page asks with the browser's offset: its latest day starts at local midnight
  const context = await suite.browser.browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "America/Los_Angeles" });
  try {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
    const asked = page.waitForResponse((r) => new URL(r.url()).pathname === "/admin/api/usage" && new URL(r.url()).searchParams.get("bucket") === "1d");
    await page.goto(`${suite.gw.url}/dashboard/usage?range=7d`);
    const read = await asked;
    const latest = ((await read.json()) as { series: { buckets: Array<{ t: number }> } }).series.buckets.at(-1)!.t;
    const card = page.locator(".card", { has: page.locator("h2", { hasText: /^Tokens over time, per day/ }) });
    const time = card.locator(".u-legend .u-series").first().locator(".u-value");
    await time.filter({ hasText: "(latest)" }).waitFor({ timeout: 10_000 });
    // asked with the browser's offset, the latest day starts at its local midnight; a day's legend
    // writes that day's date (it wrote "12:00 AM", the bucket's start, until the time axes and the
    // legends were written alike)
    const local = await page.evaluate((t) => {
      const d = new Date(t);
      return { offset: -new Date().getTimezoneOffset(), midnight: d.getHours() === 0 && d.getMinutes() === 0, date: d.toLocaleDateString([], { month: "short", day: "numeric" }) };
    }, latest);
    expect({ tzOffset: new URL(read.url()).searchParams.get("tz_offset"), midnight: local.midnight, legend: await time.innerText() }).toEqual({ tzOffset: String(local.offset), midnight: true, legend: `${local.date} (latest)` });
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
}, 60_000);
