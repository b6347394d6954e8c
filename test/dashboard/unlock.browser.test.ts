/**
 * A locked account on the dashboard's Accounts page, in a real Chromium (SPEC 6.3, 9.4; newuser11 F2):
 * an upstream 401 locks the account until changed; its card says how it comes back (a new key and a
 * reload, or Unlock), a passing Test says the lock stays, and Unlock clears it through
 * `POST /admin/api/accounts/{id}/unlock` carrying the page's CSRF token, live, without a reload. Before,
 * the card read "Locked: 401 unauthorized · until changed", Test said "Test passed" under it, and
 * nothing on the page (or anywhere) cleared the lock. A remote browser signed in with an admin key,
 * under the page's CSP, and no secret on the page.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SHOTS } from "../support/browser.ts";
import { simpleReply, type FakeReply } from "../support/fake-upstream.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";

const ADMIN = "sy-test-dashunlock-admin-000001";
const ENV = { KEY_A1: "sk-test-dashunlock-account-one" };
const YAML = `
server: { require_api_key: true }
${providersAtFake(["p", "anthropic"])}
    models: { claude-x: {} }
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
`;

let refuse = false;

const suite = withGatewayAndBrowser(YAML, {
  env: ENV,
  ready: async (gw) => {
    gw.fake.handle((r): FakeReply => {
      if (refuse) return { status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } };
      return simpleReply(r.format!, { text: "ok", model: r.model }, r.stream);
    });
  },
});

async function ask(): Promise<number> {
  const res = await fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": ADMIN },
    body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

test("a locked account says how it comes back; Test says the lock stays; Unlock clears it (CSRF token sent)", async () => {
  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/accounts" } });
  const page = w.page;
  try {
    const card = page.locator(".card", { has: page.locator('[data-account="a1"]') });
    await card.waitFor({ timeout: 10_000 });
    await page.evaluate("window.__samePage = 1");
    expect(await card.getByRole("button", { name: "Unlock" }).count()).toBe(0);

    // One upstream 401: the account is locked, and the card shows it live with the way back.
    refuse = true;
    expect(await ask()).toBe(503);
    refuse = false;
    const advice = card.locator(".lock-advice");
    await advice.waitFor({ timeout: 10_000 });
    expect(await card.locator(".pill", { hasText: "Locked" }).innerText()).toBe("Locked: 401 unauthorized · until changed");
    expect(await advice.innerText()).toBe("To bring it back: replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock a1 once the key works again (or Unlock here).");

    // A passing test does not unlock, and says so.
    await card.getByRole("button", { name: "Test" }).click();
    const note = card.locator(".test-lock");
    await note.waitFor({ timeout: 10_000 });
    expect(await card.locator(".test-result").first().innerText()).toMatch(/^Test passed: 200 in /);
    expect(await note.innerText()).toBe("The test passed, but the account stays locked (401 unauthorized): requests do not use it until it is unlocked: switchyard accounts unlock a1 (the Unlock button).");
    expect(await ask()).toBe(503);
    await page.screenshot({ path: join(SHOTS, "accounts-locked-unlock.png"), fullPage: true });

    // Unlock: the admin API call carries the page's CSRF token; the lock goes from the page and the store.
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
    expect(csrf).toBeTruthy();
    const posted = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/admin/api/accounts/a1/unlock"));
    await card.getByRole("button", { name: "Unlock" }).click();
    expect((await posted).headers()["x-csrf-token"]).toBe(csrf!);
    await advice.waitFor({ state: "detached", timeout: 10_000 });
    expect(await card.getByRole("button", { name: "Unlock" }).count()).toBe(0);
    expect(await note.count()).toBe(0);
    expect((await suite.gw.app.store.loadAccountState()).locks).toEqual([]);
    expect(await ask()).toBe(200);
    await w.settled();

    expect(await page.evaluate("window.__samePage")).toBe(1); // never reloaded
    const text = await page.locator("body").innerText();
    expect(text).not.toContain(ENV.KEY_A1);
    expect(text).not.toContain(ADMIN);
    expect(w.foreign).toEqual([]);
    expect(w.failed).toEqual([]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
