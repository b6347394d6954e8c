/**
 * The Usage page's "by model" table at 1280 px (README Usage: "every column in view at 1280 px"; try18
 * D9): a served name such as `anthropic/claude-sonnet-4-5` wraps after its slash, each part whole, so
 * the table is no wider than its card and Avg total is in view (it was 992 px in a 966 px box, the
 * last column cut). Measured in Chromium; screenshot in test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const YAML = `
providers:
  - id: anthropic
    kind: anthropic
    base_url: "{{FAKE}}"
  - id: openai
    kind: openai
    base_url: "{{FAKE}}/v1"
accounts:
  - { id: anth-1, provider: anthropic, api_key: env:FAKE_KEY }
  - { id: oai-1, provider: openai, api_key: env:FAKE_KEY }
`;

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    for (const model of ["anthropic/claude-sonnet-4-5", "openai/gpt-5-mini"]) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
    // a refusal before routing: the "no model" row
    const bad = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "openai/gpt-5-mini", messages: 5 }) });
    await bad.arrayBuffer();
  },
});

test("at 1280 px the by-model table fits its card: the model name wraps after its slash and Avg total is in view", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/usage?by=model`);
    const row = w.page.locator('table.usage tbody tr[data-group="anthropic/claude-sonnet-4-5"]');
    await row.waitFor({ timeout: 30_000 });
    // the browser's DOM, typed loosely: the tests' tsconfig has no DOM types
    const fit = await w.page.locator("table.usage").evaluate((table: any) => {
      const wrap = table.closest(".table-wrap");
      const heads: any[] = [...table.querySelectorAll("thead th")];
      const last = heads.at(-1)!.getBoundingClientRect();
      const cell = table.querySelector('tr[data-group="anthropic/claude-sonnet-4-5"] td.usage-group');
      const parts: any[] = [...cell.querySelectorAll(".name-part")];
      const view = table.ownerDocument.defaultView;
      // each part on a line of its own, and none of them broken inside (one line box each)
      return {
        lastHeading: heads.at(-1)!.textContent,
        tableWider: table.scrollWidth > wrap.clientWidth + 0.5,
        scrolls: wrap.scrollWidth > wrap.clientWidth + 0.5,
        lastInView: last.right <= wrap.getBoundingClientRect().right + 0.5,
        nameLines: new Set(parts.map((p) => Math.round(p.getBoundingClientRect().top))).size,
        partsBroken: parts.filter((p) => p.getClientRects().length !== 1 || p.getBoundingClientRect().height > 1.5 * (parseFloat(view.getComputedStyle(p).lineHeight) || 16)).length,
        nameText: cell.innerText.replace(/\s+/g, ""),
      };
    });
    await w.page.screenshot({ path: join(SHOTS, "usage-by-model-1280.png"), fullPage: true });
    expect(fit).toEqual({ lastHeading: "Avg total", tableWider: false, scrolls: false, lastInView: true, nameLines: 2, partsBroken: 0, nameText: "anthropic/claude-sonnet-4-5" });
    // the name is whole on each line: broken after its slash, nowhere else
    const parts = await row.locator("td.usage-group .name-part").allInnerTexts();
    expect(parts).toEqual(["anthropic/", "claude-sonnet-4-5"]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 120_000);
