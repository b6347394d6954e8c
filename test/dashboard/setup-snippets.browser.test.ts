/**
 * The Setup page's snippets name models this gateway can serve (SPEC 9.4): without a combo or alias,
 * each CLI's snippet names a model of a provider of its own vendor that has an account — not the
 * built-in `anthropic/…`, `openai/…`, `gemini/…` providers, which have none here — and a request with
 * the model copied from the page is answered. The Codex snippet's `[model_providers.switchyard]` table is
 * the one README "Point your agent at it" shows and `switchyard setup codex` writes (the key aside). The
 * Gemini snippet's `switchyard setup gemini` line works as copied for a gateway whose data directory is
 * not ~/.switchyard (scripts/demo's, a temporary one).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planSetup } from "../../src/cli/setup.ts";
import { ROOT, SOURCE_CLI } from "../support/instance.ts";
import { launchBrowser, openPage, SHOTS, type TestBrowser } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let browser: TestBrowser;

beforeAll(async () => {
  // anth (anthropic), oai (openai), resp (openai-responses), gem (gemini), each with one account
  gw = await startGateway();
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

test("each snippet names a model of its vendor's provider with an account, and the copied model is served", async () => {
  const w = await openPage(browser, gw.url);
  try {
    await w.page.goto(`${gw.url}/dashboard/setup`);
    const snippet = (title: string) => w.page.locator(".card", { has: w.page.locator("h2, h3", { hasText: title }) }).locator(".snippet pre");
    await w.page.locator(".snippet pre", { hasText: "anth/" }).first().waitFor({ timeout: 10_000 });
    const claude = await snippet("Claude Code").innerText();
    const codex = await snippet("Codex CLI").innerText();
    const gemini = await snippet("Gemini CLI").innerText();
    expect(claude).toContain("claude --model anth/claude-sonnet-4-5");
    expect(codex).toContain('model = "resp/gpt-5-codex"');
    expect(gemini).toContain("gemini --model gem/gemini-2.5-pro");
    await w.page.screenshot({ path: join(SHOTS, "setup-models.png"), fullPage: true });

    const model = /claude --model (\S+)/.exec(claude)![1];
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("with only an OpenAI account that lists no models, every snippet names a model of that provider (not the unconfigured built-in anthropic/ or gemini/), and Claude Code's is served", async () => {
  const only = await startGateway(`providers:\n  - id: up\n    kind: openai\n    base_url: "{{FAKE}}/v1"\naccounts:\n  - { id: up-1, provider: up, api_key: env:UP_KEY }\n`, { env: { UP_KEY: "sk-only-openai" } });
  const w = await openPage(browser, only.url);
  try {
    await w.page.goto(`${only.url}/dashboard/setup`);
    const snippet = (title: string) => w.page.locator(".card", { has: w.page.locator("h2, h3", { hasText: title }) }).locator(".snippet pre");
    await w.page.locator(".snippet pre", { hasText: "up/" }).first().waitFor({ timeout: 10_000 });
    const claude = await snippet("Claude Code").innerText();
    expect(claude.split("\n").at(-1)).toBe("claude --model up/gpt-5");
    expect(await snippet("Codex CLI").innerText()).toContain('model = "up/gpt-5-codex"');
    expect(await snippet("Gemini CLI").innerText()).toContain("gemini --model up/gpt-5");
    const model = /claude --model (\S+)/.exec(claude)![1];
    const res = await fetch(`${only.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
    await only.stop();
  }
}, 60_000);

/** The `[model_providers.switchyard]` table of a TOML text, without the entry naming Codex's key. */
function providerTable(toml: string): Record<string, unknown> {
  const doc = Bun.TOML.parse(toml) as { model_provider?: string; model_providers?: Record<string, Record<string, unknown>> };
  const { env_key: _e, experimental_bearer_token: _b, ...table } = doc.model_providers?.[doc.model_provider ?? ""] ?? {};
  return table;
}

test("the Codex snippet's provider table is README's and the one `switchyard setup codex` writes, supports_websockets included", async () => {
  const w = await openPage(browser, gw.url);
  const home = mkdtempSync(join(tmpdir(), "switchyard-setup-snippet-"));
  try {
    await w.page.goto(`${gw.url}/dashboard/setup`);
    const codex = w.page.locator(".card", { has: w.page.locator("h2, h3", { hasText: "Codex CLI" }) }).locator(".snippet pre");
    await codex.filter({ hasText: "resp/" }).waitFor({ timeout: 10_000 });
    const page = providerTable((await codex.innerText()).split("# then, in the shell:")[0]!);
    expect(page).toMatchObject({ supports_websockets: true, wire_api: "responses", base_url: `${gw.url}/v1` });

    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Point your agent at it"));
    const block = /```toml\n([\s\S]*?)```/.exec(section)![1]!;
    const documented = providerTable(block);
    expect({ ...page, base_url: "(the gateway)/v1" }).toEqual({ ...documented, base_url: "(the gateway)/v1" });

    const written = planSetup({ target: "codex", gatewayUrl: gw.url, key: "sy-example", home, dryRun: true })[0]!.after;
    expect(providerTable(written)).toEqual(page);
  } finally {
    await w.close();
    rmSync(home, { recursive: true, force: true });
  }
}, 60_000);

test("the Gemini snippet's setup line works as copied for a gateway whose data directory is not ~/.switchyard: it names this instance", async () => {
  const w = await openPage(browser, gw.url);
  // a new user's home: no ~/.switchyard/instance.json (this gateway's is in its own temporary directory)
  const home = mkdtempSync(join(tmpdir(), "switchyard-setup-gemini-"));
  try {
    await w.page.goto(`${gw.url}/dashboard/setup`);
    const gemini = w.page.locator(".card", { has: w.page.locator("h2, h3", { hasText: "Gemini CLI" }) }).locator(".snippet pre");
    await gemini.filter({ hasText: "gem/" }).waitFor({ timeout: 10_000 });
    const command = (await gemini.innerText()).split("\n").find((l) => l.startsWith("switchyard setup gemini"))!;
    expect(command).toBe(`switchyard setup gemini --url ${gw.url}`);
    // `switchyard` is the CLI (README: alias switchyard="bun $PWD/src/main.ts" in a checkout)
    // (not spawnSync: the gateway answers from this process)
    const child = Bun.spawn([...SOURCE_CLI, ...command.split(" ").slice(1)], { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout.trim().split("\n").at(-1)).toBe(`gemini now points at ${gw.url}`);
    expect(JSON.parse(readFileSync(join(home, ".gemini/settings.json"), "utf8")).security.auth.selectedType).toBe("gemini-api-key");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
    rmSync(home, { recursive: true, force: true });
  }
}, 60_000);
