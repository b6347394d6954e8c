/**
 * `switchyard setup CLI --undo` (src/cli/setup-undo.ts): in a scratch HOME with real-looking settings
 * of the three CLIs (and with none), setup run twice (a second model: later backups) then undone
 * leaves every file byte for byte as before, and removes every file setup created; a file the user
 * changed after setup is never overwritten or removed, and the lines say what to do by hand; one the
 * user copied the original back over is undone (until 2026-12-06 refused for good), and each file gets
 * its mode from before setup back (it came back 0600). Before,
 * setup had no --undo ("setup does not take --undo", exit 2), kept no backup of a file it created and
 * named its first backup like every later one. Also setup's help and usage (--undo, --utility-model),
 * `setup cursor`, and no internal review ids in what the command line prints.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLACEHOLDER_KEY, runSetup, type SetupOptions } from "../../src/cli/setup.ts";
import { ROOT, SOURCE_CLI } from "../support/instance.ts";

const GW = "http://127.0.0.1:20999";
const PROMPT = "You are a coding agent running in the Codex CLI.";
const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

/** Every file of the three CLIs' settings folders below `home` with its bytes (a snapshot to compare). */
function snapshot(home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of new Bun.Glob("{.claude,.codex,.gemini}/**/*").scanSync({ cwd: home, dot: true })) out[f] = readFileSync(join(home, f), "latin1");
  return out;
}

/** A scratch HOME holding settings of the three CLIs as their users have them (or, `empty`, none). */
function scratchHome(empty = false): string {
  const home = mkdtempSync(join(tmpdir(), "sy-setup-undo-"));
  homes.push(home);
  if (empty) return home;
  mkdirSync(join(home, ".claude"));
  writeFileSync(join(home, ".claude", "settings.json"), '{\n  "permissions": { "allow": ["Bash(ls:*)"] },\n  "env": { "MY_VAR": "keep me" },\n  "theme": "dark"\n}');
  mkdirSync(join(home, ".codex"));
  writeFileSync(join(home, ".codex", "config.toml"), '# my codex settings\napproval_policy = "never"\nmodel = "o3"\n\n[model_providers.other]\nname = "Other"\nbase_url = "https://other.example/v1"\n');
  mkdirSync(join(home, ".gemini"));
  writeFileSync(join(home, ".gemini", ".env"), "# mine\nOTHER_TOOL_TOKEN=abc\nGEMINI_API_KEY=my-own-google-key\n");
  writeFileSync(join(home, ".gemini", "settings.json"), '{\n  // my theme\n  "ui": { "theme": "GitHub" }\n}\n');
  return home;
}

/** Runs the CLI from source with HOME = `home` (no gateway: --undo needs none). */
function cli(home: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  return cliEnv(home, {}, ...args);
}

