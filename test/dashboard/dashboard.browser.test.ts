/**
 * The dashboard in a real browser (SPEC 9.4): Debian's Chromium driven by playwright-core against a
 * gateway with realistic state (test/support/dashboard-demo.ts). What a user would notice: every page
 * loads without console errors and without a request leaving the gateway's origin; a 429 with
 * Retry-After makes a countdown appear on the open Accounts page and count down; a request shows up
 * on the open Calls page and its trace opens; the dry-run form gives the order `switchyard route`
 * gives; a key created on Keys is shown once and works; a remote caller without a key sees the login
 * page and no data; a cookie call without the CSRF token is refused. Screenshots go to
 * test-results/dashboard/.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { openPage, SHOTS, type WatchedPage, markWindow as mark, stillMarked, untilLive as live } from "../support/browser.ts";
import { DEMO_ENV, sendMessage } from "../support/dashboard-demo.ts";
import { ROOT, SOURCE_CLI } from "../support/instance.ts";
import { count } from "../../src/dashboard/client/format.ts";
import { withDemoStateAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withDemoStateAndBrowser();

/** "1m 05s" → 65. */
function seconds(text: string): number {
  let s = 0;
  for (const [, n, u] of text.matchAll(/(\d+)([dhms])/g)) s += Number(n) * { d: 86400, h: 3600, m: 60, s: 1 }[u as "s"];
  return s;
}

const PAGES: Array<{ id: string; ready: string }> = [
  // Overview and Usage draw their time series with uPlot (a canvas per chart).
  { id: "overview", ready: ".chart canvas" },
  { id: "accounts", ready: '[data-account="claude-work"]' },
  { id: "routing", ready: "#dr-model" },
  { id: "calls", ready: "table.calls tbody tr" },
  { id: "usage", ready: ".chart canvas" },
  { id: "keys", ready: "#key-name" },
  { id: "setup", ready: ".snippet pre" },
];

