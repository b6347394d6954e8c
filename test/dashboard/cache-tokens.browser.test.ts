/**
 * Prompt-cache tokens on the dashboard, in a real Chromium (newuser14 K6, K13). One Anthropic-format
 * request whose upstream reports 100 uncached input, 5,000 cache-read, 300 cache-write and 20 output
 * tokens (the hub's convention: input is the uncached part). The Overview's Tokens chart has the same
 * four series as the Usage page's, cache write included (it had input, output and cache read only).
 * Input is said to be the uncached part where it is shown (the charts' legends, the Usage table's
 * column and a note under it, `switchyard usage`'s legend), and the Calls list's token cell shows the
 * cache reads and writes apart, in the call view's words ("100 +5,000 cache read +300 cache write / 20";
 * it read "100 / 20", then "100 +5,300 cache / 20", reads and writes added), in view and each part whole
 * on one line at 1280 px and at 760 px (a width that shows the column, the table scrolling in its card).
 */
import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { drawn, openPage } from "../support/browser.ts";
import { ROOT, SOURCE_CLI } from "../support/instance.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"), {
  ready: async (gw) => {
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
    servedAt = Date.now();
    // the request's usage is stored after the reply: wait until the admin API counts it
    for (const end = Date.now() + 10_000; ; await Bun.sleep(50)) {
      const u = (await (await fetch(`${gw.url}/admin/api/usage?since=1h&by=model`)).json()) as { rows: { cacheWriteTokens: number }[] };
      if (u.rows.some((x) => x.cacheWriteTokens === 300)) break;
      if (Date.now() > end) throw new Error("the request's usage was not stored within 10 s");
    }
  },
});

/** When the request was answered (ms): the Overview's page is held in that minute, its chart's latest bucket. */
let servedAt = 0;

/** A chart's legend in the card titled `title`: each series' label → the value it shows (the latest bucket's). */
async function legend(page: Page, title: RegExp): Promise<Record<string, string>> {
  const card = page.locator(".card", { has: page.locator("h2", { hasText: title }) });
  await card.locator(".u-legend").waitFor({ timeout: 10_000 });
  const rows = await card.locator(".u-legend tr.u-series").evaluateAll((trs) => trs.map((tr) => [tr.querySelector(".u-label")?.textContent ?? "", tr.querySelector(".u-value")?.textContent ?? ""]));
  // the first row is the time axis
  return Object.fromEntries(rows.slice(1));
}

test("the Overview's Tokens chart has input, output, cache read and cache write, as the Usage page's", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    // the legend shows the latest minute's bucket: a page opened after the minute turned showed 0 for
    // every series (seen once in a full run), so its clock stays in the request's minute
    await w.page.clock.setFixedTime(servedAt);
    await w.page.goto(`${suite.gw.url}/dashboard/`);
    await w.settled();
    const overview = await legend(w.page, /^Tokens per minute$/);
    await w.page.goto(`${suite.gw.url}/dashboard/usage?range=1d`);
    await w.settled();
    const usage = await legend(w.page, /^Tokens over time, per hour$/);
    expect({ overview, usage }).toEqual({
      overview: { "input (uncached)": "100", output: "20", "cache read": "5k", "cache write": "300" },
      usage: { "input (uncached)": "100", output: "20", "cache read": "5k", "cache write": "300" },
    });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("input is said to be uncached on the Usage page and in switchyard usage; the Calls list shows the cache tokens", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/usage?range=1d`);
    const row = page.locator('table.usage tr[data-group="demo-anthropic/claude-demo"]');
    await row.waitFor({ timeout: 10_000 });
    const heads = await page.locator("table.usage thead th").allInnerTexts();
    const cells = await row.locator("td").allInnerTexts();
    const input = heads.indexOf("Input (uncached)");
    expect({ input: cells[input], cacheRead: cells[heads.indexOf("Cache read")], cacheWrite: cells[heads.indexOf("Cache write")] }).toEqual({ input: "100", cacheRead: "5,000", cacheWrite: "300" });
    const card = page.locator(".card", { has: page.locator("table.usage") });
    expect(await card.innerText()).toContain("Input counts the uncached input tokens only: those read from or written to the provider's prompt cache are under Cache read and Cache write");

    await page.goto(`${suite.gw.url}/dashboard/calls`);
    const cell = page.locator("table.calls tbody tr").first().locator("td[data-tokens]");
    await cell.waitFor({ timeout: 10_000 });
    expect(await cell.innerText()).toBe("100 +5,000 cache read +300 cache write / 20");
    expect(await cell.locator("[title]").getAttribute("title")).toBe("100 uncached input, 5,000 cache read, 300 cache write, 20 output tokens");
    // at 1280 px the cell is in view (the list's columns all fit); there and at 760 px (where the table
    // scrolls sideways in its card) no part of it is split over two lines ("+5,000 cache" / "read")
    for (const width of [1280, 760]) {
      await page.setViewportSize({ width, height: 900 });
      await drawn(page);
      const fit = await cell.evaluate(`(() => {
        const td = document.querySelector("table.calls tbody tr td[data-tokens]");
        const line = parseFloat(getComputedStyle(td).lineHeight) || 20;
        const parts = [...td.querySelectorAll(".tokens-part")].map((p) => [p.textContent, p.getBoundingClientRect().height <= line * 1.5]);
        return { inView: ${width} < 1280 || td.getBoundingClientRect().right <= document.documentElement.clientWidth, parts };
      })()`);
      expect({ width, fit }).toEqual({ width, fit: { inView: true, parts: [["+5,000 cache read", true], ["+300 cache write", true], ["/ 20", true]] } });
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }

  const p = Bun.spawn([...SOURCE_CLI, "usage", "--since", "1h", "--data-dir", suite.gw.dataDir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect({ err, code }).toEqual({ err: "", code: 0 });
  expect(out.split("\n")).toContain(
    "input: uncached input tokens only; those read from or written to the provider's prompt cache are counted apart, in cache_read and cache_write (a client's 5,100 prompt tokens, 5,000 of them cached, read input 100)",
  );
}, 60_000);
