/**
 * `switchyard service install|uninstall|status` (SPEC 2.2, K-2): runs `switchyard start` as a
 * per-user background service.
 *
 * - Linux: a systemd user unit `~/.config/systemd/user/switchyard.service`, enabled with
 *   `systemctl --user enable --now` (restarted when it was installed already).
 * - macOS: a launchd agent `~/Library/LaunchAgents/dev.switchyard.plist`, loaded with `launchctl load -w`.
 *
 * The service runs the compiled binary when this CLI is the compiled binary (SPEC K-1), else
 * `bun /abs/path/src/main.ts start`. `--config`, `--host` and `--port` are passed through as given
 * (paths made absolute); `--data-dir` is always passed, resolved the way `start` resolves it, so the
 * service uses the same data directory as the shell that installed it. `SWITCHYARD_HOME` is carried
 * over when it is set. Environment: `BUN_CONFIG_MAX_HTTP_REQUESTS=4096` (SPEC D-4),
 * `MIMALLOC_PURGE_DELAY=1000`, `MIMALLOC_PURGE_HOLES_MIN_INTERVAL=1000` and `MIMALLOC_PURGE_HOLES=0`
 * (allocator churn, issue 17); and
 * the secrets a config names as `env:VAR`, kept in `DATA_DIR/service.env` (install writes the ones set
 * in the installing shell, service-env.ts): on Linux the unit's `EnvironmentFile` (never written into
 * the unit), on macOS copied into the plist's `EnvironmentVariables` (launchd has no environment
 * file), which is then written with mode 0600.
 *
 * System commands go through {@link ServiceHost} so tests run without systemd or launchd.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { checkConfig } from "../config/check.ts";
import { loadConfigFile } from "../config/load.ts";
import { liveInstance } from "../instance-file.ts";
import type { CliIo } from "./routing.ts";
import { readServiceEnv, removeServiceEnv, serviceEnvNames, shellTelemetry, writeServiceEnv } from "./service-env.ts";

/** The systemd unit name. */
export const SYSTEMD_UNIT = "switchyard.service";
/** The launchd job label. */
export const LAUNCHD_LABEL = "dev.switchyard";

/**
 * ms mimalloc (Bun's allocator) waits before giving freed pages back to the system (its default: 10).
 * At 10 ms its scavenger thread returned and the next requests re-faulted the same pages over and over:
 * 35–36 of 205–253 µs CPU per request in process (chat stream), 2.5–4.5 of 162–173 µs at 1,000
 * (docs/performance.md, "What was changed"). Idle memory is still given back, a second later.
 */
export const MIMALLOC_PURGE_DELAY_MS = 1000;

/**
 * ms between two of mimalloc's "hole" purges (its default: 100): besides whole free pages, mimalloc 3.5
 * gives back the free blocks inside pages still in use, and its scavenger did so ten times a second,
 * so the JS heap's blocks were faulted in again right after (mi-scavenger 12–58 → 1.5–12 µs of CPU
 * per request under wrk, chat JSON and stream, 2026-12-01 on a busy machine). The idle trim still
 * returns everything: the compiled binary's idle RSS 33 s after 1,000 requests is the same (73.3–73.9
 * vs 73.4–74.0 MB). Hole purging is now off as well ({@link MIMALLOC_PURGE_HOLES}, item 297: ~10 MB more
 * after the trim, within the 60 MB target); this interval still applies where it is turned back on.
 * docs/performance.md, "What was changed".
 */
export const MIMALLOC_PURGE_HOLES_MIN_INTERVAL_MS = 1000;

/**
 * mimalloc's hole purging off (`MIMALLOC_PURGE_HOLES=0`; its default: on): even once a second, giving
 * back the free blocks inside pages still in use made the next requests fault the same pages in again,
 * 0.68–0.94 minor page faults per request over the wire against 0.04–0.25 for the floor's rung 5, at
 * ~15 µs each (docs/performance.md items 284, 297). Off, an interleaved A/B over the wire read 0.846×
 * (chat JSON), 0.788× (chat stream) and 0.922× (messages stream) the CPU per request, lower in both start
 * orders; the compiled binary's idle RSS 30 s after 1,000 requests rose from 42.0–43.6 MB to 50.1–54.2 MB
 * (the idle trim still gives back whole free pages), within issue 17's 60 MB. In 2026-12-01's A/B, before
 * the idle trim unmapped the executable's pages, it kept ~10 MB more too (83 against 73 MB) and did not
 * ship then.
 */