/** {@link cli} with more environment variables. */
function cliEnv(home: string, env: Record<string, string>, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const p = Bun.spawnSync([...SOURCE_CLI, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

/** Setup of all three CLIs, twice (the second with another model), as the command writes them. */
function setupAll(home: string): void {
  const base = (target: SetupOptions["target"], id: string, now: number): SetupOptions => ({
    target,
    gatewayUrl: GW,
    key: PLACEHOLDER_KEY,
    model: { id, contextWindow: 200_000, maxOutputTokens: 32_000 },
    catalog: target === "codex" ? [{ id, contextWindow: 200_000 }] : undefined,
    codexInstructions: target === "codex" ? PROMPT : undefined,
    home,
    dryRun: false,
    now: () => now,
  });
  for (const t of ["claude-code", "codex", "gemini"] as const) {
    expect(runSetup(base(t, "anth/claude-sonnet-4-5", 1000)).changes.length).toBeGreaterThan(0);
    expect(runSetup(base(t, "coding", 2000)).changes.length).toBeGreaterThan(0);
  }
}

describe("setup --undo", () => {
  for (const empty of [false, true]) {
    test(`after two setup runs of each CLI ${empty ? "in an empty HOME, the files setup created are removed" : "over existing settings, every file is back byte for byte"}; the backups and the record are gone`, () => {
      const home = scratchHome(empty);
      const before = snapshot(home);
      setupAll(home);
      if (!empty) {
        // the first run's copy is the original, kept apart from the later runs' backups
        expect(readFileSync(join(home, ".claude", "settings.json.switchyard-original"), "utf8")).toBe(before[".claude/settings.json"]!);
        expect(existsSync(join(home, ".claude", "settings.json.switchyard-backup-2000"))).toBe(true);
      }
      for (const t of ["claude-code", "codex", "gemini"]) {
        const r = cli(home, "setup", t, "--undo");
        expect({ t, code: r.code, stderr: r.stderr }).toEqual({ t, code: 0, stderr: "" });
        expect(r.stdout).toContain(`${t}'s settings are back as they were before the first switchyard setup`);
        if (empty) expect(r.stdout).toContain("(switchyard setup created it)");
      }
      // nothing of setup's is left: no original, no later backup, no record
      expect(snapshot(home)).toEqual(before);
      const again = cli(home, "setup", "gemini", "--undo");
      expect(again.stdout).toContain("nothing to undo");
    });
  }

  test("in an empty HOME, undo also removes the folders setup created for its files (~/.claude, ~/.codex, ~/.gemini) and says so; one the CLI has since written to is kept, named", () => {
    const home = scratchHome(true);
    setupAll(home);
    // Gemini CLI ran meanwhile and keeps its own files in ~/.gemini
    writeFileSync(join(home, ".gemini", "installation_id"), "x\n");
    const dry = cli(home, "setup", "codex", "--undo", "--dry-run");
    expect(dry.stdout).toContain(`would remove the directory ${join(home, ".codex")} (switchyard setup created it, and it is empty now)`);
    expect(existsSync(join(home, ".codex", "config.toml"))).toBe(true);
    for (const t of ["claude-code", "codex"]) {
      const r = cli(home, "setup", t, "--undo");
      expect({ t, code: r.code, stderr: r.stderr }).toEqual({ t, code: 0, stderr: "" });
      const dir = join(home, t === "codex" ? ".codex" : ".claude");
      expect(r.stdout).toContain(`removed the directory ${dir} (switchyard setup created it, and it is empty now)`);
      expect(existsSync(dir)).toBe(false);
    }
    const g = cli(home, "setup", "gemini", "--undo");
    expect({ code: g.code, stderr: g.stderr }).toEqual({ code: 0, stderr: "" });
    expect(g.stdout).toContain(`kept ${join(home, ".gemini")}, which switchyard setup created: it holds other files now (installation_id)`);
    expect(readdirSync(join(home, ".gemini"))).toEqual(["installation_id"]);
    expect(readdirSync(home).filter((n) => [".claude", ".codex", ".gemini"].includes(n))).toEqual([".gemini"]); // (bun run from source makes ~/.bun)
  });

  test("a file the user edited after setup is left as it is, with how to go back by hand; the other files are undone (exit 1)", () => {
    const home = scratchHome();
    const before = snapshot(home);
    setupAll(home);
    const claude = join(home, ".claude", "settings.json");
    const edited = readFileSync(claude, "utf8").replace('"theme": "dark"', '"theme": "light"');
    writeFileSync(claude, edited);
    // a file setup created, then edited by the user: not removed either
    const catalog = join(home, ".codex", "switchyard-models.json");
    writeFileSync(catalog, readFileSync(catalog, "utf8") + " ");
    const dry = cli(home, "setup", "claude-code", "--undo", "--dry-run");
    expect(dry.code).toBe(1);
    expect(readFileSync(claude, "utf8")).toBe(edited);

    const r = cli(home, "setup", "claude-code", "--undo");
    expect(r.code).toBe(1);
    expect(readFileSync(claude, "utf8")).toBe(edited);
    expect(r.stdout).toContain(`${claude} changed since switchyard setup wrote it, so --undo leaves it as it is (your edits stay): to go back to the file as it was before the first setup, copy ${claude}.switchyard-original over it (cp ${claude}.switchyard-original ${claude}), or remove setup's settings from it: env.ANTHROPIC_BASE_URL, env.ANTHROPIC_AUTH_TOKEN`);
    expect(r.stderr).toContain("1 of 1 files left as they are (above): claude-code may still point at the gateway");
    expect(readFileSync(`${claude}.switchyard-original`, "utf8")).toBe(before[".claude/settings.json"]!);

    const codex = cli(home, "setup", "codex", "--undo");
    expect(codex.code).toBe(1);
    expect(codex.stdout).toContain(`restored ${join(home, ".codex", "config.toml")} as it was before the first setup`);
    expect(codex.stdout).toContain(`${catalog} was created by switchyard setup and changed since, so --undo leaves it as it is (your edits stay): remove it by hand (rm ${catalog})`);
    expect(readFileSync(join(home, ".codex", "config.toml"), "utf8")).toBe(before[".codex/config.toml"]!);
    expect(existsSync(catalog)).toBe(true);
  });

  test("an edit made before a later setup run is kept too: that run marks the file, and undo leaves it", () => {
    const home = scratchHome();
    const env = join(home, ".gemini", ".env");
    const o = { target: "gemini", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false } as const;
    runSetup({ ...o, now: () => 1 });
    writeFileSync(env, readFileSync(env, "utf8") + "MY_NEW_SETTING=1\n");
    runSetup({ ...o, model: { id: "coding" }, now: () => 2 });
    const r = cli(home, "setup", "gemini", "--undo");
    expect(r.code).toBe(1);
    expect(readFileSync(env, "utf8")).toContain("MY_NEW_SETTING=1");
    expect(r.stdout).toContain(`${env} changed since switchyard setup wrote it`);
    expect(r.stdout).toContain("remove setup's settings from it: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_MODEL");
  });

  test("a file the user put back as it was before setup (cp of the original, what undo's refusal says), with or without a setup run after: undo finishes, exit 0", () => {
    const codexSetup = (home: string, now: number) =>
      runSetup({ target: "codex", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, model: { id: "oai/gpt-fake", contextWindow: 200_000 }, catalog: [{ id: "oai/gpt-fake", contextWindow: 200_000 }], codexInstructions: PROMPT, now: () => now });
    for (const setupAgain of [false, true]) {
      const home = scratchHome();
      const before = snapshot(home);
      const config = join(home, ".codex", "config.toml");
      codexSetup(home, 1);
      writeFileSync(config, readFileSync(config, "utf8") + "hide_agent_reasoning = true\n");
      const refused = cli(home, "setup", "codex", "--undo");
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain(`(cp ${config}.switchyard-original ${config})`);
      copyFileSync(`${config}.switchyard-original`, config);
      if (setupAgain) codexSetup(home, 2);
      const r = cli(home, "setup", "codex", "--undo");
      expect({ setupAgain, code: r.code, stderr: r.stderr }).toEqual({ setupAgain, code: 0, stderr: "" });
      expect(r.stdout).toContain("codex's settings are back as they were before the first switchyard setup");
      if (!setupAgain) expect(r.stdout).toContain(`${config} is as it was before the first setup already (the same bytes as ${config}.switchyard-original): removed that copy`);
      // no original, backup, catalog or record left
      expect(snapshot(home)).toEqual(before);
    }
  });

  test("an edit kept through a later setup run is still kept after another run; once the user copies the original back, undo finishes and keeps the backup that holds the edit", () => {
    const home = scratchHome();
    const env = join(home, ".gemini", ".env");
    const mine = readFileSync(env, "utf8");
    const o = { target: "gemini", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false } as const;
    runSetup({ ...o, now: () => 1 });
    writeFileSync(env, readFileSync(env, "utf8") + "MY_NEW_SETTING=1\n");
    runSetup({ ...o, model: { id: "coding" }, now: () => 2 });
    runSetup({ ...o, model: { id: "other" }, now: () => 3 });
    expect(cli(home, "setup", "gemini", "--undo").code).toBe(1);
    expect(readFileSync(env, "utf8")).toContain("MY_NEW_SETTING=1");
    copyFileSync(`${env}.switchyard-original`, env);
    const r = cli(home, "setup", "gemini", "--undo");
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(env, "utf8")).toBe(mine);
    expect(readFileSync(`${env}.switchyard-backup-2`, "utf8")).toContain("MY_NEW_SETTING=1");
    expect(r.stdout).toContain(`${env}.switchyard-backup-2`);
  });

  test("undo gives each file back the mode it had before the first setup (0644 here); setup's own writes are 0600", () => {
    const home = scratchHome();
    const files = [".claude/settings.json", ".codex/config.toml", ".gemini/.env", ".gemini/settings.json"].map((f) => join(home, f));
    for (const f of files) chmodSync(f, 0o644);
    chmodSync(files[2]!, 0o640);
    const modes = () => files.map((f) => (statSync(f).mode & 0o777).toString(8));
    const before = modes();
    expect(before).toEqual(["644", "644", "640", "644"]);
    setupAll(home);
    expect(modes()).toEqual(["600", "600", "600", "600"]);
    for (const t of ["claude-code", "codex", "gemini"]) expect(cli(home, "setup", t, "--undo").code).toBe(0);
    expect(modes()).toEqual(before);

    // put back by the user (cp keeps the 0600 of the file it copies over): undo gives the mode back too
    const home2 = scratchHome();
    const claude = join(home2, ".claude", "settings.json");
    chmodSync(claude, 0o644);
    runSetup({ target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home: home2, dryRun: false, now: () => 1 });
    copyFileSync(`${claude}.switchyard-original`, claude);
    expect(cli(home2, "setup", "claude-code", "--undo").code).toBe(0);
    expect((statSync(claude).mode & 0o777).toString(8)).toBe("644");
  });

  test("a backup from before the first setup is never overwritten by a later run", () => {
    const home = scratchHome();
    const file = join(home, ".claude", "settings.json");
    const original = readFileSync(file, "utf8");
    const o = { target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false } as const;
    runSetup({ ...o, now: () => 1 });
    for (const [i, id] of ["a/one", "b/two", "c/three"].entries()) runSetup({ ...o, model: { id }, now: () => 10 + i });
    expect(readFileSync(`${file}.switchyard-original`, "utf8")).toBe(original);
    expect(readdirSync(join(home, ".claude")).filter((f) => f.includes("switchyard-backup")).sort()).toEqual(["settings.json.switchyard-backup-10", "settings.json.switchyard-backup-11", "settings.json.switchyard-backup-12"]);
  });

  test("settings written by an older switchyard (backups, no record): undo changes nothing and lists the backups, oldest first", () => {
    const home = scratchHome();
    const dir = join(home, ".gemini");
    writeFileSync(join(dir, ".env.switchyard-backup-200"), "B\n");
    writeFileSync(join(dir, ".env.switchyard-backup-100"), "A\n");
    const before = snapshot(home);
    const r = cli(home, "setup", "gemini", "--undo");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`  ${join(dir, ".env.switchyard-backup-100")}\n  ${join(dir, ".env.switchyard-backup-200")}\n`);
    expect(snapshot(home)).toEqual(before);
  });
});

describe("setup --undo after an older switchyard or a by-hand edit (review17 R9, R10)", () => {
  test("an older switchyard's backups and no record, then a setup run: --undo puts back the oldest backup (the file before any setup), not the file the older switchyard pointed at the gateway", () => {
    const home = scratchHome();
    const file = join(home, ".claude", "settings.json");
    const mine = readFileSync(file, "utf8");
    const pointed = JSON.stringify({ theme: "dark", env: { ANTHROPIC_BASE_URL: GW, ANTHROPIC_AUTH_TOKEN: "sy-old" } }, null, 2);
    writeFileSync(`${file}.switchyard-backup-100`, mine);
    writeFileSync(`${file}.switchyard-backup-200`, pointed);
    writeFileSync(file, pointed);
    runSetup({ target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, model: { id: "coding" }, now: () => 1000 });
    expect(readFileSync(`${file}.switchyard-original`, "utf8")).toBe(mine);
    const r = cli(home, "setup", "claude-code", "--undo");
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(file, "utf8")).toBe(mine);
    expect(r.stdout).toContain("it no longer points at the gateway");
    // the older switchyard's later backups and the copy of the file as it was at this version's first
    // run may hold the user's edits: kept, and named
    const kept = readdirSync(join(home, ".claude")).filter((f) => f.includes("switchyard"));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((f) => /^settings\.json\.switchyard-backup-\d+$/.test(f))).toBe(true);
    for (const f of kept) expect(r.stdout).toContain(join(home, ".claude", f));
  });

  test("a file already pointing at the gateway with no backup: --undo leaves it and says its earlier state is unknown; a restored file that points somewhere by hand is named, not called done", () => {
    const home = scratchHome();
    const file = join(home, ".claude", "settings.json");
    writeFileSync(file, JSON.stringify({ env: { ANTHROPIC_BASE_URL: GW } }));
    const o = { target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 5 } as const;
    expect(runSetup(o).backups).toEqual([{ path: `${file}.switchyard-original`, original: true, pointedAlready: true }]);
    const written = readFileSync(file, "utf8");
    const r = cli(home, "setup", "claude-code", "--undo");
    expect(r.code).toBe(1);
    expect(readFileSync(file, "utf8")).toBe(written);
    expect(r.stdout).toContain(`${file} already pointed at the gateway when switchyard setup first kept a record of it`);
    expect(r.stdout + r.stderr).not.toContain("it no longer points at the gateway");

    // pointed by hand at another address of the gateway before the first setup: restored, and said so
    const home2 = scratchHome();
    const file2 = join(home2, ".claude", "settings.json");
    const byHand = JSON.stringify({ env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:20128" } });
    writeFileSync(file2, byHand);
    runSetup({ ...o, home: home2 });
    const r2 = cli(home2, "setup", "claude-code", "--undo");
    expect(readFileSync(file2, "utf8")).toBe(byHand);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`but they already pointed at the gateway then: ${file2} sets env.ANTHROPIC_BASE_URL = http://127.0.0.1:20128`);
    expect(r2.stdout + r2.stderr).not.toContain("it no longer points at the gateway");
  });

  test("Codex wrote a trust entry to config.toml after setup: --undo leaves config.toml and the model catalog it still names, and says what to remove by hand", () => {
    const home = scratchHome();
    const dir = join(home, ".codex");
    runSetup({ target: "codex", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, model: { id: "coding", contextWindow: 200_000 }, catalog: [{ id: "coding", contextWindow: 200_000 }], codexInstructions: PROMPT, now: () => 7 });
    const config = join(dir, "config.toml");
    const catalog = join(dir, "switchyard-models.json");
    expect(readFileSync(config, "utf8")).toContain(catalog);
    writeFileSync(config, readFileSync(config, "utf8") + '\n[projects."/x"]\ntrust_level = "trusted"\n');
    const r = cli(home, "setup", "codex", "--undo");
    expect(r.code).toBe(1);
    expect(existsSync(catalog)).toBe(true);
    expect(r.stdout).toContain(`${catalog} was created by switchyard setup, but ${config}, which --undo leaves as it is, still names it, so --undo leaves it too: remove it by hand (rm ${catalog})`);
    expect(r.stderr).toContain("2 of 2 files left as they are");
  });
});

