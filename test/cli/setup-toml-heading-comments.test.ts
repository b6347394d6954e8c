/**
 * `switchyard setup codex` over a `~/.codex/config.toml` whose tables have heading comments (comment
 * lines directly above a table's header, no blank line between: `# Providers I use` over
 * `[model_providers.work]`). Such a comment stays with its header: the top-level keys setup adds go
 * after the last top-level key, above the first table's heading comment, and a key added to a table
 * goes above the next table's heading comment (src/cli/toml-edit.ts `headingStart`).
 *
 * Before: a key was added after the last non-blank statement of its section, which was that comment,
 * so `model_provider = "switchyard"` landed between `# Providers I use` and `[model_providers.work]`
 * (the file still parsed: the heading read as the new key's comment, the table lost its own).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLACEHOLDER_KEY, runSetup, type SetupOptions } from "../../src/cli/setup.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { CODEX, ensureCli, INSTALL_HOOK_TIMEOUT_MS } from "../support/cli-install.ts";
import { runCli, startTrapProxy, type TrapProxy } from "../support/cli-run.ts";
import { CLI_TEST_TIMEOUT_MS, gatewayRequestLogs, plainAnswer } from "../support/cli-agents.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const GW = "http://127.0.0.1:20999";
const SY = `[model_providers.switchyard]\nname = "switchyard"\nbase_url = "${GW}/v1"\nwire_api = "responses"\nsupports_websockets = true\nexperimental_bearer_token = "switchyard"\n`;
const TOP = 'model_provider = "switchyard"\nmodel = "resp/gpt-e2e"\nmodel_context_window = 400000\nmodel_auto_compact_token_limit = 360000\n';

/** A user's config.toml: a top-level key, then tables each under a heading comment (one of two lines). */
const USER = `# my codex settings
approval_policy = "never"

# Providers I use besides the gateway
# (the work one needs the VPN)
[model_providers.work]
name = "work"
base_url = "http://127.0.0.1:9/v1"

# Profiles
[profiles.deep]
model_reasoning_effort = "high"
`;

const homes: string[] = [];
afterAll(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
function scratchHome(config: string): string {
  const home = mkdtempSync(join(tmpdir(), "sy-setup-heading-"));
  homes.push(home);
  mkdirSync(join(home, ".codex"));
  writeFileSync(join(home, ".codex", "config.toml"), config);
  return home;
}
const read = (p: string) => readFileSync(p, "utf8");
const options = (home: string): SetupOptions => ({
  target: "codex",
  gatewayUrl: GW,
  key: PLACEHOLDER_KEY,
  model: { id: "resp/gpt-e2e", contextWindow: 400_000 },
  home,
  dryRun: false,
  now: () => 1000,
});

describe("setup codex keeps a table's heading comment above its header", () => {
  test("the top-level keys go after the last top-level key, above the first table's two-line heading comment", () => {
    const home = scratchHome(USER);
    const file = join(home, ".codex", "config.toml");
    runSetup(options(home));
    expect(read(file)).toBe(USER.replace('approval_policy = "never"\n', `approval_policy = "never"\n${TOP}`) + `\n${SY}`);
    // a second run changes nothing
    runSetup(options(home));
    expect(read(file)).toBe(USER.replace('approval_policy = "never"\n', `approval_policy = "never"\n${TOP}`) + `\n${SY}`);
  });

  test("a file with no top-level key: they go at the top, above the first table's heading comment", () => {
    const before = "# Providers\n[model_providers.work]\nname = \"work\"\nbase_url = \"http://127.0.0.1:9/v1\"\n";
    const home = scratchHome(before);
    runSetup(options(home));
    expect(read(join(home, ".codex", "config.toml"))).toBe(`${TOP}${before}\n${SY}`);
  });

  test("keys added to an existing switchyard table go above the next table's heading comment", () => {
    const before = `[model_providers.switchyard]\nname = "switchyard"\n# Profiles\n[profiles.deep]\nmodel_reasoning_effort = "high"\n`;
    const home = scratchHome(before);
    runSetup(options(home));
    expect(read(join(home, ".codex", "config.toml"))).toBe(
      `${TOP}[model_providers.switchyard]\nname = "switchyard"\nbase_url = "${GW}/v1"\nwire_api = "responses"\nsupports_websockets = true\nexperimental_bearer_token = "switchyard"\n# Profiles\n[profiles.deep]\nmodel_reasoning_effort = "high"\n`,
    );
  });

  test("a comment with a blank line before the header is not a heading: a key goes after it, as before", () => {
    const before = `approval_policy = "never"\n# trailing note about the top-level keys\n\n[profiles.deep]\nmodel_reasoning_effort = "high"\n`;
    const home = scratchHome(before);
    runSetup(options(home));
    expect(read(join(home, ".codex", "config.toml"))).toBe(before.replace("about the top-level keys\n", `about the top-level keys\n${TOP}`) + `\n${SY}`);
  });
});

describe("the real Codex reads a setup-written config.toml whose tables have heading comments", () => {
  const KEY = "sy-toml-heading-key-01";
  let gw: TestGateway;
  let trap: TrapProxy;
  beforeAll(async () => {
    trap = startTrapProxy();
    gw = await startGateway(
      `
server: { require_api_key: true }
${providersAtFake(["resp", "openai-responses"])}
    models:
      gpt-e2e: { context_window: 400000 }
accounts:
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
keys:
  - name: laptop
    key: env:SETUP_KEY
`,
      { env: { SETUP_KEY: KEY } },
    );
  });
  afterAll(async () => {
    trap?.stop();
    await gw?.stop();
  });
  test(
    "codex exec answers through the gateway; the file keeps each heading above its table",
    async () => {
      const bin = await ensureCli(CODEX);
      const user = `check_for_update_on_startup = false\n${USER.replace("# Profiles\n", "# Quiet start\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n\n# Profiles\n")}`;
      const home = scratchHome(user);
      // spawned, not spawnSync: the gateway answers setup from this process
      const r = await runCli([...SOURCE_CLI, "setup", "codex", "--model", "resp/gpt-e2e", "--codex-bin", bin, "--data-dir", gw.dataDir, "--client-key", KEY], {
        cwd: home,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
        timeoutMs: 60_000,
      });
      expect(r.code, r.stderr).toBe(0);
      const written = read(join(home, ".codex", "config.toml"));
      expect(written).toContain('approval_policy = "never"\nmodel_provider = "switchyard"\n');
      expect(written).toContain("# Providers I use besides the gateway\n# (the work one needs the VPN)\n[model_providers.work]\n");
      gw.fake.reset();
      gw.fake.handle(plainAnswer("Codex read the file with headings."));
      const logStart = gw.logs.length;
      mkdirSync(join(home, "work"));
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, USER: "root", SHELL: "/bin/bash", LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", ...trap.env() };
      const run = await runCli([bin, "exec", "--skip-git-repo-check", "--color", "never", "say hi"], { cwd: join(home, "work"), env, timeoutMs: 60_000 });
      gw.fake.handle(undefined);
      const story = `${run.stdout}\n${run.stderr}`;
      expect(run.code, story).toBe(0);
      expect(run.stdout, story).toContain("Codex read the file with headings.");
      expect(gatewayRequestLogs(gw.logs.slice(logStart)).every((l) => l.model === "resp/gpt-e2e" && l.status === 200), story).toBe(true);
      expect(trap.attempts, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS + INSTALL_HOOK_TIMEOUT_MS,
  );
});