export const MIMALLOC_PURGE_HOLES = "0";

/**
 * Environment every service gets: SPEC D-4's raise of Bun's cap of 256 concurrent fetches, and
 * mimalloc's purge pacing ({@link MIMALLOC_PURGE_DELAY_MS}, {@link MIMALLOC_PURGE_HOLES_MIN_INTERVAL_MS},
 * {@link MIMALLOC_PURGE_HOLES});
 * all are read only at process start.
 */
export const SERVICE_ENV: Record<string, string> = {
  BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
  MIMALLOC_PURGE_DELAY: String(MIMALLOC_PURGE_DELAY_MS),
  MIMALLOC_PURGE_HOLES_MIN_INTERVAL: String(MIMALLOC_PURGE_HOLES_MIN_INTERVAL_MS),
  MIMALLOC_PURGE_HOLES,
};

/** A system command's result. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** What the service command needs from the machine; tests pass a scripted one. */
export interface ServiceHost {
  /** `process.platform`: `linux` (systemd) or `darwin` (launchd). */
  platform: string;
  /** The user's home directory (where the unit or plist goes). */
  home: string;
  /** The environment of the installing shell (SWITCHYARD_HOME is carried over). */
  env: Record<string, string | undefined>;
  /** The working directory relative paths are resolved against. */
  cwd: string;
  /** True when this CLI is the compiled binary (`bun build --compile`). */
  compiled: boolean;
  /** The running executable: the compiled binary, or bun. */
  execPath: string;
  /** The entry script when run from source (absolute path of src/main.ts). */
  mainPath: string;
  /** Whether a command is on PATH. */
  has(command: string): boolean;
  /** Runs a command (argv[0] looked up on PATH) and waits for it. */
  run(argv: string[]): Promise<RunResult>;
  /**
   * Problems that make a config file unusable for a service (`path: message` lines); empty when it is
   * fine. Secrets the file reads from the environment are not problems here (they may live only in the
   * service's environment file). Absent = no check.
   */
  configProblems?(path: string): string[];
}

/** The real machine. */
export function realServiceHost(): ServiceHost {
  const main = Bun.main;
  return {
    platform: process.platform,
    home: homedir(),
    env: process.env,
    cwd: process.cwd(),
    // A compiled binary's entry lives in Bun's embedded file system (/$bunfs/… or B:\~BUN\…).
    compiled: main.startsWith("/$bunfs/") || main.includes("~BUN"),
    execPath: process.execPath,
    mainPath: resolve(main),
    has: (command) => Bun.which(command) !== null,
    configProblems: (path) => {
      const r = checkConfig(path);
      return r.ok ? [] : r.lines.filter((l) => !/environment variable \S+ is not set/.test(l));
    },
    async run(argv) {
      try {
        const p = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
        const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
        return { code, stdout, stderr };
      } catch (e) {
        return { code: 127, stdout: "", stderr: e instanceof Error ? e.message : String(e) };
      }
    },
  };
}

/** `start` options the service passes through. */
export interface ServiceOptions {
  config?: string;
  /** The data directory as `start` would resolve it (`--data-dir`, `$SWITCHYARD_HOME`, `~/.switchyard`). */
  dataDir: string;
  host?: string;
  port?: string;
}

/** The argv the service runs: the binary (or bun + main.ts), `start`, and the passed-through options. */
export function serviceArgv(host: ServiceHost, opts: ServiceOptions): string[] {
  const argv = host.compiled ? [host.execPath] : [host.execPath, host.mainPath];
  argv.push("start");
  if (opts.config) argv.push("--config", resolve(host.cwd, opts.config));
  if (opts.host) argv.push("--host", opts.host);
  if (opts.port) argv.push("--port", opts.port);
  argv.push("--data-dir", resolve(host.cwd, opts.dataDir));
  return argv;
}

/** The environment the service runs with. */
export function serviceEnv(host: ServiceHost): Record<string, string> {
  const env = { ...SERVICE_ENV };
  if (host.env.SWITCHYARD_HOME) env.SWITCHYARD_HOME = resolve(host.cwd, host.env.SWITCHYARD_HOME);
  return env;
}

/** Where the systemd user unit goes. */
export const systemdUnitPath = (home: string) => join(home, ".config", "systemd", "user", SYSTEMD_UNIT);
/** Where the launchd agent plist goes. */
export const launchdPlistPath = (home: string) => join(home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);

