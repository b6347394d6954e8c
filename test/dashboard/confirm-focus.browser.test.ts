/**
 * The dashboard's two-step confirmations (src/dashboard/client/confirm-action.tsx) driven by keyboard
 * in a real Chromium (newuser14 K7): on the Keys page, Enter on a key's Rotate moves focus into the
 * choice (its grace select), Escape closes it and focus is back on Rotate, Cancel does the same; Revoke
 * opens with focus on Cancel (a second Enter must not revoke), Escape closes it, and Confirm revoke
 * reached by keyboard revokes the key. Before, focus fell to `<body>` each time and Escape did nothing.
 * On the Routing page, a stored alias's or combo's Delete asks the same way (newuser14 K14: one click
 * deleted it): the first click only opens the choice, Cancel and Escape keep the object, Confirm delete
 * removes it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { launchBrowser, openPage, type TestBrowser } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let browser: TestBrowser;

beforeAll(async () => {
  gw = await startGateway(demoConfigYaml("{{FAKE}}"));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

/** Where keyboard focus is: `row | TAG | text` (row: the table row's data-key or data-alias, the combo's name, else "-"). */
function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return "body";
    const row = el.closest("[data-key], [data-alias], [data-combo]");
    const name = row ? (row.getAttribute("data-key") ?? row.getAttribute("data-alias") ?? row.getAttribute("data-combo")) : "-";
    return name + " | " + el.tagName + " | " + (el.tagName === "SELECT" ? "select" : el.textContent.trim());
  })()`) as Promise<string>;
}

test("Keys: Rotate and Revoke's confirmation takes focus, Escape and Cancel close it and give focus back to the button", async () => {
  const made = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ci" }) });
  expect(made.status).toBe(201);
  const w = await openPage(browser, gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gw.url}/dashboard/keys`);
    const row = page.locator('tr[data-key="ci"]');
    await row.waitFor({ timeout: 10_000 });
    const confirmRotate = row.getByRole("button", { name: "Confirm rotate" });

    // Rotate: focus into its grace select; Escape closes and focus is on Rotate again
    await row.getByRole("button", { name: "Rotate" }).focus();
    await page.keyboard.press("Enter");
    await confirmRotate.waitFor({ timeout: 5_000 });
    expect(await focused(page)).toBe("ci | SELECT | select");
    await page.keyboard.press("Escape");
    await confirmRotate.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("ci | BUTTON | Rotate");

    // again, Tab to Cancel and Enter: closed, focus on Rotate
    await page.keyboard.press("Enter");
    await confirmRotate.waitFor({ timeout: 5_000 });
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("ci | BUTTON | Confirm rotate");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("ci | BUTTON | Cancel");
    await page.keyboard.press("Enter");
    await confirmRotate.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("ci | BUTTON | Rotate");

    // Revoke: focus on Cancel (a second Enter does not revoke); Escape closes, focus on Revoke
    const confirmRevoke = row.getByRole("button", { name: "Confirm revoke" });
    await row.getByRole("button", { name: "Revoke" }).focus();
    await page.keyboard.press("Enter");
    await confirmRevoke.waitFor({ timeout: 5_000 });
    expect(await focused(page)).toBe("ci | BUTTON | Cancel");
    await page.keyboard.press("Enter");
    await confirmRevoke.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("ci | BUTTON | Revoke");
    await page.keyboard.press("Enter");
    await confirmRevoke.waitFor({ timeout: 5_000 });
    await page.keyboard.press("Escape");
    await confirmRevoke.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("ci | BUTTON | Revoke");
    expect(await row.innerText()).toContain("active");

    // by keyboard to Confirm revoke: the key is revoked
    await page.keyboard.press("Enter");
    await confirmRevoke.waitFor({ timeout: 5_000 });
    await page.keyboard.press("Shift+Tab");
    expect(await focused(page)).toBe("ci | BUTTON | Confirm revoke");
    await page.keyboard.press("Enter");
    await row.locator(".pill", { hasText: "revoked" }).waitFor({ timeout: 5_000 });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Routing: Delete on a stored alias or combo asks first; Escape and Cancel keep it, Confirm delete removes it", async () => {
  const post = (path: string, body: unknown) => fetch(`${gw.url}/admin/api${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.status);
  expect(await post("/aliases", { name: "coding", target: "demo-chat/gpt-demo" })).toBe(201);
  expect(await post("/combos", { name: "spare", strategy: "fallback", targets: [{ model: "demo-chat/gpt-demo" }] })).toBe(201);
  const stored = async () => {
    const get = async (kind: string) => ((await (await fetch(`${gw.url}/admin/api/${kind}`)).json()) as Record<string, { name: string; source: string }[]>)[kind]!.filter((x) => x.source === "db").map((x) => x.name);
    return { aliases: await get("aliases"), combos: await get("combos") };
  };
  const w = await openPage(browser, gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gw.url}/dashboard/routing`);
    const alias = page.locator('tr[data-alias="coding"]');
    const combo = page.locator('[data-combo="spare"]');
    await alias.waitFor({ timeout: 10_000 });
    await combo.waitFor({ timeout: 10_000 });

    // one click only asks: focus on Cancel, the alias still there
    await alias.getByRole("button", { name: "Delete" }).click();
    const confirmAlias = alias.getByRole("button", { name: "Confirm delete" });
    await confirmAlias.waitFor({ timeout: 5_000 });
    expect(await focused(page)).toBe("coding | BUTTON | Cancel");
    await page.keyboard.press("Escape");
    await confirmAlias.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("coding | BUTTON | Delete");
    await alias.getByRole("button", { name: "Delete" }).click();
    await alias.getByRole("button", { name: "Cancel" }).click();
    await confirmAlias.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("coding | BUTTON | Delete");
    // the combo's Delete the same
    await combo.getByRole("button", { name: "Delete" }).click();
    const confirmCombo = combo.getByRole("button", { name: "Confirm delete" });
    await confirmCombo.waitFor({ timeout: 5_000 });
    expect(await focused(page)).toBe("spare | BUTTON | Cancel");
    await page.keyboard.press("Enter");
    await confirmCombo.waitFor({ state: "detached", timeout: 5_000 });
    expect(await focused(page)).toBe("spare | BUTTON | Delete");
    expect(await stored()).toEqual({ aliases: ["coding"], combos: ["spare"] });

    // Confirm delete removes each
    await alias.getByRole("button", { name: "Delete" }).click();
    await confirmAlias.click();
    await alias.waitFor({ state: "detached", timeout: 5_000 });
    await combo.getByRole("button", { name: "Delete" }).click();
    await confirmCombo.click();
    await combo.waitFor({ state: "detached", timeout: 5_000 });
    expect(await stored()).toEqual({ aliases: [], combos: [] });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
