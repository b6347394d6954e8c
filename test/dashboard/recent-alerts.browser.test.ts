/**
 * Alerts on the dashboard (SPEC 9.7: "the same events appear in /admin/api/events and the dashboard"),
 * in a real Chromium: a key's token budget crosses 80 %, then 95 % and its end in one request (one alert,
 * the budget used up, passing 95 % with it, since 2026-12-07; before, two). The alert raised before
 * the page opened is on the Overview page's Recent alerts card (read from `GET /admin/api/alerts`, kept
 * in the instance's memory), the one raised while it is open arrives live without a reload, each as a
 * sentence; no secret on the page. Before, no page showed alerts and the event stream kept no history,
 * so an operator without a webhook never learned of them (newuser11's tryout, F7).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const ADMIN = "sy-test-recentalerts-admin-0001";
const CI = "sy-test-recentalerts-ci-secret-01";

// each request of the fake upstream uses 18 tokens (11 in, 7 out): 90 after five, 108 after six
const suite = withGatewayAndBrowser(`${demoConfigYaml("{{FAKE}}")}server: { require_api_key: true }
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
  - { name: ci, key: ${CI}, limits: { budgets: [{ window: 1d, tokens: 100 }] } }
`);

const ask = () =>
  fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CI}` },
    body: JSON.stringify({ model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "hi" }] }),
  }).then((r) => r.text());

/** A local clock time as the page writes it ("02:14", or "02:14 AM" in an en-US browser). */
const TIME = "\\d\\d:\\d\\d(?: [AP]M)?";

type Listed = { alerts: { event: string; subject: string; detail: { threshold: number } }[] };
const alerts = async () => (await (await fetch(`${suite.gw.url}/admin/api/alerts`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as Listed;
/** Sends `n` requests, then waits until the instance lists `listed` alerts. */
async function askThen(n: number, listed: number) {
  for (let i = 0; i < n; i++) await ask();
  for (const end = Date.now() + 10_000; (await alerts()).alerts.length < listed && Date.now() < end; ) await Bun.sleep(50);
}

test("an alert raised before the page opened is listed, one raised while it is open arrives live", async () => {
  await askThen(5, 1);
  expect((await alerts()).alerts.map((a) => [a.event, a.subject, a.detail.threshold])).toEqual([["quota_threshold", "key:ci", 0.8]]);

  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/" } });
  const page = w.page;
  try {
    const rows = page.locator("ul.alerts li");
    await rows.first().waitFor({ timeout: 10_000 });
    expect(await rows.count()).toBe(1);
    expect(await rows.first().innerText()).toMatch(new RegExp(`^${TIME}\\s+quota threshold\\s+key ci passed 80 % of its 1d budget \\(90 tokens of 100 tokens\\); the window resets at ([A-Z][a-z]{2} \\d+ )?${TIME}\\.$`));
    await page.evaluate("window.__samePage = 1");

    // one request past 95 % and the whole budget while the page is open: one alert, the budget used up
    await askThen(1, 2);
    await page.locator("ul.alerts").filter({ hasText: "used up" }).waitFor({ timeout: 10_000 });
    await Bun.sleep(500); // a second alert of the same request, were there one, would be listed by now
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).innerText()).toMatch(new RegExp(`^${TIME}\\s+quota threshold\\s+key ci used up its 1d budget \\(108 tokens of 100 tokens\\), passing 95 % at once: its requests are refused until the window resets at ([A-Z][a-z]{2} \\d+ )?${TIME}\\.$`));
    await page.screenshot({ path: join(SHOTS, "overview-recent-alerts.png"), fullPage: true });
    expect(await page.evaluate("window.__samePage")).toBe(1); // never reloaded

    const text = await page.locator("body").innerText();
    expect(text).not.toContain(CI);
    expect(text).not.toContain(ADMIN);
    expect(w.foreign).toEqual([]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
