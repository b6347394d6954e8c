/**
 * The Calls page's Cost column (a new user's tryout): a $0.025 call read "$0.03", so two of them read
 * $0.06 beside the Overview's, `keys list`'s and the budget's $0.05, and the column mixed "$0.00014"
 * with "$0.03". The column now has one number of decimals, two significant digits of its smallest cost
 * (src/dashboard/client/format.ts usdColumn): "$0.02500" above "$0.00014"; without the cheap call,
 * "$0.025"; the call view says "$0.025 at API prices". Real gateway (prices in `settings.pricing`, the
 * fake upstream reporting 1,000 input tokens a call), real Chromium.
 */
import { expect, test } from "bun:test";
import { simpleReply } from "../support/fake-upstream.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const YAML = `
providers:
  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
settings:
  pricing:
    oai/gpt-dear: { input: 25, output: 0 }
    oai/gpt-cheap: { input: 0.14, output: 0 }
`;

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    gw.fake.handle((req) => (req.format ? simpleReply(req.format, { text: "ok", model: req.model, usage: { input: 1000, output: 0 } }, req.stream) : undefined));
    // $0.025 twice ($0.05 in all), then $0.00014
    for (const model of ["oai/gpt-dear", "oai/gpt-dear", "oai/gpt-cheap"]) {
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
      expect(r.status).toBe(200);
      await r.text();
    }
  },
});

test("the Cost column: one number of decimals, $0.025 not rounded to cents; the call view's cost", async () => {
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    const rows = w.page.locator("table.calls tbody tr");
    const costs = () => rows.evaluateAll((trs) => trs.map((tr) => [tr.children[1]?.textContent?.trim(), tr.children[tr.children.length - 2]?.textContent?.trim()]));
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    // the usage rows are flushed each second: wait until the page lists all three
    for (let i = 0; i < 100 && (await rows.count()) < 3; i++) {
      await Bun.sleep(200);
      if (i % 10 === 9) await w.page.reload();
    }
    expect(await costs()).toEqual([
      ["oai/gpt-cheap", "$0.00014"],
      ["oai/gpt-dear", "$0.02500"],
      ["oai/gpt-dear", "$0.02500"],
    ]);

    // only the dear calls (the Model filter): "$0.025", not "$0.03"
    await w.page.goto(`${suite.gw.url}/dashboard/calls?model=${encodeURIComponent("oai/gpt-dear")}`);
    for (let i = 0; i < 100 && (await rows.count()) !== 2; i++) await Bun.sleep(100);
    expect(await costs()).toEqual([
      ["oai/gpt-dear", "$0.025"],
      ["oai/gpt-dear", "$0.025"],
    ]);

    await rows.first().click();
    const cost = w.page.locator(".trace .kv dt", { hasText: /^Cost$/ }).locator("xpath=following-sibling::dd[1]");
    await cost.waitFor({ timeout: 10_000 });
    expect(await cost.innerText()).toBe("$0.025 at API prices");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);