describe("setup's help and words", () => {
  test("setup --help and switchyard --help name --undo and --utility-model; the help says how undo goes; the README does too", () => {
    const home = scratchHome(true);
    const help = cli(home, "setup", "--help").stdout;
    expect(help).toContain("[--utility-model NAME]");
    expect(help).toContain("setup claude-code|codex|gemini --undo [--dry-run]");
    expect(help).toContain("FILE.switchyard-original");
    expect(help.replace(/\s+/g, " ")).toContain("--undo puts that CLI's settings back as they were before the first setup");
    expect(cli(home, "--help").stdout).toContain("--undo");
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toContain("switchyard setup claude-code --undo");
  });

  test("setup --undo with a setup option is refused, not ignored", () => {
    const r = cli(scratchHome(true), "setup", "codex", "--undo", "--model", "x");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("setup --undo takes only --dry-run");
  });

  test("setup cursor prints what to enter in Cursor, for the given instance; an unknown CLI is named and refused", () => {
    const home = scratchHome(true);
    const r = cli(home, "setup", "cursor", "--url", "http://127.0.0.1:23456", "--client-key", "sy-mine");
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain("Override OpenAI Base URL");
    expect(r.stdout).toContain("     http://127.0.0.1:23456/v1\n");
    expect(r.stdout).toContain("     sy-mine\n");
    expect(r.stdout).toContain("not from this machine");
    // a key from the environment is never printed (review17 R11)
    const secret = "sy-secret-from-the-environment-1234";
    const env = cliEnv(home, { SWITCHYARD_KEY: secret }, "setup", "cursor");
    expect(env.code).toBe(0);
    expect(env.stdout + env.stderr).not.toContain(secret);
    expect(env.stdout).toContain("the value of $SWITCHYARD_KEY");
    const frob = cli(home, "setup", "frob");
    expect(frob.code).toBe(2);
    expect(frob.stderr).toContain('setup does not know "frob": setup writes the settings of claude-code, codex, gemini, and prints what to enter in Cursor\'s (setup cursor)');
  });

  test("no internal review ids (review14 R6, newuser13 J2) in the command line's strings", () => {
    const found: string[] = [];
    for (const f of new Bun.Glob("src/**/*.{ts,tsx}").scanSync({ cwd: ROOT })) {
      readFileSync(join(ROOT, f), "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.trim();
          // comments (TypeScript, JSX, SQL) are for readers of the code
          if (/^(\/\/|\*|\/\*|\{\/\*|--)/.test(code)) return;
          // a trailing comment after code (space, then //) aside, code holds no such id but in a string
          if (/\b(review|newuser|try)\d+[a-z]?\b/i.test(code.replace(/\s\/\/\s.*$/, ""))) found.push(`${f}:${i + 1}`);
        });
    }
    expect(found).toEqual([]);
  });
});