/** One ExecStart/Environment word, quoted for systemd when needed (`%` and `$` escaped). */
function systemdWord(s: string): string {
  const escaped = s.replaceAll("%", "%%").replaceAll("$", "$$$$");
  if (/^[A-Za-z0-9_@+=:,./-]+$/.test(escaped)) return escaped;
  return `"${escaped.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** The systemd user unit's text. */
export function systemdUnit(argv: string[], env: Record<string, string>, dataDir: string, graceMs = 30_000): string {
  return [
    "# Written by `switchyard service install`; remove with `switchyard service uninstall`.",
    "[Unit]",
    "Description=switchyard LLM gateway",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${argv.map(systemdWord).join(" ")}`,
    "Restart=on-failure",
    "RestartSec=2",
    ...Object.entries(env).map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`)}`),
    "# KEY=value lines for the secrets the config names as env:VAR (written by install, mode 0600).",
    // A path, not a command line: no quoting, only specifiers escaped.
    `EnvironmentFile=-${join(dataDir, "service.env").replaceAll("%", "%%")}`,
    `# SIGTERM lets streams finish (grace period ${Math.round(graceMs / 1000)} s) and flushes usage before exit.`,
    "KillSignal=SIGTERM",
    `TimeoutStopSec=${Math.ceil(graceMs / 1000) + 15}`,
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

const xml = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** The launchd agent plist's text. */
export function launchdPlist(argv: string[], env: Record<string, string>, dataDir: string): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `switchyard service install`; remove with `switchyard service uninstall`. -->",
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  <string>${LAUNCHD_LABEL}</string>`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...argv.map((a) => `    <string>${xml(a)}</string>`),
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...Object.entries(env).flatMap(([k, v]) => [`    <key>${xml(k)}</key>`, `    <string>${xml(v)}</string>`]),
    "  </dict>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <!-- Restart on failure: keep alive unless it exited cleanly. -->",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>StandardOutPath</key>",
    `  <string>${xml(join(dataDir, "switchyard.log"))}</string>`,
    "  <key>StandardErrorPath</key>",
    `  <string>${xml(join(dataDir, "switchyard.err.log"))}</string>`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}

const firstLine = (r: RunResult) => (r.stderr.trim() || r.stdout.trim()).split("\n")[0] ?? "";

/** systemctl's words when no user manager runs for this login (a container, `su`, an SSH session without one). */
const NO_USER_MANAGER = /Failed to connect to bus|\$DBUS_SESSION_BUS_ADDRESS and \$XDG_RUNTIME_DIR not defined/;
/** What to do then (the unit file is written already). */
const NO_USER_MANAGER_HINT =
  ". No systemd user manager runs for this login (a container, or su / SSH without a user session): the unit is written and starts once one runs (`loginctl enable-linger $USER` keeps one running, from the next login); meanwhile run `switchyard start` under your own supervisor.";

/** The config's shutdown grace period in ms (server.shutdown_grace_ms), 30 s when it cannot be read. */
function graceOf(opts: ServiceOptions, host: ServiceHost): number {
  if (!opts.config) return 30_000;
  try {
    return loadConfigFile(resolve(host.cwd, opts.config), { ...process.env, ...host.env }).server.shutdownGraceMs;
  } catch {
    return 30_000;
  }
}

/** The config file `start` will read: `--config`, else the default path (`$SWITCHYARD_HOME` or `~/.switchyard`) when a file is there. */
function configPathOf(opts: ServiceOptions, host: ServiceHost): string | undefined {
  if (opts.config) return resolve(host.cwd, opts.config);
  const home = host.env.SWITCHYARD_HOME ? resolve(host.cwd, host.env.SWITCHYARD_HOME) : join(host.home, ".switchyard");
  const path = join(home, "config.yaml");
  return existsSync(path) ? path : undefined;
}

/** Runs `switchyard service install|uninstall|status`. */
export async function serviceCommand(sub: string | undefined, opts: ServiceOptions, host: ServiceHost, io: CliIo): Promise<void> {
  if (sub !== "install" && sub !== "uninstall" && sub !== "status") io.fail("usage: switchyard service install|uninstall|status [--config FILE] [--data-dir DIR] [--host H] [--port P]", 2);
  if (sub === "install" && opts.config) {
    // A service that crash-loops on a bad file helps nobody: check it first.
    const problems = host.configProblems?.(resolve(host.cwd, opts.config)) ?? [];
    if (problems.length > 0) io.fail(["not installing: the config file has errors", ...problems]);
  }
  if (host.platform === "linux") return systemd(sub, opts, host, io);
  if (host.platform === "darwin") return launchd(sub, opts, host, io);
  io.fail(`switchyard service supports Linux (systemd) and macOS (launchd), not ${host.platform}; run \`switchyard start\` under your own supervisor.`);
}

