/**
 * Empty states that teach (SPEC 9.4): a gateway with no accounts and no traffic shows, in the browser,
 * how to add an account (config, `switchyard login`, `switchyard import`) and the setup snippets with
 * this instance's own URL, each in a card as tall as its snippet.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";

const suite = withGatewayAndBrowser(`
${providersAtFake(["anth", "anthropic"])}
`);

test("no accounts: Accounts says how to add one; no traffic: Overview and Calls show the setup snippets with this instance's URL", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
    const empty = w.page.locator(".empty", { hasText: "No accounts yet" });
    await empty.waitFor({ timeout: 10_000 });
    const text = await empty.innerText();
    expect(text).toContain("accounts:\n  - id: anthropic-main\n    provider: anthropic\n    api_key: env:ANTHROPIC_API_KEY");
    expect(text).toContain("switchyard login claude-code");
    expect(text).toContain("switchyard import codex");
    // what a user reads: every snippet's text whole (nothing hidden past the block's edge) and drawn on
    // the block's own dark background (no light inline-code chip behind each line)
    const looks = () =>
      w.page.locator(".snippet pre").evaluateAll((pres) =>
        pres.map((pre) => ({ overflows: pre.scrollWidth > pre.clientWidth, codeBackground: pre.ownerDocument.defaultView!.getComputedStyle(pre.querySelector("code")!).backgroundColor })),
      );
    for (const l of await looks()) expect(l).toEqual({ overflows: false, codeBackground: "rgba(0, 0, 0, 0)" });
    await w.page.screenshot({ path: join(SHOTS, "empty-accounts.png"), fullPage: true });
    // on a phone too: each line in view (the Copy button's room on the right pushed the YAML's api_key
    // line past the block's edge), and the button covers no line
    await w.page.setViewportSize({ width: 390, height: 900 });
    const phone = await w.page.locator(".snippet").evaluateAll((snippets) =>
      snippets.map((s) => {
        const pre = s.querySelector("pre")!;
        const button = s.querySelector("button")!.getBoundingClientRect();
        const range = pre.ownerDocument.createRange();
        range.selectNodeContents(pre.querySelector("code")!);
        const covered = [...range.getClientRects()].filter((r) => r.width > 0 && r.right > button.left && r.left < button.right && r.bottom > button.top && r.top < button.bottom).length;
        return { first: pre.textContent!.split("\n")[0], scrolls: pre.scrollWidth > pre.clientWidth, covered };
      }),
    );
    expect(phone).toEqual(phone.map((p) => ({ first: p.first, scrolls: false, covered: 0 })));
    await w.page.screenshot({ path: join(SHOTS, "empty-accounts-390.png"), fullPage: true });
    await w.page.setViewportSize({ width: 1440, height: 900 });

    for (const page of ["overview", "calls"]) {
      await w.page.goto(`${suite.gw.url}/dashboard/${page}`);
      await w.page.locator(".empty", { hasText: "No traffic yet" }).waitFor({ timeout: 10_000 });
      const snippets = await w.page.locator(".snippet pre").allInnerTexts();
      expect(snippets.some((s) => s.includes(`export ANTHROPIC_BASE_URL=${suite.gw.url}\n`))).toBe(true);
      expect(snippets.some((s) => s.includes(`base_url = "${suite.gw.url}/v1"`))).toBe(true);
      expect(snippets.some((s) => s.includes(`export GOOGLE_GEMINI_BASE_URL=${suite.gw.url}\n`))).toBe(true);
      // each CLI's switchyard setup command (it writes what the snippets by hand cannot: the model's
      // window, Codex's catalog, Gemini CLI's auth and helper models), with --model
      for (const cli of ["claude-code", "codex", "gemini"]) expect(snippets.some((s) => s.startsWith(`switchyard setup ${cli} `) && s.includes("--model "))).toBe(true);
      // each snippet's card is as tall as its snippet: no blank area under a short one beside a tall one
      // (measured under each card's last snippet: a CLI's card shows its setup command, then the snippet by hand)
      const gaps = await w.page.locator(".snippet").evaluateAll((els) =>
        els.filter((el) => [...el.closest(".card")!.querySelectorAll(".snippet")].at(-1) === el).map((el) => el.closest(".card")!.getBoundingClientRect().bottom - el.getBoundingClientRect().bottom),
      );
      for (const gap of gaps) expect(gap).toBeLessThan(40);
      for (const l of await looks()) expect(l).toEqual({ overflows: false, codeBackground: "rgba(0, 0, 0, 0)" });
    }
    await w.page.screenshot({ path: join(SHOTS, "empty-calls.png"), fullPage: true });
    expect(w.errors).toEqual([]);
    expect(w.foreign).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("at 1440 and 1280 px every line of the setup snippets on Overview, Calls and Setup is one line on screen, clear of the Copy button", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    for (const width of [1440, 1280]) {
      await w.page.setViewportSize({ width, height: 900 });
      for (const page of ["overview", "calls", "setup"]) {
        await w.page.goto(`${suite.gw.url}/dashboard/${page}`);
        await w.page.locator(".snippet pre", { hasText: "GOOGLE_GEMINI_BASE_URL" }).waitFor({ timeout: 10_000 });
        // per snippet: its lines as written, the lines the browser drew, and the lines a Copy button covers
        const drawn = await w.page.locator(".card:has(> .snippet)").evaluateAll((cards) =>
          cards.map((card) => {
            const pre = card.querySelector(".snippet pre")!;
            const style = pre.ownerDocument.defaultView!.getComputedStyle(pre);
            const inner = pre.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
            const button = card.querySelector("button")!.getBoundingClientRect();
            const range = pre.ownerDocument.createRange();
            range.selectNodeContents(pre.querySelector("code")!);
            const covered = [...range.getClientRects()].filter((r) => r.width > 0 && r.right > button.left && r.left < button.right && r.bottom > button.top && r.top < button.bottom).length;
            return { card: card.querySelector("h2")!.textContent, written: pre.textContent!.split("\n").length, drawn: Math.round(inner / parseFloat(style.lineHeight)), covered };
          }),
        );
        expect(drawn.length).toBeGreaterThanOrEqual(3);
        for (const d of drawn) expect({ width, page, ...d }).toEqual({ width, page, card: d.card, written: d.written, drawn: d.written, covered: 0 });
        await w.page.screenshot({ path: join(SHOTS, `snippets-${page}-${width}.png`), fullPage: true });
      }
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("more calls than a page holds: Older and Newer page through all of them, keeping the filters, and the page says where it is", async () => {
  const send = (model: string) =>
    fetch(`${suite.gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text());
  // 210 calls of claude-x and 15 of claude-y, interleaved
  for (let i = 0; i < 15; i++) await Promise.all([...Array.from({ length: 14 }, () => send("anth/claude-x")), send("anth/claude-y")]);
  const all = ((await (await fetch(`${suite.gw.url}/admin/api/calls?limit=1000`)).json()) as { calls: Array<{ routeId?: string; requestId: string; requestedModel: string }> }).calls;
  expect(all).toHaveLength(225);
  const w = await openPage(suite.browser, suite.gw.url);
  const shown = () => w.page.locator("table.calls tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-route-id")!));
  const where = () => w.page.locator(".pager .pager-where").first().innerText();
  // Waits by polling from here: the page's CSP (no eval) refuses Playwright's in-page polling of a predicate.
  const until = async (what: string, cond: () => Promise<boolean>) => {
    for (const end = Date.now() + 30_000; !(await cond()); await Bun.sleep(100)) if (Date.now() > end) throw new Error(`never: ${what}`);
  };
  const rowsAre = (n: number) => until(`${n} rows`, async () => (await shown()).length === n);
  const go = async (to: "older" | "newer", rows: number) => {
    await w.page.locator(`.pager button[data-go="${to}"]`).first().click();
    await rowsAre(rows);
  };
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator(".pager").first().waitFor({ timeout: 30_000 }); // 200 rows to draw: over 10 s at load 40
    const page1 = await shown();
    expect(page1).toEqual(all.slice(0, 200).map((c) => c.routeId ?? c.requestId));
    expect(await where()).toMatch(/^Newest 200 calls, .+ – .+; new ones appear as they finish$/);
    expect(await w.page.locator('.pager button[data-go="newer"]').first().isDisabled()).toBe(true);

    await go("older", 25);
    expect(await shown()).toEqual(all.slice(200).map((c) => c.routeId ?? c.requestId));
    expect(await where()).toMatch(/^Page 2: 25 calls, .+ – .+; not live/);
    expect(await w.page.locator('.pager button[data-go="older"]').first().isDisabled()).toBe(true);
    expect(new URL(w.page.url()).searchParams.get("page")).toBe("2");
    await w.page.screenshot({ path: join(SHOTS, "calls-page-2.png"), fullPage: true });

    await go("newer", 200);
    expect(await shown()).toEqual(page1);
    expect(await where()).toStartWith("Newest 200 calls");
    expect(new URL(w.page.url()).search).toBe("");

    // a filter is kept while paging, and in the address: a reload comes back to the same page
    await w.page.fill("#f-model", "anth/claude-x");
    await w.page.press("#f-model", "Enter");
    await w.page.locator("#f-model").blur();
    // The filtered page's answer, not the moment between (the old list gone, the new one not yet
    // read: no rows at all, which "every row is claude-x" alone would take for it).
    await until("200 rows, only claude-x", async () => {
      const models = await w.page.locator("table.calls tbody tr td:nth-child(2)").allInnerTexts();
      return models.length === 200 && models.every((t) => t.startsWith("anth/claude-x"));
    });
    const xs = all.filter((c) => c.requestedModel === "anth/claude-x").map((c) => c.routeId ?? c.requestId);
    expect(await shown()).toEqual(xs.slice(0, 200));
    expect(await where()).toStartWith("Newest 200 calls matching these filters");
    await go("older", 10);
    expect(await shown()).toEqual(xs.slice(200));
    expect(await where()).toMatch(/^Page 2: 10 calls matching these filters, /);
    await w.page.reload();
    await rowsAre(10);
    expect(await shown()).toEqual(xs.slice(200));
    expect(await w.page.inputValue("#f-model")).toBe("anth/claude-x");
    expect(await where()).toStartWith("Page 2: 10 calls matching these filters");
    await go("newer", 200);
    expect(await shown()).toEqual(xs.slice(0, 200));
    // the navigation's Calls link leads to the newest calls, unfiltered (the address and the page agree)
    await go("older", 10);
    await w.page.click('nav a[data-page="calls"]');
    await until("the newest 200, unfiltered", async () => (await shown()).length === 200 && (await w.page.inputValue("#f-model")) === "");
    expect(await shown()).toEqual(page1);
    expect(await where()).toMatch(/^Newest 200 calls, /);
    expect(new URL(w.page.url()).search).toBe("");
    expect(w.errors).toEqual([]);
    expect(w.failed).toEqual([]);
  } finally {
    await w.close();
  }
}, 180_000);
