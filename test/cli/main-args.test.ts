/** The command line refuses what it does not understand instead of guessing (SPEC 2.2). */
import { describe, expect, test } from "bun:test";
import { SOURCE_CLI } from "../support/instance.ts";
import { commandHelp } from "../../src/main.ts";

const run = (...args: string[]) => {
  const r = Bun.spawnSync([...SOURCE_CLI, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent-home" }, timeout: 20_000 });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
};

describe("switchyard command line", () => {
  test("an unknown option is an error (exit 2), never ignored", () => {
    const r = run("start", "--prot", "20170");
    expect(r.code).toBe(2);
    expect(r.err).toContain("Unknown option '--prot'");
  });
  test("a negative number after a flag reaches that flag's own check (parseArgs called it 'ambiguous')", () => {
    const r = run("keys", "create", "x", "--rpm", "-3", "--data-dir", "/nonexistent-dir");
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('--rpm must be a positive whole number, not "-3"');
  });
  test("--port must be a port number", () => {
    for (const p of ["", "abc", "70000"]) {
      const r = run("start", "--port", p);
      expect(r.code).toBe(2);
      expect(r.err).toContain("--port must be a number from 0 to 65535");
    }
  });
  test("no command prints the usage and exits 2; help exits 0", () => {
    expect(run().code).toBe(2);
    const h = run("help");
    expect(h.code).toBe(0);
    expect(h.out).toContain("switchyard start");
  });
  test("COMMAND --help (or help COMMAND) prints that command's usage lines and what it does, exit 0", () => {
    for (const cmd of ["setup", "service"]) {
      const r = run(cmd, "--help");
      expect(r.code).toBe(0);
      expect(r.out).toBe(commandHelp(cmd)! + "\n");
    }
    expect(run("help", "keys").out).toBe(commandHelp("keys")! + "\n");
    // the whole usage for no command or an unknown one, pointing at COMMAND --help
    for (const r of [run("--help"), run("frob", "--help")]) {
      expect(r.code).toBe(0);
      expect(r.out).toContain("switchyard start [--config FILE]");
      expect(r.out).toContain("switchyard COMMAND --help says what a command does.");
    }
  });
  test("every command's help: its own usage lines, what it does, and how it finds the instance when it talks to one", () => {
    const commands = ["start", "check-config", "keys", "usage", "calls", "route", "accounts", "login", "import", "service", "setup", "version"];
    for (const cmd of commands) {
      const help = commandHelp(cmd)!;
      expect(help).toStartWith(`Usage:\n  switchyard ${cmd}`);
      expect(help.split("\n").filter((l) => l.startsWith("  switchyard ")).every((l) => l.startsWith(`  switchyard ${cmd}`))).toBe(true);
      expect(help.split("\n\n").length).toBeGreaterThanOrEqual(2);
      expect(help.split("\n").every((l) => l.length <= 120)).toBe(true);
      const talks = !["start", "check-config", "service", "version"].includes(cmd);
      expect(help.includes("--url http://127.0.0.1:PORT")).toBe(talks);
    }
    expect(commandHelp("setup")).toContain("[--key CLIENT_KEY] [--codex-bin PATH]");
    expect(commandHelp("setup")).toContain("--dry-run writes nothing");
    // setup's --key is the client key it writes for the CLI: its help must not offer it for the admin key
    expect(commandHelp("setup")!.replace(/\s+/g, " ")).toContain("(with SWITCHYARD_ADMIN_KEY where keys are required; --key here is the client key written for the CLI, never an admin key)");
    expect(commandHelp("setup")!.replace(/\s+/g, " ")).not.toContain("with --key KEY");
    expect(commandHelp("keys")!.replace(/\s+/g, " ")).toContain("(with --key KEY, or SWITCHYARD_ADMIN_KEY, where keys are required)");
    expect(commandHelp("keys")).toContain("[--budget WINDOW:tokens|usd:AMOUNT]... [--models LIST]");
    expect(commandHelp("frob")).toBeUndefined();
  });
  test("an option given without its value says that, not parseArgs' 'ambiguous'", () => {
    const between = run("usage", "--since", "--json");
    expect(between.code).toBe(2);
    expect(between.err.split("\n")[0]).toBe('--since needs a value, and "--json" after it is an option (a value that starts with "-" goes as --since=VALUE)');
    const last = run("usage", "--since");
    expect(last.code).toBe(2);
    expect(last.err.split("\n")[0]).toBe("--since needs a value");
  });
  test("--version and -V print the version line like `version` (exit 0)", () => {
    const v = run("version");
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/^switchyard \d+\.\d+\.\d+ \(bun /);
    for (const flag of ["--version", "-V"]) {
      const r = run(flag);
      expect(r.code).toBe(0);
      expect(r.out).toBe(v.out);
    }
  });
  test("a subcommand's usage line names every option it takes", () => {
    const setup = run("setup", "nope");
    expect(setup.code).toBe(2);
    expect(setup.err).toContain("[--key CLIENT_KEY] [--codex-bin PATH]");
    const keys = run("keys", "create");
    expect(keys.code).toBe(2);
    expect(keys.err).toContain("[--budget WINDOW:tokens|usd:AMOUNT]... [--models LIST]");
    const service = run("service");
    expect(service.code).toBe(2);
    expect(service.err).toContain("[--host H] [--port P]");
    const route = run("route");
    expect(route.code).toBe(2);
    expect(route.err).toContain('[--header "Name: value"]...');
  });
  test("a command that needs the running instance says how to start one or name it when none is found", () => {
    for (const args of [["keys", "list"], ["setup", "claude-code", "--dry-run"]]) {
      const r = run(...args, "--data-dir", "/nonexistent-dir");
      expect(r.code).toBe(1);
      expect(r.err.trim()).toBe(
        "no running switchyard instance found (no /nonexistent-dir/instance.json); start one with switchyard start (scripts/start in a source checkout), or name it with --data-dir DIR or --url URL",
      );
    }
  });
});
