/**
 * Disabling a client key for a while from the dashboard's Keys page (newuser12a G16: a key could only
 * be revoked), in a real Chromium: Disable on the key's row, the row says since when; then, through the
 * gateway, the key's requests get a 403 `key_disabled` in the client's own format (Chat and Anthropic
 * Messages) naming the key and how it ends; Enable on the row, and the same secret is served again, its
 * budget's use kept.
 */
import { expect, test } from "bun:test";
import { openPage } from "../support/browser.ts";
import { keysPageSuite } from "../support/keys-page-suite.ts";

const ADMIN = "sy-test-disable-page-admin-001";
const { suite, admin, chat, listed: listedAs } = keysPageSuite(ADMIN);
/** One Anthropic Messages request with the key (x-api-key, as Claude Code sends it). */
const messages = async (secret: string) => {
  const r = await fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": secret, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "demo-chat/gpt-demo", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: r.status, body: (await r.json()) as any };
};
const listed = () => listedAs("ci");

test("Disable on the Keys page: the key's requests get a 403 saying it is disabled, in the client's format; Enable serves them again", async () => {
  const created = (await (
    await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name: "ci", limits: { budgets: [{ window: "1d", tokens: 100_000 }] } }) })
  ).json()) as { secret: string };
  const secret = created.secret;
  expect((await chat(secret)).status).toBe(200);
  let used = 0;
  for (const end = Date.now() + 10_000; used === 0 && Date.now() < end; await Bun.sleep(50)) used = (await listed()).use.budgets[0].used;
  expect(used).toBeGreaterThan(0);

  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    await w.page.fill("#key", ADMIN);
    await w.page.click('button[type="submit"]');
    const row = w.page.locator('tr[data-key="ci"]');
    await row.waitFor({ timeout: 10_000 });
    /** The focused element as "KEY:button text" (its row's key), or its tag when it is no row's button. */
    const focused = () => w.page.evaluate(`(() => { const a = document.activeElement; const r = a?.closest("tr[data-key]"); return r ? r.getAttribute("data-key") + ":" + a.textContent : a?.tagName; })()`) as Promise<string>;
    const announced = () => w.page.evaluate(`document.getElementById("announcer")?.textContent ?? "(no live region)"`) as Promise<string>;
    // By keyboard (try18 D18): the focus stays on the row's button, now Enable, and the live region says it.
    await row.getByRole("button", { name: "Disable" }).focus();
    await w.page.keyboard.press("Enter");
    await row.locator(".pill", { hasText: /^disabled / }).waitFor({ timeout: 10_000 });
    await row.getByRole("button", { name: "Enable" }).waitFor({ timeout: 10_000 });
    expect(await focused()).toBe("ci:Enable");
    expect(await announced()).toBe("Key ci disabled.");
    expect(typeof (await listed()).disabledAt).toBe("number");

    const message = 'Client key "ci" is disabled on this gateway for now: its requests are refused until an operator enables it again (switchyard keys enable ci).';
    const refused = await chat(secret);
    expect(refused).toEqual({ status: 403, body: { error: { message, type: "permission_error", param: null, code: "key_disabled" } } });
    const anthropic = await messages(secret);
    expect(anthropic.status).toBe(403);
    expect(anthropic.body).toMatchObject({ type: "error", error: { type: "permission_error", message } });

    await w.page.keyboard.press("Enter");
    await row.locator(".pill", { hasText: "active" }).waitFor({ timeout: 10_000 });
    await row.getByRole("button", { name: "Disable" }).waitFor({ timeout: 10_000 });
    expect(await focused()).toBe("ci:Disable");
    expect(await announced()).toBe("Key ci enabled.");
    expect((await chat(secret)).status).toBe(200);
    let after = await listed();
    for (const end = Date.now() + 10_000; after.use.budgets[0].used < used * 2 && Date.now() < end; await Bun.sleep(50)) after = await listed();
    expect(after.disabledAt).toBeUndefined();
    expect(after.use.budgets[0].used).toBe(used * 2); // the same key: its budget's use kept

    const page = await w.page.content();
    expect(page).not.toContain(secret);
    expect(page).not.toContain(ADMIN);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