describe("every page", () => {
  test("loads without console errors and without a request leaving the origin", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      for (const p of PAGES) {
        await w.page.goto(`${suite.gw.url}/dashboard/${p.id}`);
        await w.page.locator(p.ready).first().waitFor({ timeout: 10_000 });
        await live(w.page).catch((e) => Promise.reject(new Error(`${p.id}: the live badge never said Live: ${e}`)));
        await w.settled(); // the page's other reads answered and drawn
        await w.page.screenshot({ path: join(SHOTS, `page-${p.id}.png`), fullPage: true });
        if (p.id === "overview") {
          expect(await w.page.locator(".chart canvas").count()).toBeGreaterThanOrEqual(3); // requests, tokens, cost
          expect(await w.page.locator(".stat").first().innerText()).toMatch(/^REQUESTS\n\d+\n/i);
        }
        if (p.id === "usage") expect(await w.page.locator("table.usage tbody tr").count()).toBeGreaterThanOrEqual(3);
        expect({ page: p.id, failed: w.failed }).toEqual({ page: p.id, failed: [] });
        expect({ page: p.id, errors: w.errors }).toEqual({ page: p.id, errors: [] });
        expect({ page: p.id, foreign: w.foreign }).toEqual({ page: p.id, foreign: [] });
      }
      // Moving between pages through the navigation reloads nothing.
      await mark(w.page);
      await w.page.click('nav a[data-page="accounts"]');
      await w.page.locator('[data-account="openai-main"]').waitFor();
      expect(await stillMarked(w.page)).toBe(true);
    } finally {
      await w.close();
    }
  }, 90_000);

  test("a mistyped page shows the dashboard's own 404 page, styled, naming the path, and its link leads back", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      const res = await w.page.goto(`${suite.gw.url}/dashboard/usgae`);
      expect(res?.status()).toBe(404);
      const box = w.page.locator("main.not-found");
      await box.waitFor({ timeout: 10_000 });
      expect(await w.page.title()).toBe("No such page · switchyard");
      expect(await box.locator("h1").innerText()).toBe("No such page");
      expect(await box.locator("code").innerText()).toBe("/dashboard/usgae");
      // drawn by the dashboard's stylesheet (a white box on the dark login background), not bare HTML
      const look = await box.evaluate((el) => {
        const style = el.ownerDocument.defaultView!.getComputedStyle(el);
        return { bg: style.backgroundColor, radius: style.borderRadius };
      });
      expect(look).toEqual({ bg: "rgb(255, 255, 255)", radius: "14px" });
      expect(await box.locator(".not-found-pages a").allInnerTexts()).toEqual(["Overview", "Accounts", "Routing", "Calls", "Usage", "Keys", "Setup"]);
      await w.page.screenshot({ path: join(SHOTS, "not-found.png"), fullPage: true });
      await box.locator("a", { hasText: "Back to the dashboard" }).click();
      await w.page.locator(".chart canvas").first().waitFor({ timeout: 10_000 });
      expect(new URL(w.page.url()).pathname).toBe("/dashboard");
      await box.waitFor({ state: "detached" });
      expect(w.foreign).toEqual([]);
      // the only failed answer is the mistyped page itself (no stylesheet or script went missing)
      expect(w.failed).toEqual([`404 ${suite.gw.url}/dashboard/usgae`]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("live updates", () => {
  test("a 429 with Retry-After makes a countdown appear on the open Accounts page, and it counts down", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
      const row = w.page.locator('[data-account="openai-main"]').locator("xpath=ancestor::section").locator('tr[data-model="gpt-5-mini"]');
      await row.waitFor();
      await live(w.page);
      expect(await row.locator(".countdown").count()).toBe(0);
      await mark(w.page);

      suite.gw.script["openai-main"] = [{ status: 429, headers: { "retry-after": "120" }, json: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } } }];
      expect(await sendMessage(suite.gw.url, "fast")).toBe(429);

      const countdown = row.locator(".countdown");
      await countdown.waitFor({ timeout: 10_000 });
      const first = seconds(await countdown.innerText());
      expect(first).toBeGreaterThan(100);
      expect(first).toBeLessThanOrEqual(120);
      expect(await row.innerText()).toContain("429");
      // Polled until the figure moves (it ticks every second), not read once after a fixed 2.2 s.
      let later = first;
      for (const end = Date.now() + 10_000; later >= first && Date.now() < end; ) {
        await Bun.sleep(100);
        later = seconds(await countdown.innerText());
      }
      expect(later).toBeLessThan(first);
      expect(await stillMarked(w.page)).toBe(true);
      await w.page.screenshot({ path: join(SHOTS, "accounts-countdown.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await suite.gw.app.store.clearCooldown("openai-main");
      suite.gw.app.registry.loadState(await suite.gw.app.store.loadAccountState());
      await w.close();
    }
  }, 60_000);

  test("a request sent while Calls is open shows up without a reload, and its trace opens", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      await w.page.locator("table.calls tbody tr").first().waitFor();
      await live(w.page);
      await mark(w.page);

      const res = await fetch(`${suite.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "claude/claude-opus-4-1", max_tokens: 20, messages: [{ role: "user", content: "hello from the calls test" }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      const routeId = res.headers.get("x-switchyard-route-id")!;
      expect(routeId).toMatch(/^sy_/);

      const row = w.page.locator(`tr[data-route-id="${routeId}"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.innerText()).toContain("claude/claude-opus-4-1");
      await row.click();
      const trace = w.page.locator(".trace");
      await trace.locator('[data-attempt="1"]').waitFor({ timeout: 10_000 });
      expect(await trace.innerText()).toContain(routeId);
      expect(await trace.locator('[data-attempt="1"]').innerText()).toContain("claude/claude-opus-4-1 on claude-");
      expect(await stillMarked(w.page)).toBe(true);
      expect(new URL(w.page.url()).searchParams.get("id")).toBe(routeId);
      await w.page.screenshot({ path: join(SHOTS, "calls-trace.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("layout", () => {
  /** The table's cells whose right edge passes the card's content edge, and whether its wrapper scrolls sideways. */
  const callsFit = (page: Page) =>
    page.locator("table.calls").evaluate((table) => {
      const card = table.closest(".card")!;
      const style = card.ownerDocument.defaultView!.getComputedStyle(card);
      const edge = card.getBoundingClientRect().right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
      const wrap = table.closest(".table-wrap")!;
      const cut = [...table.querySelectorAll("th, td")].filter((c) => c.getBoundingClientRect().right > edge + 0.5).map((c) => c.textContent);
      return { cut: [...new Set(cut)], scrolls: wrap.scrollWidth > wrap.clientWidth };
    });

  test("in the forms of Calls, Keys and Routing a select box is as tall as the text fields beside it and lines up with them", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      for (const p of [
        { page: "calls", select: "#f-outcome", input: "#f-model" },
        { page: "keys", select: 'select[aria-label="Budget window"]', input: "#key-budget" },
        { page: "routing", select: "#dr-format", input: "#dr-model" },
      ]) {
        await w.page.goto(`${suite.gw.url}/dashboard/${p.page}`);
        await w.page.locator(p.select).waitFor({ timeout: 10_000 });
        const box = async (sel: string) => {
          const b = (await w.page.locator(sel).boundingBox())!;
          return { top: Math.round(b.y), height: Math.round(b.height) };
        };
        expect({ page: p.page, select: await box(p.select) }).toEqual({ page: p.page, select: await box(p.input) });
      }
    } finally {
      await w.close();
    }
  }, 60_000);

  test("at 1440 and 1280 px every column of the Calls table, Total last, is inside its card: no sideways scroll, with or without a trace open", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      for (const width of [1440, 1280]) {
        await w.page.setViewportSize({ width, height: 900 });
        await w.page.goto(`${suite.gw.url}/dashboard/calls`);
        await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: 10_000 });
        expect(await w.page.locator("table.calls th").last().innerText()).toBe("Total");
        expect({ width, ...(await callsFit(w.page)) }).toEqual({ width, cut: [], scrolls: false });
        await w.page.screenshot({ path: join(SHOTS, `calls-${width}.png`), fullPage: true });
        await w.page.locator("table.calls tbody tr").first().click();
        await w.page.locator(".trace").waitFor({ timeout: 10_000 });
        expect({ width, trace: true, ...(await callsFit(w.page)) }).toEqual({ width, trace: true, cut: [], scrolls: false });
        await w.page.screenshot({ path: join(SHOTS, `calls-trace-${width}.png`), fullPage: true });
      }
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

/** A Chat turn to openai/gpt-5-mini whose last message is a `sh` tool result `content` (what the token savers look at). */
const toolResultTurn = (question: string, content: string) =>
  fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "openai/gpt-5-mini",
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "sh", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content },
      ],
    }),
  });

