/**
 * The charts' time axes in the words of their legends (dash16's tryout of the dashboard): the axes
 * wrote times as uPlot does ("8:25am", a date as "12/5") while their legends and the rest of the
 * pages wrote "08:25 AM" in the reader's locale. In a real Chromium, for a reader in Los Angeles with
 * en-US and one in Kolkata (UTC+5:30) with en-GB, on the Overview's chart of minutes and the Usage
 * page's of hours and of days: every label under the time axis is written as the pages write a time
 * (or, on the chart of days, a date), and with the pointer on a tick the legend's time reads that
 * tick's label (its date too when the tick's day is not today, as the legend writes it).
 */
import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { legendAt, recordCanvasText, timeAxisTicks } from "../support/chart-reading.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"), {
  ready: async (gw) => {
    // one request, so the Overview draws its charts
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "fast", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(200);
    await r.text();
    for (const end = Date.now() + 10_000; ; await Bun.sleep(50)) {
      const u = (await (await fetch(`${gw.url}/admin/api/usage?since=1h`)).json()) as { rows: { requests: number }[] };
      if (u.rows.some((x) => x.requests > 0)) break;
      if (Date.now() > end) throw new Error("the request's usage was not stored within 10 s");
    }
  },
});

/** A reader: locale, time zone, and how that locale writes a time and a short date. */
const READERS = [
  { locale: "en-US", timezoneId: "America/Los_Angeles", time: /^\d\d:\d\d\s[AP]M$/, date: /^[A-Z][a-z]{2,3} \d{1,2}$/ },
  { locale: "en-GB", timezoneId: "Asia/Kolkata", time: /^\d\d:\d\d$/, date: /^\d{1,2} [A-Z][a-z]{2,3}$/ },
] as const;

/** The charts read: where, the card's title, and whether its points are days. */
const CHARTS = [
  { path: "/dashboard/", title: /^Tokens per minute$/, days: false },
  { path: "/dashboard/usage", title: /^Tokens over time, per hour$/, days: false },
  { path: "/dashboard/usage?range=7d", title: /^Tokens over time, per day$/, days: true },
] as const;

for (const reader of READERS) {
  test(`the time axes write times and dates as the legends do (${reader.locale}, ${reader.timezoneId})`, async () => {
    const context = await suite.browser.browser.newContext({ viewport: { width: 1440, height: 900 }, locale: reader.locale, timezoneId: reader.timezoneId, serviceWorkers: "block" });
    const page: Page = await context.newPage();
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
    try {
      await recordCanvasText(page);
      for (const chart of CHARTS) {
        await page.goto(`${suite.gw.url}${chart.path}`);
        const card = page.locator(".card", { has: page.locator("h2", { hasText: chart.title }) });
        await card.locator(".u-legend").waitFor({ timeout: 10_000 });
        // the page's today, as the legend writes a date that is not today's
        const today = await page.evaluate(() => new Date().toLocaleDateString([], { month: "short", day: "numeric" }));
        const over = (await card.locator(".u-over").boundingBox())!;
        const ticks = await timeAxisTicks(card);
        expect({ chart: chart.path, ticks: ticks.length >= 3 }).toEqual({ chart: chart.path, ticks: true });
        const seen: { label: string[]; legend: string }[] = [];
        let day = today;
        for (const tick of ticks) {
          const [first, second] = tick.lines;
          if (chart.days) {
            expect({ chart: chart.path, label: tick.lines, date: reader.date.test(first!) }).toEqual({ chart: chart.path, label: tick.lines, date: true });
          } else {
            expect({ chart: chart.path, label: tick.lines, time: reader.time.test(first!), date: second === undefined || reader.date.test(second) }).toEqual({ chart: chart.path, label: tick.lines, time: true, date: true });
            if (second !== undefined) day = second;
          }
          // ticks at the plot's ends are left out: the pointer there may be off the plot, and the right
          // end is where the last bucket closes (its legend shows that bucket)
          if (tick.x <= over.x + 1 || tick.x >= over.x + over.width - 1) continue;
          const expected = chart.days ? first! : day === today ? first! : `${day} ${first}`;
          const rows = await legendAt(page, card, tick.x, expected);
          seen.push({ label: tick.lines, legend: rows[0]![1] });
        }
        expect({ chart: chart.path, hovered: seen.length >= 2 }).toEqual({ chart: chart.path, hovered: true });
        await page.mouse.move(0, 0);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
}
