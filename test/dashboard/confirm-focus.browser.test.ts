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
import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { openPage } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

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

/** POSTs `body` to the admin API's `path`; the status. */
const post = (path: string, body: unknown) => fetch(`${suite.gw.url}/admin/api${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.status);

/** Waits until focus is off the page body (it moves once the list is read again), at most 5 s; then says where it is. */
async function settledFocus(page: Page): Promise<string> {
  for (const end = Date.now() + 5_000; Date.now() < end; await Bun.sleep(50)) if ((await focused(page)) !== "body") break;
  return focused(page);
}

test("Keys: Rotate and Revoke's confirmation takes focus, Escape and Cancel close it and give focus back to the button", async () => {
  const made = await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ci" }) });
  expect(made.status).toBe(201);
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/keys`);
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
  expect(await post("/aliases", { name: "coding", target: "demo-chat/gpt-demo" })).toBe(201);
  expect(await post("/combos", { name: "spare", strategy: "fallback", targets: [{ model: "demo-chat/gpt-demo" }] })).toBe(201);
  const stored = async () => {
    const get = async (kind: string) => ((await (await fetch(`${suite.gw.url}/admin/api/${kind}`)).json()) as Record<string, { name: string; source: string }[]>)[kind]!.filter((x) => x.source === "db").map((x) => x.name);
    return { aliases: await get("aliases"), combos: await get("combos") };
  };
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
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

/** What the live region (announce.ts) says. */
const announced = (page: Page) => page.evaluate(`document.getElementById("announcer")?.textContent ?? "(no live region)"`) as Promise<string>;

test("after a confirmed Revoke, focus moves to the next key's Revoke (else the list's heading) and the page says the key was revoked", async () => {
  for (const name of ["a-first", "b-second", "c-third"]) expect(await post("/keys", { name })).toBe(201);
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/keys`);
    await page.locator('tr[data-key="c-third"]').waitFor({ timeout: 10_000 });
    // the rows in the page's order that can be revoked
    const active = async () => (await page.locator("tr[data-key]:not([data-revoked])").evaluateAll((trs) => trs.filter((tr) => tr.querySelector("button")).map((tr) => tr.getAttribute("data-key"))));
    const order = await active();
    expect([...order].sort()).toEqual(["a-first", "b-second", "c-third"]);
    const revoke = async (name: string) => {
      const row = page.locator(`tr[data-key="${name}"]:not([data-revoked])`);
      await row.getByRole("button", { name: "Revoke" }).click();
      await row.getByRole("button", { name: "Confirm revoke" }).click();
      await page.locator(`tr[data-key="${name}"][data-revoked]`).waitFor({ timeout: 5_000 });
    };
    // the first: focus on the next row's Revoke
    await revoke(order[0]!);
    expect(await settledFocus(page)).toBe(`${order[1]} | BUTTON | Revoke`);
    expect(await announced(page)).toBe(`Key ${order[0]} revoked.`);
    // the last: no next row with a Revoke, so the previous one's
    await revoke(order[2]!);
    expect(await settledFocus(page)).toBe(`${order[1]} | BUTTON | Revoke`);
    expect(await announced(page)).toBe(`Key ${order[2]} revoked.`);
    // the only one left: the list's heading
    await revoke(order[1]!);
    expect(await settledFocus(page)).toBe("- | H2 | Keys");
    expect(await announced(page)).toBe(`Key ${order[1]} revoked.`);
    expect(await page.locator("#announcer").getAttribute("role")).toBe("status");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("after a confirmed Delete of an alias or a combo, focus moves to the next one's Delete (else the list's heading) and the page says what was deleted", async () => {
  for (const name of ["one", "two"]) expect(await post("/aliases", { name, target: "demo-chat/gpt-demo" })).toBe(201);
  expect(await post("/combos", { name: "lone", strategy: "fallback", targets: [{ model: "demo-chat/gpt-demo" }] })).toBe(201);
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    await page.locator('tr[data-alias="two"]').waitFor({ timeout: 10_000 });
    await page.locator('[data-combo="lone"]').waitFor({ timeout: 10_000 });
    const del = async (sel: string) => {
      await page.locator(sel).getByRole("button", { name: "Delete" }).click();
      await page.locator(sel).getByRole("button", { name: "Confirm delete" }).click();
      await page.locator(sel).waitFor({ state: "detached", timeout: 5_000 });
    };
    await del('tr[data-alias="one"]');
    expect(await settledFocus(page)).toBe("two | BUTTON | Delete");
    expect(await announced(page)).toBe("Alias one deleted.");
    await del('tr[data-alias="two"]');
    expect(await settledFocus(page)).toBe("- | H2 | Aliases");
    expect(await announced(page)).toBe("Alias two deleted.");
    await del('[data-combo="lone"]');
    expect(await settledFocus(page)).toBe("- | H2 | Combos");
    expect(await announced(page)).toBe("Combo lone deleted.");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
