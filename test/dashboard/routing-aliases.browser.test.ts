/**
 * The Routing page's alias form in a real browser (SPEC 9.4, 9.3), on scripts/demo's gateway (alias
 * `fast`, combo `demo`): an alias is created, changed (Edit on its row) and deleted through the page,
 * and after each step the page and the admin API (`GET /admin/api/aliases`, `/v1/models`) show the
 * same thing. The new-alias field's placeholder never suggests a name an alias or combo has (it read
 * "fast" beside the alias `fast`), a refused alias's message uses the form's labels ("Points at",
 * not the API's `target`), and a refused Delete says why. Screenshots go to test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { drawn, openPage, SHOTS } from "../support/browser.ts";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

/** The aliases as the admin API lists them: name → [target, source]. */
async function apiAliases(): Promise<Record<string, [string, string]>> {
  const r = (await (await fetch(`${suite.gw.url}/admin/api/aliases`)).json()) as { aliases: Array<{ name: string; target: string; source: string }> };
  return Object.fromEntries(r.aliases.map((a) => [a.name, [a.target, a.source]]));
}

/** The model names `/v1/models` lists. */
async function listed(): Promise<string[]> {
  const r = (await (await fetch(`${suite.gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
  return r.data.map((m) => m.id);
}

/** The aliases table as shown: name → target (each row's first two cells). */
async function shownAliases(page: Page): Promise<Record<string, string>> {
  return Object.fromEntries(
    await page.locator("tr[data-alias]").evaluateAll((trs) => trs.map((tr) => [tr.getAttribute("data-alias")!, tr.querySelectorAll("td")[1]!.textContent!.trim()])),
  );
}

test("an alias is created, changed and deleted through the form; the page and the admin API agree after each step, and the placeholder never names an existing alias or combo", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    await page.locator('tr[data-alias="fast"]').waitFor({ timeout: 10_000 });
    await page.locator(".live-live").waitFor({ timeout: 10_000 });
    const name = page.locator("#al-name");
    const target = page.locator("#al-target");
    const placeholder = () => name.getAttribute("placeholder");
    // alias `fast` and combo `demo` exist: the suggestion is neither
    expect(await placeholder()).toBe("smart");
    // the config file's alias can be neither changed nor deleted here
    expect(await page.locator('tr[data-alias="fast"] button').count()).toBe(0);

    // a refused alias: the message names the form's field, and nothing is created
    await name.fill("smart");
    await target.fill("nope/x");
    await page.getByRole("button", { name: "Add alias" }).click();
    const error = page.locator('[data-form="alias-new"] .error-line');
    await error.waitFor({ timeout: 5_000 });
    expect(await error.innerText()).toMatch(/^Points at: /);
    expect(await error.innerText()).not.toContain("target");
    expect(Object.keys(await apiAliases())).toEqual(["fast"]);
    await name.fill("demo");
    await target.fill("demo-chat/gpt-demo");
    await page.getByRole("button", { name: "Add alias" }).click();
    await error.filter({ hasText: /^Alias: The name "demo" is taken by the config file / }).waitFor({ timeout: 5_000 });

    // create
    await name.fill("smart");
    await target.fill("demo-chat/gpt-demo");
    await page.getByRole("button", { name: "Add alias" }).click();
    await page.locator('tr[data-alias="smart"]').waitFor({ timeout: 5_000 });
    expect(await shownAliases(page)).toEqual({ fast: "demo-chat/gpt-demo", smart: "demo-chat/gpt-demo" });
    expect(await apiAliases()).toEqual({ fast: ["demo-chat/gpt-demo", "config"], smart: ["demo-chat/gpt-demo", "db"] });
    expect(await listed()).toContain("smart");
    expect(await name.inputValue()).toBe("");
    expect(await placeholder()).toBe("cheap");
    expect(await error.count()).toBe(0);

    // change: Edit fills the form with the alias (its name read-only), Save changes only its target
    await page.locator('tr[data-alias="smart"]').getByRole("button", { name: "Edit" }).click();
    const edit = page.locator('[data-form="alias-edit"]');
    await edit.waitFor({ timeout: 5_000 });
    expect(await name.inputValue()).toBe("smart");
    expect(await name.getAttribute("readonly")).not.toBeNull();
    expect(await target.inputValue()).toBe("demo-chat/gpt-demo");
    await target.fill("demo");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: join(SHOTS, `routing-alias-edit-${width}.png`), fullPage: true });
      expect({ width, wide: await page.evaluate("document.documentElement.scrollWidth") }).toEqual({ width, wide: width });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await edit.getByRole("button", { name: "Save alias" }).click();
    await page.locator('tr[data-alias="smart"] td', { hasText: /^demo$/ }).waitFor({ timeout: 5_000 });
    expect(await shownAliases(page)).toEqual({ fast: "demo-chat/gpt-demo", smart: "demo" });
    expect(await apiAliases()).toEqual({ fast: ["demo-chat/gpt-demo", "config"], smart: ["demo", "db"] });
    await page.locator('[data-form="alias-new"]').waitFor({ timeout: 5_000 });
    expect(await name.inputValue()).toBe("");
    expect(await target.inputValue()).toBe("");

    // delete
    await page.locator('tr[data-alias="smart"]').getByRole("button", { name: "Delete" }).click();
    await page.locator('tr[data-alias="smart"]').getByRole("button", { name: "Confirm delete" }).click();
    await page.locator('tr[data-alias="smart"]').waitFor({ state: "detached", timeout: 5_000 });
    expect(await shownAliases(page)).toEqual({ fast: "demo-chat/gpt-demo" });
    expect(await apiAliases()).toEqual({ fast: ["demo-chat/gpt-demo", "config"] });
    expect(await listed()).not.toContain("smart");
    expect(await placeholder()).toBe("smart");

    // a Delete the API refuses (a stored combo routes through the alias) says why, and the row stays
    const post = (path: string, body: unknown) => fetch(`${suite.gw.url}/admin/api${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.status);
    expect(await post("/aliases", { name: "inner", target: "demo-chat/gpt-demo" })).toBe(201);
    expect(await post("/combos", { name: "outer", strategy: "fallback", targets: [{ model: "inner" }] })).toBe(201);
    await page.locator('tr[data-alias="inner"]').waitFor({ timeout: 5_000 });
    await page.locator('tr[data-alias="inner"]').getByRole("button", { name: "Delete" }).click();
    await page.locator('tr[data-alias="inner"]').getByRole("button", { name: "Confirm delete" }).click();
    const refused = page.locator(".card", { has: page.locator("h2", { hasText: "Aliases" }) }).locator(".error-line", { hasText: /^inner was not deleted: / });
    await refused.waitFor({ timeout: 5_000 });
    expect(await refused.innerText()).toBe("inner was not deleted: Alias inner is used by stored combo outer: change outer's targets or delete it first.");
    expect(await shownAliases(page)).toEqual({ fast: "demo-chat/gpt-demo", inner: "demo-chat/gpt-demo" });
    // the three refusals, and nothing else, went wrong (Chromium logs each refused call as a console error)
    expect(w.failed).toEqual([`400 ${suite.gw.url}/admin/api/aliases`, `409 ${suite.gw.url}/admin/api/aliases`, `409 ${suite.gw.url}/admin/api/aliases/inner`]);
    expect(w.errors.filter((e) => !e.startsWith("Failed to load resource"))).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

/** The alias names and each part of their targets as shown ("demo-anthropic/", "claude-sonnet-4-5": Breakable's parts) and the lines each takes on screen. */
function aliasNameParts(page: Page) {
  return page.locator("tr[data-alias] .alias-name, tr[data-alias] .alias-target .name-part").evaluateAll((els) =>
    els.map((el) => {
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      return { text: el.textContent ?? "", lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
    }),
  );
}

test("the aliases table fits its card at 390 to 1440 px, and a target wraps only after its provider's slash, each part whole (as four columns, at 390 and 1280 px names broke inside: 'gemini-2.5-pro-' / 'preview')", async () => {
  const post = (body: unknown) => fetch(`${suite.gw.url}/admin/api/aliases`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.status);
  // named like the model, as the README's example of a subscription-first combo is
  expect(await post({ name: "claude-sonnet-4-5", target: "demo-anthropic/claude-sonnet-4-5" })).toBe(201);
  expect(await post({ name: "gem-pro", target: "demo-gemini/gemini-2.5-pro-preview" })).toBe(201);
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/routing`);
    await w.page.locator('tr[data-alias="gem-pro"]').waitFor({ timeout: 30_000 });
    const card = w.page.locator(".card", { has: w.page.locator("h2", { hasText: "Aliases" }) });
    for (const width of [390, 1024, 1200, 1280, 1440]) {
      await w.page.setViewportSize({ width, height: 900 });
      await drawn(w.page);
      await card.screenshot({ path: join(SHOTS, `routing-aliases-${width}.png`) });
      const parts = await aliasNameParts(w.page);
      expect(parts.map((p) => p.text)).toEqual(expect.arrayContaining(["demo-anthropic/", "claude-sonnet-4-5", "demo-gemini/", "gemini-2.5-pro-preview", "gem-pro"]));
      expect({ width, broken: parts.filter((p) => p.lines > 1) }).toEqual({ width, broken: [] });
      const fit = await card.evaluate((c) => {
        const box = c.getBoundingClientRect();
        const table = c.querySelector("table")!.getBoundingClientRect();
        return { inCard: table.left >= box.left - 0.5 && table.right <= box.right + 0.5, page: c.ownerDocument.documentElement.scrollWidth };
      });
      expect({ width, fit }).toEqual({ width, fit: { inCard: true, page: width } });
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
    for (const name of ["claude-sonnet-4-5", "gem-pro"]) await fetch(`${suite.gw.url}/admin/api/aliases/${name}`, { method: "DELETE" });
  }
}, 90_000);
