/**
 * A subscription's card on the Accounts page (newuser12b's tryout, H12): it showed no plan, e-mail,
 * token expiry or refresh state, and its Credential read "subscriptio…" at 1280 px. A Claude Code login
 * imported from its files (plan max, the e-mail of ~/.claude.json) through a fake vendor, its token
 * revoked and refreshed by a request; the card (real Chromium, 1280 px) shows the login's plan and
 * e-mail, when the token in use expires and that it was refreshed, the credential's kind whole, and no
 * token anywhere on the page or in GET /admin/api/accounts.
 */
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importCommand } from "../../src/cli/import.ts";
import { startWorld, type SubscriptionWorld } from "../oauth/helpers.ts";
import { SHOTS } from "../support/browser.ts";
import { withStartedGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

let w: SubscriptionWorld;
// the world's gateway, stopped with its fake vendor
const suite = withStartedGatewayAndBrowser(async () => {
  w = await startWorld();
  return Object.assign(Object.create(w.gw) as typeof w.gw, { stop: () => w.stop() });
});

test("a subscription card shows its plan, e-mail, token expiry and refresh state, the credential's kind whole at 1280 px, and no token", async () => {
  const t = w.vendor.seed({ name: "card", models: ["claude-card"] });
  const home = mkdtempSync(join(tmpdir(), "sy-card-"));
  mkdirSync(join(home, ".claude"), { recursive: true });
  const file = join(home, ".claude", ".credentials.json");
  writeFileSync(file, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Date.now() + 3600_000, scopes: ["user:inference"], subscriptionType: "max" } }));
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ oauthAccount: { emailAddress: "card@example.com" } }));
  await importCommand("claude-code", { from: file, account: "cc-card" }, w.call, w.io);

  type Login = { email?: string; plan?: string; expiresAt?: number; refreshable: boolean; refresh: { state: string; at?: number } };
  const login = async () => ((await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; login?: Login }> }).accounts.find((a) => a.id === "cc-card")!.login!;
  expect(await login()).toMatchObject({ email: "card@example.com", plan: "max", refreshable: true, refresh: { state: "never" } });

  // The token is revoked upstream; a request refreshes it.
  w.vendor.revokeAccess(t.accessToken);
  const res = await fetch(`${w.gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "cc/claude-card", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
  expect(res.status).toBe(200);
  const fresh = w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.token;
  const after = await login();
  expect(after.refresh.state).toBe("ok");
  expect(after.expiresAt! - Date.now()).toBeGreaterThan(30 * 60_000);
  const stored = (await w.gw.app.store.getAccount("cc-card"))!.credential as { refreshToken: string };

  const p = await suite.open();
  try {
    await p.page.setViewportSize({ width: 1280, height: 900 });
    await p.page.goto(`${w.gw.url}/dashboard/accounts`);
    const card = p.page.locator(".card", { has: p.page.locator('[data-account="cc-card"]') });
    await card.locator('[data-login-fact="login"]').waitFor({ timeout: 10_000 });
    const fact = async (name: string) => (await card.locator(`[data-login-fact="${name}"] dd`).innerText()).trim();
    expect(await fact("login")).toBe("max · card@example.com");
    // the refreshed token lasts an hour (the fake vendor's expires_in 3600): "1h 00m" within its first
    // second on the page, "59m 59s" after (the countdown rounds up); it failed a CI run that rendered fast
    expect(await fact("token")).toMatch(/^expires in (?:\d{1,2}m \d\ds|1h 00m)$/);
    expect(await fact("refresh")).toMatch(/^refreshed (just now|\d+s ago)$/);
    // The credential's kind is read whole, not cut with an ellipsis.
    const credential = card.locator("dt", { hasText: /^Credential$/ }).locator("xpath=following-sibling::dd");
    expect(await credential.innerText()).toBe("subscription (OAuth)");
    const cut = await credential.evaluate((el) => {
      const e = el as unknown as { scrollWidth: number; clientWidth: number };
      return e.scrollWidth > e.clientWidth;
    });
    expect(cut).toBe(false);
    await p.page.screenshot({ path: join(SHOTS, "subscription-card-1280.png"), fullPage: true });
    const html = await p.page.content();
    for (const secret of [t.accessToken, t.refreshToken, fresh, stored.refreshToken]) expect(html).not.toContain(secret);
    expect(p.errors).toEqual([]);
  } finally {
    await p.close();
  }
  const api = JSON.stringify(await w.call("GET", "/accounts"));
  for (const secret of [t.accessToken, t.refreshToken, fresh, stored.refreshToken]) expect(api).not.toContain(secret);
}, 60_000);
