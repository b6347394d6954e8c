/**
 * Cheap calls on the dashboard (SPEC 9.4): a model priced at cents per million tokens makes calls of a
 * few thousandths of a cent. What a user reads must not pass them off as zero nor cut them: the Calls
 * and Usage tables show each cost with its leading digits ("$0.000043", not "$0.0000"), and the cost
 * charts of Overview and Usage draw their value axis whole (no tick label cut at the chart's left
 * edge), at 1440 and 1280 px.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";

const suite = withGatewayAndBrowser(`
${providersAtFake(["cheap", "openai-compatible"])}
accounts:
  - { id: cheap-1, provider: cheap, api_key: "env:FAKE_KEY" }
settings:
  pricing:
    # the fake's reply uses 11 tokens in and 7 out: 11 × $2 + 7 × $3 per million = $0.000043
    cheap/mini: { input: 2, output: 3 }
`, {
  ready: async (gw) => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "cheap/mini", messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(200);
      await res.text();
    }
  },
});

/** How many pixels of the cost chart's canvas have ink in its leftmost column (a cut-off tick label). */
const inkAtLeftEdge = (page: Page, title: string) =>
  page
    .locator(".card", { has: page.locator("h2", { hasText: title }) })
    .locator(".chart canvas")
    .evaluate((canvas) => {
      // the page's canvas (the test's tsconfig has no DOM types)
      const c = canvas as unknown as { height: number; getContext(kind: "2d"): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
      const data = c.getContext("2d").getImageData(0, 0, 2, c.height).data;
      let ink = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink++;
      return ink;
    });

test("a call of a few thousandths of a cent reads as such in Calls and Usage, and the cost charts' axis labels are whole", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    for (const width of [1440, 1280]) {
      await w.page.setViewportSize({ width, height: 900 });
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: 10_000 });
      const costs = await w.page.locator("table.calls tbody tr td:nth-child(8)").allInnerTexts();
      expect(costs).toEqual(["$0.000043", "$0.000043", "$0.000043"]);

      await w.page.goto(`${suite.gw.url}/dashboard`);
      await w.page.locator(".chart canvas").first().waitFor({ timeout: 10_000 });
      await w.settled(); // the cost chart drawn from its data
      expect({ width, page: "overview", ink: await inkAtLeftEdge(w.page, "Cost (USD)") }).toEqual({ width, page: "overview", ink: 0 });
      expect(await w.page.locator(".stat", { hasText: "Cost" }).locator(".stat-value").innerText()).toBe("$0.00013");
      await w.page.screenshot({ path: join(SHOTS, `cheap-overview-${width}.png`), fullPage: true });

      await w.page.goto(`${suite.gw.url}/dashboard/usage`);
      await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 10_000 });
      await w.settled(); // the cost chart drawn from its data
      expect({ width, page: "usage", ink: await inkAtLeftEdge(w.page, "Cost over time (USD)") }).toEqual({ width, page: "usage", ink: 0 });
      const row = await w.page.locator("table.usage tbody tr", { hasText: "mini" }).innerText();
      expect(row).toContain("$0.00013");
      await w.page.screenshot({ path: join(SHOTS, `cheap-usage-${width}.png`), fullPage: true });
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