/**
 * Writes `DATA_DIR/service.env` with the secrets the config reads as `env:VAR` (service-env.ts), and
 * the OpenTelemetry variables set in this shell (`shellTelemetry`), and says, by name only, which came from this shell, which were kept and which are missing (`when`:
 * when the user must add them). Returns the file's path.
 */
function writeSecrets(dataDir: string, opts: ServiceOptions, host: ServiceHost, io: CliIo, when: string): string {
  const configPath = configPathOf(opts, host);
  const secrets = writeServiceEnv(join(dataDir, "service.env"), [...new Set([...serviceEnvNames(configPath), ...shellTelemetry(host.env)])], host.env);
  const said = [
    secrets.written.length > 0 ? `${secrets.written.join(", ")} from this shell` : "",
    secrets.kept.length > 0 ? `${secrets.kept.join(", ")} kept as they were` : "",
  ].filter(Boolean);
  if (configPath === undefined && secrets.missing.length > 0) {
    // The built-in default makes an account of each key that is set: any one is enough, so the ones
    // missing are said once as optional (three "X is not set" lines read as if all three were needed).
    const missing = secrets.missing.join(", ");
    const lead = said.length > 0 ? `${said.join("; ")}; ` : "no API key is set in this shell: ";
    io.out(`${secrets.path}: ${lead}without a config file the built-in default makes one account per API key it finds (${missing} not set here); add a line NAME=… there for each provider you use ${when}`);
    return secrets.path;
  }
  const none = secrets.missing.length > 0 ? "none of the secrets the config needs is set in this shell" : "no secrets needed";
  io.out(`${secrets.path}: ${said.length > 0 ? said.join("; ") : none}`);
  for (const name of secrets.missing) io.out(`${secrets.path}: ${name} is not set in this shell; add a line ${name}=… there ${when}`);
  return secrets.path;
}

/**
 * Refuses to install while an instance the user started by hand holds the data directory (its
 * instance.json names a live process other than the installed service's own, which `servicePid` asks
 * for only then): the service would fail to start beside it (one instance per data directory) and
 * restart in a loop, while install said "enabled and started".
 */
async function refuseBesideRunningInstance(dataDir: string, servicePid: () => Promise<number | undefined>, io: CliIo): Promise<void> {
  const owner = liveInstance(dataDir);
  if (!owner || owner.pid === (await servicePid())) return;
  io.fail(
    `not installing: a switchyard instance you started (pid ${owner.pid}${owner.url ? `, ${owner.url}` : ""}) is running with the data directory ${dataDir}, and the service would fail to start beside it (one instance per data directory); stop it first (Ctrl-C where it runs, or kill ${owner.pid}), then run service install again`,
  );
}

