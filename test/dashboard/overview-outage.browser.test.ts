/**
 * The Overview tiles while the usage store cannot answer (a shared PostgreSQL away: the admin API
 * answers 503 `unavailable_error`, src/store/postgres/db.ts), in a real Chromium. The tiles read "–"
 * beside the banner, not a confident 0: an operator glancing at them during an incident read "no
 * traffic" (newuser12a's tryout, G19). The usage read is answered here with the store's own 503 body
 * (a real outage is driven in test/e2e/multi-instance-changes.test.ts); once it answers, the figures
 * come back. The Request rate tile reads "–" too while its own reads fail: it showed the requests the
 * page saw finish as "2/min, live, last minute" while the instance served ~60/min (try20 D8). The Tokens tile counts prompt cache reads too, as the Tokens chart and Usage do (it left
 * them out: newuser12b's tryout).
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { openPage, storeAway } from "../support/browser.ts";
import { postChatHi } from "../support/gateway.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

test("while the usage store cannot answer, the Overview tiles read – (not 0); when it answers, the figures", async () => {
  const sent = await postChatHi(suite.gw.url, "demo-chat/gpt-demo");
  expect(sent.status).toBe(200);
  await sent.text();

  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    // the tiles' read (since=1h); the rate chart's own read (since=30m) passes
    const outage = await storeAway(page, /\/admin\/api\/usage\?.*since=1h/);
    await page.goto(`${suite.gw.url}/dashboard/`);
    await page.locator(".error-line", { hasText: "the database cannot be reached" }).waitFor({ timeout: 10_000 });
    const tiles = () =>
      page.locator(".stat").evaluateAll((stats) =>
        Object.fromEntries(stats.map((s) => [s.querySelector(".stat-label")!.textContent, s.querySelector(".stat-value")!.textContent])),
      );
    const shown = await tiles();
    expect([shown.Requests, shown.Errors, shown.Fallbacks, shown.Tokens, shown.Cost]).toEqual(["–", "–", "–", "–", "–"]);

    outage.end();
    await page.click('.seg button:has-text("Last day")');
    await page.click('.seg button:has-text("Last hour")');
    for (const end = Date.now() + 10_000; (await tiles()).Requests !== "1" && Date.now() < end; ) await Bun.sleep(100);
    const back = await tiles();
    expect([back.Requests, back.Errors]).toEqual(["1", "0"]);
  } finally {
    await w.close();
  }
}, 60_000);

test("while the rate's reads fail, the Request rate tile reads – (not the requests the page saw finish); when they answer, N/min", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    // every usage read: the tiles' (since=1h) and the rate chart's (since=30m, then since=1m every 10 s)
    const outage = await storeAway(page, /\/admin\/api\/usage\?/);
    await page.goto(`${suite.gw.url}/dashboard/`);
    await page.locator(".error-line", { hasText: "the database cannot be reached" }).waitFor({ timeout: 30_000 });
    await page.locator(".live-live").waitFor({ timeout: 30_000 });
    // a request the page sees finish (its live event) while the store does not answer
    const sent = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "during the outage" }] }),
    });
    expect(sent.status).toBe(200);
    await sent.text();
    const rate = page.locator(".stat", { has: page.locator(".stat-label", { hasText: /^Request rate$/ }) });
    // the live event reaches the page and is drawn within a second's tick (the chart's own timer)
    await page.locator(".live-live").waitFor({ timeout: 30_000 });
    await Bun.sleep(2_000);
    expect([await rate.locator(".stat-value").innerText(), await rate.locator(".stat-sub").innerText()]).toEqual(["–", "unavailable: the usage store does not answer"]);

    outage.end();
    // the next 10 s re-read of the last minute answers
    await rate.locator(".stat-value").filter({ hasText: /^\d+\/min$/ }).waitFor({ timeout: 30_000 });
    expect(await rate.locator(".stat-sub").innerText()).toBe("live, last minute");
  } finally {
    await w.close();
  }
}, 90_000);

test("the Tokens tile counts prompt cache reads with input and output, and says how many", async () => {
  suite.gw.fake.handle((req) => simpleReply(req.format!, { text: "cached", model: req.model, usage: { input: 11, output: 7, cacheRead: 1000 } }, req.stream));
  const sent = await fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "again" }] }),
  });
  expect(sent.status).toBe(200);
  await sent.text();
  const usage = (await (await fetch(`${suite.gw.url}/admin/api/usage?since=1h&by=model`)).json()) as { rows: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }[] };
  const sum = usage.rows.reduce((n, r) => ({ io: n.io + r.inputTokens + r.outputTokens, cache: n.cache + r.cacheReadTokens + r.cacheWriteTokens }), { io: 0, cache: 0 });
  expect(sum.cache).toBe(1000);
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/`);
    const tile = w.page.locator(".stat", { hasText: "Tokens" });
    await tile.locator(".stat-sub", { hasText: "cache" }).waitFor({ timeout: 10_000 });
    expect(await tile.locator(".stat-value").innerText()).toBe((sum.io + sum.cache).toLocaleString("en-US"));
    expect((await tile.locator(".stat-sub").innerText()).endsWith("· 1,000 cache")).toBe(true);
  } finally {
    await w.close();
  }
}, 60_000);
