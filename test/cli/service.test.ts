/**
 * `switchyard service install|uninstall|status` (SPEC 2.2, K-2) without touching the machine's
 * systemd or launchd: a scripted ServiceHost in a scratch HOME records the commands that would run,
 * and the tests read the unit file or plist that was written. The CLI itself runs too (from source
 * and as a compiled binary) with a fake `systemctl` on PATH, and with none.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  launchdPlistPath,
  serviceCommand,
  systemdUnit,
  systemdUnitPath,
  type RunResult,
  type ServiceHost,
  type ServiceOptions,
} from "../../src/cli/service.ts";

const ROOT = join(import.meta.dir, "../..");
const scratch: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(d);
  return d;
};
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

class Failed extends Error {
  constructor(
    readonly line: string,
    readonly code: number,
  ) {
    super(line);
  }
}

interface Harness {
  host: ServiceHost;
  home: string;
  /** Commands run, joined with spaces. */
  commands: string[];
  out: string[];
  /** Scripted answers by command prefix ("systemctl --user is-active"). */
  answers: Map<string, RunResult>;
  run(sub: string, opts?: Partial<ServiceOptions>): Promise<void>;
}

function harness(over: Partial<ServiceHost> = {}): Harness {
  const home = tempDir("switchyard-svc-home-");
  const commands: string[] = [];
  const out: string[] = [];
  const answers = new Map<string, RunResult>();
  const host: ServiceHost = {
    platform: "linux",
    home,
    env: { USER: "dev" },
    cwd: "/work/project",
    compiled: false,
    execPath: "/usr/local/bin/bun",
    mainPath: "/opt/switchyard/src/main.ts",
    has: () => true,
    async run(argv) {
      const cmd = argv.join(" ");
      commands.push(cmd);
      for (const [prefix, r] of answers) if (cmd.startsWith(prefix)) return r;
      return { code: 0, stdout: "", stderr: "" };
    },
    ...over,
  };
  return {
    host,
    home,
    commands,
    out,
    answers,
    run: (sub, opts = {}) =>
      serviceCommand(sub, { dataDir: join(home, ".switchyard"), ...opts }, host, {
        out: (l) => void out.push(l),
        fail: (l, code = 1) => {
          throw new Failed(typeof l === "string" ? l : l.join("\n"), code);
        },
      }),
  };
}

const failure = async (p: Promise<unknown>): Promise<Failed> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof Failed) return e;
    throw e;
  }
  throw new Error("expected the command to fail");
};