async function systemd(sub: "install" | "uninstall" | "status", opts: ServiceOptions, host: ServiceHost, io: CliIo): Promise<void> {
  const unitPath = systemdUnitPath(host.home);
  if (!host.has("systemctl")) io.fail(`systemctl not found: this machine has no systemd to run a user service (run \`switchyard start\` under your own supervisor).`);
  const ctl = (...args: string[]) => host.run(["systemctl", "--user", ...args]);
  const must = async (...args: string[]) => {
    const r = await ctl(...args);
    if (r.code !== 0) io.fail(`\`systemctl --user ${args.join(" ")}\` failed (exit ${r.code}): ${firstLine(r)}${NO_USER_MANAGER.test(firstLine(r)) ? NO_USER_MANAGER_HINT : ""}`);
    return r;
  };

  if (sub === "install") {
    const existed = existsSync(unitPath);
    const dataDir = resolve(host.cwd, opts.dataDir);
    await refuseBesideRunningInstance(dataDir, async () => (existed ? Number((await ctl("show", "-p", "MainPID", "--value", SYSTEMD_UNIT)).stdout.trim()) || undefined : undefined), io);
    const argv = serviceArgv(host, opts);
    mkdirSync(dirname(unitPath), { recursive: true });
    writeFileSync(unitPath, systemdUnit(argv, serviceEnv(host), dataDir, graceOf(opts, host)));
    io.out(`wrote ${unitPath}`);
    writeSecrets(dataDir, opts, host, io, "before the service needs it");
    await must("daemon-reload");
    if (existed) {
      await must("enable", SYSTEMD_UNIT);
      await must("restart", SYSTEMD_UNIT);
    } else {
      await must("enable", "--now", SYSTEMD_UNIT);
    }
    io.out(`switchyard service ${existed ? "updated and restarted" : "enabled and started"}: ${argv.join(" ")}`);
    io.out(`logs: journalctl --user -u switchyard -f; to keep it running after logout: loginctl enable-linger ${host.env.USER ?? "$USER"}`);
    return;
  }
  if (sub === "uninstall") {
    if (!existsSync(unitPath)) {
      io.out(`switchyard service is not installed (no ${unitPath})`);
      return nameSecrets(resolve(host.cwd, opts.dataDir), io);
    }
    const dataDir = unitDataDir(readFileSync(unitPath, "utf8")) ?? resolve(host.cwd, opts.dataDir);
    const stop = await ctl("disable", "--now", SYSTEMD_UNIT);
    rmSync(unitPath, { force: true });
    await ctl("daemon-reload");
    if (stop.code === 0) io.out(`switchyard service stopped and removed (${unitPath})`);
    else {
      // Nothing was stopped: say so rather than "stopped" (newuser14 K3: a container without a user manager).
      const why = NO_USER_MANAGER.test(firstLine(stop)) ? "no systemd user manager runs for this login, so no service was running" : "it may still be running";
      io.out(`switchyard service removed (${unitPath}), but not stopped or disabled: \`systemctl --user disable --now ${SYSTEMD_UNIT}\` failed (exit ${stop.code}): ${firstLine(stop)}; ${why}`);
    }
    return removeSecrets(dataDir, io);
  }
  // status
  if (!existsSync(unitPath)) return io.out(`switchyard service: not installed (no ${unitPath})`);
  const unit = readFileSync(unitPath, "utf8");
  const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? "?";
  io.out(`switchyard service: installed (${unitPath})`);
  for (const [label, verb] of [["enabled", "is-enabled"], ["active", "is-active"]] as const) {
    const r = await ctl(verb, SYSTEMD_UNIT);
    // is-enabled / is-active answer on stdout, with a non-zero exit for "disabled" or "failed"; without a
    // user manager they print nothing there (or a bare "disabled") and say why on stderr.
    const unreachable = NO_USER_MANAGER.test(firstLine(r));
    io.out(`${label}: ${unreachable ? `unknown (systemctl --user cannot reach a user manager: ${firstLine(r)})` : r.stdout.trim() || "unknown"}`);
  }
  io.out(`runs: ${exec}`);
  const dataDir = unitDataDir(unit);
  const owner = dataDir ? liveInstance(dataDir) : undefined;
  if (owner) io.out(`serving its data directory ${dataDir}: pid ${owner.pid}${owner.url ? ` at ${owner.url}` : ""}`);
}

