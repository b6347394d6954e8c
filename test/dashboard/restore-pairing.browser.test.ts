/**
 * Removed account/model pairings on the dashboard's Accounts page, in a real Chromium (SPEC 6.3, 9.4):
 * a 404 model not found removes the model from the account for 24 h; the card lists it (live, from
 * the `model_removed` event) with when it is tried again and a Restore button, which ends the removal
 * now through `POST /admin/api/accounts/{id}/restore` carrying the page's CSRF token; a restore made
 * elsewhere (the admin API, `switchyard accounts restore`) leaves the page through the `model_restored`
 * event, without a reload. A remote browser signed in with an admin key, under the page's CSP (no
 * console error), and no secret on the page. Before, the page listed removed models as text only: a
 * restore took the CLI or the admin API.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SHOTS } from "../support/browser.ts";
import { simpleReply, type FakeReply } from "../support/fake-upstream.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";

const ADMIN = "sy-test-dashrestore-admin-00001";
const ENV = { KEY_A1: "sk-test-dashrestore-account-one" };
const YAML = `
server: { require_api_key: true }
${providersAtFake(["p", "anthropic"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
`;

/** Models the fake answers 404 model not found for. */
const missing = new Set<string>();

const suite = withGatewayAndBrowser(YAML, {
  env: ENV,
  ready: async (gw) => {
    gw.fake.handle((r): FakeReply => {
      if (missing.has(r.model ?? "")) return { status: 404, json: { type: "error", error: { type: "not_found_error", message: `model: ${r.model}` } } };
      return simpleReply(r.format!, { text: "ok", model: r.model }, r.stream);
    });
  },
});

/** One Messages request for p/MODEL with the admin key (keys are required): its status. */
async function ask(model: string): Promise<number> {
  const res = await fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": ADMIN },
    body: JSON.stringify({ model: `p/${model}`, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

test("a removed model is listed with Restore: the button restores it (CSRF token sent), a restore elsewhere updates the page live", async () => {
  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/accounts" } });
  const page = w.page;
  try {
    await page.locator('[data-account="a1"]').waitFor({ timeout: 10_000 });
    await page.evaluate("window.__samePage = 1");
    expect(await page.locator("[data-removed]").count()).toBe(0);

    // Two models answer 404 model not found: each pairing is removed, and the card lists it live.
    missing.add("claude-x").add("claude-y");
    expect(await ask("claude-x")).toBe(404);
    expect(await ask("claude-y")).toBe(404);
    missing.clear();
    const x = page.locator('li[data-removed="claude-x"]');
    const y = page.locator('li[data-removed="claude-y"]');
    await x.waitFor({ timeout: 10_000 });
    await y.waitFor({ timeout: 10_000 });
    expect(await x.innerText()).toMatch(/^claude-x 404 model not found · tried again in (1d 0h|23h \d\dm) \([^)]+\)\s*Restore$/);
    // the models table's row counts down to the same end, live (it read "model removed for this account:
    // 404 model not found" with no end, where the list above had it)
    const removedUntil = (await suite.gw.app.store.loadAccountState()).removedModels.find((r) => r.model === "claude-x")!.until;
    const xRow = page.locator('table.models tr[data-model="claude-x"]');
    await xRow.locator(".countdown").waitFor({ timeout: 10_000 });
    expect(await xRow.locator(".countdown").getAttribute("data-until")).toBe(String(removedUntil));
    expect(await xRow.innerText()).toMatch(/^claude-x\s+model removed for this account: 404 model not found · tried again in (1d 0h|23h \d\dm)$/);
    // still removed: a1 is not asked for claude-x, the client gets the 404
    const before = suite.gw.fake.requests.length;
    expect(await ask("claude-x")).toBe(404);
    expect(suite.gw.fake.requests.length).toBe(before);
    await page.screenshot({ path: join(SHOTS, "accounts-removed-models.png"), fullPage: true });

    // Restore on the page: the admin API call carries the page's CSRF token; the row goes, the other stays.
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
    expect(csrf).toBeTruthy();
    const posted = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/admin/api/accounts/a1/restore"));
    await x.getByRole("button", { name: "Restore" }).click();
    const req = await posted;
    expect(req.headers()["x-csrf-token"]).toBe(csrf!);
    expect(req.postDataJSON()).toEqual({ model: "claude-x" });
    await x.waitFor({ state: "detached", timeout: 10_000 });
    expect(await y.count()).toBe(1);
    expect((await suite.gw.app.store.loadAccountState()).removedModels.map((r) => r.model)).toEqual(["claude-y"]);
    // the next request tries claude-x on a1 again
    expect(await ask("claude-x")).toBe(200);
    expect(suite.gw.fake.requests.length).toBe(before + 1);

    // A restore elsewhere (the admin API, as `switchyard accounts restore a1 claude-y`) reaches the page live.
    const res = await fetch(`${suite.gw.url}/admin/api/accounts/a1/restore`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ model: "claude-y" }) });
    expect(await res.json()).toEqual({ id: "a1", restored: ["claude-y"] });
    await y.waitFor({ state: "detached", timeout: 10_000 });
    expect(await page.locator(".removed-models").count()).toBe(0);
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
