/**
 * `switchyard setup` over what a new user already has from README (a new user's tryout): Codex's
 * `config.toml` written by hand from README's snippet, its `[model_providers.switchyard]` table with
 * `env_key = "SWITCHYARD_KEY"` and trailing comments; and Gemini CLI set up without `--model` on a
 * gateway whose built-in `gemini` provider has an account, or whose only Gemini-format provider lists
 * one of Gemini CLI's bare ids.
 *
 * Before: setup added `experimental_bearer_token` beside that `env_key`, which Codex reads first (without
 * the variable `codex exec` stopped with "Missing environment variable: SWITCHYARD_KEY"; with it, it
 * sent the variable's placeholder, not setup's key); a line setup rewrote lost its trailing comment;
 * `setup gemini` judged Gemini CLI's bare ids by `GET /v1/models`, where an API-key provider without
 * `models:` lists nothing (a false "every prompt would get a 404") and a listed `x/gemini-…` hid the
 * note though the bare ids are not served.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CODEX, ensureCli, INSTALL_HOOK_TIMEOUT_MS } from "../support/cli-install.ts";
import { runCli, startTrapProxy, type TrapProxy } from "../support/cli-run.ts";
import { CLI_TEST_TIMEOUT_MS, gatewayRequestLogs, plainAnswer } from "../support/cli-agents.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import { ENV_KEY_COMMENT, editToml } from "../../src/cli/setup.ts";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");
const KEY = "sy-readme-files-client-key-01";

/** README's Codex snippet ("Point your agent at it"), as a user copies it into `~/.codex/config.toml`. */
const README_CODEX = (url: string) => `model = "openai/gpt-5-codex"          # or a combo / alias name
model_provider = "switchyard"

[model_providers.switchyard]
name = "switchyard"
base_url = "${url}/v1"
wire_api = "responses"
env_key = "SWITCHYARD_KEY"            # export SWITCHYARD_KEY=placeholder (or a real switchyard key)
supports_websockets = true            # Codex's Responses WebSocket (see "What runs today")
`;