describe("usage", () => {
  test("a request whose tool result the savers shortened shows its saved tokens on the Usage page (SPEC S-4)", async () => {
    const log = Array.from({ length: 300 }, (_, i) => `2026-11-30T07:43:${String(i % 60).padStart(2, "0")}.000Z WARN  db: connection refused, retry ${i + 1}/300`).join("\n") + "\n";
    const res = await toolResultTurn("why does it not start?", log);
    expect(res.status).toBe(200);
    await res.text();
    const trace: any = await (await fetch(`${suite.gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`)).json();
    const saved: number = trace.tokenSaver.tokensSaved;
    expect(saved).toBeGreaterThan(1000);
    const usage: any = await (await fetch(`${suite.gw.url}/admin/api/usage?by=model&since=24h`)).json();
    const row = usage.rows.find((r: any) => r.group === "openai/gpt-5-mini"); // provider/model, as the CLI groups
    expect(row.savedTokens).toBe(saved);

    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/usage`);
      const tr = w.page.locator('table.usage tr[data-group="openai/gpt-5-mini"]');
      await tr.waitFor({ timeout: 10_000 });
      const headers = await w.page.locator("table.usage thead th").allInnerTexts();
      const cells = await tr.locator("td").allInnerTexts();
      expect(cells[headers.indexOf("Saved")]).toBe(count(saved));
      await expect(w.page.locator("p.muted.small").filter({ hasText: "Token savers saved about" }).count()).resolves.toBe(1);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("account actions", () => {
  test("Test on an account makes one upstream call with it and shows the answer", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
      const card = w.page.locator('[data-account="openai-main"]').locator("xpath=ancestor::section");
      await card.waitFor();
      const before = suite.gw.fake.requests.length;
      await card.getByRole("button", { name: "Test" }).click();
      const result = card.locator(".test-result");
      await result.waitFor({ timeout: 10_000 });
      expect(await result.innerText()).toMatch(/^Test passed: 200 in \d+ ms with gpt-5(-mini)? \(from the provider's models\)$/);
      const calls = suite.gw.fake.requests.slice(before);
      expect(calls.length).toBe(1);
      expect(calls[0].headers["authorization"]).toBe(`Bearer ${DEMO_ENV.OPENAI_MAIN}`);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("account state from the page", () => {
  test("Remove, confirmed, deletes a stored account: its card goes (focus to the page's heading, the page says so) and routing no longer lists it; config-file accounts have no Remove", async () => {
    // an account stored in the database, as `switchyard import` leaves one; the gateway re-reads its
    // accounts every 10 s (SPEC A-1), so wait until the admin API lists it
    await suite.gw.app.store.upsertAccount({ id: "openai-extra", providerId: "openai", priority: 5, credential: { type: "api_key", apiKey: "sk-test-openai-extra" }, disabled: false });
    const listed = async () => ((await (await fetch(`${suite.gw.url}/admin/api/accounts`)).json()) as { accounts: { id: string }[] }).accounts.map((a) => a.id);
    for (let i = 0; i < 150 && !(await listed()).includes("openai-extra"); i++) await Bun.sleep(100);
    expect(await listed()).toContain("openai-extra");
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
      const card = w.page.locator('[data-account="openai-extra"]').locator("xpath=ancestor::section");
      await card.waitFor({ timeout: 10_000 });
      const configCard = w.page.locator('[data-account="openai-main"]').locator("xpath=ancestor::section");
      expect(await configCard.getByRole("button", { name: "Remove" }).count()).toBe(0);
      expect(await w.page.content()).not.toContain("sk-test-openai-extra");
      await live(w.page);
      await mark(w.page);
      await card.getByRole("button", { name: "Remove" }).click();
      // the first click only asks; the account is still there
      await card.getByRole("button", { name: "Confirm remove" }).waitFor({ timeout: 10_000 });
      expect(await suite.gw.app.store.getAccount("openai-extra")).toBeDefined();
      await card.getByRole("button", { name: "Confirm remove" }).click();
      await w.page.locator('[data-account="openai-extra"]').waitFor({ state: "detached", timeout: 10_000 });
      // focus does not fall to the page body: no other account has Remove, so the page's heading has it;
      // the live region says what was done
      // (polled from here: waitForFunction's string predicate is run by eval in the page, which the
      // dashboard's CSP refuses; its rejection was swallowed and focus read before the move, ~1 run in 3)
      const focused = () => w.page.evaluate(`document.activeElement.tagName + " " + document.activeElement.textContent`) as Promise<string>;
      for (const end = Date.now() + 5_000; (await focused()) !== "H1 Accounts" && Date.now() < end; ) await Bun.sleep(50);
      expect(await focused()).toBe("H1 Accounts");
      expect(await w.page.locator("#announcer").textContent()).toBe("Account openai-extra removed.");
      expect(await suite.gw.app.store.getAccount("openai-extra")).toBeUndefined();
      expect(await listed()).not.toContain("openai-extra");
      expect(await stillMarked(w.page)).toBe(true);
      expect(w.errors).toEqual([]);
    } finally {
      await fetch(`${suite.gw.url}/admin/api/accounts/openai-extra`, { method: "DELETE" });
      await w.close();
    }
  }, 60_000);

  test("Disable takes the account out of routing at once and Enable brings it back, without a reload", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
      const card = w.page.locator('[data-account="claude-personal"]').locator("xpath=ancestor::section");
      await card.waitFor();
      await live(w.page);
      await mark(w.page);
      await card.getByRole("button", { name: "Disable" }).click();
      await card.locator(".pill", { hasText: "Disabled" }).waitFor({ timeout: 10_000 });
      const plan = (await (await fetch(`${suite.gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: { model: "claude/claude-opus-4-1", messages: [{ role: "user", content: "hi" }] } }) })).json()) as { attempts: Array<{ accountId: string }> };
      expect(plan.attempts.map((a) => a.accountId)).not.toContain("claude-personal");
      await card.getByRole("button", { name: "Enable" }).click();
      await card.getByRole("button", { name: "Disable" }).waitFor({ timeout: 10_000 });
      expect(await card.locator(".pill", { hasText: "Disabled" }).count()).toBe(0);
      expect(await stillMarked(w.page)).toBe(true);
      expect(w.errors).toEqual([]);
    } finally {
      await fetch(`${suite.gw.url}/admin/api/accounts/claude-personal/enable`, { method: "POST" });
      await w.close();
    }
  }, 60_000);
});

