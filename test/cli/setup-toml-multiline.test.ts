/**
 * `switchyard setup codex` over a `~/.codex/config.toml` with multi-line values (src/cli/toml-edit.ts):
 * a `"""…"""` / `'''…'''` string (`developer_instructions`), a multi-line array or inline table. Every
 * key setup does not set keeps its bytes, a multi-line value setup sets is replaced whole, `--undo`
 * puts the file back byte for byte, and a file that is not TOML (or sets the provider in a form setup
 * does not edit) is refused, naming why, with nothing written.
 *
 * Before: the edit read the file line by line, so a line inside a multi-line string that looks like a
 * table header (`[rules]`) was taken for one and setup's keys went into the user's instructions (the
 * file still parsed: written so, silently), and a multi-line value setup sets (`model = """…"""`) or a
 * nested array's `[1, 2],` line made the result invalid: refused with Bun's bare parse error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { editToml, PLACEHOLDER_KEY, runSetup, type SetupOptions } from "../../src/cli/setup.ts";
import { gatewaySettingsIn } from "../../src/cli/setup-undo.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { CODEX, ensureCli, INSTALL_HOOK_TIMEOUT_MS } from "../support/cli-install.ts";
import { runCli, startTrapProxy, type TrapProxy } from "../support/cli-run.ts";
import { CLI_TEST_TIMEOUT_MS, gatewayRequestLogs, plainAnswer } from "../support/cli-agents.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const GW = "http://127.0.0.1:20999";
const SY = `[model_providers.switchyard]\nname = "switchyard"\nbase_url = "${GW}/v1"\nwire_api = "responses"\nsupports_websockets = true\nexperimental_bearer_token = "switchyard"\n`;

/** A user's config.toml: multi-line strings (one holding lines that read as a header and a key), arrays, an inline table. */
const USER = `# my codex settings
developer_instructions = """
Answer briefly.
[rules]
model = "never say this"
model_provider = 'x'
"""
notify = [
  "notify-send",   # the command
  "Codex", # its title
]
matrix = [
[1, 2],
[3, 4],
]
approval_policy = "never"

[profiles.deep]
instructions = '''
Think first.
[model_providers.switchyard]
'''
shell = { cmd = "bash",
  args = ["-l"] }
`;

