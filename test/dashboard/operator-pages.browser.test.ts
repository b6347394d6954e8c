/**
 * What a new operator noticed on the dashboard's pages (SPEC 9.4), in a real browser:
 * - models without a price: the cost is unknown, not $0 — Overview's Cost tile reads "–" with the
 *   unpriced count and draws no all-zero cost chart (its axis ran 0–100 dollars); Usage charts requests
 *   instead and its table says "unpriced", and so do Calls' list and a call's trace (it said "unknown (this
 *   model has no price)");
 * - Usage's table at 1280 px, by every grouping and range: every column in view (Avg total was past the
 *   card's edge; by account again with the Refused column, try18 D11), each figure on one line ("162 ms",
 *   not "162" over "ms") and each name, or part of provider/model, whole (they broke at hyphens: "gpt-" / "demo");
 * - Keys on a phone: each key's state and Revoke inside the card (they were past its edge); Usage's table
 *   on a phone: each group a block of labelled figures (Input onwards were past the card's edge);
 * - a short page on a phone: the navigation is as tall as its links (its two rows spread apart to
 *   fill the screen);
 * - Accounts with one configured account says so ("1 account" was "1 accounts"), and counts the
 *   implicit keyless account of the provider configured without accounts beside it.
 * Screenshots go to test-results/dashboard/.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { openPage, SHOTS } from "../support/browser.ts";
import { driveDemoState, startDemoGateway } from "../support/dashboard-demo.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { withStartedGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

/** The `scripts/demo` setup: providers in front of the fake upstream whose models have no price. */
const UNPRICED_YAML = `
providers:
  - { id: demo-anthropic, kind: anthropic-compatible, base_url: "{{FAKE}}" }
  - { id: demo-chat, kind: openai-compatible, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: demo-chat-key, provider: demo-chat, api_key: not-a-real-key }
aliases:
  fast: demo-chat/gpt-demo
`;

/**
 * Two gateways: the demo's (`suite.gw`, driven into the demo's state) and, as `suite.gw.unpriced`, one
 * whose models have no price, with two priced-nowhere requests and a refused one; both stopped with the suite.
 */
