/**
 * A built-in provider without an account on the built-in default (no config file; review17 R5): a
 * Gemini CLI user without GEMINI_API_KEY had every request refused (Gemini CLI's bare
 * `gemini-2.5-flash`: a 404 saying no gemini account is configured; `gemini/…`: the 503 `no_account`),
 * and neither `GET /admin/api/accounts` nor the Accounts page said anything: the built-in providers were
 * left out of `providersWithoutAccounts` even when requests went to them. Now one is listed once this
 * instance refused a request for it, with what to do (GEMINI_API_KEY, or an `accounts:` entry) and how
 * many requests were refused; the built-in providers nothing sent to stay out. The gateway is the real
 * assembly (`startApp` without a config file, `SWITCHYARD_HOME` a scratch directory), on 127.0.0.1:0.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp } from "../../src/app.ts";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import type { TestGateway } from "../support/gateway.ts";
import { withStartedGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

/** The built-in default: no config file in a scratch SWITCHYARD_HOME, no provider key in the environment. */
async function startBuiltinDefault(): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "switchyard-builtin-"));
  const fake = await startFakeUpstream(); // unused: no account, so nothing goes upstream
  const logs: string[] = [];
  const app = await startApp({ host: "127.0.0.1", port: 0, dataDir, env: { SWITCHYARD_HOME: dataDir, HOME: dataDir }, log: (l) => logs.push(l), writeInstanceFile: false });
  return {
    app,
    url: app.url,
    fake,
    dataDir,
    configPath: join(dataDir, "config.yaml"),
    logs,
    async stop() {
      await app.shutdown(1000);
      await fake.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async stopGatewayOnly() {
      await app.shutdown(1000);
    },
  };
}

const suite = withStartedGatewayAndBrowser(startBuiltinDefault);

/** What Gemini CLI sends (`POST /v1beta/models/MODEL:generateContent`): its status and error message. */
async function askGemini(model: string): Promise<{ status: number; message: string }> {
  const r = await fetch(`${suite.gw.url}/v1beta/models/${model}:generateContent`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "switchyard" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
  });
  const body = (await r.json()) as { error?: { message: string } };
  return { status: r.status, message: body.error?.message ?? "" };
}

type Listed = { id: string; kind: string; error: string; builtin?: { routes: string[]; requests: number; lastAt?: number; lastStatus?: number } };

const GEMINI_ERROR =
  "No account is configured for provider gemini: add an account under `accounts:` in the config file (`provider: gemini` with its `api_key`), or set GEMINI_API_KEY before starting switchyard without a config file.";

test("GET /admin/api/accounts lists the built-in gemini once Gemini CLI's requests were refused for want of its account, with GEMINI_API_KEY as the way out", async () => {
  const before = (await (await fetch(`${suite.gw.url}/admin/api/accounts`)).json()) as { providersWithoutAccounts: Listed[] };
  // nothing sent yet: the unused built-in providers are not mistakes
  expect(before.providersWithoutAccounts).toEqual([]);
  const bare = await askGemini("gemini-2.5-flash");
  const prefixed = await askGemini("gemini/gemini-2.5-flash");
  // a Gemini client gets the 503 of a provider without an account as Google's 400 FAILED_PRECONDITION (Gemini CLI retries every 5xx)
  expect({ bare: bare.status, prefixed: prefixed.status }).toEqual({ bare: 404, prefixed: 400 });
  expect(prefixed.message).toBe(GEMINI_ERROR);
  expect(bare.message).toContain("no gemini account is configured");
  const status = (await (await fetch(`${suite.gw.url}/admin/api/accounts`)).json()) as { accounts: unknown[]; providersWithoutAccounts: Listed[] };
  expect(status.accounts).toEqual([]);
  expect(status.providersWithoutAccounts.map((p) => ({ ...p, builtin: { ...p.builtin, lastAt: typeof p.builtin?.lastAt } }))).toEqual([
    { id: "gemini", kind: "gemini", error: GEMINI_ERROR, builtin: { routes: [], requests: 2, lastAt: "number", lastStatus: 503 } },
  ]);
});

test("the Accounts page shows the built-in gemini without an account: why its requests fail, GEMINI_API_KEY, and the requests refused", async () => {
  await askGemini("gemini-2.5-pro");
  const w = await suite.open();
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
    const card = w.page.locator(".card", { has: w.page.locator('[data-provider-without-account="gemini"]') });
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator(".pill").allInnerTexts()).toEqual(["No account configured"]);
    expect(await card.locator(".no-account-note").innerText()).toBe(`Requests for gemini/…, or an alias or combo that routes to it, fail with 503: ${GEMINI_ERROR} A bare model name taken for this provider's (gemini-…) gets a 404 instead.`);
    const use = await card.locator(".builtin-use").innerText();
    expect(use).toStartWith("A built-in provider. ");
    expect(use).toMatch(/ [0-9]+ requests refused for want of its account since this instance started, the last at .+ \(a 404: a bare model name taken for this provider's\)\.$/);
    // only gemini: the other built-in providers had no request
    expect(await w.page.locator("[data-provider-without-account]").evaluateAll((els) => els.map((e) => e.getAttribute("data-provider-without-account")))).toEqual(["gemini"]);
    expect(await w.page.locator(".page-head p.muted").first().innerText()).toContain("· 1 provider without an account");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