async function launchd(sub: "install" | "uninstall" | "status", opts: ServiceOptions, host: ServiceHost, io: CliIo): Promise<void> {
  const plistPath = launchdPlistPath(host.home);
  if (!host.has("launchctl")) io.fail("launchctl not found: this machine has no launchd to run a user agent (run `switchyard start` under your own supervisor).");
  const ctl = (...args: string[]) => host.run(["launchctl", ...args]);

  if (sub === "install") {
    const existed = existsSync(plistPath);
    const dataDir = resolve(host.cwd, opts.dataDir);
    await refuseBesideRunningInstance(dataDir, async () => (existed ? agentPid(await ctl("list", LAUNCHD_LABEL)) : undefined), io);
    const argv = serviceArgv(host, opts);
    // launchd opens the log files before switchyard starts: their directory must exist.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // launchd starts agents without the login shell's environment and has no environment file: the
    // secrets the config reads as env:VAR go into the plist, from service.env (kept, like on Linux, so
    // an edit there and a second install update them), and the plist is readable by its owner only.
    const envFile = writeSecrets(dataDir, opts, host, io, "and run service install again");
    const env = { ...readServiceEnv(envFile), ...serviceEnv(host) };
    if (existed) await ctl("unload", plistPath);
    mkdirSync(dirname(plistPath), { recursive: true });
    writeFileSync(plistPath, launchdPlist(argv, env, dataDir), { mode: 0o600 });
    chmodSync(plistPath, 0o600);
    io.out(`wrote ${plistPath}`);
    const r = await ctl("load", "-w", plistPath);
    if (r.code !== 0) io.fail(`\`launchctl load -w ${plistPath}\` failed (exit ${r.code}): ${firstLine(r)}`);
    io.out(`switchyard agent ${existed ? "reloaded" : "loaded"}: ${argv.join(" ")}`);
    io.out(`logs: ${join(dataDir, "switchyard.log")}`);
    return;
  }
  if (sub === "uninstall") {
    if (!existsSync(plistPath)) {
      io.out(`switchyard agent is not installed (no ${plistPath})`);
      return nameSecrets(resolve(host.cwd, opts.dataDir), io);
    }
    const dataDir = plistDataDir(readFileSync(plistPath, "utf8")) ?? resolve(host.cwd, opts.dataDir);
    const r = await ctl("unload", "-w", plistPath);
    rmSync(plistPath, { force: true });
    io.out(`switchyard agent unloaded and removed (${plistPath})${r.code !== 0 ? `; launchctl said: ${firstLine(r)}` : ""}`);
    return removeSecrets(dataDir, io);
  }
  if (!existsSync(plistPath)) return io.out(`switchyard agent: not installed (no ${plistPath})`);
  const r = await ctl("list", LAUNCHD_LABEL);
  const pid = agentPid(r);
  io.out(`switchyard agent: installed (${plistPath})`);
  io.out(`loaded: ${r.code === 0 ? "yes" : "no"}`);
  io.out(`active: ${pid ? `running (pid ${pid})` : "not running"}`);
}

/** The data directory a unit was installed for, from its `EnvironmentFile=-DIR/service.env` line. */
function unitDataDir(unit: string): string | undefined {
  return /^EnvironmentFile=-(.*)\/service\.env$/m.exec(unit)?.[1]?.replaceAll("%%", "%");
}

/** The data directory an agent was installed for, from the `--data-dir DIR` of its ProgramArguments. */
function plistDataDir(plist: string): string | undefined {
  const raw = /<string>--data-dir<\/string>\s*<string>([^<]*)<\/string>/.exec(plist)?.[1];
  return raw?.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&amp;", "&");
}

/**
 * Uninstall's last step: removes `DATA_DIR/service.env`, the secrets install kept for the service
 * (database URL, API keys: nothing else reads the file), and says so; no file, nothing said. A file
 * holding lines install did not write (added or changed by hand, as install's output asks for a
 * missing secret) is renamed to `service.env.bak` instead (service-env.ts removeServiceEnv), and said
 * so, as still holding secrets. A file that can be neither is named, with the reason, likewise.
 */
function removeSecrets(dataDir: string, io: CliIo): void {
  const file = join(dataDir, "service.env");
  if (!existsSync(file)) return;
  try {
    const r = removeServiceEnv(file);
    if ("removed" in r) return io.out(`removed ${file} (the secrets install kept for the service)`);
    const lines = r.byHand === 1 ? "1 line" : `${r.byHand} lines`;
    const why = r.unknown
      ? `it holds ${lines} that service install did not record writing (added by hand, or written by an earlier switchyard version's install, which kept no record)`
      : `it holds ${lines} that service install did not write (added or changed by hand)`;
    io.out(`kept ${file} as ${r.keptAs}: ${why}; it still holds secrets: remove it once you no longer need those lines (or rename it back before service install, which keeps them)`);
  } catch (e) {
    io.out(`could not remove ${file} (${e instanceof Error ? e.message : String(e)}): it still holds the service's secrets; remove it by hand`);
  }
}

/**
 * Uninstall with nothing installed (no unit or plist): `DATA_DIR/service.env`, if there, is named, not
 * removed: with no service of switchyard's left, a supervisor of the user's own may read it (the
 * install hint for a machine without a systemd user manager suggests one). No file, nothing said.
 */
function nameSecrets(dataDir: string, io: CliIo): void {
  const file = join(dataDir, "service.env");
  if (existsSync(file)) io.out(`left ${file}: it holds the secrets install kept for the service; remove it if nothing of yours reads it`);
}

/** The running agent's pid from `launchctl list LABEL` (its `"PID" = N;` line), when it runs. */
function agentPid(r: RunResult): number | undefined {
  const pid = /"PID"\s*=\s*(\d+)/.exec(r.stdout)?.[1];
  return pid === undefined ? undefined : Number(pid);
}
