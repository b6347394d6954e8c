/**
 * A client's 5,000-character model name (a Gemini path `/v1beta/models/aaaa…:generateContent`, or a
 * chat request's `model`) on the dashboard: the Calls page's Model and Served by cells and the Usage
 * page's group cell are one line cut with "…" and the whole name in their title, so the row stays a
 * row (wrapped, the Calls row was about 3,000 px tall). Measured in Chromium at 1280 px; screenshot in
 * test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const YAML = `
providers:
  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
`;

const LONG = "a".repeat(5000);
const SERVED = `oai/${LONG}`;

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    // a Gemini path naming a model no provider has: refused, recorded with its name
    const gemini = await fetch(`${gw.url}/v1beta/models/${LONG}:generateContent`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }) });
    await gemini.arrayBuffer();
    expect(gemini.status).toBeGreaterThanOrEqual(400);
    // served: the name in Model, Served by and the Usage page's by-model row
    const chat = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: SERVED, messages: [{ role: "user", content: "hi" }] }) });
    await chat.arrayBuffer();
    expect(chat.status).toBe(200);
  },
});

test("Calls and Usage: a 5,000-character model name is one line cut with an ellipsis, whole in its title; the row stays under 80 px", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    const rows = w.page.locator("table.calls tbody tr");
    await rows.nth(1).waitFor({ timeout: 30_000 });
    // the browser's DOM, typed loosely: the tests' tsconfig has no DOM types
    const calls = await w.page.locator("table.calls").evaluate((table: any) =>
      [...table.querySelectorAll("tbody tr")].map((tr: any) => ({
        height: tr.getBoundingClientRect().height,
        titles: [...tr.querySelectorAll(".name-cut")].map((s: any) => s.title.length),
        cut: [...tr.querySelectorAll(".name-cut")].every((s: any) => s.scrollWidth > s.clientWidth && s.ownerDocument.defaultView.getComputedStyle(s).textOverflow === "ellipsis"),
      })),
    );
    await w.page.screenshot({ path: join(SHOTS, "calls-long-model-name.png") });
    expect(calls).toHaveLength(2);
    for (const r of calls) expect(r.height).toBeLessThan(80);
    // the served call: Model and Served by; the refused Gemini call: Model
    expect(calls.map((r) => r.titles).sort((a, b) => a.length - b.length)).toEqual([[5000], [SERVED.length, SERVED.length]]);
    expect(calls.every((r) => r.cut)).toBe(true);

    await w.page.goto(`${suite.gw.url}/dashboard/usage?by=model`);
    const row = w.page.locator(`table.usage tbody tr[data-group="${SERVED}"]`);
    await row.waitFor({ timeout: 30_000 });
    const usage = await row.evaluate((tr: any) => ({ height: tr.getBoundingClientRect().height, title: tr.querySelector(".name-cut")?.title }));
    expect(usage.height).toBeLessThan(80);
    expect(usage.title).toBe(SERVED);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 120_000);
