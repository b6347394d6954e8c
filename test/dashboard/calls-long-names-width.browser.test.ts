/**
 * A call whose requested model and served model are both longer than 64 characters (an alias of 75
 * characters routed to a provider's 83-character model) on the Calls page: each name is one line cut
 * with "…", whole in its title and when copied, and the cut names take no more than their columns'
 * share: at 1280 px, with every column and beside an open trace, the table fits its card and the Total
 * column is in view (each cut name kept 40 characters, so the row was wider than the card and the
 * table scrolled sideways, Outcome and Total out of view). At 390 px the page is no wider than the
 * screen. Measured in Chromium; screenshots in test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const ALIAS = "team-default-model-for-long-running-code-review-and-refactoring-sessions-v2";
const MODEL = "gpt-5-codex-preview-2026-11-18-extended-context-with-reasoning-effort-high-experimental";
const SERVED = `oai/${MODEL}`;

const YAML = `
providers:
  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
aliases:
  ${ALIAS}: ${SERVED}
`;

/** One Chat Completions request for `model`; resolves with the status. */
async function chat(url: string, model: string): Promise<number> {
  const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
  await res.arrayBuffer();
  return res.status;
}

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    expect(ALIAS.length).toBeGreaterThan(64);
    expect(SERVED.length).toBeGreaterThan(64);
    // a short name beside it (it wraps after its slash as before), then the long pair on top
    expect(await chat(gw.url, "oai/gpt-4o-mini")).toBe(200);
    expect(await chat(gw.url, ALIAS)).toBe(200);
  },
});

/** How the Calls table sits in its card: whether it scrolls sideways, whether each row's last cell (Total) is inside the card and the window. */
function layout(page: Page, wrap: string) {
  return page.locator(wrap).first().evaluate((el: any) => {
    const box = el.getBoundingClientRect();
    const win = el.ownerDocument.defaultView;
    const lasts = [...el.querySelectorAll("table.calls tbody tr")].map((tr: any) => tr.lastElementChild.getBoundingClientRect());
    return {
      scrolls: el.scrollWidth > el.clientWidth + 1,
      totalInView: lasts.every((r: any) => r.right <= box.right + 1 && r.right <= win.innerWidth && r.left >= box.left),
      pageFits: el.ownerDocument.documentElement.scrollWidth <= win.innerWidth,
    };
  });
}

/** The Calls table's column headings a reader sees (hidden ones left out). */
function shownHeadings(page: Page): Promise<string[]> {
  return page.locator("table.calls thead th").evaluateAll((ths: any[]) => ths.filter((th) => th.getClientRects().length > 0).map((th) => th.innerText.trim()));
}

/** Each cut name in the long call's row: its title, the text a selection of it copies, and whether it is cut with "…". */
function cutNames(page: Page) {
  return page.locator("table.calls tbody tr", { hasText: ALIAS }).evaluate((tr: any) =>
    [...tr.querySelectorAll(".name-cut")]
      .filter((s: any) => s.getClientRects().length > 0)
      .map((s: any) => {
        const doc = s.ownerDocument;
        const sel = doc.getSelection();
        sel.removeAllRanges();
        const range = doc.createRange();
        range.selectNodeContents(s);
        sel.addRange(range);
        const copied = sel.toString();
        sel.removeAllRanges();
        return {
          title: s.title,
          copied,
          cut: s.scrollWidth > s.clientWidth && doc.defaultView.getComputedStyle(s).textOverflow === "ellipsis",
          oneLine: s.getBoundingClientRect().height < 30,
          width: Math.round(s.getBoundingClientRect().width),
        };
      }),
  );
}

test("Calls at 1280 px: a row with a long requested name and a long served name fits its card, Total in view, each name cut with its whole text in its title and when copied", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("table.calls tbody tr", { hasText: ALIAS }).waitFor({ timeout: 30_000 });
    await w.page.locator("table.calls tbody tr", { hasText: "gpt-4o-mini" }).waitFor({ timeout: 30_000 });
    await w.settled();
    await w.page.screenshot({ path: join(SHOTS, "calls-long-names-1280.png") });
    const names = await cutNames(w.page);
    expect(names.map((n) => n.title)).toEqual([ALIAS, SERVED]);
    expect(names.map((n) => n.copied)).toEqual([ALIAS, SERVED]);
    for (const n of names) expect([n.cut, n.oneLine]).toEqual([true, true]);
    // each keeps room for more than the 15 characters a wrapped name's part gets
    for (const n of names) expect(n.width).toBeGreaterThan(120);
    expect(await layout(w.page, ".table-wrap")).toEqual({ scrolls: false, totalInView: true, pageFits: true });
    // every column shown (README, Dashboard → Calls)
    expect(await shownHeadings(w.page)).toEqual(["Time", "Model", "Served by", "Account", "Key", "Outcome", "Tokens in/out", "Cost", "Total"]);

    // beside an open trace (the table's optional columns hidden): the same, and the trace names them whole in their titles
    await w.page.locator("table.calls tbody tr", { hasText: ALIAS }).locator("button.call-open").click();
    await w.page.locator("table.calls.compact").waitFor({ timeout: 10_000 });
    await w.page.locator(".trace .kv").waitFor({ timeout: 10_000 });
    await w.settled();
    await w.page.screenshot({ path: join(SHOTS, "calls-long-names-trace-1280.png") });
    expect(await layout(w.page, ".split .table-wrap")).toEqual({ scrolls: false, totalInView: true, pageFits: true });
    // the list keeps four columns beside the trace, as README says (it said every column stayed in view)
    expect(await shownHeadings(w.page)).toEqual(["Time", "Model", "Outcome", "Total"]);
    expect(await w.page.locator(".trace .kv .name-cut").evaluateAll((els: any[]) => els.map((e) => e.title))).toEqual([ALIAS, SERVED]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 120_000);

test("Calls at 390 px: the long names are cut inside the model column, Total in view, the page no wider than the screen", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 390, height: 844 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("table.calls tbody tr", { hasText: ALIAS }).waitFor({ timeout: 30_000 });
    await w.settled();
    await w.page.screenshot({ path: join(SHOTS, "calls-long-names-390.png"), fullPage: true });
    const names = await cutNames(w.page);
    expect(names.map((n) => [n.title, n.copied, n.cut, n.oneLine])).toEqual([[ALIAS, ALIAS, true, true]]);
    expect(await layout(w.page, ".table-wrap")).toEqual({ scrolls: false, totalInView: true, pageFits: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 120_000);