const suite = withStartedGatewayAndBrowser(
  async () => {
    const [demo, unpriced] = await Promise.all([startDemoGateway(), startGateway(UNPRICED_YAML)]);
    const stopDemo = demo.stop;
    return Object.assign(demo, { unpriced: unpriced as TestGateway, stop: async () => void (await Promise.all([stopDemo(), unpriced.stop()])) });
  },
  {
    ready: async (demo) => {
      await driveDemoState(demo);
      const post = (path: string, body: unknown) => fetch(`${demo.unpriced.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.text());
      await post("/v1/chat/completions", { model: "fast", messages: [{ role: "user", content: "hi" }] });
      await post("/v1/messages", { model: "demo-anthropic/claude-demo", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
      await post("/v1/chat/completions", { model: "fast", messages: "not a list" }); // refused: no tokens, $0
    },
  },
);

/** The value of the Overview tile labelled `label`. */
const tile = (page: Page, label: string) => page.locator(".stat", { has: page.locator(".stat-label", { hasText: new RegExp(`^${label}$`, "i") }) });

describe("models without a price", () => {
  test("Overview: the Cost tile reads – with the unpriced count, and no all-zero cost chart; Usage: a requests chart, and 'unpriced' in the cost column", async () => {
    const w = await openPage(suite.browser, suite.gw.unpriced.url);
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${suite.gw.unpriced.url}/dashboard/overview`);
      await w.page.locator(".card", { hasText: "Tokens" }).locator("canvas").first().waitFor({ timeout: 30_000 });
      const cost = tile(w.page, "Cost");
      expect(await cost.locator(".stat-value").innerText()).toBe("–");
      expect(await cost.locator(".stat-sub").innerText()).toBe("2 requests unpriced");
      expect(await w.page.locator(".card h2", { hasText: "Cost" }).count()).toBe(0);
      await w.page.screenshot({ path: join(SHOTS, "unpriced-overview.png"), fullPage: true });

      await w.page.goto(`${suite.gw.unpriced.url}/dashboard/usage`);
      await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 30_000 });
      expect(await w.page.locator(".card h2").allInnerTexts()).toEqual(["Tokens over time, per hour", "Requests over time, per hour", "By model"]);
      const costs = await w.page.locator("table.usage tbody tr").evaluateAll((trs) =>
        Object.fromEntries(trs.map((tr) => [tr.getAttribute("data-group"), tr.querySelector('td[data-label="Cost"]')!.textContent])),
      );
      expect(costs).toEqual({ "demo-chat/gpt-demo": "unpriced", "demo-anthropic/claude-demo": "unpriced", "": "–" });
      expect(await w.page.locator(".card", { hasText: "By model" }).innerText()).toContain("unpriced: a model without a known price");
      await w.page.screenshot({ path: join(SHOTS, "unpriced-usage.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);

  test("Calls: an unpriced call reads 'unpriced' in the list and in its trace, which says why and what gives it a price (the word Overview and Usage use)", async () => {
    const w = await openPage(suite.browser, suite.gw.unpriced.url);
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${suite.gw.unpriced.url}/dashboard/calls`);
      const row = w.page.locator("table.calls tbody tr", { hasText: "claude-demo" }).first();
      await row.waitFor({ timeout: 30_000 });
      const cells = await row.locator("td").allInnerTexts();
      expect(cells[7]).toBe("unpriced");
      await row.click();
      const cost = w.page.locator(".trace dl.kv dt", { hasText: /^Cost$/ }).locator("xpath=following-sibling::dd[1]");
      await cost.waitFor({ timeout: 30_000 });
      expect(await cost.innerText()).toBe("unpriced (no price is known for this model, so no cost is counted; settings.pricing gives one)");
      await w.page.screenshot({ path: join(SHOTS, "unpriced-call.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);
});

describe("layout", () => {
  test("at 1280 px the Usage table has every column in view, each figure on one line and each name part whole, by model, account, key, provider and instance over 1 hour, 1 day and 7 days", async () => {
    const w = await suite.open();
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      const seen: unknown[] = [];
      for (const range of ["1h", "24h", "7d"]) {
        for (const by of ["model", "account", "key", "provider", "instance"]) {
          await w.page.goto(`${suite.gw.url}/dashboard/usage?range=${range}&by=${by}`);
          await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 30_000 });
          await w.settled(30_000);
          // the browser's DOM, typed loosely: the tests' tsconfig has no DOM types
          const look = await w.page.locator("table.usage").evaluate((table: any) => {
            const wrap = table.closest(".table-wrap");
            const edge = wrap.getBoundingClientRect().right;
            const doc = table.ownerDocument;
            /** The lines a cell's text takes: the distinct tops of its text's boxes. */
            const lines = (el: any) => {
              const range = doc.createRange();
              range.selectNodeContents(el);
              return new Set([...range.getClientRects()].filter((r: any) => r.width > 0).map((r: any) => Math.round(r.top))).size;
            };
            return {
              headings: [...table.querySelectorAll("thead th")].map((th: any) => th.textContent.replaceAll("\u00AD", "")),
              scrolls: wrap.scrollWidth > wrap.clientWidth + 0.5,
              cut: [...table.querySelectorAll("th")].filter((th: any) => th.getBoundingClientRect().right > edge + 0.5).map((th: any) => th.textContent),
              // a figure on more lines than one ("162" over "ms" in Avg first byte)
              figuresWrapped: [...table.querySelectorAll("tbody td.num")].filter((td: any) => lines(td) > 1).map((td: any) => `${td.dataset.label}: ${td.textContent}`),
              // a name (or a part of provider/model) broken inside: on more lines than one
              namesBroken: [...table.querySelectorAll("tbody td.usage-group .name-part")].filter((p: any) => lines(p) > 1).map((p: any) => p.textContent),
            };
          });
          const { headings, ...fit } = look;
          seen.push(headings);
          expect({ range, by, ...fit }).toEqual({ range, by, scrolls: false, cut: [], figuresWrapped: [], namesBroken: [] });
          expect(headings.at(-1)).toBe("Avg total");
          if (range === "24h") await w.page.screenshot({ path: join(SHOTS, `usage-by-${by}-1280.png`), fullPage: true });
        }
      }
      // by account the demo's table has its widest set: Refused beside Rate limited (try18 D11's table did not fit)
      expect(seen).toContainEqual(expect.arrayContaining(["Account", "Refused", "Rate limited", "Avg total"]));
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 240_000);

  test("at 1280 px the widest Usage table fits: by account with Rate limited, Subscriptions at API prices and Saved, every figure at its widest", async () => {
    const w = await suite.open();
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      // the demo's answer with every column shown and every figure as wide as its format gets ("12.3k",
      // "999.9k", "$123.46", "999 ms"): what a lead's busiest day by account can read
      await w.page.route("**/admin/api/usage?**", async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as { rows?: Record<string, unknown>[] };
        for (const r of body.rows ?? []) {
          Object.assign(r, { requests: 12_345, errors: 1_234, refused: 12_345, fallbacks: 1_234, rateLimited: 1_234, inputTokens: 999_900, outputTokens: 999_900, cacheReadTokens: 999_900, cacheWriteTokens: 999_900, reasoningTokens: 999_900, costUsd: 123.4567, subscriptionUsd: 12.3456, savedTokens: 999_900, avgTtfbMs: 999, avgTotalMs: 999 });
        }
        await route.fulfill({ response: res, json: body });
      });
      await w.page.goto(`${suite.gw.url}/dashboard/usage?by=account`);
      await w.page.locator("table.usage th", { hasText: "API prices" }).waitFor({ timeout: 30_000 });
      await w.settled(30_000);
      const look = await w.page.locator("table.usage").evaluate((table: any) => {
        const wrap = table.closest(".table-wrap");
        const edge = wrap.getBoundingClientRect().right;
        return {
          columns: table.querySelectorAll("thead th").length,
          scrolls: wrap.scrollWidth > wrap.clientWidth + 0.5,
          cut: [...table.querySelectorAll("th")].filter((th: any) => th.getBoundingClientRect().right > edge + 0.5).map((th: any) => th.textContent),
        };
      });
      await w.page.screenshot({ path: join(SHOTS, "usage-by-account-widest-1280.png"), fullPage: true });
      // the account, fifteen figure columns
      expect(look).toEqual({ columns: 16, scrolls: false, cut: [] });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);

  test("on a phone the Usage table shows every figure of each group inside the card, each under its label (Input onwards ran past the card's edge)", async () => {
    const w = await suite.open();
    try {
      await w.page.setViewportSize({ width: 390, height: 844 });
      await w.page.goto(`${suite.gw.url}/dashboard/usage`);
      await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 30_000 });
      const look = await w.page.locator("table.usage").evaluate((table) => {
        const wrap = table.closest(".table-wrap")!;
        const card = table.closest(".card")!.getBoundingClientRect();
        const first = table.querySelector("tbody tr")!;
        return {
          scrolls: wrap.scrollWidth > wrap.clientWidth + 0.5,
          outside: [...table.querySelectorAll("td")].filter((td) => td.getBoundingClientRect().right > card.right + 0.5 || td.getBoundingClientRect().left < card.left - 0.5).length,
          labels: [...first.querySelectorAll("td")].slice(1).map((td) => td.ownerDocument.defaultView!.getComputedStyle(td, "::before").content.replace(/^"|"$/g, "")),
        };
      });
      expect(look.scrolls).toBe(false);
      expect(look.outside).toBe(0);
      expect(look.labels).toEqual(expect.arrayContaining(["Requests", "Errors", "Input (uncached)", "Output", "Cache read", "Cost", "Avg total"]));
      await w.page.screenshot({ path: join(SHOTS, "usage-390.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);

  test("on a phone the Keys table shows each key's state and Revoke inside the card", async () => {
    await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "phone-check", limits: { rpm: 30, budgets: [{ window: "1d", usd: 5 }] } }) });
    const w = await suite.open();
    try {
      await w.page.setViewportSize({ width: 390, height: 844 });
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      const row = w.page.locator('tr[data-key="phone-check"]');
      await row.waitFor({ timeout: 30_000 });
      const look = await row.evaluate((tr) => {
        const card = tr.closest(".card")!.getBoundingClientRect();
        const state = tr.querySelector(".pill")!.getBoundingClientRect();
        const revoke = [...tr.querySelectorAll("button")].find((b) => b.textContent === "Revoke")!.getBoundingClientRect();
        return { stateInside: state.left >= card.left && state.right <= card.right, revokeInside: revoke.left >= card.left && revoke.right <= card.right, wide: tr.ownerDocument.documentElement.scrollWidth };
      });
      expect(look).toEqual({ stateInside: true, revokeInside: true, wide: 390 });
      const text = await row.innerText();
      for (const fact of ["30 rpm", "$0.00 of $5.00", "active"]) expect(text).toContain(fact);
      // each fact under its label (the table's headings are not shown on a phone)
      const labels = await row.locator("td[data-label]").evaluateAll((tds) => tds.map((td) => td.ownerDocument.defaultView!.getComputedStyle(td, "::before").content));
      expect(labels).toEqual(['"Scopes"', '"Tag"', '"Source"', '"Created"', '"Limits"', '"Budget use"', '"State"']);
      await w.page.screenshot({ path: join(SHOTS, "keys-phone.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);

  test("on a phone a page shorter than the screen keeps the navigation as tall as its links", async () => {
    const w = await openPage(suite.browser, suite.gw.unpriced.url);
    try {
      // a tall screen: every page is shorter than it
      await w.page.setViewportSize({ width: 390, height: 2400 });
      await w.page.goto(`${suite.gw.unpriced.url}/dashboard/accounts`);
      await w.page.locator("[data-account]").first().waitFor({ timeout: 30_000 });
      const gap = await w.page.locator("nav.side li").evaluateAll((lis) => {
        const rows = [...new Set(lis.map((li) => Math.round(li.getBoundingClientRect().top)))].sort((a, b) => a - b);
        const h = lis[0]!.getBoundingClientRect().height;
        return rows.length > 1 ? rows[1]! - rows[0]! - h : 0;
      });
      expect(gap).toBeLessThanOrEqual(8);
      expect(await w.page.locator("nav.side").evaluate((n) => n.getBoundingClientRect().height)).toBeLessThan(200);
      // one configured account and the implicit keyless one of demo-anthropic (a provider without accounts)
      expect(await w.page.locator(".page-head p").first().innerText()).toStartWith("2 accounts (1 implicit, keyless) · ");
      await w.page.screenshot({ path: join(SHOTS, "short-page-phone.png"), fullPage: false });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);
});
