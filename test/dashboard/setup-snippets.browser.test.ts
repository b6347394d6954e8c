/**
 * The Setup page's snippets name models this gateway can serve (SPEC 9.4): without a combo or alias,
 * each CLI's snippet names a model of a provider of its own vendor that has an account — not the
 * built-in `anthropic/…`, `openai/…`, `gemini/…` providers, which have none here — and a request with
 * the model copied from the page is answered. The Codex snippet's `[model_providers.switchyard]` table is
 * the one README "Point your agent at it" shows and `switchyard setup codex` writes (the key aside). The
 * Gemini snippet works as copied (its `switchyard setup gemini` line included) for a gateway whose data
 * directory is not ~/.switchyard (scripts/demo's, a temporary one). On a gateway that requires keys the
 * snippets show a placeholder where the key goes, never a secret, and with a client key in its place
 * every snippet's request is served and Gemini's setup line passes that key on with `--client-key` (it once passed
 * none, and setup refused its own placeholder).
 */
import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planSetup } from "../../src/cli/setup.ts";
import { ROOT, SOURCE_CLI } from "../support/instance.ts";
import { openPage, SHOTS } from "../support/browser.ts";
import { DEFAULT_YAML, startGateway } from "../support/gateway.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

/** Where the snippets put a client key when keys are required (setup.tsx KEY_PLACEHOLDER). */
const KEY_PLACEHOLDER = "sy-YOUR-KEY";

/** The snippet in the card titled `title`: the last one (a CLI's card shows its setup command first, then the snippet by hand). */
const snippetOf = (page: Page, title: string) => page.locator(".card", { has: page.locator("h2, h3", { hasText: title }) }).locator(".snippet pre").last();
/** The `switchyard setup` command in the card of a CLI (its first snippet). */
const commandOf = (page: Page, title: string) => page.locator(".card", { has: page.locator("h2, h3", { hasText: title }) }).locator(".snippet pre").first();

// anth (anthropic), oai (openai), resp (openai-responses), gem (gemini), each with one account
const suite = withGatewayAndBrowser();

test("each snippet names a model of its vendor's provider with an account, and the copied model is served", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/setup`);
    const snippet = (title: string) => snippetOf(w.page, title);
    await w.page.locator(".snippet pre", { hasText: "anth/" }).first().waitFor({ timeout: 10_000 });
    const claude = await snippet("Claude Code").innerText();
    const codex = await snippet("Codex CLI").innerText();
    const gemini = await snippet("Gemini CLI").innerText();
    expect(claude).toContain("claude --model anth/claude-sonnet-5-5");
    expect(codex).toContain('model = "resp/gpt-5-codex"');
    expect(gemini).toContain("gemini --model gem/gemini-2.5-pro");
    // first in each card: the switchyard setup command, with --model (Gemini's setup line had none)
    const url = suite.gw.url;
    const oneLine = async (title: string) => (await commandOf(w.page, title).innerText()).replace(/ \\\n\s*/g, " ");
    expect(await oneLine("Claude Code")).toBe(`switchyard setup claude-code --url ${url} --model anth/claude-sonnet-5-5`);
    expect(await oneLine("Codex CLI")).toBe(`switchyard setup codex --url ${url} --model resp/gpt-5-codex`);
    expect(await oneLine("Gemini CLI")).toBe(`switchyard setup gemini --url ${url} --model gem/gemini-2.5-pro`);
    const cursor = await snippetOf(w.page, "Cursor").innerText();
    expect(cursor).toContain(`Override OpenAI Base URL and enter\n     ${url}/v1`);
    await w.page.screenshot({ path: join(SHOTS, "setup-models.png"), fullPage: true });

    const model = /claude --model (\S+)/.exec(claude)![1];
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
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
  const w = await openPage(suite.browser, only.url);
  try {
    await w.page.goto(`${only.url}/dashboard/setup`);
    const snippet = (title: string) => snippetOf(w.page, title);
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
  const w = await openPage(suite.browser, suite.gw.url);
  const home = mkdtempSync(join(tmpdir(), "switchyard-setup-snippet-"));
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/setup`);
    const codex = snippetOf(w.page, "Codex CLI");
    await codex.filter({ hasText: "resp/" }).waitFor({ timeout: 10_000 });
    const page = providerTable((await codex.innerText()).split("# then, in the shell:")[0]!);
    expect(page).toMatchObject({ supports_websockets: true, wire_api: "responses", base_url: `${suite.gw.url}/v1` });

    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Point your agent at it"));
    const block = /```toml\n([\s\S]*?)```/.exec(section)![1]!;
    const documented = providerTable(block);
    expect({ ...page, base_url: "(the gateway)/v1" }).toEqual({ ...documented, base_url: "(the gateway)/v1" });

    const written = planSetup({ target: "codex", gatewayUrl: suite.gw.url, key: "sy-example", home, dryRun: true })[0]!.after;
    expect(providerTable(written)).toEqual(page);
  } finally {
    await w.close();
    rmSync(home, { recursive: true, force: true });
  }
}, 60_000);