const homes: string[] = [];
afterAll(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
function scratchHome(config?: string): string {
  const home = mkdtempSync(join(tmpdir(), "sy-setup-toml-"));
  homes.push(home);
  if (config !== undefined) {
    mkdirSync(join(home, ".codex"));
    writeFileSync(join(home, ".codex", "config.toml"), config);
  }
  return home;
}
const read = (p: string) => readFileSync(p, "utf8");
const options = (home: string, extra: Partial<SetupOptions> = {}): SetupOptions => ({
  target: "codex",
  gatewayUrl: GW,
  key: PLACEHOLDER_KEY,
  model: { id: "resp/gpt-e2e", contextWindow: 400_000 },
  home,
  dryRun: false,
  now: () => 1000,
  ...extra,
});

describe("setup codex keeps multi-line TOML values", () => {
  test("lines inside a multi-line string, array or inline table are not read as headers or keys: setup's keys go after them, every other byte stays, and --undo puts the file back byte for byte", () => {
    const home = scratchHome(USER);
    const file = join(home, ".codex", "config.toml");
    const r = runSetup(options(home));
    expect(r.changes.map((c) => c.path)).toEqual([file]);
    expect(read(file)).toBe(
      USER.replace(
        'approval_policy = "never"\n',
        'approval_policy = "never"\nmodel_provider = "switchyard"\nmodel = "resp/gpt-e2e"\nmodel_context_window = 400000\nmodel_auto_compact_token_limit = 360000\n',
      ) + `\n${SY}`,
    );
    const parsed = Bun.TOML.parse(read(file)) as Record<string, unknown>;
    const user = Bun.TOML.parse(USER) as Record<string, unknown>;
    for (const k of Object.keys(user)) expect(parsed[k]).toEqual(user[k]!);
    expect(parsed.developer_instructions).toBe('Answer briefly.\n[rules]\nmodel = "never say this"\nmodel_provider = \'x\'\n');
    // the original does not point at the gateway (its '[model_providers.switchyard]' is inside a string), so undo puts it back
    const undo = Bun.spawnSync([...SOURCE_CLI, "setup", "codex", "--undo"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
    expect(undo.stdout.toString()).toContain(`restored ${file} as it was before the first setup`);
    expect(undo.exitCode).toBe(0);
    expect(read(file)).toBe(USER);
    expect(readdirSync(join(home, ".codex"))).toEqual(["config.toml"]);
  });

  test("a key setup sets with a multi-line value is replaced whole (its trailing comment kept); a second run changes nothing", () => {
    const before = `model = """
gpt-5"""  # my model
approval_policy = "never"
model_provider = [
  "x",
]

[model_providers.switchyard]
name = "old"
http_headers = { "X-Team" = "a",
  "X-Env" = "b" }
base_url = '''
http://old/v1'''
`;
    const home = scratchHome(before);
    const file = join(home, ".codex", "config.toml");
    runSetup(options(home));
    expect(read(file)).toBe(`model = "resp/gpt-e2e"  # my model
approval_policy = "never"
model_provider = "switchyard"
model_context_window = 400000
model_auto_compact_token_limit = 360000

[model_providers.switchyard]
name = "switchyard"
http_headers = { "X-Team" = "a",
  "X-Env" = "b" }
base_url = "${GW}/v1"
wire_api = "responses"
supports_websockets = true
experimental_bearer_token = "switchyard"
`);
    const written = read(file);
    expect(runSetup(options(home, { now: () => 2000 })).changes).toEqual([]);
    expect(read(file)).toBe(written);
  });

  test("an env_key written over several lines is commented out whole; a quoted key (\"model\") is the key it names", () => {
    const out = editToml(`"model" = "a"\n[model_providers.switchyard]\nenv_key = """\nSWITCHYARD_KEY"""\nname = "s"\n`, [["model", "b"]], "model_providers.switchyard", [["name", "s"]], { keys: ["env_key"], why: "why" });
    expect(out).toBe(`"model" = "b"\n[model_providers.switchyard]\n# why\n# env_key = """\n# SWITCHYARD_KEY"""\nname = "s"\n`);
  });

  test("a file with \\r\\n line ends gets them on the lines setup adds and rewrites too", () => {
    const out = editToml(`a = """\r\nx\r\n"""\r\nmodel = "o3"   \r\n`, [["model", "b"], ["model_provider", "switchyard"]], "model_providers.switchyard", [["name", "s"]]);
    expect(out).toBe(`a = """\r\nx\r\n"""\r\nmodel = "b"   \r\nmodel_provider = "switchyard"\r\n\r\n[model_providers.switchyard]\r\nname = "s"\r\n`);
  });

  test("undo's check for a file that already pointed at the gateway reads TOML tables, not a line inside a string", () => {
    expect(gatewaySettingsIn(`a = """\n[model_providers.switchyard]\n"""\n`)).toEqual([]);
    expect(gatewaySettingsIn(`a = 1\n[ model_providers . "switchyard" ]\nname = "s"\n`)).toEqual(["[model_providers.switchyard]"]);
  });
});

describe("setup codex refuses a file it cannot edit, writing nothing", () => {
  test("a multi-line string left open: not valid TOML, at the line that opens it", () => {
    const home = scratchHome(`approval_policy = "never"\ndeveloper_instructions = """\nAnswer briefly.\n`);
    const file = join(home, ".codex", "config.toml");
    expect(() => runSetup(options(home))).toThrow(`${file} is not valid TOML at line 2: `);
    expect(readdirSync(join(home, ".codex"))).toEqual(["config.toml"]);
  });

  test("the provider given as dotted keys: named, with what to do (it was Bun's bare parse error)", () => {
    const before = `model_providers.switchyard.name = "mine"\napproval_policy = "never"\n`;
    const home = scratchHome(before);
    const file = join(home, ".codex", "config.toml");
    let message = "";
    try {
      runSetup(options(home));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toStartWith(`${file}: setup's settings would not fit this file (`);
    expect(message).toEndWith(
      `): it sets model_providers.switchyard or one of setup's keys in a form setup does not edit (dotted keys, an inline table); nothing was written: make it a [model_providers.switchyard] table, or remove it, then run setup again`,
    );
    expect(read(file)).toBe(before);
    expect(existsSync(join(home, ".codex", "switchyard-setup.json"))).toBe(false);
  });
});

describe("the real Codex reads a setup-written config.toml with multi-line values", () => {
  const KEY = "sy-toml-multiline-key-01";
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
    "codex exec answers through the gateway, its developer instructions as the user wrote them",
    async () => {
      const bin = await ensureCli(CODEX);
      const home = scratchHome(`check_for_update_on_startup = false\n${USER.replace("[profiles.deep]", "[analytics]\nenabled = false\n\n[features]\nplugins = false\n\n[profiles.deep]")}`);
      // spawned, not spawnSync: the gateway answers setup from this process
      const r = await runCli([...SOURCE_CLI, "setup", "codex", "--model", "resp/gpt-e2e", "--codex-bin", bin, "--data-dir", gw.dataDir, "--client-key", KEY], {
        cwd: home,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
        timeoutMs: 60_000,
      });
      expect(r.code, r.stderr).toBe(0);
      gw.fake.reset();
      gw.fake.handle(plainAnswer("Codex read the multi-line file."));
      const logStart = gw.logs.length;
      mkdirSync(join(home, "work"));
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, USER: "root", SHELL: "/bin/bash", LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", ...trap.env() };
      const run = await runCli([bin, "exec", "--skip-git-repo-check", "--color", "never", "say hi"], { cwd: join(home, "work"), env, timeoutMs: 60_000 });
      gw.fake.handle(undefined);
      const story = `${run.stdout}\n${run.stderr}`;
      expect(run.code, story).toBe(0);
      expect(run.stdout, story).toContain("Codex read the multi-line file.");
      expect(gatewayRequestLogs(gw.logs.slice(logStart)).every((l) => l.model === "resp/gpt-e2e" && l.status === 200), story).toBe(true);
      const sent = JSON.stringify(gw.fake.requests.map((q) => q.body));
      expect(sent).toContain("[rules]\\nmodel = \\\"never say this\\\"");
    },
    CLI_TEST_TIMEOUT_MS + INSTALL_HOOK_TIMEOUT_MS,
  );
});
