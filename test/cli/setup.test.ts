/**
 * `switchyard setup claude-code|codex|gemini` (SPEC 2.2) as a user runs it, against a running gateway
 * and a scratch HOME that already holds unrelated settings: those survive byte for byte, the CLI's
 * own keys are written with the model's context window and compaction limit, a backup is kept, the
 * printed diff never shows the key, a second run changes nothing, `--dry-run` writes nothing. Then the
 * real Claude Code and Codex CLIs, started with nothing but that HOME, answer through the gateway.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CLAUDE_CODE, CODEX, ensureCli, INSTALL_HOOK_TIMEOUT_MS } from "../support/cli-install.ts";
import { runCli, startTrapProxy, type TrapProxy } from "../support/cli-run.ts";
import { CLI_TEST_TIMEOUT_MS, gatewayRequestLogs, plainAnswer } from "../support/cli-agents.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { claudeModelBehind, CODEX_CATALOG_FILE, editToml, geminiCompressionThreshold } from "../../src/cli/setup.ts";
import { GEMINI_UTILITY_ALIASES } from "../../src/cli/gemini-utility-models.ts";
import { promptOf } from "../../src/cli/codex-instructions.ts";
import { providersAtFake } from "../support/configs.ts";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");
const KEY = "sy-setup-client-key-0001";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
server: { require_api_key: true }
${providersAtFake(["anth", "anthropic"])}
    models:
      claude-e2e: { context_window: 200000, max_output_tokens: 32000 }
      claude-sonnet-4-5: { context_window: 200000, max_output_tokens: 64000 }
  - id: resp
    kind: openai-responses
    base_url: "{{FAKE}}/v1"
    models:
      gpt-e2e: { context_window: 400000, reasoning_efforts: [low, medium, high] }
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
aliases:
  coding: anth/claude-e2e
keys:
  - name: laptop
    key: env:SETUP_KEY
`,
    { env: { SETUP_KEY: KEY } },
  );
});
afterAll(async () => {
  await gw?.stop();
});

/** Runs `switchyard setup …` with HOME = `home`, the gateway found through its data directory. */
async function setup(home: string, ...args: string[]) {
  const proc = Bun.spawn(["bun", MAIN, "setup", ...args, "--data-dir", gw.dataDir, "--client-key", KEY], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** A scratch HOME with unrelated settings of all three CLIs. */
function scratchHome(): string {
  const home = mkdtempSync(join(tmpdir(), "sy-setup-"));
  mkdirSync(join(home, ".claude"));
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash(ls:*)"] }, env: { MY_VAR: "keep me" }, theme: "dark" }, null, 2) + "\n");
  mkdirSync(join(home, ".codex"));
  writeFileSync(
    join(home, ".codex", "config.toml"),
    `# my codex settings
approval_policy = "never"

[model_providers.other]
name = "Other"
base_url = "https://other.example/v1"

[projects."/home/me/work"]
trust_level = "trusted"
`,
  );
  mkdirSync(join(home, ".gemini"));
  writeFileSync(join(home, ".gemini", ".env"), "# mine\nOTHER_TOOL_TOKEN=abc\n");
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ ui: { theme: "GitHub" }, security: { folderTrust: { enabled: false } } }, null, 2));
  return home;
}

const read = (p: string) => readFileSync(p, "utf8");

/** What setup says when the client key's `models` allow-list leaves `model` out (`why`: the gateway's 403 message). */
const allowListRefusal = (model: string, url: string, why: string) =>
  `the client key setup was given may not use the model ${model}: the key's models allow-list leaves it out, so the gateway at ${url} would answer every request the CLI sends for it with 403: ${why} Pass a key whose allow-list includes ${model} with --client-key (switchyard keys create NAME --models ${model} makes one; a key of the config file gets it under keys[].limits.models), or pick a model this key allows (GET ${url}/v1/models with that key lists them); nothing was written`;
/** The copies setup kept in `dir`: `<file>.switchyard-original` (before the first setup) and `<file>.switchyard-backup-<ms>` (later runs). */
const backupsIn = (dir: string) => readdirSync(dir).filter((f) => f.includes(".switchyard-backup-") || f.endsWith(".switchyard-original"));