describe("calls on a phone", () => {
  test("a tapped call's trace, which stands under the whole list at 390 px, is brought into view (the tap seemed to do nothing)", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.setViewportSize({ width: 390, height: 800 });
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      const rows = w.page.locator("table.calls tbody tr");
      await rows.first().waitFor({ timeout: 10_000 });
      // the list is taller than the screen, so the trace under it starts below the fold
      expect(await w.page.locator("table.calls").evaluate((t) => t.getBoundingClientRect().bottom)).toBeGreaterThan(800);
      await rows.first().click();
      await w.page.locator(".trace dl").waitFor({ timeout: 10_000 });
      const top = () => w.page.locator(".trace").evaluate((el) => el.getBoundingClientRect().top);
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !((await top()) >= 0 && (await top()) < 800)) await w.page.waitForTimeout(100);
      expect(await top()).toBeGreaterThanOrEqual(0);
      expect(await top()).toBeLessThan(800);
      await w.page.screenshot({ path: join(SHOTS, "calls-trace-phone.png") });
      // The trace's title is the call's id (39 characters of monospace): it wraps inside the card and
      // the Close button beside it stays in view. An id with no "-" in it (most of them: base64url) had
      // no place to break and pushed Close past the screen's right edge; this one is made so.
      const inCard = await w.page.locator(".trace").evaluate((card) => {
        card.querySelector(".trace-id")!.textContent = "sy_01a2496760fa_Uy8dsvGx0UoSviEhpK2nPtI";
        const box = card.getBoundingClientRect();
        const close = card.querySelector(".trace-close")!.getBoundingClientRect();
        const id = card.querySelector(".trace-id")!.getBoundingClientRect();
        return { close: close.left >= box.left && close.right <= box.right && close.right <= (globalThis as any).innerWidth, id: id.right <= box.right };
      });
      expect(inCard).toEqual({ close: true, id: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("token savers in a call's trace", () => {
  test("a call whose long tool result the savers looked at and left alone says so in its trace (it said nothing), as a shortened one says what was saved", async () => {
    const prose = Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1} of the design notes explains one more decision in words.`).join(" ");
    const log = Array.from({ length: 300 }, (_, i) => `2026-11-30T07:43:${String(i % 60).padStart(2, "0")}.000Z WARN  db: connection refused, retry ${i + 1}/300`).join("\n") + "\n";
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      for (const [content, expected] of [
        [prose, "Token savers shortened nothing: they looked at 1 tool result of 500 characters or more, but it was not a kind they shorten (diffs, git status, trees, directory listings, compiler output, search results, logs with repeated lines) or would not get 10 % shorter."],
        [log, /^Token savers shortened 1 tool result \(1 log\): [\d,]+ → [\d,]+ characters, about [\d,]+ tokens saved\.$/],
      ] as const) {
        const res = await toolResultTurn("what does it say?", content);
        expect(res.status).toBe(200);
        await res.text();
        await w.page.goto(`${suite.gw.url}/dashboard/calls`);
        await w.page.locator(`tr[data-route-id="${res.headers.get("x-switchyard-route-id")}"]`).click();
        const line = await w.page.locator(".trace .token-saver").innerText({ timeout: 10_000 });
        if (typeof expected === "string") expect(line).toBe(expected);
        else expect(line).toMatch(expected);
      }
      await w.page.screenshot({ path: join(SHOTS, "calls-trace-token-saver.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("flight recorder", () => {
  test("turned on from the Calls page, it shows a translated call's client body next to the body sent upstream", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      await w.page.locator("table.calls tbody tr").first().click();
      await w.page.getByRole("button", { name: "Turn on the flight recorder" }).click();
      const on = w.page.locator(".trace .recorder-on");
      await on.waitFor({ timeout: 10_000 });
      // the call opened was made before the recorder was on: its bodies never were held (it said "no longer held")
      expect((await on.innerText()).replace(/\s+/g, " ")).toBe(
        "The flight recorder is on: it keeps the last 200 requests served since it was turned on, and this call is not among them (it came before the recorder was on, or 200 requests have come since). Repeat the request to record it.",
      );

      // An Anthropic Messages client, an OpenAI Chat provider: the recording shows both sides.
      const res = await fetch(`${suite.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "fast", max_tokens: 20, messages: [{ role: "user", content: "recorded prompt 4711" }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      const routeId = res.headers.get("x-switchyard-route-id")!;
      await w.page.locator(`tr[data-route-id="${routeId}"]`).click();
      const rec = w.page.locator(".recording");
      await rec.locator(".body-view").first().waitFor({ timeout: 10_000 });
      const titles = await rec.locator("h3").allTextContents();
      expect(titles.some((t) => t.startsWith("Client request (anthropic-messages)"))).toBe(true);
      expect(titles.some((t) => t.startsWith("Attempt 1: sent to openai/gpt-5-mini (openai-chat)"))).toBe(true);
      const text = await rec.innerText();
      expect(text).toContain("recorded prompt 4711");
      expect(text).toContain('"max_tokens": 20'); // the client's body
      for (const secret of Object.values(DEMO_ENV)) expect(text).not.toContain(secret);
      // beside the open trace the calls table still fits its card: the outcome and total columns are in view
      const wrap = await w.page.locator(".split .table-wrap").evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(wrap.scroll).toBeLessThanOrEqual(wrap.client);
      await w.page.screenshot({ path: join(SHOTS, "calls-recording.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await fetch(`${suite.gw.url}/admin/api/settings`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ flight_recorder: null }) });
      await w.close();
    }
  }, 60_000);
});

describe("routing", () => {
  test("the dry-run form gives the same order as `switchyard route`", async () => {
    // The gateway runs in this process: the CLI is spawned asynchronously so it can answer.
    const cli = Bun.spawn([...SOURCE_CLI, "route", "coding", "--json", "--data-dir", suite.gw.dataDir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text(), cli.exited]);
    expect(err).toBe("");
    const plan = JSON.parse(out) as { attempts: Array<{ target: string; accountId: string }> };
    expect(plan.attempts.length).toBeGreaterThanOrEqual(2);

    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/routing`);
      await w.page.fill("#dr-model", "coding");
      await w.page.click('.dry-run button[type="submit"]');
      const items = w.page.locator("ol.attempt-order li");
      await items.first().waitFor();
      const shown = await items.evaluateAll((els) => els.map((e) => ({ target: e.getAttribute("data-target"), accountId: e.getAttribute("data-account") })));
      expect(shown).toEqual(plan.attempts.map((a) => ({ target: a.target, accountId: a.accountId })));
      // The visible text says the same, in the same order.
      const text = await items.allInnerTexts();
      expect(text.map((t) => t.replace(/\s+/g, ""))).toEqual(plan.attempts.map((a, i) => `${i + 1}${a.target}on${a.accountId}`));
      await w.page.screenshot({ path: join(SHOTS, "routing-dry-run.png"), fullPage: true });
      // The Gemini endpoint: the untouched default body becomes a Gemini request, routed as one.
      await w.page.selectOption("#dr-format", "gemini");
      expect(await w.page.inputValue("#dr-body")).toContain('"contents"');
      await w.page.click('.dry-run button[type="submit"]');
      await w.page.locator(".plan p", { hasText: "(gemini)" }).waitFor();
      expect((await items.allInnerTexts()).map((t) => t.replace(/\s+/g, ""))).toEqual(plan.attempts.map((a, i) => `${i + 1}${a.target}on${a.accountId}`));
      expect(w.failed).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("keys", () => {
  test("a key created on Keys is shown once, works, and is not shown again", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      await w.page.fill("#key-name", "browser-made");
      await w.page.click('form button[type="submit"]');
      const secretEl = w.page.locator(".secret-value");
      await secretEl.waitFor();
      const secret = (await secretEl.innerText()).trim();
      expect(secret).toMatch(/^sy-[A-Za-z0-9_-]{43}$/);
      await w.page.locator('tr[data-key="browser-made"]').waitFor();
      await w.page.screenshot({ path: join(SHOTS, "keys-created.png"), fullPage: true });

      // It works: a request with it is served and counted under its name.
      const res = await fetch(`${suite.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": secret },
        body: JSON.stringify({ model: "fast", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      const calls = (await (await fetch(`${suite.gw.url}/admin/api/calls?limit=5`)).json()) as { calls: Array<{ keyName?: string }> };
      expect(calls.calls[0].keyName).toBe("browser-made");

      // Shown once: after a reload the page holds no trace of it.
      await w.page.reload();
      await w.page.locator('tr[data-key="browser-made"]').waitFor();
      expect(await w.page.content()).not.toContain(secret);
      expect(await w.page.locator(".secret-value").count()).toBe(0);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);

  test("the open Keys page follows a key's budget use as its requests finish, without a reload", async () => {
    const made = (await (
      await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "budgeted", limits: { budgets: [{ window: "1d", usd: 5 }] } }) })
    ).json()) as { secret: string };
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      const row = w.page.locator('tr[data-key="budgeted"]');
      await row.waitFor({ timeout: 10_000 });
      await live(w.page);
      await mark(w.page);
      expect(await row.locator(".budget").innerText()).toContain("$0.00 of $5.00");
      expect(await sendMessage(suite.gw.url, "claude/claude-sonnet-4-5", { "x-api-key": made.secret })).toBe(200);
      // claude-sonnet-4-5 at its API price: about a cent for the demo upstream's 1,200–2,000 tokens in and 150–450 out; a 1d window
      await row.locator(".budget", { hasText: /\$0\.(?!0000)\d{4} of \$5\.00/ }).waitFor({ timeout: 10_000 });
      // Never "24h 1m" for a 1d window: the countdown rounds up, and the page's once-a-second clock lagged
      // a window that began since its last tick (seen once under load; review14 R11)
      expect(await row.locator(".budget").innerText()).toMatch(/resets in (24h 0m|23h \d{1,2}m)/);
      // A window that ended over its budget reads its real share, as keys list says (the bar stops at full).
      const over = (await (
        await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "overspent", limits: { budgets: [{ window: "1d", usd: 0.001 }] } }) })
      ).json()) as { secret: string };
      expect(await sendMessage(suite.gw.url, "claude/claude-sonnet-4-5", { "x-api-key": over.secret })).toBe(200);
      const overRow = w.page.locator('tr[data-key="overspent"]');
      await overRow.locator(".budget", { hasText: /resets in/ }).waitFor({ timeout: 10_000 });
      const keys = (await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys: Array<{ name: string; use?: { budgets: Array<{ used: number }> } }> };
      const used = keys.keys.find((k) => k.name === "overspent")!.use!.budgets[0].used;
      expect(used).toBeGreaterThan(0.001);
      // Amounts under $1 with four decimals, as keys list writes them (cents read "$0.01 of $0" here)
      expect(await overRow.locator(".budget").innerText()).toContain(`$${used.toFixed(4)} of $0.0010`);
      expect(await overRow.locator(".budget-share").innerText()).toBe(`${Math.round((used / 0.001) * 1000) / 10} %`);
      // Its every request is refused until the window resets: its State says so, not a green "active" (tryout5)
      const state = overRow.locator('td[data-label="State"] .pill');
      await state.filter({ hasText: "budget used up" }).waitFor({ timeout: 10_000 });
      expect({ text: (await state.innerText()).replace(/\s+/g, " "), tone: await state.getAttribute("class") }).toEqual({ text: expect.stringMatching(/^budget used up · until ([A-Z][a-z]{2} \d{1,2} )?\d{1,2}:\d{2}( [AP]M)?$/), tone: "pill pill-bad" });
      expect(await row.locator('td[data-label="State"] .pill').innerText()).toBe("active");
      expect(await stillMarked(w.page)).toBe(true);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("access", () => {
  const REMOTE = { "X-Forwarded-For": "203.0.113.7" };

  async function remoteSignedIn(): Promise<WatchedPage> {
    const created = (await (await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: `remote-admin-${Date.now()}`, scopes: ["admin"] }) })).json()) as { secret: string };
    const w = await openPage(suite.browser, suite.gw.url, REMOTE);
    await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
    await w.page.fill("#key", created.secret);
    await w.page.click('button[type="submit"]');
    await w.page.locator('[data-account="claude-work"]').waitFor({ timeout: 10_000 });
    expect(await w.page.content()).not.toContain(created.secret);
    return w;
  }

  test("a remote caller without a key sees the login page and no data", async () => {
    const w = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      const apiCalls: string[] = [];
      w.page.on("response", (r) => {
        if (r.url().includes("/admin/api/") && r.ok()) apiCalls.push(r.url());
      });
      for (const p of ["accounts", "calls", "keys"]) {
        await w.page.goto(`${suite.gw.url}/dashboard/${p}`);
        await w.page.locator("#key").waitFor();
        const body = await w.page.locator("body").innerText();
        expect(body).toContain("Sign in");
        for (const secretish of ["claude-work", "openai-main", "coding", "browser-made", ...Object.values(DEMO_ENV)]) expect(body).not.toContain(secretish);
      }
      await w.page.screenshot({ path: join(SHOTS, "login.png") });
      expect(apiCalls).toEqual([]);
      // The same browser reading the API directly is refused.
      const status = await w.page.evaluate(() => fetch("/admin/api/accounts").then((r) => r.status));
      expect(status).toBe(401);
    } finally {
      await w.close();
    }
  }, 60_000);

  test("signed in with an admin key, a cookie call without the CSRF token is refused and one with it passes", async () => {
    const w = await remoteSignedIn();
    try {
      const without = await w.page.evaluate(() =>
        fetch("/admin/api/keys", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "csrf-less" }) }).then(async (r) => ({ status: r.status, body: await r.text() })),
      );
      expect(without.status).toBe(403);
      expect(without.body).toContain("CSRF");
      const withToken = await w.page.evaluate(() =>
        fetch("/admin/api/keys", {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": (globalThis as any).document.querySelector('meta[name="csrf-token"]').content },
          body: JSON.stringify({ name: "csrf-ok" }),
        }).then((r) => r.status),
      );
      expect(withToken).toBe(201);
      const names = ((await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys: Array<{ name: string }> }).keys.map((k) => k.name);
      expect(names).toContain("csrf-ok");
      expect(names).not.toContain("csrf-less");
      // The session cookie is out of the page's reach (HttpOnly).
      expect(await w.page.evaluate("document.cookie")).toBe("");
      const cookies = await w.context.cookies();
      expect(cookies.find((c) => c.name === "sy_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    } finally {
      await w.close();
    }
  }, 60_000);
});