/** Runs `switchyard setup …` with HOME = `home` against `gw` (found through its data directory). */
async function setup(gw: TestGateway, home: string, ...args: string[]) {
  const proc = Bun.spawn(["bun", MAIN, "setup", ...args, "--data-dir", gw.dataDir, "--client-key", KEY], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const homes: string[] = [];
function scratchHome(): string {
  const home = mkdtempSync(join(tmpdir(), "sy-setup-readme-"));
  homes.push(home);
  return home;
}
const read = (p: string) => readFileSync(p, "utf8");

let gw: TestGateway;
beforeAll(async () => {
  // keys required: a Codex that sent anything but setup's key would get 401s
  gw = await startGateway(
    `
server: { require_api_key: true }
${providersAtFake(["gemini", "gemini"], ["resp", "openai-responses"])}
    models:
      gpt-e2e: { context_window: 400000 }
accounts:
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
  - id: gemini-1
    provider: gemini
    api_key: env:FAKE_KEY
keys:
  - name: laptop
    key: env:SETUP_KEY
`,
    { env: { SETUP_KEY: KEY } },
  );
});
afterAll(async () => {
  await gw?.stop();
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

describe("setup codex over README's hand-written config.toml", () => {
  test("env_key is commented out (said so in a note), each rewritten line keeps its comment, a second run changes nothing", async () => {
    const home = scratchHome();
    const file = join(home, ".codex", "config.toml");
    mkdirSync(join(home, ".codex"));
    writeFileSync(file, README_CODEX(gw.url));
    const r = await setup(gw, home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", "/nonexistent/codex");
    expect(r.code, r.stderr).toBe(0);
    expect(read(file)).toBe(`model = "resp/gpt-e2e"                # or a combo / alias name
model_provider = "switchyard"
model_context_window = 400000
model_auto_compact_token_limit = 360000

[model_providers.switchyard]
name = "switchyard"
base_url = "${gw.url}/v1"
wire_api = "responses"
# ${ENV_KEY_COMMENT}
# env_key = "SWITCHYARD_KEY"            # export SWITCHYARD_KEY=placeholder (or a real switchyard key)
supports_websockets = true            # Codex's Responses WebSocket (see "What runs today")
experimental_bearer_token = "${KEY}"
`);
    expect((Bun.TOML.parse(read(file)) as { model_providers: { switchyard: Record<string, unknown> } }).model_providers.switchyard).not.toHaveProperty("env_key");
    expect(r.stdout.split("\n").filter((l) => l.includes("env_key"))).toContain(
      `note: ${file}: setup commented out env_key = "SWITCHYARD_KEY" in [model_providers.switchyard]: Codex reads the key from that variable before experimental_bearer_token (without the variable it stops with "Missing environment variable"; with it, it sends the variable's value, not the key setup writes); the line stays in the file, commented out, and so does the file as it was in setup's copy of it (backup:)`,
    );
    expect(r.stdout).toContain(`backup: ${file}.switchyard-original`);
    expect(read(`${file}.switchyard-original`)).toBe(README_CODEX(gw.url));
    expect(r.stdout).not.toContain(KEY);
    const after = read(file);
    const again = await setup(gw, home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", "/nonexistent/codex");
    expect(again.stdout).toContain("nothing to change");
    expect(again.stdout).not.toContain("env_key");
    expect(read(file)).toBe(after);
    // undo leaves a file that pointed at the gateway before setup (README's by hand), and names the copy that has it back
    const undo = Bun.spawnSync(["bun", MAIN, "setup", "codex", "--undo"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
    expect(undo.exitCode).toBe(1);
    expect(read(file)).toBe(after);
    expect(undo.stdout.toString()).toContain(`; or, to have that file back as setup first found it, copy ${file}.switchyard-original over it (cp ${file}.switchyard-original ${file})`);
  });

  test("editToml keeps a rewritten line's comment (in its column when the value leaves room), even after a value holding a # or quotes; an unchanged value leaves its line as written", () => {
    const before = `model = "a"  # short\nmodel_provider = 'switchyard' # literal, same value\n[model_providers.switchyard]\nbase_url = "http://x/#/v1"          # hash in the string\nname = "s\\"#"# tight\n`;
    const out = editToml(before, [["model", "a-much-longer-model-name"], ["model_provider", "switchyard"]], "model_providers.switchyard", [["base_url", "http://y/v1"], ["name", "switchyard"]]);
    expect(out).toBe(
      `model = "a-much-longer-model-name"  # short\nmodel_provider = 'switchyard' # literal, same value\n[model_providers.switchyard]\nbase_url = "http://y/v1"            # hash in the string\nname = "switchyard" # tight\n`,
    );
  });

  describe("the real Codex with README's file after setup, no SWITCHYARD_KEY in its environment", () => {
    let trap: TrapProxy;
    beforeAll(() => {
      trap = startTrapProxy();
    });
    afterAll(() => trap?.stop());
    test(
      "answers through the gateway with setup's key (it stopped with \"Missing environment variable: SWITCHYARD_KEY\")",
      async () => {
        const bin = await ensureCli(CODEX);
        const home = scratchHome();
        const file = join(home, ".codex", "config.toml");
        mkdirSync(join(home, ".codex"));
        // README's file, plus Codex's own housekeeping switches (as in the other Codex e2e tests)
        writeFileSync(file, README_CODEX(gw.url).replace('model_provider = "switchyard"', 'model_provider = "switchyard"\ncheck_for_update_on_startup = false') + "\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n");
        expect((await setup(gw, home, "codex", "--model", "resp/gpt-e2e", "--codex-bin", bin)).code).toBe(0);
        gw.fake.reset();
        gw.fake.handle(plainAnswer("Codex answer with setup's key."));
        const logStart = gw.logs.length;
        mkdirSync(join(home, "work"));
        const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, USER: "root", SHELL: "/bin/bash", LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", ...trap.env() };
        const run = await runCli([bin, "exec", "--skip-git-repo-check", "--color", "never", "say hi"], { cwd: join(home, "work"), env, timeoutMs: 60_000 });
        gw.fake.handle(undefined);
        const story = `${run.stdout}\n${run.stderr}`;
        expect(story).not.toContain("Missing environment variable");
        expect(run.code, story).toBe(0);
        expect(run.stdout, story).toContain("Codex answer with setup's key.");
        const logged = gatewayRequestLogs(gw.logs.slice(logStart));
        expect(logged.length, story).toBeGreaterThanOrEqual(1);
        expect(logged.every((l) => l.model === "resp/gpt-e2e" && l.status === 200), story).toBe(true);
      },
      CLI_TEST_TIMEOUT_MS + INSTALL_HOOK_TIMEOUT_MS,
    );
  });
});

describe("setup gemini without --model asks the gateway's dry run about Gemini CLI's bare ids", () => {
  test("the built-in gemini provider has an account (no models: listed): no note (it said every prompt would get a 404)", async () => {
    const r = await setup(gw, scratchHome(), "gemini", "--dry-run");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("no --model given");
  });

  test("only a provider listing gemini-3-pro-preview: the note names every other bare id (a listed gx/gemini-… hid it); --utility-model leaves only the answer models", async () => {
    const other = await startGateway(
      `
server: { require_api_key: true }
${providersAtFake(["gx", "gemini"])}
    models:
      gemini-3-pro-preview: { context_window: 1000000 }
accounts:
  - id: gx-1
    provider: gx
    api_key: env:FAKE_KEY
keys:
  - name: laptop
    key: env:SETUP_KEY
`,
      { env: { SETUP_KEY: KEY } },
    );
    try {
      const ids = "gemini-3.1-pro-preview, gemini-3-flash-preview, gemini-3.1-flash-lite, gemini-3.5-flash-lite, gemini-3-pro-preview";
      const r = await setup(other, scratchHome(), "gemini", "--dry-run");
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split("\n").filter((l) => l.includes("no --model given"))).toEqual([
        `note: no --model given, so Gemini CLI asks for its own models by their bare ids (${ids}), and the gateway at ${other.url} serves only some of them: no account serves gemini-3.1-pro-preview, gemini-3-flash-preview, gemini-3.1-flash-lite, gemini-3.5-flash-lite (an account of the built-in gemini provider would, or of a provider listing the id under models:), so its requests for those fail (switchyard route ID --format gemini says why); run switchyard setup gemini --model NAME (a model, alias or combo the gateway serves), or use gemini -m NAME`,
      ]);
      const u = await setup(other, scratchHome(), "gemini", "--utility-model", "gx/gemini-3-pro-preview", "--dry-run");
      expect(u.code, u.stderr).toBe(0);
      expect(u.stdout.split("\n").filter((l) => l.includes("no --model given"))).toEqual([
        `note: no --model given, so Gemini CLI asks for its own models by their bare ids (gemini-3.1-pro-preview, gemini-3-flash-preview), and the gateway at ${other.url} serves none of them: no account serves gemini-3.1-pro-preview, gemini-3-flash-preview (an account of the built-in gemini provider would, or of a provider listing the id under models:), so its requests for those fail (switchyard route ID --format gemini says why); run switchyard setup gemini --model NAME (a model, alias or combo the gateway serves), or use gemini -m NAME`,
      ]);
    } finally {
      await other.stop();
    }
  });
});
