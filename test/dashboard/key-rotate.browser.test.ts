/**
 * Rotating a client key from the dashboard's Keys page (newuser12a G1: `switchyard keys rotate` and the
 * admin API could, the page could not), in a real Chromium: Rotate on the key's row, the old secret's
 * grace chosen, Confirm; the new secret is shown once (as a created key's is) with what happens to the
 * old one. Then, through the gateway: the new secret is served and the old one too during its grace,
 * both counted in the key's one budget (its use was kept); a second rotation with "refused at once"
 * refuses every earlier secret. No secret but the one just made is on the page.
 * A stored key that shares its name with a config key: Rotate, Disable, Enable and Revoke on its row show
 * the answer's note that the config key is not affected (the admin API said so; the page did not).
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { openPage } from "../support/browser.ts";
import { keysPageSuite } from "../support/keys-page-suite.ts";

const ADMIN = "sy-test-rotate-page-admin-0001";
const { suite, admin, chat, yaml: YAML } = keysPageSuite(ADMIN);
const ask = async (secret: string) => (await chat(secret)).status;
const tokensUsed = async () => {
  const keys = (await (await fetch(`${suite.gw.url}/admin/api/keys`, { headers: admin })).json()) as { keys: { name: string; use?: { budgets: { used: number }[] } }[] };
  return keys.keys.find((k) => k.name === "ci")!.use!.budgets[0]!.used;
};

test("Rotate on the Keys page: the new secret shown once, the old one served during its grace, the budget's use kept", async () => {
  // the key to rotate (its budget counts tokens)
  const created = (await (
    await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name: "ci", limits: { budgets: [{ window: "1d", tokens: 100_000 }] } }) })
  ).json()) as { secret: string };
  const first = created.secret;
  expect(await ask(first)).toBe(200);
  const usedBefore = await tokensUsed();
  expect(usedBefore).toBeGreaterThan(0);

  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    await w.page.fill("#key", ADMIN);
    await w.page.click('button[type="submit"]');
    const row = w.page.locator('tr[data-key="ci"]');
    await row.waitFor({ timeout: 10_000 });
    await row.getByRole("button", { name: "Rotate" }).click();
    await row.locator("select").selectOption("10m");
    await row.getByRole("button", { name: "Confirm rotate" }).click();
    const shown = w.page.locator('.secret-once[data-secret-for="ci"]');
    await shown.waitFor({ timeout: 10_000 });
    const second = (await shown.locator(".secret-value").innerText()).trim();
    expect(second).not.toBe(first);
    expect(second.startsWith("sy-")).toBe(true);
    expect(await shown.innerText()).toMatch(/Key ci has a new secret; the old one is accepted until .+\. Copy it now: it is shown this once/);

    // both served during the grace, counted in the one budget
    expect([await ask(second), await ask(first)]).toEqual([200, 200]);
    expect(await tokensUsed()).toBe(usedBefore * 3);

    // again, the old secret refused at once: every earlier secret is refused
    await shown.getByRole("button", { name: "Done, hide it" }).click();
    await row.getByRole("button", { name: "Rotate" }).click();
    await row.getByRole("button", { name: "Confirm rotate" }).click();
    await w.page.locator('.secret-once[data-secret-for="ci"]', { hasText: "the old one is refused from now on" }).waitFor({ timeout: 10_000 });
    const third = (await w.page.locator('.secret-once[data-secret-for="ci"] .secret-value').innerText()).trim();
    expect([await ask(first), await ask(second), await ask(third)]).toEqual([401, 401, 200]);

    const page = await w.page.content();
    expect(page).not.toContain(first);
    expect(page).not.toContain(second);
    expect(page).not.toContain(ADMIN);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Rotate, Disable, Enable and Revoke on a stored key that shares its name with a config key show that the config key is not affected", async () => {
  // the stored key first, then the file declares a key of the same name
  expect((await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name: "pair" }) })).status).toBe(201);
  writeFileSync(suite.gw.configPath, `${YAML}  - { name: pair, key: sy-test-rotate-page-config-pair-01 }\n`.replaceAll("{{FAKE}}", suite.gw.fake.url));
  expect((await fetch(`${suite.gw.url}/admin/api/config/reload`, { method: "POST", headers: admin })).status).toBe(200);
  const note = (done: string) =>
    `${done} the stored key pair; the config file also declares a key named pair, which is not affected: a key of the config file is turned off, or given a new secret, in the file (and a reload).`;

  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    await w.page.fill("#key", ADMIN);
    await w.page.click('button[type="submit"]');
    // two rows named pair: the config key's (no actions) and the stored key's
    await w.page.locator('tr[data-key="pair"]').nth(1).waitFor({ timeout: 10_000 });
    const row = w.page.locator('tr[data-key="pair"]', { has: w.page.locator('td[data-label="Source"]', { hasText: "database" }) });
    await row.getByRole("button", { name: "Rotate" }).click();
    await row.getByRole("button", { name: "Confirm rotate" }).click();
    const shown = w.page.locator('.secret-once[data-secret-for="pair"]');
    await shown.waitFor({ timeout: 10_000 });
    // the note, visible in the new secret's box (the page showed the secret alone)
    await shown.locator(".key-note").waitFor({ state: "visible", timeout: 10_000 });
    expect(await shown.locator(".key-note").innerText()).toBe(note("rotated"));

    await row.getByRole("button", { name: "Disable" }).click();
    const said = w.page.locator(".key-note[role=status]");
    await said.filter({ hasText: note("disabled") }).waitFor({ timeout: 10_000 });
    await row.getByRole("button", { name: "Enable" }).click();
    await said.filter({ hasText: note("enabled") }).waitFor({ timeout: 10_000 });
    expect(await said.isVisible()).toBe(true);
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Confirm revoke" }).click();
    await said.filter({ hasText: note("revoked") }).waitFor({ timeout: 10_000 });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
