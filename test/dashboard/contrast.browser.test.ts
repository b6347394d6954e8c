/**
 * Contrast on every dashboard page, as a signed-in operator sees it (WCAG 2.2 AA; ../support/contrast.ts
 * measures the computed colours in Chromium): text (1.4.3: 4.5:1 for normal text, 3:1 for large) and
 * the outline of every form field — text fields, selects, the JSON editors (1.4.11: 3:1 against the
 * colour around it, so an empty field can be found) — in the sign-in view with a refused key, every
 * page at 1280 and 390 px on the demo gateway's state (ready,
 * cooling down and locked accounts, quota bars, refused and fallback calls), and the states a page only
 * shows after something happened — a dry-run answer with targets out, the Routing page's "routing
 * changed" notice, a refused call's trace, a key's one-time secret, a revoked key, the 404 page.
 * Screenshots go to test-results/dashboard/.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS, type WatchedPage } from "../support/browser.ts";
import { contrastMisses, controlOutlineMisses } from "../support/contrast.ts";
import { driveDemoState, startDemoGateway } from "../support/dashboard-demo.ts";
import { withStartedGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

let adminSecret: string;

const REMOTE = { "X-Forwarded-For": "203.0.113.9" };

const suite = withStartedGatewayAndBrowser(startDemoGateway, {
  ready: async (gw) => {
    await driveDemoState(gw);
    const res = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "operator", scopes: ["admin"] }) });
    adminSecret = ((await res.json()) as { secret: string }).secret;
    // a refused call (bad body) for the Calls page's trace view
    await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "fast", messages: "fix it" }) });
  },
});

/** Signs `w` in with the admin key (a remote browser gets the sign-in view first). */
async function signIn(w: WatchedPage): Promise<void> {
  await w.page.goto(`${suite.gw.url}/dashboard/overview`);
  await w.page.fill("#key", adminSecret);
  await w.page.click('button[type="submit"]');
  await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
}

/**
 * Asserts no text of the page is below its minimum and every form field's outline stands out by 3:1;
 * `name` labels the failure and the screenshot.
 */
async function readable(w: WatchedPage, name: string, scope?: string): Promise<void> {
  await w.page.screenshot({ path: join(SHOTS, `contrast-${name}.png`), fullPage: true });
  expect({ name, misses: await contrastMisses(w.page, scope) }).toEqual({ name, misses: [] });
  expect({ name, outlines: await controlOutlineMisses(w.page, scope) }).toEqual({ name, outlines: [] });
}

describe("contrast (WCAG AA): text, and form fields' outlines", () => {
  test("the sign-in view, with a refused key's message", async () => {
    const w = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard`);
      await w.page.fill("#key", "sy-not-a-key-at-all");
      await w.page.click('button[type="submit"]');
      await w.page.locator(".error-line").waitFor({ timeout: 10_000 });
      await readable(w, "sign-in");
    } finally {
      await w.close();
    }
  }, 60_000);

  test("every page at 1280 and 390 px", async () => {
    const w = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      await signIn(w);
      for (const width of [1280, 390]) {
        await w.page.setViewportSize({ width, height: 900 });
        for (const p of ["overview", "accounts", "routing", "calls", "usage", "keys", "setup"]) {
          await w.page.goto(`${suite.gw.url}/dashboard/${p}`);
          await w.page.locator("main h1").waitFor({ timeout: 10_000 });
          await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
          await w.settled(); // tables and charts drawn
          await readable(w, `${p}-${width}`);
        }
      }
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);

  test("states shown after an action: a dry-run answer, the routing-changed notice, a refused call's trace, a new key's secret, a revoked key, the 404 page", async () => {
    const w = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      await signIn(w);
      await w.page.setViewportSize({ width: 1280, height: 900 });
      // Routing: the dry run of the combo (claude-work cooling down, glm-main locked: accounts out)
      await w.page.goto(`${suite.gw.url}/dashboard/routing`);
      await w.page.locator("[data-combo]").first().waitFor({ timeout: 10_000 });
      await w.page.fill("#dr-model", "coding");
      await w.page.click('form.dry-run button[type="submit"]');
      await w.page.locator(".plan .decision-out").first().waitFor({ timeout: 10_000 });
      // a combo being written here while another tab changes one: the notice
      await w.page.getByRole("button", { name: "New combo…" }).click();
      await w.page.locator("#combo-json").fill('{ "name": "draft", "targets": [{ "model": "openai/gpt-5" }] }');
      const res = await fetch(`${suite.gw.url}/admin/api/aliases`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "elsewhere", target: "openai/gpt-5" }) });
      expect(res.status).toBe(201);
      const notice = w.page.locator('[data-notice="routing-changed"]');
      await notice.waitFor({ timeout: 10_000 });
      await readable(w, "routing-notice", '[data-notice="routing-changed"]');
      await readable(w, "routing-dry-run");

      // Calls: the refused call's trace, its row selected
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      const refused = w.page.locator("table.calls tbody tr", { hasText: "rejected" }).first();
      await refused.waitFor({ timeout: 10_000 });
      await refused.click();
      await w.page.locator(".trace .answered-error").waitFor({ timeout: 10_000 });
      await readable(w, "calls-trace");

      // Keys: a new key's secret, then a revoked key
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      await w.page.fill("#key-name", "contrast-check");
      await w.page.click('form button[type="submit"]');
      await w.page.locator(".secret-once").waitFor({ timeout: 10_000 });
      await w.page.locator('tr[data-key="contrast-check"]').getByRole("button", { name: "Revoke" }).click();
      await w.page.locator('tr[data-key="contrast-check"]').getByRole("button", { name: "Confirm revoke" }).click();
      await w.page.locator('tr[data-key="contrast-check"] .pill', { hasText: "revoked" }).waitFor({ timeout: 10_000 });
      await readable(w, "keys-secret-revoked");

      // the dashboard's own 404 page
      await w.page.goto(`${suite.gw.url}/dashboard/usgae`);
      await w.page.locator("h1").waitFor({ timeout: 10_000 });
      await readable(w, "not-found");
      expect(w.errors.filter((e) => !e.includes("404"))).toEqual([]);
    } finally {
      await w.close();
    }
  }, 120_000);
});