describe("Linux: systemd user unit", () => {
  test("install from source writes the unit and enables it now", async () => {
    const h = harness();
    await h.run("install", { config: "conf/switchyard.yaml" });
    const unitPath = join(h.home, ".config/systemd/user/switchyard.service");
    expect(systemdUnitPath(h.home)).toBe(unitPath);
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toContain(
      `\nExecStart=/usr/local/bin/bun /opt/switchyard/src/main.ts start --config /work/project/conf/switchyard.yaml --data-dir ${h.home}/.switchyard\n`,
    );
    expect(unit).toContain("\nRestart=on-failure\n");
    expect(unit).toContain("\nEnvironment=BUN_CONFIG_MAX_HTTP_REQUESTS=4096\n");
    expect(unit).toContain("\nEnvironment=MIMALLOC_PURGE_DELAY=1000\n");
    expect(unit).toContain("\nEnvironment=MIMALLOC_PURGE_HOLES_MIN_INTERVAL=1000\n");
    expect(unit).toContain("\nEnvironment=MIMALLOC_PURGE_HOLES=0\n");
    expect(unit).toContain(`\nEnvironmentFile=-${h.home}/.switchyard/service.env\n`);
    expect(unit).toContain("\n[Install]\nWantedBy=default.target\n");
    expect(h.commands).toEqual(["systemctl --user daemon-reload", "systemctl --user enable --now switchyard.service"]);
    expect(h.out[0]).toBe(`wrote ${unitPath}`);
    expect(h.out.join("\n")).toContain("enabled and started");
  });

  test("a config file with errors is not installed (it would crash-loop); a fine one with a stop timeout from its grace period is", async () => {
    const bad = harness({ configProblems: (p) => (p.endsWith("broken.yaml") ? ["(root): cannot read config file " + p + ": not found"] : []) });
    const f = await failure(bad.run("install", { config: "broken.yaml" }));
    expect(f.line).toContain("not installing: the config file has errors");
    expect(f.line).toContain("broken.yaml: not found");
    expect(existsSync(systemdUnitPath(bad.home))).toBe(false);
    expect(bad.commands).toEqual([]);
    const unit = systemdUnit(["bun", "main.ts", "start"], {}, "/data", 120_000);
    expect(unit).toContain("\nTimeoutStopSec=135\n");
  });

  test("the compiled binary runs itself; host, port and SWITCHYARD_HOME pass through", async () => {
    const sy = tempDir("switchyard-svc-sy-");
    const h = harness({ compiled: true, execPath: "/home/dev/bin/switchyard", env: { SWITCHYARD_HOME: sy } });
    await h.run("install", { dataDir: sy, host: "127.0.0.1", port: "20200" });
    const unit = readFileSync(systemdUnitPath(h.home), "utf8");
    expect(unit).toContain(`\nExecStart=/home/dev/bin/switchyard start --host 127.0.0.1 --port 20200 --data-dir ${sy}\n`);
    expect(unit).toContain(`\nEnvironment=SWITCHYARD_HOME=${sy}\n`);
    expect(unit).not.toContain("main.ts");
  });

  test("paths with spaces, % and $ are quoted and escaped for systemd", async () => {
    const h = harness();
    const data = join(tempDir("switchyard-svc-data-"), "my sy%dir");
    await h.run("install", { dataDir: data, config: "/etc/$cfg.yaml" });
    const unit = readFileSync(systemdUnitPath(h.home), "utf8");
    expect(unit).toContain(`--config "/etc/$$cfg.yaml" --data-dir "${data.replaceAll("%", "%%")}"\n`);
    expect(unit).toContain(`\nEnvironmentFile=-${data.replaceAll("%", "%%")}/service.env\n`);
  });

  test("install writes DATA_DIR/service.env (mode 0600) with the env: secrets the config names, from the installing shell; values are never printed", async () => {
    const dir = tempDir("switchyard-svc-conf-");
    const config = join(dir, "switchyard.yaml");
    writeFileSync(config, "providers:\n  - id: glm\n    kind: openai-compatible\n    base_url: https://example.test/v1\naccounts:\n  - id: g1\n    provider: glm\n    api_key: env:GLM_KEY\n  - id: g2\n    provider: glm\n    api_key: env:GLM_KEY_2\nkeys:\n  - name: laptop\n    secret: env:CLIENT_KEY\n");
    const h = harness({ env: { USER: "dev", GLM_KEY: "sk-glm secret \"q\"", CLIENT_KEY: "sy-plain-1" } });
    await h.run("install", { config });
    const envFile = join(h.home, ".switchyard", "service.env");
    const text = readFileSync(envFile, "utf8");
    expect(text.split("\n").filter((l) => !l.startsWith("#"))).toEqual(['GLM_KEY="sk-glm secret \\"q\\""', "CLIENT_KEY=sy-plain-1", ""]);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const said = h.out.join("\n");
    expect(said).toContain(`${envFile}: GLM_KEY, CLIENT_KEY from this shell`);
    expect(said).toContain(`${envFile}: GLM_KEY_2 is not set in this shell; add a line GLM_KEY_2=… there before the service needs it`);
    expect(said).not.toContain("sk-glm");
    expect(said).not.toContain("sy-plain-1");

    // A line the user wrote (or changed) is kept; installing again adds what is now set, nothing twice.
    writeFileSync(envFile, text.replace("CLIENT_KEY=sy-plain-1", "CLIENT_KEY=edited-by-hand"));
    h.host.env.GLM_KEY_2 = "sk-second";
    h.out.length = 0;
    await h.run("install", { config });
    expect(readFileSync(envFile, "utf8").split("\n").filter((l) => !l.startsWith("#"))).toEqual(['GLM_KEY="sk-glm secret \\"q\\""', "CLIENT_KEY=edited-by-hand", "GLM_KEY_2=sk-second", ""]);
    expect(h.out.join("\n")).toContain(`${envFile}: GLM_KEY_2 from this shell; GLM_KEY, CLIENT_KEY kept as they were`);
  });

  test("without a config file, service.env gets the API keys the built-in default reads (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY)", async () => {
    const h = harness({ env: { USER: "dev", OPENAI_API_KEY: "sk-openai-test" } });
    await h.run("install");
    const envFile = join(h.home, ".switchyard", "service.env");
    expect(readFileSync(envFile, "utf8")).toContain("\nOPENAI_API_KEY=sk-openai-test\n");
    // any one key is enough for the built-in default: the missing ones are said once, as optional
    expect(h.out.filter((l) => l.startsWith(`${envFile}:`))).toEqual([
      `${envFile}: OPENAI_API_KEY from this shell; without a config file the built-in default makes one account per API key it finds (ANTHROPIC_API_KEY, GEMINI_API_KEY not set here); add a line NAME=… there for each provider you use before the service needs it`,
    ]);
  });

  test("when none of the secrets the config names is set in the shell, install does not also say that none is needed", async () => {
    const h = harness({ env: { USER: "dev" } });
    const envFile = join(h.home, ".switchyard", "service.env");
    const config = join(h.home, "with-secrets.yaml");
    writeFileSync(config, "accounts:\n  - { id: a, provider: openai, api_key: env:KEY_ONE }\n  - { id: b, provider: anthropic, api_key: env:KEY_TWO }\n");
    await h.run("install", { config });
    expect(h.out.filter((l) => l.startsWith(`${envFile}:`))).toEqual([
      `${envFile}: none of the secrets the config needs is set in this shell`,
      `${envFile}: KEY_ONE is not set in this shell; add a line KEY_ONE=… there before the service needs it`,
      `${envFile}: KEY_TWO is not set in this shell; add a line KEY_TWO=… there before the service needs it`,
    ]);
    // without a config file, the built-in default's keys are each optional: one line, not three "X is not set"
    const bare = harness({ env: { USER: "dev" } });
    await bare.run("install");
    const bareEnv = join(bare.home, ".switchyard", "service.env");
    expect(bare.out.filter((l) => l.startsWith(`${bareEnv}:`))).toEqual([
      `${bareEnv}: no API key is set in this shell: without a config file the built-in default makes one account per API key it finds (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY not set here); add a line NAME=… there for each provider you use before the service needs it`,
    ]);
  });

  test("the OpenTelemetry variables set in the installing shell go into service.env too; unset ones are not asked for", async () => {
    const h = harness({ env: { USER: "dev", OPENAI_API_KEY: "sk-openai-test", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/c?token=t0k", OTEL_SERVICE_NAME: "gw-laptop", OTEL_BSP_SCHEDULE_DELAY: "" } });
    await h.run("install");
    const envFile = join(h.home, ".switchyard", "service.env");
    const lines = readFileSync(envFile, "utf8").split("\n").filter((l) => !l.startsWith("#"));
    expect(lines).toEqual(["OPENAI_API_KEY=sk-openai-test", 'OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318/c?token=t0k"', "OTEL_SERVICE_NAME=gw-laptop", ""]);
    const said = h.out.join("\n");
    expect(said).toContain(`${envFile}: OPENAI_API_KEY, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME from this shell`);
    expect(said).not.toContain("OTEL_BSP_SCHEDULE_DELAY");
    expect(said).not.toContain("t0k");
  });

  test("installing again rewrites the unit and restarts the service", async () => {
    const h = harness();
    await h.run("install");
    h.commands.length = 0;
    await h.run("install", { port: "20300" });
    expect(readFileSync(systemdUnitPath(h.home), "utf8")).toContain("--port 20300");
    expect(h.commands).toEqual(["systemctl --user daemon-reload", "systemctl --user enable switchyard.service", "systemctl --user restart switchyard.service"]);
    expect(h.out.join("\n")).toContain("updated and restarted");
  });

  test("an instance the user started holds the data directory: install refuses (the service would crash-loop beside it); the service's own instance is updated", async () => {
    const h = harness();
    const dataDir = join(h.home, ".switchyard");
    mkdirSync(dataDir, { recursive: true });
    const running = Bun.spawn(["sleep", "60"]);
    try {
      writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:20128", pid: running.pid }));
      const f = await failure(h.run("install"));
      expect({ line: f.line, code: f.code }).toEqual({
        line: `not installing: a switchyard instance you started (pid ${running.pid}, http://127.0.0.1:20128) is running with the data directory ${dataDir}, and the service would fail to start beside it (one instance per data directory); stop it first (Ctrl-C where it runs, or kill ${running.pid}), then run service install again`,
        code: 1,
      });
      expect(existsSync(systemdUnitPath(h.home))).toBe(false);
      expect(h.commands).toEqual([]);
      // installed already, and that instance is the service's own (its MainPID): updated and restarted
      writeFileSync(join(dataDir, "instance.json"), "{}");
      await h.run("install");
      writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:20128", pid: running.pid }));
      h.answers.set("systemctl --user show -p MainPID", { code: 0, stdout: `${running.pid}\n`, stderr: "" });
      h.out.length = 0;
      await h.run("install");
      expect(h.out.join("\n")).toContain("updated and restarted");
      // …but another pid than the service's is refused on an update too
      h.answers.set("systemctl --user show -p MainPID", { code: 0, stdout: "0\n", stderr: "" });
      expect((await failure(h.run("install"))).line).toStartWith(`not installing: a switchyard instance you started (pid ${running.pid}`);
    } finally {
      running.kill();
    }
    // a stale file (no such process) is no obstacle
    await running.exited;
    await h.run("install");
  });

  test("status says whether it is installed, enabled and active", async () => {
    const h = harness();
    await h.run("status");
    expect(h.out).toEqual([`switchyard service: not installed (no ${systemdUnitPath(h.home)})`]);
    expect(h.commands).toEqual([]);

    await h.run("install");
    h.out.length = 0;
    h.answers.set("systemctl --user is-enabled", { code: 0, stdout: "enabled\n", stderr: "" });
    h.answers.set("systemctl --user is-active", { code: 3, stdout: "failed\n", stderr: "" });
    await h.run("status");
    expect(h.out[0]).toBe(`switchyard service: installed (${systemdUnitPath(h.home)})`);
    expect(h.out).toContain("enabled: enabled");
    expect(h.out).toContain("active: failed");
    expect(h.out.find((l) => l.startsWith("runs: "))).toContain("/opt/switchyard/src/main.ts start --data-dir");
  });

  test("uninstall stops, disables and removes the unit and the service.env holding its secrets; a second uninstall says there is none", async () => {
    const h = harness({ env: { USER: "dev", ANTHROPIC_API_KEY: "sk-ant-kept-for-the-service" } });
    await h.run("install");
    const envFile = join(h.home, ".switchyard", "service.env");
    expect(readFileSync(envFile, "utf8")).toContain("sk-ant-kept-for-the-service");
    h.commands.length = 0;
    h.out.length = 0;
    await h.run("uninstall");
    expect(existsSync(systemdUnitPath(h.home))).toBe(false);
    expect(existsSync(envFile)).toBe(false);
    expect(existsSync(`${envFile}.written`)).toBe(false); // install's record of its lines goes with it
    expect(existsSync(`${envFile}.bak`)).toBe(false);
    expect(h.out).toEqual([`switchyard service stopped and removed (${systemdUnitPath(h.home)})`, `removed ${envFile} (the secrets install kept for the service)`]);
    expect(h.commands).toEqual(["systemctl --user disable --now switchyard.service", "systemctl --user daemon-reload"]);
    h.commands.length = 0;
    h.out.length = 0;
    await h.run("uninstall");
    expect(h.out).toEqual([`switchyard service is not installed (no ${systemdUnitPath(h.home)})`]);
    expect(h.commands).toEqual([]);
  });

  test("uninstall keeps a service.env with lines added or changed by hand: renamed to service.env.bak (mode 0600, byte for byte) and said, values never printed; a later one never overwrites it", async () => {
    const dir = tempDir("switchyard-svc-hand-");
    const config = join(dir, "switchyard.yaml");
    writeFileSync(config, "accounts:\n  - { id: a, provider: openai, api_key: env:KEY_ONE }\n  - { id: b, provider: anthropic, api_key: env:KEY_TWO }\n");
    const h = harness({ env: { USER: "dev", KEY_ONE: "sk-one-from-the-shell" } });
    await h.run("install", { config });
    const envFile = join(h.home, ".switchyard", "service.env");
    expect(h.out).toContain(`${envFile}: KEY_TWO is not set in this shell; add a line KEY_TWO=… there before the service needs it`);
    // as install asked: the missing secret added by hand
    const edited = readFileSync(envFile, "utf8") + "KEY_TWO=sk-two-added-by-hand\n";
    writeFileSync(envFile, edited);
    h.out.length = 0;
    await h.run("uninstall");
    expect(existsSync(envFile)).toBe(false);
    expect(readFileSync(`${envFile}.bak`, "utf8")).toBe(edited);
    expect(statSync(`${envFile}.bak`).mode & 0o777).toBe(0o600);
    expect(existsSync(`${envFile}.written`)).toBe(false);
    expect(h.out).toEqual([
      `switchyard service stopped and removed (${systemdUnitPath(h.home)})`,
      `kept ${envFile} as ${envFile}.bak: it holds 1 line that service install did not write (added or changed by hand); it still holds secrets: remove it once you no longer need those lines (or rename it back before service install, which keeps them)`,
    ]);
    expect(h.out.join("\n")).not.toContain("sk-");

    // again, with a value changed by hand: a line install did not write either; the first copy stays as it was
    await h.run("install", { config });
    writeFileSync(envFile, readFileSync(envFile, "utf8").replace("KEY_ONE=sk-one-from-the-shell", "KEY_ONE=sk-one-rotated"));
    h.out.length = 0;
    await h.run("uninstall");
    expect(readFileSync(`${envFile}.bak`, "utf8")).toBe(edited);
    const later = h.out.at(-1)!;
    expect(later).toMatch(new RegExp(`^kept ${envFile.replace(/[.]/g, "\\.")} as ${envFile.replace(/[.]/g, "\\.")}\\.bak-\\d+: it holds 1 line that service install did not write`));
    expect(readFileSync(later.split(" as ")[1]!.split(":")[0]!, "utf8")).toContain("KEY_ONE=sk-one-rotated");
  });

  test("lines a second install added (a secret set in the shell since) are install's too: uninstall removes the file", async () => {
    const dir = tempDir("switchyard-svc-again-");
    const config = join(dir, "switchyard.yaml");
    writeFileSync(config, "accounts:\n  - { id: a, provider: openai, api_key: env:KEY_ONE }\n  - { id: b, provider: anthropic, api_key: env:KEY_TWO }\n");
    const h = harness({ env: { USER: "dev", KEY_ONE: "sk-one" } });
    await h.run("install", { config });
    h.host.env.KEY_TWO = "sk-two";
    await h.run("install", { config });
    const envFile = join(h.home, ".switchyard", "service.env");
    expect(readFileSync(envFile, "utf8")).toContain("KEY_TWO=sk-two");
    h.out.length = 0;
    await h.run("uninstall");
    expect([existsSync(envFile), existsSync(`${envFile}.bak`), existsSync(`${envFile}.written`)]).toEqual([false, false, false]);
    expect(h.out.at(-1)).toBe(`removed ${envFile} (the secrets install kept for the service)`);
  });

  test("a service.env install kept no record of (an install before session 38): kept as service.env.bak, said so", async () => {
    const h = harness({ env: { USER: "dev", ANTHROPIC_API_KEY: "sk-ant-earlier-install" } });
    await h.run("install");
    const envFile = join(h.home, ".switchyard", "service.env");
    rmSync(`${envFile}.written`);
    h.out.length = 0;
    await h.run("uninstall");
    expect(existsSync(envFile)).toBe(false);
    expect(readFileSync(`${envFile}.bak`, "utf8")).toContain("ANTHROPIC_API_KEY=sk-ant-earlier-install");
    expect(h.out.at(-1)).toBe(`kept ${envFile} as ${envFile}.bak: it holds 2 lines that service install did not record writing (added by hand, or written by an earlier switchyard version's install, which kept no record); it still holds secrets: remove it once you no longer need those lines (or rename it back before service install, which keeps them)`);
  });

  test("uninstall with no unit installed names a service.env left in the data directory and does not remove it (a supervisor of the user's own may read it)", async () => {
    const h = harness({ env: { USER: "dev", ANTHROPIC_API_KEY: "sk-ant-kept-for-the-service" } });
    await h.run("install");
    const envFile = join(h.home, ".switchyard", "service.env");
    rmSync(systemdUnitPath(h.home)); // the unit removed by hand; the file kept for another supervisor
    h.out.length = 0;
    await h.run("uninstall");
    expect(existsSync(envFile)).toBe(true);
    expect(h.out).toEqual([
      `switchyard service is not installed (no ${systemdUnitPath(h.home)})`,
      `left ${envFile}: it holds the secrets install kept for the service; remove it if nothing of yours reads it`,
    ]);
    expect(h.out.join("\n")).not.toContain("sk-ant-kept-for-the-service");
  });

  test("uninstall removes the service.env of the data directory the unit was installed for, whatever --data-dir it is given", async () => {
    const h = harness({ env: { USER: "dev", OPENAI_API_KEY: "sk-openai-kept" } });
    const dataDir = join(h.home, "data with space");
    await h.run("install", { dataDir });
    expect(existsSync(join(dataDir, "service.env"))).toBe(true);
    h.out.length = 0;
    await h.run("uninstall");
    expect(existsSync(join(dataDir, "service.env"))).toBe(false);
    expect(h.out.at(-1)).toBe(`removed ${join(dataDir, "service.env")} (the secrets install kept for the service)`);
  });

  test("without systemctl it says so in one line and writes nothing", async () => {
    const h = harness({ has: () => false });
    for (const sub of ["install", "status", "uninstall"]) {
      const f = await failure(h.run(sub));
      expect(f.line).toStartWith("systemctl not found");
      expect(f.line).not.toContain("\n");
    }
    expect(existsSync(join(h.home, ".config"))).toBe(false);
    expect(h.commands).toEqual([]);
  });

  test("a systemctl that cannot reach the user manager is reported with its own words and what to do", async () => {
    const h = harness();
    h.answers.set("systemctl --user daemon-reload", { code: 1, stdout: "", stderr: "Failed to connect to bus: No medium found\n" });
    const f = await failure(h.run("install"));
    expect(f.line).toBe(
      "`systemctl --user daemon-reload` failed (exit 1): Failed to connect to bus: No medium found. No systemd user manager runs for this login (a container, or su / SSH without a user session): the unit is written and starts once one runs (`loginctl enable-linger $USER` keeps one running, from the next login); meanwhile run `switchyard start` under your own supervisor.",
    );
    // The unit is there for when the user manager runs.
    expect(existsSync(systemdUnitPath(h.home))).toBe(true);
  });

  test("without a user manager, status says systemctl could not be asked and names the instance serving the unit's data directory; uninstall says nothing was stopped", async () => {
    const h = harness();
    await h.run("install");
    const dataDir = join(h.home, ".switchyard");
    mkdirSync(dataDir, { recursive: true });
    const running = Bun.spawn(["sleep", "60"]);
    try {
      writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:38411", pid: running.pid }));
      const bus = { code: 1, stdout: "", stderr: "Failed to connect to bus: No medium found\n" };
      h.answers.set("systemctl --user is-enabled", bus);
      h.answers.set("systemctl --user is-active", bus);
      h.answers.set("systemctl --user disable", bus);
      h.out.length = 0;
      await h.run("status");
      expect(h.out.filter((l) => !l.startsWith("runs: "))).toEqual([
        `switchyard service: installed (${systemdUnitPath(h.home)})`,
        "enabled: unknown (systemctl --user cannot reach a user manager: Failed to connect to bus: No medium found)",
        "active: unknown (systemctl --user cannot reach a user manager: Failed to connect to bus: No medium found)",
        `serving its data directory ${dataDir}: pid ${running.pid} at http://127.0.0.1:38411`,
      ]);
      h.out.length = 0;
      await h.run("uninstall");
      expect(h.out).toEqual([
        `switchyard service removed (${systemdUnitPath(h.home)}), but not stopped or disabled: \`systemctl --user disable --now switchyard.service\` failed (exit 1): Failed to connect to bus: No medium found; no systemd user manager runs for this login, so no service was running`,
        `removed ${join(dataDir, "service.env")} (the secrets install kept for the service)`,
      ]);
      expect(existsSync(systemdUnitPath(h.home))).toBe(false);
    } finally {
      running.kill();
    }
  });

  test("an unknown subcommand prints the usage", async () => {
    const f = await failure(harness().run("restart"));
    expect(f.code).toBe(2);
    expect(f.line).toContain("switchyard service install|uninstall|status");
  });
});

describe("macOS: launchd agent", () => {
  test("install writes the plist and loads it", async () => {
    const h = harness({ platform: "darwin" });
    await h.run("install", { config: "/Users/dev/sy & co/config.yaml" });
    const path = join(h.home, "Library/LaunchAgents/dev.switchyard.plist");
    expect(launchdPlistPath(h.home)).toBe(path);
    const plist = readFileSync(path, "utf8");
    expect(plist).toStartWith('<?xml version="1.0" encoding="UTF-8"?>');
    expect(plist).toContain("<key>Label</key>\n  <string>dev.switchyard</string>");
    expect(plist).toContain(
      [
        "<key>ProgramArguments</key>",
        "  <array>",
        "    <string>/usr/local/bin/bun</string>",
        "    <string>/opt/switchyard/src/main.ts</string>",
        "    <string>start</string>",
        "    <string>--config</string>",
        "    <string>/Users/dev/sy &amp; co/config.yaml</string>",
        "    <string>--data-dir</string>",
        `    <string>${h.home}/.switchyard</string>`,
        "  </array>",
      ].join("\n"),
    );
    expect(plist).toContain("<key>BUN_CONFIG_MAX_HTTP_REQUESTS</key>\n    <string>4096</string>");
    expect(plist).toContain("<key>MIMALLOC_PURGE_DELAY</key>\n    <string>1000</string>");
    expect(plist).toContain("<key>MIMALLOC_PURGE_HOLES_MIN_INTERVAL</key>\n    <string>1000</string>");
    expect(plist).toContain("<key>MIMALLOC_PURGE_HOLES</key>\n    <string>0</string>");
    expect(plist).toContain("<key>RunAtLoad</key>\n  <true/>");
    expect(plist).toContain("<key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>");
    expect(plist).toContain(`<string>${h.home}/.switchyard/switchyard.log</string>`);
    // Balanced tags: every element opened is closed.
    const opened = [...plist.matchAll(/<(dict|array|plist|string|key)\b[^>]*>/g)].length;
    const closed = [...plist.matchAll(/<\/(dict|array|plist|string|key)>/g)].length;
    expect(opened).toBe(closed);
    expect(h.commands).toEqual([`launchctl load -w ${path}`]);
    // launchd opens the log files before switchyard runs: the data directory exists.
    expect(existsSync(join(h.home, ".switchyard"))).toBe(true);
  });

  test("the config's env: secrets reach the agent: kept in service.env and copied into the plist (mode 0600), never printed", async () => {
    const dir = tempDir("switchyard-svc-mac-");
    const config = join(dir, "switchyard.yaml");
    writeFileSync(config, "providers:\n  - id: glm\n    kind: openai-compatible\n    base_url: https://example.test/v1\naccounts:\n  - id: g1\n    provider: glm\n    api_key: env:GLM_KEY\n  - id: g2\n    provider: glm\n    api_key: env:GLM_KEY_2\n");
    const h = harness({ platform: "darwin", env: { USER: "dev", GLM_KEY: 'sk-glm <secret> "q"' } });
    await h.run("install", { config });
    const path = launchdPlistPath(h.home);
    const plist = readFileSync(path, "utf8");
    expect(plist).toContain("<key>GLM_KEY</key>\n    <string>sk-glm &lt;secret&gt; &quot;q&quot;</string>");
    expect(plist).toContain("<key>BUN_CONFIG_MAX_HTTP_REQUESTS</key>\n    <string>4096</string>");
    expect(plist).not.toContain("GLM_KEY_2");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const envFile = join(h.home, ".switchyard", "service.env");
    expect(h.out).toContain(`${envFile}: GLM_KEY from this shell`);
    expect(h.out).toContain(`${envFile}: GLM_KEY_2 is not set in this shell; add a line GLM_KEY_2=… there and run service install again`);
    expect(h.out.join("\n")).not.toContain("sk-glm");

    // The line added by hand reaches the plist at the next install.
    writeFileSync(envFile, readFileSync(envFile, "utf8") + "export GLM_KEY_2=sk-added-by-hand\n");
    await h.run("install", { config });
    const again = readFileSync(path, "utf8");
    expect(again).toContain("<key>GLM_KEY_2</key>\n    <string>sk-added-by-hand</string>");
    expect(again).toContain("<key>GLM_KEY</key>\n    <string>sk-glm &lt;secret&gt; &quot;q&quot;</string>");
  });

  test("reinstall unloads first; status reads the pid; uninstall unloads and removes", async () => {
    const h = harness({ platform: "darwin" });
    const path = launchdPlistPath(h.home);
    await h.run("install");
    h.commands.length = 0;
    await h.run("install");
    expect(h.commands).toEqual([`launchctl unload ${path}`, `launchctl load -w ${path}`]);

    h.out.length = 0;
    h.answers.set("launchctl list dev.switchyard", { code: 0, stdout: '{\n\t"Label" = "dev.switchyard";\n\t"PID" = 4242;\n};\n', stderr: "" });
    await h.run("status");
    expect(h.out).toEqual([`switchyard agent: installed (${path})`, "loaded: yes", "active: running (pid 4242)"]);

    h.commands.length = 0;
    h.out.length = 0;
    await h.run("uninstall");
    expect(h.commands).toEqual([`launchctl unload -w ${path}`]);
    expect(existsSync(path)).toBe(false);
    const envFile = join(h.home, ".switchyard", "service.env");
    expect(existsSync(envFile)).toBe(false);
    expect(h.out).toEqual([`switchyard agent unloaded and removed (${path})`, `removed ${envFile} (the secrets install kept for the service)`]);
  });

  test("uninstall removes the service.env of the agent's own data directory (read from its plist)", async () => {
    const h = harness({ platform: "darwin", env: { USER: "dev", GEMINI_API_KEY: "gm-kept" } });
    const dataDir = join(h.home, "odd & <dir>");
    await h.run("install", { dataDir });
    expect(readFileSync(join(dataDir, "service.env"), "utf8")).toContain("gm-kept");
    await h.run("uninstall");
    expect(existsSync(join(dataDir, "service.env"))).toBe(false);
    // a line added by hand (then copied into the plist by a second install): kept as service.env.bak
    await h.run("install", { dataDir });
    writeFileSync(join(dataDir, "service.env"), readFileSync(join(dataDir, "service.env"), "utf8") + "EXTRA_BY_HAND=1\n");
    await h.run("install", { dataDir });
    await h.run("uninstall");
    expect(existsSync(join(dataDir, "service.env"))).toBe(false);
    expect(readFileSync(join(dataDir, "service.env.bak"), "utf8")).toContain("EXTRA_BY_HAND=1");
    expect(h.out.at(-1)).toStartWith(`kept ${join(dataDir, "service.env")} as ${join(dataDir, "service.env.bak")}: it holds 1 line that service install did not write`);
  });

  test("other platforms are told so in one line", async () => {
    const f = await failure(harness({ platform: "win32" }).run("install"));
    expect(f.line).toContain("Linux (systemd) and macOS (launchd)");
    expect(f.line).toContain("win32");
  });
});

describe("the CLI, with a fake systemctl on PATH", () => {
  let home: string;
  let bin: string;
  beforeEach(() => {
    home = tempDir("switchyard-svc-cli-");
    bin = join(home, "fakebin");
    mkdirSync(bin);
    // Logs each call and answers is-enabled / is-active like a running service.
    writeFileSync(
      join(bin, "systemctl"),
      '#!/bin/sh\necho "$*" >> "$HOME/systemctl.log"\ncase "$2" in is-enabled) echo enabled;; is-active) echo active;; esac\nexit 0\n',
      { mode: 0o755 },
    );
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const cli = (argv: string[], opts: { path?: string; cwd?: string } = {}) => {
    const r = Bun.spawnSync(argv, { cwd: opts.cwd ?? home, env: { HOME: home, PATH: opts.path ?? `${bin}:/usr/bin:/bin` }, stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };
  const calls = () => readFileSync(join(home, "systemctl.log"), "utf8").trim().split("\n");

  test("from source: `bun src/main.ts service install|status|uninstall`", () => {
    const main = join(ROOT, "src/main.ts");
    writeFileSync(join(home, "my.yaml"), "server:\n  port: 20199\n");
    const install = cli([process.execPath, main, "service", "install", "--config", "my.yaml"]);
    expect(install.stderr).toBe("");
    expect(install.code).toBe(0);
    const unitPath = join(home, ".config/systemd/user/switchyard.service");
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toContain(`\nExecStart=${process.execPath} ${main} start --config ${home}/my.yaml --data-dir ${home}/.switchyard\n`);
    expect(calls()).toEqual(["--user daemon-reload", "--user enable --now switchyard.service"]);

    // systemd itself accepts the unit, where its analyzer is installed.
    if (Bun.which("systemd-analyze")) {
      const v = Bun.spawnSync(["systemd-analyze", "verify", unitPath], { stdout: "pipe", stderr: "pipe" });
      expect(v.stderr.toString()).toBe("");
      expect(v.exitCode).toBe(0);
    }

    const status = cli([process.execPath, main, "service", "status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("switchyard service: installed");
    expect(status.stdout).toContain("active: active");

    const un = cli([process.execPath, main, "service", "uninstall"]);
    expect(un.code).toBe(0);
    expect(existsSync(unitPath)).toBe(false);
  });

  test("without systemctl on PATH: one line on stderr, exit 1", () => {
    const r = cli([process.execPath, join(ROOT, "src/main.ts"), "service", "install"], { path: "/nonexistent" });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toStartWith("systemctl not found");
    expect(existsSync(join(home, ".config"))).toBe(false);
  });

  test("the compiled binary puts itself in ExecStart", () => {
    const exe = join(home, "switchyard");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", join(ROOT, "src/main.ts"), "--outfile", exe], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect(build.exitCode).toBe(0);
    const r = cli([exe, "service", "install", "--data-dir", "data"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const unit = readFileSync(join(home, ".config/systemd/user/switchyard.service"), "utf8");
    expect(unit).toContain(`\nExecStart=${exe} start --data-dir ${home}/data\n`);
  }, 60_000);
});