/**
 * A stand-in for `claude`, `codex` and `gemini` (argv: the tool, then its arguments): one request as
 * that CLI would send it, from what the snippet set (environment, Codex's config.toml); prints
 * "<tool> <status>".
 */
const CLIENT_STUB = `
const [tool, ...args] = process.argv.slice(2);
const model = args[args.indexOf("--model") + 1];
const env = process.env;
const post = (url, headers, body) => fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
let res;
if (tool === "claude") res = await post(env.ANTHROPIC_BASE_URL + "/v1/messages", { "x-api-key": env.ANTHROPIC_API_KEY }, { model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
else if (tool === "gemini") res = await post(env.GOOGLE_GEMINI_BASE_URL + "/v1beta/models/" + model + ":generateContent", { "x-goog-api-key": env.GEMINI_API_KEY }, { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
else {
  const doc = Bun.TOML.parse(await Bun.file(env.HOME + "/.codex/config.toml").text());
  const p = doc.model_providers[doc.model_provider];
  res = await post(p.base_url + "/responses", { authorization: "Bearer " + env[p.env_key] }, { model: doc.model, input: "hi" });
}
await res.text();
console.log(tool + " " + res.status);
`;

/**
 * Runs a snippet's shell lines in bash with HOME = `home`: \`switchyard\` is the CLI from source (README:
 * alias switchyard="bun $PWD/src/main.ts" in a checkout), \`claude\`, \`codex\` and \`gemini\` are
 * {@link CLIENT_STUB}. Not spawnSync: the gateway answers from this process.
 */
