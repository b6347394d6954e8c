/** The command line refuses what it does not understand instead of guessing (SPEC 2.2). */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SOURCE_CLI } from "../support/instance.ts";
import { COMMANDS, commandHelp } from "../../src/main.ts";
import { checkoutCommit } from "../../src/version.ts";

const run = (...args: string[]) => {
  const r = Bun.spawnSync([...SOURCE_CLI, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent-home" }, timeout: 20_000 });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
};

describe("switchyard command line", () => {
  test("an unknown option is an error (exit 2), never ignored; one line names what the command takes and the closest (it was parseArgs' text and the whole usage)", () => {
    const r = run("start", "--prot", "20170");
    expect({ code: r.code, err: r.err }).toEqual({ code: 2, err: "start does not take --prot (did you mean --port?); it takes --config, --host, --port, --data-dir, --database (switchyard start --help says more)\n" });
    const setup = run("setup", "codex", "--dryrun");
    expect({ code: setup.code, err: setup.err }).toEqual({
      code: 2,
      err: "setup does not take --dryrun (did you mean --dry-run?); it takes --data-dir, --url, --key, --client-key, --model, --utility-model, --dry-run, --codex-bin, --undo (switchyard setup --help says more)\n",
    });
    const list = run("keys", "list", "--bogus");
    expect({ code: list.code, err: list.err }).toEqual({ code: 2, err: "keys list does not take --bogus; it takes --data-dir, --url, --key, --json (switchyard keys --help says more)\n" });
    const none = run("--bogus");
    expect({ code: none.code, err: none.err }).toEqual({ code: 2, err: "unknown option --bogus (switchyard --help lists the commands and their options)\n" });
  });
  test("an option another command takes is refused (exit 2), never ignored: service install --dry-run installs nothing", () => {
    // A scratch HOME and a systemctl that only records its calls: nothing is installed on this machine.
    const dir = mkdtempSync(join(tmpdir(), "sy-main-args-"));
    try {
      const bin = join(dir, "bin");
      mkdirSync(bin);
      writeFileSync(join(bin, "systemctl"), `#!/bin/sh\necho "$@" >> ${join(dir, "systemctl.log")}\n`);
      chmodSync(join(bin, "systemctl"), 0o755);
      const r = Bun.spawnSync([...SOURCE_CLI, "service", "install", "--dry-run", "--data-dir", join(dir, "data")], {
        env: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: dir },
        timeout: 20_000,
      });
      expect({ code: r.exitCode, err: r.stderr.toString().trim() }).toEqual({
        code: 2,
        err: "service does not take --dry-run; it has no dry run (install writes the unit and starts the service); it takes --config, --data-dir, --host, --port (switchyard service --help says more)",
      });
      expect(existsSync(join(dir, ".config", "systemd", "user", "switchyard.service"))).toBe(false);
      expect(existsSync(join(dir, "systemctl.log"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Other commands and subcommands name what they take instead.
    const usage = run("usage", "--limit", "5", "--data-dir", "/nonexistent-dir");
    expect({ code: usage.code, err: usage.err.trim() }).toEqual({ code: 2, err: "usage does not take --limit; it takes --data-dir, --url, --key, --since, --by, --json (switchyard usage --help says more)" });
    const list = run("keys", "list", "--rpm", "3", "--data-dir", "/nonexistent-dir");
    expect({ code: list.code, err: list.err.trim() }).toEqual({ code: 2, err: "keys list does not take --rpm; it takes --data-dir, --url, --key, --json (switchyard keys --help says more)" });
    expect(run("version", "--json").err.trim()).toBe("version does not take --json; it takes --data-dir, --database (switchyard version --help says more)");
    expect(run("check-config", "/nonexistent.yaml", "--data-dir", "x").code).toBe(2);
  });
  test("a word a command does not take is refused (exit 2), never ignored: usage 7d printed the last 24 h", () => {
    const usage = run("usage", "7d", "--data-dir", "/nonexistent-dir");
    expect({ code: usage.code, err: usage.err.trim() }).toEqual({ code: 2, err: 'usage does not take "7d" (for the last 7d: --since 7d) (switchyard usage --help says what it takes)' });
    const revoke = run("keys", "revoke", "old", "laptop", "--data-dir", "/nonexistent-dir");
    expect({ code: revoke.code, err: revoke.err.trim() }).toEqual({ code: 2, err: 'keys revoke does not take "laptop" (switchyard keys --help says what it takes)' });
    expect(run("version", "extra").code).toBe(2);
    // the words a command takes still reach it: no instance here, so the next thing said is that
    expect(run("keys", "revoke", "old", "--data-dir", "/nonexistent-dir").err).toStartWith("no running switchyard instance found");
  });
  test("every option a command's usage lines name is one it takes (the refusal never contradicts the usage), and every option it takes is named in its help", () => {
    for (const cmd of new Set(Object.keys(COMMANDS).map((c) => c.split(" ")[0]))) {
      const takes = Object.entries(COMMANDS).filter(([c]) => c === cmd || c.startsWith(`${cmd} `)).flatMap(([, c]) => c.options);
      const help = commandHelp(cmd)!;
      const named = [...help.matchAll(/\[--([\w-]+)/g)].map((m) => m[1]);
      expect({ cmd, missing: named.filter((o) => !takes.includes(o)) }).toEqual({ cmd, missing: [] });
      // an option a command takes that its help never names is one a user cannot find (check-config's --config was)
      const mentioned = new Set([...help.matchAll(/--([\w-]+)/g)].map((m) => m[1]));
      expect({ cmd, unnamed: [...new Set(takes)].filter((o) => !mentioned.has(o)) }).toEqual({ cmd, unnamed: [] });
    }
  });
  test("a wrong value of usage's --by or --since is a usage error (exit 2) said before any instance is asked (it was exit 1, the admin API's 400)", () => {
    const by = run("usage", "--by", "nope", "--data-dir", "/nonexistent-dir");
    expect({ code: by.code, err: by.err.trim() }).toEqual({ code: 2, err: '--by must be model, account, key, provider or instance, not "nope"' });
    const since = run("usage", "--since", "0h", "--data-dir", "/nonexistent-dir");
    expect({ code: since.code, err: since.err.trim() }).toEqual({ code: 2, err: '--since must look like 30m, 24h or 7d (a whole number above 0 and s, m, h or d), not "0h"' });
    // valid values reach the instance: none here, so the next thing said is that (exit 1)
    const ok = run("usage", "--by", "provider", "--since", "7d", "--data-dir", "/nonexistent-dir");
    expect(ok.code).toBe(1);
    expect(ok.err).toStartWith("no running switchyard instance found");
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
    // the whole usage for no command, pointing at COMMAND --help
    const all = run("--help");
    expect(all.code).toBe(0);
    expect(all.out).toContain("switchyard start [--config FILE]");
    expect(all.out).toContain("switchyard COMMAND --help says what a command does.");
  });
  test("keys --help says when revoke does not stop a key's requests: from loopback while server.require_api_key is off (it said 'at once' alone)", () => {
    const help = commandHelp("keys")!.replace(/\n/g, " ");
    expect(help).toContain("revoke stops the key at once, its requests refused (401 invalid_api_key), except from this machine while server.require_api_key is off:");
    expect(help).toContain("a revoked key's requests from loopback are still served, counted under no key and outside its limits");
  });
  test("stop: --timeout must be seconds above 0 (exit 2); it takes no --url (it signals a local process)", () => {
    const t = run("stop", "--timeout", "0", "--data-dir", "/nonexistent-dir");
    expect({ code: t.code, err: t.err.trim() }).toEqual({ code: 2, err: '--timeout must be a number of seconds above 0, not "0"' });
    const u = run("stop", "--url", "http://127.0.0.1:1");
    expect(u.code).toBe(2);
    expect(u.err).toStartWith("stop does not take --url; it takes --data-dir, --timeout, --force");
  });
  test("help for an unknown command is the unknown-command error (exit 2), as the command alone is", () => {
    for (const r of [run("frob", "--help"), run("help", "frob"), run("frob")]) {
      expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: "" });
      expect(r.err.split("\n")[0]).toBe("unknown command: frob");
      expect(r.err).toContain("switchyard COMMAND --help says what a command does.");
    }
  });
  test("check and validate (other tools' words) suggest check-config; a typo of a command its closest (exit 2)", () => {
    for (const [word, near] of [["check", "check-config"], ["validate", "check-config"], ["strat", "start"]]) {
      for (const r of [run(word), run(word, "--help")]) {
        expect(r.code).toBe(2);
        expect(r.err.split("\n")[0]).toBe(`unknown command: ${word} (did you mean "${near}"?)`);
      }
    }
  });
  test("check-config without FILE checks the file start reads without --config ($SWITCHYARD_HOME/config.yaml), naming it; none there is said, exit 0", () => {
    const home = mkdtempSync(join(tmpdir(), "sy-check-default-"));
    try {
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent-home", SWITCHYARD_HOME: home };
      const check = () => {
        const r = Bun.spawnSync([...SOURCE_CLI, "check-config"], { env, timeout: 20_000 });
        return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
      };
      const file = join(home, "config.yaml");
      const first = `checking ${file}, the file switchyard start reads without --config (switchyard check-config FILE checks another)`;
      expect(check()).toEqual({
        code: 0,
        out: `${first}\n${file}: not found; switchyard start without --config runs on the built-in default then (its API-key variables and subscription logins), so there is no file to check\n`,
        err: "",
      });
      writeFileSync(file, "aliases: { fast: openai/gpt-5-mini }\n");
      expect(check()).toEqual({ code: 0, out: `${first}\nok: 5 providers (5 built in), 0 accounts, 0 combos, 1 alias, 0 keys\n`, err: "" });
      writeFileSync(file, "aliases: { fast: nope/x }\n");
      const bad = check();
      expect(bad.code).toBe(1);
      expect(bad.out.split("\n")[0]).toBe(first);
      expect(bad.out).toContain("aliases.fast");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
  test("an unknown sub-command of keys or accounts is named, with the closest and the ones it takes, before the usage line (exit 2; try19 D4: only the usage line)", () => {
    const keys = "usage: switchyard keys create NAME [options] | keys list [--json] | keys set NAME [options] | keys revoke NAME | keys rotate NAME [--grace DURATION] | keys disable NAME | keys enable NAME\n";
    const accounts = "usage: switchyard accounts status [--json] | accounts remove ID | accounts restore ID [MODEL] | accounts unlock ID | accounts close-circuit PROVIDER\n";
    // The words it takes are the command table's (review19 R2: they were a second list kept by hand), in its order.
    const takes = (cmd: string) => Object.keys(COMMANDS).filter((k) => k.startsWith(`${cmd} `)).map((k) => k.slice(cmd.length + 1)).join(", ");
    expect(takes("keys")).toBe("create, list, set, revoke, rotate, disable, enable");
    expect(run("keys", "frob")).toEqual({ code: 2, out: "", err: `unknown subcommand "frob" of switchyard keys; it takes ${takes("keys")}\n${keys}` });
    expect(run("keys", "lst")).toEqual({ code: 2, out: "", err: `unknown subcommand "lst" of switchyard keys (did you mean "list"?); it takes ${takes("keys")}\n${keys}` });
    expect(run("accounts", "frob")).toEqual({ code: 2, out: "", err: `unknown subcommand "frob" of switchyard accounts; it takes ${takes("accounts")}\n${accounts}` });
    expect(run("accounts", "unlok", "x")).toEqual({ code: 2, out: "", err: `unknown subcommand "unlok" of switchyard accounts (did you mean "unlock"?); it takes ${takes("accounts")}\n${accounts}` });
    // no sub-command at all: the usage line, as before
    expect(run("keys")).toEqual({ code: 2, out: "", err: keys });
  });
  test("every command's help: its own usage lines, what it does, and how it finds the instance when it talks to one", () => {
    const commands = ["start", "check-config", "keys", "usage", "calls", "route", "accounts", "login", "import", "service", "setup", "reload", "version"];
    for (const cmd of commands) {
      const help = commandHelp(cmd)!;
      expect(help).toStartWith(`Usage:\n  switchyard ${cmd}`);
      expect(help.split("\n").filter((l) => l.startsWith("  switchyard ")).every((l) => l.startsWith(`  switchyard ${cmd}`))).toBe(true);
      expect(help.split("\n\n").length).toBeGreaterThanOrEqual(2);
      expect(help.split("\n").every((l) => l.length <= 120)).toBe(true);
      const talks = !["start", "check-config", "service", "version"].includes(cmd);
      expect(help.includes("--url http://127.0.0.1:PORT")).toBe(talks);
    }
    expect(commandHelp("setup")).toContain("[--client-key KEY] [--codex-bin PATH]");
    expect(commandHelp("setup")!.replace(/\s+/g, " ")).toContain("--dry-run writes nothing");
    expect(commandHelp("keys")!.replace(/\s+/g, " ")).toContain("(with --key ADMIN_KEY, or SWITCHYARD_ADMIN_KEY, where keys are required: a key with the admin scope)");
    expect(commandHelp("keys")).toContain("[--budget WINDOW:tokens|usd:AMOUNT]... [--models LIST]");
    expect(commandHelp("frob")).toBeUndefined();
  });
  test("--key is the admin key for every command but setup, whose client key is --client-key (--key its older name there): the usage, setup's help and the refusals say so", () => {
    const flat = (text: string) => text.replace(/\s+/g, " ");
    expect(flat(run("help").out)).toContain("--key is always the admin key there, except for setup, whose key is the client key the CLI will send (--client-key).");
    const setup = flat(commandHelp("setup")!);
    expect(setup).toContain("--client-key KEY is the client key the CLI will send and setup writes into its settings (default $SWITCHYARD_KEY");
    expect(setup).toContain("--key is an older name for --client-key here (for every other command --key is the admin key).");
    // setup's help never offers --key for the admin key
    expect(setup).toContain("(with the admin key in SWITCHYARD_ADMIN_KEY where keys are required; setup takes no admin key on its command line)");
    expect(setup).not.toContain("with --key");
    // --client-key elsewhere is refused (exit 2), not taken for the admin key or ignored
    const keys = run("keys", "list", "--client-key", "sy-x", "--data-dir", "/nonexistent-dir");
    expect({ code: keys.code, err: keys.err.trim() }).toEqual({ code: 2, err: "--client-key is setup's option (the client key it writes for a CLI); keys takes the admin key as --key ADMIN_KEY (or SWITCHYARD_ADMIN_KEY)" });
    const route = run("route", "coding", "--client-key", "sy-x", "--data-dir", "/nonexistent-dir");
    expect(route.code).toBe(2);
    expect(route.err.trim()).toEndWith(', and routes as for a client key given as --header "Authorization: Bearer KEY"');
    expect(run("start", "--client-key", "sy-x", "--port", "0").err.trim()).toBe("--client-key is setup's option (the client key it writes for a CLI)");
    // both names of setup's client key, naming different keys: which one is meant is unclear
    const both = run("setup", "claude-code", "--client-key", "sy-a", "--key", "sy-b", "--data-dir", "/nonexistent-dir");
    expect({ code: both.code, err: both.err.trim() }).toEqual({
      code: 2,
      err: "setup takes one client key: --client-key and --key (its older name for setup) were both given, with different values; give --client-key alone (the admin key setup asks the gateway with comes from SWITCHYARD_ADMIN_KEY)",
    });
  });
  test("an option given without its value says that, not parseArgs' 'ambiguous'", () => {
    const between = run("usage", "--since", "--json");
    expect({ code: between.code, err: between.err }).toEqual({ code: 2, err: '--since needs a value, and "--json" after it is an option (a value that starts with "-" goes as --since=VALUE) (switchyard usage --help says more)\n' });
    const last = run("calls", "list", "--limit");
    expect({ code: last.code, err: last.err }).toEqual({ code: 2, err: "--limit needs a value (switchyard calls --help says more)\n" });
  });
  test("--version and -V print the version line like `version` (exit 0)", () => {
    const v = run("version");
    expect(v.code).toBe(0);
    // from source: the checkout's commit (two builds of one version differ there: newuser14 K2)
    const commit = checkoutCommit(import.meta.dir)?.commit ?? "unknown";
    expect(v.out).toMatch(new RegExp(`^switchyard \\d+\\.\\d+\\.\\d+ \\(commit ${commit}; store schema SQLite \\d+, PostgreSQL \\d+; bun `));
    for (const flag of ["--version", "-V"]) {
      const r = run(flag);
      expect(r.code).toBe(0);
      expect(r.out).toBe(v.out);
    }
  });
  test("a subcommand's usage line names every option it takes", () => {
    const setup = run("setup", "nope");
    expect(setup.code).toBe(2);
    expect(setup.err).toContain("[--client-key KEY] [--codex-bin PATH]");
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

  test("--url is the gateway's address: a client's base URL (/v1), a page's address or one without http:// is refused, saying what to write", () => {
    // Found by a new operator: --url http://127.0.0.1:PORT/v1 answered "error 404: Unknown path: GET /v1/admin/api/calls",
    // --url …/dashboard printed the 404 page's HTML, and --url 127.0.0.1:PORT said no instance answers there.
    const wanted = "--url is the gateway's address, http://HOST:PORT with no path (e.g. http://127.0.0.1:20128), not";
    const cases: Array<[string[], string]> = [
      [["calls", "list", "--url", "http://127.0.0.1:9/v1"], `${wanted} "http://127.0.0.1:9/v1": /v1 belongs to a client's base URL, not to the gateway's address (use http://127.0.0.1:9)`],
      [["usage", "--url", "http://127.0.0.1:9/dashboard"], `${wanted} "http://127.0.0.1:9/dashboard" (use http://127.0.0.1:9)`],
      [["keys", "list", "--url", "127.0.0.1:9"], `${wanted} "127.0.0.1:9" (write http://127.0.0.1:9)`],
      [["setup", "codex", "--dry-run", "--url", "http://127.0.0.1:9/v1/"], `${wanted} "http://127.0.0.1:9/v1/": /v1 belongs to a client's base URL, not to the gateway's address (use http://127.0.0.1:9)`],
    ];
    for (const [args, err] of cases) {
      const r = run(...args);
      expect({ code: r.code, err: r.err.trim() }).toEqual({ code: 2, err });
    }
    // The address itself, with or without its slash, goes on to find no instance there (nothing listens on port 9).
    for (const url of ["http://127.0.0.1:9", "http://127.0.0.1:9/"]) expect(run("calls", "list", "--url", url).err.trim()).toStartWith("no running switchyard instance answers at http://127.0.0.1:9");
  });
});

