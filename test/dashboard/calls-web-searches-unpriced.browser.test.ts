/**
 * The Calls page shows a call's web searches and a partly unpriced call's cost (README "Left from
 * session 46's work"). Until 2026-12-08 a call's server-side web searches, stored since session 46 and
 * priced into its cost, were shown by the admin API only; and a call that was `unpriced` while its
 * `costUsd` held the priced part (a failed attempt at a priced model whose usage the provider reported,
 * then served by a model without a price) read "unpriced" with "no price is known for this model, so
 * no cost is counted", though its priced part counted against USD budgets.
 *
 * Real gateway (one Anthropic provider at the fake upstream: test/support/partly-unpriced.ts), real Chromium. Three calls:
 * - `ant/claude-sonnet-4-5`, 1000 input and 500 output tokens, 2 web searches: 0.0105 + 2 × $10/1000 = $0.0305;
 * - combo `mix` (claude-sonnet-4-5, then house-model), streamed: claude-sonnet-4-5's stream reports
 *   2000 input tokens and 1 output then breaks, four attempts (0.006015 each, $0.02406), then
 *   house-model (no price) serves: unpriced, costUsd 0.02406;
 * - `ant/house-model` alone: unpriced, no cost.
 */
import { expect, test } from "bun:test";
import { PARTLY_UNPRICED_YAML, partlyUnpricedReplies, sendMessages } from "../support/partly-unpriced.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(PARTLY_UNPRICED_YAML, {
  ready: async (gw) => {
    gw.fake.handle(partlyUnpricedReplies);
    for (const [model, stream] of [["ant/claude-sonnet-4-5", false], ["mix", true], ["ant/house-model", false]] as const) await sendMessages(gw.url, model, stream);
  },
});

test("the Calls list: '· 2 web searches' after the tokens, '$0.024 + unpriced' for the partly unpriced call; the call views say both", async () => {
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    const rows = w.page.locator("table.calls tbody tr");
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    // the usage rows are flushed each second: wait until the page lists all three
    for (let i = 0; i < 100 && (await rows.count()) < 3; i++) {
      await Bun.sleep(200);
      if (i % 10 === 9) await w.page.reload();
    }
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => [tr.children[1]?.textContent?.trim(), tr.querySelector("[data-tokens]")?.textContent?.replace(/\s+/g, " ").trim(), tr.children[tr.children.length - 2]?.textContent?.replace(/\s+/g, " ").trim()]),
    );
    expect(cells).toEqual([
      ["ant/house-model", "1,000 / 500", "unpriced"],
      ["mix", "9,000 / 54", "$0.024 + unpriced"],
      // the column's decimals: two significant digits of its smallest amount, $0.024; $0.0305 (0.030499… as
      // a float, which toFixed wrote "$0.030" until 2026-12-08) rounds up as written
      ["ant/claude-sonnet-4-5", "1,000 / 500 · 2 web searches", "$0.031"],
    ]);
    expect(await rows.nth(1).locator("[data-partly-unpriced]").getAttribute("title")).toContain("the amount is the part that had a price");

    const dd = (name: string) => w.page.locator(".trace .kv dt", { hasText: new RegExp(`^${name}$`) }).locator("xpath=following-sibling::dd[1]");
    await rows.nth(2).click();
    await dd("Cost").waitFor({ timeout: 10_000 });
    expect(await dd("Web searches").innerText()).toBe("2 (the provider's server-side search tool, billed per search; priced into the cost)");
    expect(await dd("Cost").innerText()).toBe("$0.031 at API prices");

    await rows.nth(1).click();
    await w.page.locator(".trace .kv dd", { hasText: "partly unpriced" }).waitFor({ timeout: 10_000 });
    expect(await dd("Cost").innerText()).toBe(
      "$0.024 at API prices, partly unpriced (a model this call used, the one that served it or a failed attempt's, has no price, so its part is not counted; settings.pricing gives one)",
    );
    expect(await dd("Web searches").count()).toBe(0);

    await rows.nth(0).click();
    await w.page.locator(".trace .kv dd", { hasText: /^unpriced/ }).waitFor({ timeout: 10_000 });
    expect(await dd("Cost").innerText()).toBe("unpriced (no price is known for this model, so no cost is counted; settings.pricing gives one)");
    expect(await dd("Web searches").count()).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);

test("the Usage page: by model the failed attempts' cost is under their own model, the unpriced model reads 'unpriced'; by key the calls' sum reads '$0.055*', the note says only the part with a price is counted", async () => {
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/usage`);
    const cost = (group: string) => w.page.locator(`table.usage tr[data-group="${group}"] td[data-label="Cost"]`);
    await cost("ant/house-model").waitFor({ timeout: 10_000 });
    // house-model served the combo's call and the unpriced one: nothing of it priced; the combo's failed
    // claude-sonnet-4-5 attempts count under their own model (since session 47): 0.0305 + 0.02406
    expect(await cost("ant/house-model").innerText()).toBe("unpriced");
    expect(await cost("ant/claude-sonnet-4-5").innerText()).toBe("$0.055");
    // by key (no key: the group ""), the three calls whole: the priced part, marked partly unpriced
    await w.page.goto(`${suite.gw.url}/dashboard/usage?by=key`);
    await cost("").waitFor({ timeout: 10_000 });
    expect(await cost("").innerText()).toBe("$0.055*");
    expect(await cost("").getAttribute("title")).toBe("2 requests used models without a price: what those models used is not counted");
    expect(await w.page.locator("p", { hasText: /^\* some requests/ }).innerText()).toBe(
      "* some requests used models without a price (the one that served them, or a failed attempt's): what those models used is not counted, only the part that had a price.",
    );
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);
