/**
 * What a new operator reads after a mix of requests (SPEC 9.4). Usage's table: requests refused before
 * routing (a body that is not JSON, an unknown model) and requests sent without a client key form the
 * group without a value. Its row names what it holds ("no model (refused or failed before one)", "no
 * valid key (none sent, or a wrong or revoked one)"), not "(none)"; its Cost reads "–" as those calls do in Calls (nothing was
 * billed), not "$0"; and a note says why a group's Avg total can be below its Avg first byte (Avg
 * total averages every request, refusals included; Avg first byte only the answered ones). At 1440 and
 * 390 px. Accounts: the count of conversations bound to an account (session affinity) is named for what
 * it is. Overview's and Usage's charts say what one bar counts ("Requests per
 * minute"), so a chart's latest value is not read as the period's total (the Requests tile). Screenshots in test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(`
providers:
  - { id: demo-chat, kind: openai-compatible, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: demo-chat-1, provider: demo-chat, api_key: "env:FAKE_KEY" }
`, {
  ready: async (gw) => {
    const send = async (body: string, status: number) => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", body });
      await res.text();
      expect(res.status).toBe(status);
    };
    await send(JSON.stringify({ model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "hi" }] }), 200);
    await send('{"model":"demo-chat/gpt-demo","messages":', 400);
    await send(JSON.stringify({ model: "nope-model", messages: [{ role: "user", content: "hi" }] }), 404);
  },
});

test("the refused requests' group says what it is, costs '–' not '$0', and the averages are explained", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    for (const width of [1440, 1280, 390]) {
      await w.page.setViewportSize({ width, height: 900 });
      await w.page.goto(`${suite.gw.url}/dashboard/usage`);
      await w.settled();
      const none = w.page.locator('table.usage tbody tr[data-group=""]');
      await none.waitFor();
      expect(await none.locator("td").first().innerText()).toBe("no model (refused or failed before one)");
      expect((await none.locator('td[data-label="Requests"]').innerText()).replace("Requests", "").trim()).toBe("2");
      expect((await none.locator('td[data-label="Cost"]').innerText()).replace("Cost", "").trim()).toBe("–");
      // the served model's row keeps its own figures
      const served = w.page.locator('table.usage tbody tr[data-group="demo-chat/gpt-demo"]');
      expect((await served.locator('td[data-label="Cost"]').innerText()).replace("Cost", "").trim()).toBe("unpriced");
      expect(await w.page.locator("main").innerText()).toContain("Avg total averages every request of the group, refused and failed ones included");
      await w.page.screenshot({ path: join(SHOTS, `usage-groups-${width}.png`), fullPage: true });
      // every column in view at 1280 px and up, by model and by account, with the no-group row there (its
      // label on one line pushed Avg first byte and Avg total out of the card)
      if (width > 700) {
        for (const by of ["by model", "by account"]) {
          await w.page.getByRole("button", { name: by }).click();
          await w.settled();
          await none.waitFor();
          const wrap = await w.page.locator(".table-wrap:has(table.usage)").evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
          expect({ width, by, fits: wrap.scroll <= wrap.client }).toEqual({ width, by, fits: true });
        }
      }
      await w.page.getByRole("button", { name: "by key" }).click();
      await w.settled();
      await w.page.locator('table.usage tbody tr[data-group=""] td', { hasText: "no valid key (none sent, or a wrong or revoked one)" }).waitFor({ timeout: 5000 });
    }
    expect(w.errors).toEqual([]);
    expect(w.failed).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Accounts: the affinity count reads 'Bound conversations', with what it means on hover", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
    await w.settled();
    const card = w.page.locator(".card", { hasText: "demo-chat-1" }).first();
    const terms = await card.locator("dl.facts dt").allInnerTexts();
    expect(terms).toContain("Bound conversations");
    expect(terms).not.toContain("Bindings");
    const fact = card.locator("dl.facts div", { has: w.page.locator("dt", { hasText: "Bound conversations" }) }).locator("dd");
    expect(await fact.getAttribute("title")).toContain("session affinity");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Overview's and Usage's chart titles say what one bar counts, following the range", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    const titles = () => w.page.locator(".card h2").allInnerTexts();
    await w.page.goto(`${suite.gw.url}/dashboard/`);
    await w.page.locator(".card h2", { hasText: "Tokens" }).waitFor();
    expect(await titles()).toEqual(["Request rate, last 30 minutes", "Requests per minute", "Tokens per minute"]);
    await w.page.getByRole("button", { name: "Last day" }).click();
    await w.page.locator(".card h2", { hasText: "Tokens per hour" }).waitFor({ timeout: 5000 });
    expect(await titles()).toEqual(["Request rate, last 30 minutes", "Requests per hour", "Tokens per hour"]);
    await w.page.goto(`${suite.gw.url}/dashboard/usage`);
    await w.page.locator("table.usage").waitFor();
    expect((await titles()).slice(0, 2)).toEqual(["Tokens over time, per hour", "Requests over time, per hour"]);
    await w.page.getByRole("button", { name: "1 hour" }).click();
    await w.page.locator(".card h2", { hasText: "Tokens over time, per minute" }).waitFor({ timeout: 5000 });
    await w.page.getByRole("button", { name: "7 days" }).click();
    await w.page.locator(".card h2", { hasText: "Requests over time, per day" }).waitFor({ timeout: 5000 });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
