/**
 * Empty states that teach (SPEC 9.4): a gateway with no accounts and no traffic shows, in the browser,
 * how to add an account (config, `switchyard login`, `switchyard import`) and the setup snippets with
 * this instance's own URL, each in a card as tall as its snippet.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { launchBrowser, openPage, SHOTS, type TestBrowser } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let browser: TestBrowser;

beforeAll(async () => {
  gw = await startGateway(`
providers:
  - id: anth
    kind: anthropic
    base_url: "{{FAKE}}"
`);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

test("no accounts: Accounts says how to add one; no traffic: Overview and Calls show the setup snippets with this instance's URL", async () => {
  const w = await openPage(browser, gw.url);
  try {
    await w.page.goto(`${gw.url}/dashboard/accounts`);
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

    for (const page of ["overview", "calls"]) {
      await w.page.goto(`${gw.url}/dashboard/${page}`);
      await w.page.locator(".empty", { hasText: "No traffic yet" }).waitFor({ timeout: 10_000 });
      const snippets = await w.page.locator(".snippet pre").allInnerTexts();
      expect(snippets.some((s) => s.includes(`export ANTHROPIC_BASE_URL=${gw.url}\n`))).toBe(true);
      expect(snippets.some((s) => s.includes(`base_url = "${gw.url}/v1"`))).toBe(true);
      expect(snippets.some((s) => s.includes(`export GOOGLE_GEMINI_BASE_URL=${gw.url}\n`))).toBe(true);
      // a Gemini CLI never set up answers "Invalid auth method selected." until setup picks its auth (README)
      expect(snippets.find((s) => s.includes("GOOGLE_GEMINI_BASE_URL"))).toContain("switchyard setup gemini");
      // each snippet's card is as tall as its snippet: no blank area under a short one beside a tall one
      const gaps = await w.page.locator(".snippet").evaluateAll((els) =>
        els.map((el) => el.closest(".card")!.getBoundingClientRect().bottom - el.getBoundingClientRect().bottom),
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

test("more calls than the Calls page lists: it shows the newest 200 and says older ones are not listed and where to read them", async () => {
  for (let i = 0; i < 210; i += 30)
    await Promise.all(
      Array.from({ length: 30 }, () =>
        fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "anth/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text()),
      ),
    );
  const w = await openPage(browser, gw.url);
  try {
    await w.page.goto(`${gw.url}/dashboard/calls`);
    const note = w.page.locator(".calls-capped");
    await note.waitFor({ timeout: 10_000 });
    expect(await w.page.locator("table.calls tbody tr").count()).toBe(200);
    expect(await note.innerText()).toContain("The newest 200 calls; older ones are not listed here.");
    expect(await note.innerText()).toContain("switchyard calls list --limit 1000");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