describe("setup writes each CLI's settings", () => {
  test("claude-code: the env block gets the gateway, key, model and its window; unrelated settings survive; idempotent", async () => {
    const home = scratchHome();
    try {
      const file = join(home, ".claude", "settings.json");
      const original = read(file);
      const r = await setup(home, "claude-code", "--model", "anth/claude-e2e");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("+    \"CLAUDE_CODE_MAX_CONTEXT_TOKENS\": \"200000\"");
      // the test's gateway listens on port 0 (newuser10's tryout: setup wrote its ephemeral port silently)
      expect(r.stdout).toContain(
        `note: this instance was started on port 0, so ${gw.url} holds the port it picked for this start: claude-code stops reaching the gateway when it is restarted on another; give it a fixed port (--port P or server.port in the config file) and run switchyard setup claude-code again`,
      );
      expect(r.stdout).not.toContain(KEY);
      // the existing file (0644, as scratchHome wrote it) now holds the client key: readable by its owner alone
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const s = JSON.parse(read(file));
      expect(s).toEqual({
        permissions: { allow: ["Bash(ls:*)"] },
        env: {
          MY_VAR: "keep me",
          ANTHROPIC_BASE_URL: gw.url,
          ANTHROPIC_AUTH_TOKEN: KEY,
          ANTHROPIC_MODEL: "anth/claude-e2e",
          ANTHROPIC_DEFAULT_HAIKU_MODEL: "anth/claude-e2e",
          CLAUDE_CODE_MAX_CONTEXT_TOKENS: "200000",
          CLAUDE_CODE_AUTO_COMPACT_WINDOW: "200000",
          CLAUDE_CODE_MAX_OUTPUT_TOKENS: "32000",
        },
        theme: "dark",
      });
      const backups = backupsIn(join(home, ".claude"));
      expect(backups).toHaveLength(1);
      expect(read(join(home, ".claude", backups[0]!))).toBe(original);

      const after = read(file);
      const again = await setup(home, "claude-code", "--model", "anth/claude-e2e");
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("nothing to change");
      expect(read(file)).toBe(after);
      expect(backupsIn(join(home, ".claude"))).toHaveLength(1);

      // A gateway name that says which Claude model it is: Claude Code's modelOverrides maps that
      // model to it, so Claude Code knows the model instead of reporting it unrecognized.
      expect((await setup(home, "claude-code", "--model", "anth/claude-sonnet-4-5")).code).toBe(0);
      const mapped = JSON.parse(read(file));
      expect(mapped.modelOverrides).toEqual({ "claude-sonnet-4-5": "anth/claude-sonnet-4-5" });
      expect(mapped.env.ANTHROPIC_MODEL).toBe("anth/claude-sonnet-4-5");
      // the copies setup keeps (the original of a 0644 file, a later run's backup holding the key) are private too
      const copies = backupsIn(join(home, ".claude"));
      expect(copies).toHaveLength(2);
      for (const c of copies) expect([c, statSync(join(home, ".claude", c)).mode & 0o777]).toEqual([c, 0o600]);
      expect(mapped.env.CLAUDE_CODE_MAX_OUTPUT_TOKENS).toBe("64000");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("claudeModelBehind maps only names that say which Claude model they are", () => {
    expect(claudeModelBehind("anth/claude-sonnet-4-5")).toBe("claude-sonnet-4-5");
    expect(claudeModelBehind("bedrock/claude-3-5-sonnet-20241022")).toBe("claude-3-5-sonnet-20241022");
    expect(claudeModelBehind("anth/claude-e2e")).toBeUndefined();
    expect(claudeModelBehind("claude-sonnet-4-5")).toBeUndefined(); // Claude Code knows it as is
    expect(claudeModelBehind("glm/glm-5.3")).toBeUndefined();
    expect(claudeModelBehind("coding")).toBeUndefined();
  });

  test("codex: model, window, compaction limit and model catalog at the top, the switchyard provider table; comments and other tables kept", async () => {
    const codex = await ensureCli(CODEX);
    const home = scratchHome();
    try {
      const file = join(home, ".codex", "config.toml");
      const catalogFile = join(home, ".codex", CODEX_CATALOG_FILE);
      const r = await setup(home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", codex);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain(KEY);
      expect(read(file)).toBe(`# my codex settings
approval_policy = "never"
model_provider = "switchyard"
model = "resp/gpt-e2e"
model_context_window = 400000
model_auto_compact_token_limit = 360000
model_catalog_json = "${catalogFile}"

[model_providers.other]
name = "Other"
base_url = "https://other.example/v1"

[projects."/home/me/work"]
trust_level = "trusted"

[model_providers.switchyard]
name = "switchyard"
base_url = "${gw.url}/v1"
wire_api = "responses"
supports_websockets = true
experimental_bearer_token = "${KEY}"
`);
      // Codex's model catalog: the chosen model first, then every model the gateway lists, each with
      // what the gateway knows (window, compaction limit, the reasoning efforts Codex parses).
      const catalog = JSON.parse(read(catalogFile)) as { models: Record<string, unknown>[] };
      expect(catalog.models.map((m) => m.slug)).toEqual(["resp/gpt-e2e", "anth/claude-e2e", "anth/claude-sonnet-4-5", "coding"]);
      expect(catalog.models.map((m) => m.priority)).toEqual([0, 1, 2, 3]);
      expect(catalog.models[0]).toMatchObject({
        context_window: 400000,
        max_context_window: 400000,
        auto_compact_token_limit: 360000,
        default_reasoning_level: "medium",
        supported_reasoning_levels: [
          { effort: "low", description: "low" },
          { effort: "medium", description: "medium" },
          { effort: "high", description: "high" },
        ],
        visibility: "list",
        supported_in_api: true,
      });
      expect(catalog.models[1]).toMatchObject({ slug: "anth/claude-e2e", context_window: 200000, supported_reasoning_levels: [], default_reasoning_level: null });
      expect(catalog.models[3]).toMatchObject({ slug: "coding", context_window: 200000 });
      // Every entry carries the prompt this Codex sends for a model it does not know (read from it).
      const prompt = catalog.models[0]!.base_instructions;
      expect(typeof prompt === "string" && prompt.length > 1000).toBe(true);
      expect(catalog.models.every((m) => m.base_instructions === prompt)).toBe(true);
      const after = read(file);
      const catalogAfter = read(catalogFile);
      expect((await setup(home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", codex)).stdout).toContain("nothing to change");
      expect(read(file)).toBe(after);
      expect(read(catalogFile)).toBe(catalogAfter);
      // Another model later: the model lines change, and the catalog lists it first.
      const other = await setup(home, "codex", "--model", "anth/claude-e2e", "--codex-bin", codex);
      expect(other.stdout).toContain('-model = "resp/gpt-e2e"');
      expect(other.stdout).toContain('+model = "anth/claude-e2e"');
      expect(read(file)).toContain("model_context_window = 200000\nmodel_auto_compact_token_limit = 180000\n");
      expect((JSON.parse(read(catalogFile)) as { models: { slug: string }[] }).models[0]!.slug).toBe("anth/claude-e2e");
      expect(backupsIn(join(home, ".codex"))).toHaveLength(3); // config.toml twice, the catalog once
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, INSTALL_HOOK_TIMEOUT_MS);

  test("codex with a --codex-bin that cannot be started: setup says so, writes no catalog and exits (it hung after its last line: setup17)", async () => {
    const home = scratchHome();
    try {
      const r = await setup(home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", join(home, "no-such-codex"));
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`note: could not read Codex's prompt from ${join(home, "no-such-codex")} (${join(home, "no-such-codex")} could not be started`);
      expect(existsSync(join(home, ".codex", CODEX_CATALOG_FILE))).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 20_000);

  test("codex without a Codex to read its prompt from: no catalog, and setup says why", async () => {
    const home = scratchHome();
    try {
      const r = await setup(home, "codex", "--model", "resp/gpt-e2e");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("note: no codex on PATH (or --codex-bin): no model catalog written");
      expect(read(join(home, ".codex", "config.toml"))).not.toContain("model_catalog_json");
      expect(existsSync(join(home, ".codex", CODEX_CATALOG_FILE))).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("codex against a gateway that lists no models yet (a first run before any account): no catalog, and setup says so", async () => {
    const codex = await ensureCli(CODEX);
    const empty = await startGateway("");
    const home = scratchHome();
    try {
      const proc = Bun.spawn(["bun", MAIN, "setup", "codex", "--codex-bin", codex, "--data-dir", empty.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
      const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code).toBe(0);
      expect(stdout).toContain(`note: the gateway at ${empty.url} lists no models yet (no account serves any): no model catalog written; run switchyard setup codex again once it lists some`);
      expect(read(join(home, ".codex", "config.toml"))).toContain("[model_providers.switchyard]");
      expect(existsSync(join(home, ".codex", CODEX_CATALOG_FILE))).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
      await empty.stop();
    }
  }, INSTALL_HOOK_TIMEOUT_MS);

  test("against a gateway with no account yet, setup writes the settings and says that every request will fail until one is added, and how; with accounts it says nothing of the sort", async () => {
    const empty = await startGateway("");
    const home = scratchHome();
    try {
      const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--data-dir", empty.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
      const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code).toBe(0);
      expect(stdout.split("\n").filter((l) => l.includes("no account yet"))).toEqual([
        `note: the gateway at ${empty.url} has no account yet, so every request the CLI sends fails until one is added: accounts: in its config file (an api_key per account), switchyard login claude-code|codex, or switchyard import claude-code|codex (switchyard accounts status lists them)`,
      ]);
      expect(JSON.parse(read(join(home, ".claude", "settings.json"))).env.ANTHROPIC_BASE_URL).toBe(empty.url);
      const served = await setup(scratchHome(), "claude-code", "--dry-run");
      expect(served.code).toBe(0);
      expect(served.stdout).not.toContain("no account yet");
    } finally {
      rmSync(home, { recursive: true, force: true });
      await empty.stop();
    }
  });

  test("gemini: .env and settings.json (auth type, model, compression threshold); other lines kept", async () => {
    const home = scratchHome();
    try {
      const r = await setup(home, "gemini", "--model", "coding");
      expect(r.code).toBe(0);
      expect(read(join(home, ".gemini", ".env"))).toBe(`# mine\nOTHER_TOOL_TOKEN=abc\nGOOGLE_GEMINI_BASE_URL=${gw.url}\nGEMINI_API_KEY=${KEY}\nGEMINI_MODEL=coding\n`);
      expect(statSync(join(home, ".gemini", ".env")).mode & 0o777).toBe(0o600);
      expect(JSON.parse(read(join(home, ".gemini", "settings.json")))).toEqual({
        ui: { theme: "GitHub" },
        security: { folderTrust: { enabled: false }, auth: { selectedType: "gemini-api-key" } },
        model: { name: "coding", compressionThreshold: geminiCompressionThreshold(200000) },
        modelConfigs: { customOverrides: GEMINI_UTILITY_ALIASES.map((alias) => ({ match: { model: alias }, modelConfig: { model: "coding" } })) },
      });
      expect(geminiCompressionThreshold(200000)).toBe(0.0954);
      expect((await setup(home, "gemini", "--model", "coding")).stdout).toContain("nothing to change");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("gemini --utility-model: Gemini CLI's utility aliases (flash-lite summarizer, next-speaker check, compression) point at it, the user's own overrides stay; a second run and a change of model keep one entry per alias (newuser14 K1)", async () => {
    const home = scratchHome();
    const mine = { match: { model: "chat-base" }, modelConfig: { generateContentConfig: { temperature: 0.1 } } };
    const settingsPath = join(home, ".gemini", "settings.json");
    writeFileSync(settingsPath, JSON.stringify({ modelConfigs: { customOverrides: [mine] } }, null, 2));
    try {
      const r = await setup(home, "gemini", "--model", "coding", "--utility-model", "resp/gpt-e2e");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("note: Gemini CLI's utility tasks (session summaries, next-speaker and loop checks, chat compression) now use resp/gpt-e2e");
      expect(r.stdout).not.toContain("--utility-model NAME names a cheaper one");
      const overrides = () => JSON.parse(read(settingsPath)).modelConfigs.customOverrides as Array<{ match: { model: string }; modelConfig: { model?: string } }>;
      expect(overrides()[0] as unknown).toEqual(mine);
      expect(overrides().slice(1)).toEqual(GEMINI_UTILITY_ALIASES.map((alias) => ({ match: { model: alias }, modelConfig: { model: "resp/gpt-e2e" } })));
      expect(overrides().map((o) => o.match.model)).toContain("summarizer-default");
      expect((await setup(home, "gemini", "--model", "coding", "--utility-model", "resp/gpt-e2e")).stdout).toContain("nothing to change");
      // without --utility-model the utility aliases follow --model; still one entry per alias
      const follows = await setup(home, "gemini", "--model", "coding");
      expect(follows.code).toBe(0);
      // …and the note says what that costs (they run several times per turn) and how to name a cheaper one (review14 R6)
      expect(follows.stdout).toContain("now use coding (modelConfigs.customOverrides): several calls per turn, so a dear model costs more and answers slower there; --utility-model NAME names a cheaper one");
      expect(overrides().length).toBe(1 + GEMINI_UTILITY_ALIASES.length);
      expect(new Set(overrides().slice(1).map((o) => o.modelConfig.model))).toEqual(new Set(["coding"]));
      // a utility model the gateway does not serve is refused, nothing written
      const before = read(settingsPath);
      const bad = await setup(home, "gemini", "--model", "coding", "--utility-model", "nope/nothing");
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("nope/nothing");
      expect(read(settingsPath)).toBe(before);
      // the backups setup kept restore the user's file as it was
      expect(JSON.parse(read(join(home, ".gemini", "settings.json.switchyard-original")))).toEqual({ modelConfigs: { customOverrides: [mine] } });
      // another CLI has no utility-model setting: refused, not ignored
      const codex = await setup(home, "codex", "--utility-model", "coding", "--dry-run");
      expect(codex.code).toBe(2);
      expect(codex.stderr).toContain("--utility-model is for setup gemini");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("gemini without --model on a gateway that serves no gemini-… model: setup says Gemini CLI's own models would get 404s and to pass --model (newuser13 J2); with --model it does not", async () => {
    const home = scratchHome();
    try {
      const r = await setup(home, "gemini", "--dry-run");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        `note: no --model given, so Gemini CLI asks for its own models by their bare ids (gemini-3.1-pro-preview, gemini-3-flash-preview, gemini-3.1-flash-lite, gemini-3.5-flash-lite, gemini-3-pro-preview), and the gateway at ${gw.url} serves none of them: no account serves gemini-3.1-pro-preview, gemini-3-flash-preview, gemini-3.1-flash-lite, gemini-3.5-flash-lite, gemini-3-pro-preview (an account of the built-in gemini provider would, or of a provider listing the id under models:), so its requests for those fail (switchyard route ID --format gemini says why); run switchyard setup gemini --model NAME (a model, alias or combo the gateway serves), or use gemini -m NAME`,
      );
      expect((await setup(home, "gemini", "--model", "coding", "--dry-run")).stdout).not.toContain("no --model given");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a gateway that requires keys: setup without a valid client key fails before writing and says how to get one; --key is setup's older name for --client-key", async () => {
    const home = scratchHome();
    try {
      const before = read(join(home, ".claude", "settings.json"));
      const run = async (...extra: string[]) => {
        const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--data-dir", gw.dataDir, ...extra], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
        const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
        return { stdout, stderr, code };
      };
      const none = await run();
      expect(none.code).toBe(1);
      expect(none.stdout).toBe("");
      expect(none.stderr.trim()).toBe(
        `the gateway at ${gw.url} requires a client key and refuses the placeholder key setup writes when none is given: pass a valid one with --client-key KEY or SWITCHYARD_KEY (switchyard keys create NAME makes one); nothing was written`,
      );
      // --key is setup's older name for --client-key: the same check, the same meaning
      for (const flag of ["--client-key", "--key"]) {
        const wrong = await run(flag, "sy-not-a-key-of-this-gateway");
        expect(wrong.code).toBe(1);
        expect(wrong.stderr).toContain("requires a client key and refuses the key given");
        expect(wrong.stderr).not.toContain("sy-not-a-key-of-this-gateway");
      }
      expect(read(join(home, ".claude", "settings.json"))).toBe(before);
      const older = await run("--key", KEY);
      expect({ code: older.code, stderr: older.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(read(join(home, ".claude", "settings.json"))).env.ANTHROPIC_AUTH_TOKEN).toBe(KEY);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("--dry-run prints the diff and writes nothing; a model the gateway does not list is an error", async () => {
    const home = scratchHome();
    try {
      const before = read(join(home, ".codex", "config.toml"));
      const r = await setup(home, "codex", "--model", "resp/gpt-e2e", "--dry-run");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('+model_context_window = 400000');
      expect(r.stdout).toContain("dry run: nothing was written");
      expect(read(join(home, ".codex", "config.toml"))).toBe(before);
      expect(backupsIn(join(home, ".codex"))).toHaveLength(0);
      const bad = await setup(home, "codex", "--model", "nope/none");
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("does not list the model nope/none");
      expect(read(join(home, ".codex", "config.toml"))).toBe(before);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("the printed diff of the user's own file keeps its lines but escapes a control sequence in it (ESC, BEL, U+202E): a file cannot drive the terminal", async () => {
    const demo = await startGateway(demoConfigYaml("{{FAKE}}"));
    const home = mkdtempSync(join(tmpdir(), "sy-setup-escape-"));
    try {
      mkdirSync(join(home, ".gemini"), { recursive: true });
      writeFileSync(join(home, ".gemini", "settings.json"), '{\n  // hi \u001b]0;pwned\u0007 \u202eyrt\n  "theme": "dark"\n}\n');
      const proc = Bun.spawn(["bun", MAIN, "setup", "gemini", "--model", "fast", "--dry-run", "--data-dir", demo.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
      const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code).toBe(0);
      // the comment is kept (an unchanged line of the diff), its control characters shown escaped
      expect(stdout.split("\n")).toContain("   // hi \\u001b]0;pwned\\u0007 \\u202eyrt");
      expect(stdout).not.toMatch(/[\u001b\u0007\u202e]/);
      expect(stdout.split("\n")).toContain('-  "theme": "dark"'); // its own lines kept
    } finally {
      await demo.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a combo or alias without a known window: the note says to set it on its first target's model, not under the combo's name", async () => {
    // scripts/demo's gateway: combo demo and alias fast over providers that list no models
    const demo = await startGateway(demoConfigYaml("{{FAKE}}"));
    const home = mkdtempSync(join(tmpdir(), "sy-setup-demo-"));
    try {
      for (const [name, kind] of [
        ["demo", "a combo"],
        ["fast", "an alias"],
      ]) {
        const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--model", name, "--dry-run", "--data-dir", demo.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
        const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
        expect(code).toBe(0);
        expect(stdout.split("\n").filter((l) => l.startsWith("note: the gateway knows no context_window"))).toEqual([
          `note: the gateway knows no context_window for ${name} (${kind}: the window of its first target's model); set providers[].models.<model>.context_window for that model in its config to size the CLI's compaction`,
        ]);
      }
    } finally {
      await demo.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a provider/model of a provider that lists no models (scripts/demo's demo-chat/gpt-demo) is accepted when the gateway routes it, saying so; an unknown provider, a model its provider does not list, a model the key's allow-list leaves out (listed or not), or an admin API setup cannot ask is refused, saying what to do", async () => {
    const demo = await startGateway(demoConfigYaml("{{FAKE}}"));
    const home = mkdtempSync(join(tmpdir(), "sy-setup-unlisted-"));
    const run = async (dataDir: string, ...args: string[]) => {
      const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--dry-run", ...args, "--data-dir", dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    };
    try {
      const ok = await run(demo.dataDir, "--model", "demo-chat/gpt-demo");
      expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: "" });
      expect(ok.stdout).toContain('+    "ANTHROPIC_MODEL": "demo-chat/gpt-demo",');
      expect(ok.stdout.split("\n").filter((l) => l.startsWith("note: "))).toEqual([
        "note: provider demo-chat lists no models, so the gateway does not list demo-chat/gpt-demo; it routes it to demo-chat/gpt-demo on account demo-chat-keyless, so setup writes it as given",
        "note: the gateway knows no context_window for demo-chat/gpt-demo; set providers[].models.<id>.context_window in its config to size the CLI's compaction",
        `note: this instance was started on port 0, so ${demo.url} holds the port it picked for this start: claude-code stops reaching the gateway when it is restarted on another; give it a fixed port (--port P or server.port in the config file) and run switchyard setup claude-code again`,
      ]);

      const unknown = await run(demo.dataDir, "--model", "demo-nope/gpt-demo");
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toStartWith(`the gateway at ${demo.url} does not list the model demo-nope/gpt-demo: it has no provider demo-nope (its providers: `);
      // anth lists its models: a name outside them is most likely a slip
      const missing = await run(gw.dataDir, "--client-key", KEY, "--model", "anth/claude-e2f");
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim()).toBe(
        `the gateway at ${gw.url} does not list the model anth/claude-e2f: provider anth lists its models (claude-e2e, claude-sonnet-4-5) and claude-e2f is not one of them; pick one, or add claude-e2f under that provider's models in the config (providers[].models.claude-e2f, with its context_window); nothing was written`,
      );
      // listed, but not for this key (its allow-list has only the alias coding)
      const { adminToken } = JSON.parse(read(join(gw.dataDir, "instance.json"))) as { adminToken: string };
      const made = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ name: "only-coding", limits: { models: ["coding"] } }) });
      expect(made.status).toBe(201);
      const onlyCoding = ((await made.json()) as { secret: string }).secret;
      const notAllowed = await run(gw.dataDir, "--client-key", onlyCoding, "--model", "anth/claude-e2e");
      expect(notAllowed.code).toBe(1);
      expect(notAllowed.stderr.trim()).toBe(allowListRefusal("anth/claude-e2e", gw.url, `Client key "only-coding" may not use the model "anth/claude-e2e"; its models limit allows: coding.`));
      // the same key's allow-list checked for a provider that lists no models (it was accepted: the
      // dry run routed for no particular key, and the CLI then got 403 on every request)
      const demoAdmin = (JSON.parse(read(join(demo.dataDir, "instance.json"))) as { adminToken: string }).adminToken;
      const fastOnly = await fetch(`${demo.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${demoAdmin}` }, body: JSON.stringify({ name: "fast-only", limits: { models: ["fast"] } }) });
      expect(fastOnly.status).toBe(201);
      const fastKey = ((await fastOnly.json()) as { secret: string }).secret;
      const unlistedNotAllowed = await run(demo.dataDir, "--client-key", fastKey, "--model", "demo-chat/gpt-demo");
      expect({ code: unlistedNotAllowed.code, stdout: unlistedNotAllowed.stdout }).toEqual({ code: 1, stdout: "" });
      expect(unlistedNotAllowed.stderr.trim()).toBe(allowListRefusal("demo-chat/gpt-demo", demo.url, `Client key "fast-only" may not use the model "demo-chat/gpt-demo"; its models limit allows: fast.`));
      // what setup refused is what the gateway does with that key
      const refused = await fetch(`${demo.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${fastKey}` }, body: JSON.stringify({ model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "hi" }] }) });
      expect(refused.status).toBe(403);
      await refused.text();
      // a key whose allow-list covers the provider is accepted as before
      const chatAll = await fetch(`${demo.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${demoAdmin}` }, body: JSON.stringify({ name: "chat-all", limits: { models: ["demo-chat/*"] } }) });
      const chatKey = ((await chatAll.json()) as { secret: string }).secret;
      const allowed = await run(demo.dataDir, "--client-key", chatKey, "--model", "demo-chat/gpt-demo");
      expect({ code: allowed.code, stderr: allowed.stderr }).toEqual({ code: 0, stderr: "" });
      expect(allowed.stdout).toContain("note: provider demo-chat lists no models, so the gateway does not list demo-chat/gpt-demo; it routes it to demo-chat/gpt-demo on account demo-chat-keyless");
      // a key over its rpm this minute (its budget or rpm passes with time, setup's settings outlive it):
      // accepted as the same key under its limit is (review18 R4: the dry run's 429 refused it)
      const oneRpm = await fetch(`${demo.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${demoAdmin}` }, body: JSON.stringify({ name: "one-rpm", limits: { rpm: 1 } }) });
      const oneRpmKey = ((await oneRpm.json()) as { secret: string }).secret;
      const spend = async () => (await fetch(`${demo.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${oneRpmKey}` }, body: JSON.stringify({ model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "hi" }] }) })).status;
      let last = await spend();
      for (let i = 0; i < 3 && last !== 429; i++) last = await spend();
      expect(last).toBe(429);
      const overRpm = await run(demo.dataDir, "--client-key", oneRpmKey, "--model", "demo-chat/gpt-demo");
      expect({ code: overRpm.code, stderr: overRpm.stderr }).toEqual({ code: 0, stderr: "" });
      expect(overRpm.stdout).toContain("note: provider demo-chat lists no models, so the gateway does not list demo-chat/gpt-demo; it routes it to demo-chat/gpt-demo on account demo-chat-keyless");
      // named by --url on a gateway that requires keys, with a client key and no admin key: setup cannot ask
      const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--dry-run", "--url", gw.url, "--client-key", KEY, "--model", "anth/claude-e2f"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(
        `the gateway at ${gw.url} does not list the model anth/claude-e2f, and setup cannot ask it whether it routes the name (its admin API answered 401): set SWITCHYARD_ADMIN_KEY to an admin key (or name the instance with --data-dir DIR), or give the model a combo or alias; nothing was written`,
      );
      expect(existsSync(join(home, ".claude"))).toBe(false);
    } finally {
      await demo.stop();
      rmSync(home, { recursive: true, force: true });
    }
  }, 30_000); // eleven setup runs and a demo gateway: ~3 s alone, past the default 5 s on a loaded machine

  test("an alias or combo the client key's allow-list leaves out is refused naming the allow-list and what to do (it said only that the gateway does not list it); a name the gateway does not know, or one setup cannot ask about, says that", async () => {
    const home = mkdtempSync(join(tmpdir(), "sy-setup-allow-"));
    const run = async (...args: string[]) => {
      const proc = Bun.spawn(["bun", MAIN, "setup", "claude-code", "--dry-run", ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    };
    try {
      const { adminToken } = JSON.parse(read(join(gw.dataDir, "instance.json"))) as { adminToken: string };
      const made = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ name: "anth-models-only", limits: { models: ["anth/*"] } }) });
      expect(made.status).toBe(201);
      const anthOnly = ((await made.json()) as { secret: string }).secret;
      // `anth/*` allows anth's models by their provider/model names, not the alias coding that points at one
      const alias = await run("--data-dir", gw.dataDir, "--client-key", anthOnly, "--model", "coding");
      expect({ code: alias.code, stdout: alias.stdout }).toEqual({ code: 1, stdout: "" });
      expect(alias.stderr.trim()).toBe(allowListRefusal("coding", gw.url, `Client key "anth-models-only" may not use the model "coding"; its models limit allows: anth/*.`));
      // what setup refused is what the gateway does with that key
      const refused = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": anthOnly }, body: JSON.stringify({ model: "coding", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) });
      expect(refused.status).toBe(403);
      await refused.text();
      const unknown = await run("--data-dir", gw.dataDir, "--client-key", KEY, "--model", "no-such-name");
      expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 1, stdout: "" });
      expect(unknown.stderr.trim()).toBe(`the gateway at ${gw.url} does not list the model no-such-name (see GET ${gw.url}/v1/models); nothing was written`);
      // named by --url without an admin key, setup cannot tell the two apart: it says both, and how to let it ask
      const blind = await run("--url", gw.url, "--client-key", anthOnly, "--model", "coding");
      expect({ code: blind.code, stdout: blind.stdout }).toEqual({ code: 1, stdout: "" });
      expect(blind.stderr.trim()).toBe(
        `the gateway at ${gw.url} does not list the model coding for the client key setup was given (see GET ${gw.url}/v1/models with that key): it knows no such alias, combo or model, or the key's models allow-list leaves it out; setup cannot ask which (its admin API answered 401): set SWITCHYARD_ADMIN_KEY to an admin key, or name the instance with --data-dir DIR; nothing was written`,
      );
      expect(existsSync(join(home, ".claude"))).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a bare model id the gateway routes but does not list (the name a CLI user types: claude-sonnet-4-5, gpt-e2e) is written with the limits of the provider/model it goes to, saying so; one it routes nowhere is refused", async () => {
    const home = scratchHome();
    try {
      const claude = await setup(home, "claude-code", "--dry-run", "--model", "claude-sonnet-4-5");
      expect({ code: claude.code, stderr: claude.stderr }).toEqual({ code: 0, stderr: "" });
      for (const line of ['+    "ANTHROPIC_MODEL": "claude-sonnet-4-5",', '+    "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "200000",', '+    "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "64000"']) expect(claude.stdout).toContain(line);
      expect(claude.stdout).toContain("note: the gateway does not list claude-sonnet-4-5, but routes it to anth/claude-sonnet-4-5 on account anth-1, so setup writes claude-sonnet-4-5 with the limits of anth/claude-sonnet-4-5\n");
      const codex = await setup(home, "codex", "--dry-run", "--model", "gpt-e2e");
      expect({ code: codex.code, stderr: codex.stderr }).toEqual({ code: 0, stderr: "" });
      for (const line of ['+model = "gpt-e2e"', "+model_context_window = 400000"]) expect(codex.stdout).toContain(line);
      expect(codex.stdout).toContain("note: the gateway does not list gpt-e2e, but routes it to resp/gpt-e2e on account resp-1");
      // what setup wrote is what the gateway serves
      const served = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY }, body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) });
      expect(served.status).toBe(200);
      await served.text();
      const nowhere = await setup(home, "claude-code", "--dry-run", "--model", "no-such-name");
      expect({ code: nowhere.code, stdout: nowhere.stdout, stderr: nowhere.stderr.trim() }).toEqual({ code: 1, stdout: "", stderr: `the gateway at ${gw.url} does not list the model no-such-name (see GET ${gw.url}/v1/models); nothing was written` });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a fresh HOME gets new files (no backup)", async () => {
    const home = mkdtempSync(join(tmpdir(), "sy-setup-fresh-"));
    try {
      const r = await setup(home, "codex");
      expect(r.code).toBe(0);
      expect(existsSync(join(home, ".codex", "config.toml"))).toBe(true);
      expect(backupsIn(join(home, ".codex"))).toHaveLength(0);
      expect(Bun.TOML.parse(read(join(home, ".codex", "config.toml")))).toMatchObject({ model_provider: "switchyard", model_providers: { switchyard: { base_url: `${gw.url}/v1` } } });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

test("editToml replaces a key in place and keeps inline comments, of other lines and of the line it rewrites", () => {
  const out = editToml('model = "a" # old\n# note\n[model_providers.switchyard]\nbase_url = "x"\nextra = 1 # mine\n', [["model", "b"]], "model_providers.switchyard", [["base_url", "y"]]);
  expect(out).toBe('model = "b" # old\n# note\n[model_providers.switchyard]\nbase_url = "y"\nextra = 1 # mine\n');
});

describe("the real CLIs started with only the HOME setup wrote", () => {
  let trap: TrapProxy;
  beforeAll(() => {
    trap = startTrapProxy();
  });
  afterAll(() => trap?.stop());
  const envFor = (home: string) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, USER: "root", SHELL: "/bin/bash", LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", ...trap.env() });

  test(
    "Claude Code answers through the gateway and knows the model (no unrecognized-model notice)",
    async () => {
      const bin = await ensureCli(CLAUDE_CODE);
      const home = scratchHome();
      try {
        // Claude Code's own housekeeping switches, written next to setup's keys the way a user would.
        const settings = JSON.parse(read(join(home, ".claude", "settings.json")));
        settings.env = { ...settings.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_MAX_RETRIES: "0" };
        writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify(settings, null, 2));
        expect((await setup(home, "claude-code", "--model", "anth/claude-sonnet-4-5")).code).toBe(0);
        gw.fake.reset();
        gw.fake.handle(plainAnswer("Answer through setup."));
        const logStart = gw.logs.length;
        mkdirSync(join(home, "work"));
        const run = await runCli([bin, "-p", "say hi", "--output-format", "json", "--no-session-persistence"], { cwd: join(home, "work"), env: envFor(home), timeoutMs: 60_000 });
        gw.fake.handle(undefined);
        const story = `${run.stdout}\n${run.stderr}`;
        expect(run.code, story).toBe(0);
        expect(JSON.parse(run.stdout).result, story).toBe("Answer through setup.");
        // Without setup's modelOverrides Claude Code 2.1 prints `[claude-code:unrecognized_model]` here.
        expect(story).not.toContain("unrecognized_model");
        expect(story).not.toContain("doesn't recognize the model");
        const logged = gatewayRequestLogs(gw.logs.slice(logStart));
        expect(logged.length, story).toBeGreaterThanOrEqual(1);
        expect(logged.every((l) => l.model === "anth/claude-sonnet-4-5" && l.status === 200), story).toBe(true);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
    INSTALL_HOOK_TIMEOUT_MS,
  );

  test(
    "Codex answers through the gateway over its WebSocket, with the gateway's model metadata (no fallback-metadata warning)",
    async () => {
      const bin = await ensureCli(CODEX);
      const home = scratchHome();
      try {
        expect((await setup(home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", bin)).code).toBe(0);
        // Codex's own housekeeping switches, as in the other Codex e2e tests.
        writeFileSync(join(home, ".codex", "config.toml"), read(join(home, ".codex", "config.toml")).replace('approval_policy = "never"', 'approval_policy = "never"\ncheck_for_update_on_startup = false') + "\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n");
        gw.fake.reset();
        gw.fake.handle(plainAnswer("Codex answer through setup."));
        const logStart = gw.logs.length;
        mkdirSync(join(home, "work"));
        const run = await runCli([bin, "exec", "--skip-git-repo-check", "--color", "never", "say hi"], { cwd: join(home, "work"), env: envFor(home), timeoutMs: 60_000 });
        gw.fake.handle(undefined);
        const story = `${run.stdout}\n${run.stderr}`;
        expect(run.code, story).toBe(0);
        expect(run.stdout, story).toContain("Codex answer through setup.");
        // Without setup's model catalog Codex 0.171 warns "Model metadata for `resp/gpt-e2e` not found".
        expect(story).not.toContain("Model metadata for");
        expect(story).not.toContain("fallback metadata");
        // …and the prompt is unchanged: the one Codex sends without a catalog (read by setup from it).
        const catalog = JSON.parse(read(join(home, ".codex", CODEX_CATALOG_FILE))) as { models: { base_instructions: string }[] };
        const sent = gw.fake.requests.map((q) => promptOf(q.body));
        expect(sent.length, story).toBeGreaterThanOrEqual(1);
        expect(sent.every((p) => p === catalog.models[0]!.base_instructions), story).toBe(true);
        const logged = gatewayRequestLogs(gw.logs.slice(logStart));
        expect(logged.length, story).toBeGreaterThanOrEqual(1);
        expect(logged.every((l) => l.model === "resp/gpt-e2e" && l.status === 200 && l.transport === "websocket"), story).toBe(true);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
    CLI_TEST_TIMEOUT_MS + INSTALL_HOOK_TIMEOUT_MS,
  );
});
