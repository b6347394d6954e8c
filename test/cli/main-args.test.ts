/** The command line refuses what it does not understand instead of guessing (SPEC 2.2). */
import { describe, expect, test } from "bun:test";
import { SOURCE_CLI } from "../support/instance.ts";

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
