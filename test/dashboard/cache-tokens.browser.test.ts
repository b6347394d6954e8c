/**
 * Prompt-cache tokens on the dashboard, in a real Chromium (newuser14 K6, K13). One Anthropic-format
 * request whose upstream reports 100 uncached input, 5,000 cache-read, 300 cache-write and 20 output
 * tokens (the hub's convention: input is the uncached part). The Overview's Tokens chart has the same
 * four series as the Usage page's, cache write included (it had input, output and cache read only).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { launchBrowser, openPage, type TestBrowser } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let browser: TestBrowser;

beforeAll(async () => {
  gw = await startGateway(demoConfigYaml("{{FAKE}}"));
  browser = await launchBrowser();
  gw.fake.handle((req) =>
    req.format === "anthropic-messages"
      ? {
          json: {
            id: "msg_cache01",
            type: "message",
            role: "assistant",
            model: req.model,
            content: [{ type: "text", text: "cached" }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 5000, cache_creation_input_tokens: 300 },
          },
        }
      : undefined,
  );
  const r = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "demo-anthropic/claude-demo", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(r.status).toBe(200);
  await r.text();
  // the request's usage is stored after the reply: wait until the admin API counts it
  for (const end = Date.now() + 10_000; ; await Bun.sleep(50)) {
    const u = (await (await fetch(`${gw.url}/admin/api/usage?since=1h&by=model`)).json()) as { rows: { cacheWriteTokens: number }[] };
    if (u.rows.some((x) => x.cacheWriteTokens === 300)) break;
    if (Date.now() > end) throw new Error("the request's usage was not stored within 10 s");
  }
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

/** A chart's legend in the card titled `title`: each series' label → the value it shows (the latest bucket's). */
async function legend(page: Page, title: RegExp): Promise<Record<string, string>> {
  const card = page.locator(".card", { has: page.locator("h2", { hasText: title }) });
  await card.locator(".u-legend").waitFor({ timeout: 10_000 });
  const rows = await card.locator(".u-legend tr.u-series").evaluateAll((trs) => trs.map((tr) => [tr.querySelector(".u-label")?.textContent ?? "", tr.querySelector(".u-value")?.textContent ?? ""]));
  // the first row is the time axis
  return Object.fromEntries(rows.slice(1));
}

test("the Overview's Tokens chart has input, output, cache read and cache write, as the Usage page's", async () => {
  const w = await openPage(browser, gw.url);
  try {
    await w.page.goto(`${gw.url}/dashboard/`);
    await w.settled();
    const overview = await legend(w.page, /^Tokens per minute$/);
    await w.page.goto(`${gw.url}/dashboard/usage?range=1d`);
    await w.settled();
    const usage = await legend(w.page, /^Tokens over time, per hour$/);
    expect({ overview, usage }).toEqual({
      overview: { input: "100", output: "20", "cache read": "5k", "cache write": "300" },
      usage: { input: "100", output: "20", "cache read": "5k", "cache write": "300" },
    });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