async function runSnippet(lines: string, home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stub = join(home, "client-stub.mjs");
  writeFileSync(stub, CLIENT_STUB);
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const script = [
    "set -e",
    `switchyard() { ${SOURCE_CLI.map(q).join(" ")} "$@"; }`,
    ...["claude", "codex", "gemini"].map((t) => `${t}() { ${q(process.execPath)} ${q(stub)} ${t} "$@"; }`),
    lines,
  ].join("\n");
  const child = Bun.spawn(["bash", "-c", script], { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

test("the Gemini card's setup command works as copied for a gateway whose data directory is not ~/.switchyard (it names this instance) and writes the model for Gemini CLI's helper tasks too; --undo then removes what it wrote", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  // a new user's home: no ~/.switchyard/instance.json (this gateway's is in its own temporary directory)
  const home = mkdtempSync(join(tmpdir(), "switchyard-setup-gemini-"));
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/setup`);
    const gemini = commandOf(w.page, "Gemini CLI");
    await gemini.filter({ hasText: "gem/" }).waitFor({ timeout: 10_000 });
    const r = await runSnippet(await gemini.innerText(), home);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain(`gemini now points at ${suite.gw.url}`);
    const settings = JSON.parse(readFileSync(join(home, ".gemini/settings.json"), "utf8"));
    expect(settings.security.auth.selectedType).toBe("gemini-api-key");
    expect(settings.model.name).toBe("gem/gemini-2.5-pro");
    // its helper tasks (session summaries, checks) go to the model too, not to gemini-… ids
    expect(JSON.stringify(settings.modelConfigs.customOverrides)).toContain("gem/gemini-2.5-pro");
    const stub = await runSnippet("set -a; . ~/.gemini/.env; set +a\ngemini --model gem/gemini-2.5-pro", home);
    expect(stub.stdout).toBe("gemini 200\n");
    const undo = await runSnippet("switchyard setup gemini --undo", home);
    expect({ code: undo.code, stderr: undo.stderr }).toEqual({ code: 0, stderr: "" });
    expect(existsSync(join(home, ".gemini/settings.json")) || existsSync(join(home, ".gemini/.env"))).toBe(false);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
    rmSync(home, { recursive: true, force: true });
  }
}, 60_000);

test("on a gateway that requires keys, the snippets hold a placeholder, never a secret, and work as copied once it is replaced by a client key: Claude Code's, Codex's and Gemini's requests are served, and Gemini's setup line writes that key", async () => {
  const ADMIN = "sy-setup-page-admin-key-0001";
  const CLIENT = "sy-setup-page-client-key-0002";
  const keyed = await startGateway(
    `${DEFAULT_YAML}
server: { require_api_key: true }
keys:
  - { name: operator, key: env:ADMIN_KEY, scopes: [admin] }
  - { name: laptop, key: env:CLIENT_KEY }
`,
    { env: { ADMIN_KEY: ADMIN, CLIENT_KEY: CLIENT } },
  );
  const w = await openPage(suite.browser, keyed.url);
  const home = mkdtempSync(join(tmpdir(), "switchyard-setup-keyed-"));
  try {
    await w.page.goto(`${keyed.url}/dashboard/setup`);
    await w.page.fill("#key", ADMIN);
    await w.page.click('button[type="submit"]');
    await snippetOf(w.page, "Gemini CLI").filter({ hasText: "gem/" }).waitFor({ timeout: 10_000 });
    const page = await w.page.content();
    expect(page).not.toContain(ADMIN);
    expect(page).not.toContain(CLIENT);
    const snippets: Record<string, string> = {};
    for (const title of ["Claude Code", "Codex CLI", "Gemini CLI"]) {
      snippets[title] = await snippetOf(w.page, title).innerText();
      expect({ title, placeholder: snippets[title]!.includes(KEY_PLACEHOLDER) }).toEqual({ title, placeholder: true });
    }
    await w.page.screenshot({ path: join(SHOTS, "setup-keys-required.png"), fullPage: true });
    const withKey = (s: string) => s.replaceAll(KEY_PLACEHOLDER, CLIENT);

    // the setup command holds the placeholder too, and with a client key in its place writes that key
    const command = await commandOf(w.page, "Gemini CLI").innerText();
    expect(command).toContain(`--client-key ${KEY_PLACEHOLDER}`);
    // as its comment says, with an admin key for the model the gateway does not list
    expect(command).toContain("export SWITCHYARD_ADMIN_KEY=<key>");
    const setup = await runSnippet(`export SWITCHYARD_ADMIN_KEY=${ADMIN}\n${withKey(command)}`, home);
    expect({ code: setup.code, stderr: setup.stderr }).toEqual({ code: 0, stderr: "" });
    expect(setup.stdout).toContain(`gemini now points at ${keyed.url}`);
    expect(setup.stdout).not.toContain(CLIENT); // setup's diff masks the key
    expect(readFileSync(join(home, ".gemini/.env"), "utf8")).toContain(`GEMINI_API_KEY=${CLIENT}\n`);
    const gemini = await runSnippet(withKey(snippets["Gemini CLI"]!), home);
    expect({ code: gemini.code, stderr: gemini.stderr, stdout: gemini.stdout }).toEqual({ code: 0, stderr: "", stdout: "gemini 200\n" });

    const claude = await runSnippet(withKey(snippets["Claude Code"]!), home);
    expect({ code: claude.code, stderr: claude.stderr, stdout: claude.stdout }).toEqual({ code: 0, stderr: "", stdout: "claude 200\n" });

    const [toml, shell] = withKey(snippets["Codex CLI"]!).split("# then, in the shell:");
    mkdirSync(join(home, ".codex"), { recursive: true });
    writeFileSync(join(home, ".codex/config.toml"), toml!);
    const codex = await runSnippet(shell!, home);
    expect({ code: codex.code, stderr: codex.stderr, stdout: codex.stdout }).toEqual({ code: 0, stderr: "", stdout: "codex 200\n" });

    // as copied, without a key of its own, the gateway refuses the request (the placeholder is no key)
    const unreplaced = await runSnippet(snippets["Claude Code"]!, home);
    expect(unreplaced.stdout).toBe("claude 401\n");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
    await keyed.stop();
    rmSync(home, { recursive: true, force: true });
  }
}, 60_000);

test("at 390 px every snippet line stays one line (a URL is never broken mid-way; a line wider than the card scrolls inside its block), the page is no wider than the screen, and at 1280 px no block needs to scroll", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    for (const width of [390, 1280]) {
      await w.page.setViewportSize({ width, height: 900 });
      await w.page.goto(`${suite.gw.url}/dashboard/setup`);
      await w.page.locator(".snippet pre", { hasText: "anth/" }).first().waitFor({ timeout: 10_000 });
      const blocks = await w.page.locator(".snippet pre").evaluateAll((pres) =>
        pres.map((pre) => {
          const cs = pre.ownerDocument.defaultView!.getComputedStyle(pre);
          const text = pre.textContent ?? "";
          const rows = (pre.scrollHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom)) / parseFloat(cs.lineHeight);
          return { first: text.split("\n")[0], lines: text.split("\n").length, rows: Math.round(rows), scrolls: pre.scrollWidth > pre.clientWidth };
        }),
      );
      // each CLI's setup command and its snippet by hand, Cursor's steps, the SDKs'
      expect(blocks.length).toBe(8);
      // each block is as many rows high as it has lines: nothing wrapped
      expect({ width, blocks: blocks.map((b) => ({ first: b.first, rows: b.rows })) }).toEqual({ width, blocks: blocks.map((b) => ({ first: b.first, rows: b.lines })) });
      const page = (await w.page.evaluate("({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })")) as { scrollWidth: number; innerWidth: number };
      expect(page.scrollWidth).toBeLessThanOrEqual(page.innerWidth);
      // at 390 the URL lines are wider than the card and scroll; at 1280 every line fits
      if (width === 390) expect(blocks.find((b) => b.first.startsWith("export ANTHROPIC_BASE_URL="))!.scrolls).toBe(true);
      else expect(blocks.filter((b) => b.scrolls).map((b) => b.first)).toEqual([]);
      await w.page.screenshot({ path: join(SHOTS, `setup-snippets-${width}.png`), fullPage: true });
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
