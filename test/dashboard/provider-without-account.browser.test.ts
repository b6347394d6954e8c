/**
 * A provider configured without an account, of a kind that needs one (dash16's tryout of the
 * dashboard): a `gemini` provider without a key was on no page, so nothing said why its requests got a
 * 503. Now `GET /admin/api/accounts` lists it under `providersWithoutAccounts` with the message those
 * requests get, and the Accounts page shows it first, marked "No account configured", with that message
 * (how to add an account) — the same words the client read. A subscription provider without a login
 * likewise; the built-in providers nothing sends to are not listed (those something sends to:
 * builtin-provider-without-account.browser.test.ts), nor the `*-compatible` ones (their keyless account
 * is). No secret reaches the page; no console error or CSP violation.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(
  demoConfigYaml("{{FAKE}}").replace("providers:\n", 'providers:\n  - { id: gemini, base_url: "{{FAKE}}" }\n  - { id: team-claude, kind: claude-code }\n'),
);

/** A Chat Completions request for `model`: its status and error message. */
async function ask(model: string): Promise<{ status: number; message: string }> {
  const r = await fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await r.json()) as { error?: { message: string } };
  return { status: r.status, message: body.error?.message ?? "" };
}

test("GET /admin/api/accounts lists the providers without an account with the 503 their requests get", async () => {
  const gemini = await ask("gemini/gemini-2.5-flash");
  const claude = await ask("team-claude/claude-sonnet-4-5");
  expect({ gemini: gemini.status, claude: claude.status }).toEqual({ gemini: 503, claude: 503 });
  const status = (await (await fetch(`${suite.gw.url}/admin/api/accounts`)).json()) as { accounts: { id: string }[]; providersWithoutAccounts: unknown };
  expect(status.providersWithoutAccounts).toEqual([
    { id: "gemini", kind: "gemini", error: gemini.message },
    { id: "team-claude", kind: "claude-code", error: claude.message },
  ]);
  expect(gemini.message).toBe(
    "No account is configured for provider gemini: add an account under `accounts:` in the config file (`provider: gemini` with its `api_key`).",
  );
  expect(claude.message).toBe(
    "No account is configured for provider team-claude: log in with `switchyard login claude-code --provider team-claude` (or adopt the CLI's own login with `switchyard import claude-code --provider team-claude`).",
  );
  // the accounts are as before: the demo's key and the keyless account of each *-compatible provider
  expect(status.accounts.map((a) => a.id).sort()).toEqual(["demo-anthropic-keyless", "demo-chat-keyless", "demo-gemini-key"]);
});

test("the Accounts page shows a provider without an account, with why its requests fail", async () => {
  const { message } = await ask("gemini/gemini-2.5-flash");
  const bare = await ask("gemini-2.5-flash");
  expect(bare.status).toBe(404); // what the card says of a bare name
  const claude = await ask("team-claude/claude-sonnet-4-5");
  const w = await suite.open();
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
    const card = w.page.locator(".card", { has: w.page.locator('[data-provider-without-account="gemini"]') });
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator(".pill").allInnerTexts()).toEqual(["No account configured"]);
    expect(await card.locator(".no-account-note").innerText()).toBe(`Requests for gemini/…, or an alias or combo that routes to it, fail with 503: ${message} A bare model name taken for this provider's (gemini-…) gets a 404 instead.`);
    await w.page.locator('[data-provider-without-account="team-claude"]').waitFor({ timeout: 10_000 });
    // no bare model name is taken for team-claude's: only a name that names it gets its 503
    const claudeCard = w.page.locator(".card", { has: w.page.locator('[data-provider-without-account="team-claude"]') });
    expect(await claudeCard.locator(".no-account-note").innerText()).toBe(`Requests for team-claude/…, or an alias or combo that routes to it, fail with 503: ${claude.message}`);
    // listed before the accounts, and counted in the header
    const order = await w.page.locator("[data-provider-without-account], [data-account]").evaluateAll((els) => els.map((e) => e.getAttribute("data-provider-without-account") ?? e.getAttribute("data-account")));
    expect(order.slice(0, 2)).toEqual(["gemini", "team-claude"]);
    expect(await w.page.locator(".page-head p.muted").first().innerText()).toContain("· 2 providers without an account");
    const html = await w.page.content();
    expect({ demoKey: html.includes("not-a-real-key"), fakeKey: html.includes("sk-fake-upstream-secret") }).toEqual({ demoKey: false, fakeKey: false });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
