/**
 * What `switchyard setup` prints (src/cli/setup.ts `runSetup`, dry run, no gateway needed): the diff
 * hides the client key wherever a setting holds it, and only there — the default placeholder key
 * `switchyard` is also the provider's name in Codex's config and the catalog's file name, which must
 * stay readable — and Codex's model catalog (tens of kilobytes of Codex's own prompt per model) is
 * summarised instead of printed.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CODEX_CATALOG_FILE, PLACEHOLDER_KEY, runSetup } from "../../src/cli/setup.ts";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
function scratch(): string {
  const h = mkdtempSync(join(tmpdir(), "sy-setup-diff-"));
  homes.push(h);
  return h;
}
const GW = "http://127.0.0.1:20999";
const PROMPT = "You are a coding agent running in the Codex CLI. ".repeat(400);

describe("setup's printed diff", () => {
  test("with the placeholder key, only the key's setting is masked: Codex's provider name and catalog path stay readable", () => {
    const home = scratch();
    const r = runSetup({
      target: "codex",
      gatewayUrl: GW,
      key: PLACEHOLDER_KEY,
      model: { id: "resp/gpt-e2e", contextWindow: 400000 },
      catalog: [{ id: "resp/gpt-e2e", contextWindow: 400000 }, { id: "coding" }],
      codexInstructions: PROMPT,
      home,
      dryRun: true,
    });
    expect(PLACEHOLDER_KEY).toBe("switchyard");
    expect(r.diff).toContain('+model_provider = "switchyard"');
    expect(r.diff).toContain("+[model_providers.switchyard]");
    expect(r.diff).toContain('+name = "switchyard"');
    expect(r.diff).toContain(`+model_catalog_json = "${join(home, ".codex", CODEX_CATALOG_FILE)}"`);
    expect(r.diff).toContain('+experimental_bearer_token = "***"');
    expect(r.diff).not.toContain('experimental_bearer_token = "switchyard"');
    // The catalog: one summary line naming its models, not 2 × 20 kB of Codex's prompt.
    expect(r.diff).toContain(`${join(home, ".codex", CODEX_CATALOG_FILE)} (new file): Codex model catalog of 2 models: resp/gpt-e2e, coding`);
    expect(r.diff).not.toContain("You are a coding agent");
    expect(r.diff.length).toBeLessThan(2000);
    expect(existsSync(join(home, ".codex"))).toBe(false);
  });

  test("a real key is masked everywhere, and so is an older key the file held under a key setting", () => {
    const home = scratch();
    const key = "sy-new-client-key-0002";
    mkdirSync(join(home, ".claude"));
    writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ env: { ANTHROPIC_AUTH_TOKEN: "sy-old-client-key-0001", ANTHROPIC_API_KEY: "sk-ant-private" } }, null, 2));
    mkdirSync(join(home, ".gemini"));
    writeFileSync(join(home, ".gemini", ".env"), "GEMINI_API_KEY=old-gemini-secret\n");
    const claude = runSetup({ target: "claude-code", gatewayUrl: GW, key, home, dryRun: true });
    expect(claude.diff).toContain('-    "ANTHROPIC_AUTH_TOKEN": "***"');
    expect(claude.diff).toContain('+    "ANTHROPIC_AUTH_TOKEN": "***"');
    expect(claude.diff).toContain(`+    "ANTHROPIC_BASE_URL": "${GW}"`);
    for (const secret of [key, "sy-old-client-key-0001", "sk-ant-private"]) expect(claude.diff).not.toContain(secret);
    const gemini = runSetup({ target: "gemini", gatewayUrl: GW, key, home, dryRun: true });
    expect(gemini.diff).toContain("-GEMINI_API_KEY=***");
    expect(gemini.diff).toContain("+GEMINI_API_KEY=***");
    expect(gemini.diff).toContain(`+GOOGLE_GEMINI_BASE_URL=${GW}`);
    for (const secret of [key, "old-gemini-secret"]) expect(gemini.diff).not.toContain(secret);
  });

  test("gemini: setup says that Gemini CLI reads ~/.gemini/.env only in folders it trusts", () => {
    const home = scratch();
    const r = runSetup({ target: "gemini", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: true });
    expect(r.notes.join("\n")).toContain("Gemini CLI reads ~/.gemini/.env only in a folder it trusts");
    expect(runSetup({ target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: true }).notes).toEqual([]);
  });

  test("gemini: a settings.json with comments (Gemini CLI reads them) is set up with its comments kept; set already, it is left byte for byte", () => {
    // Found by a new operator: setup answered "settings.json is not valid JSON" for a file Gemini CLI 0.61 reads fine.
    const home = scratch();
    mkdirSync(join(home, ".gemini"));
    const path = join(home, ".gemini", "settings.json");
    const commented = '{\n  // my theme\n  "ui": { "theme": "GitHub // not a comment" },\n  /* auth */ "security": { "auth": { "selectedType": "oauth-personal" } }\n}\n';
    writeFileSync(path, commented);
    const r = runSetup({ target: "gemini", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 1 });
    // The comments stay; only the member setup owns changed.
    expect(readFileSync(path, "utf8")).toBe(commented.replace('"oauth-personal"', '"gemini-api-key"'));
    expect(readFileSync(`${path}.switchyard-original`, "utf8")).toBe(commented);
    expect(r.notes.join("\n")).not.toContain("held comments");
    // Already pointing at the gateway: nothing to change, the comments stay.
    const set = '{\n  // mine\n  "security": { "auth": { "selectedType": "gemini-api-key" } }\n}\n';
    writeFileSync(path, set);
    const again = runSetup({ target: "gemini", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 2 });
    expect(again.changes.map((c) => c.path)).toEqual([]);
    expect(readFileSync(path, "utf8")).toBe(set);
  });
});


describe("a settings file keeps its own layout: only the members setup owns change", () => {
  // Found by a tryout (session 38): setup rewrote a compact settings.json expanded with two spaces.
  const layouts: Array<[string, string, string]> = [
    ["one line, final newline", '{"theme":"dark","env":{"FOO":"1"}}\n', '{"theme":"dark","env":{"FOO":"1","ANTHROPIC_BASE_URL":"G","ANTHROPIC_AUTH_TOKEN":"K"}}\n'],
    ["one line, no final newline", '{"theme":"dark"}', '{"theme":"dark","env":{"ANTHROPIC_BASE_URL":"G","ANTHROPIC_AUTH_TOKEN":"K"}}'],
    ["tabs", '{\n\t"theme": "dark"\n}\n', '{\n\t"theme": "dark",\n\t"env": {\n\t\t"ANTHROPIC_BASE_URL": "G",\n\t\t"ANTHROPIC_AUTH_TOKEN": "K"\n\t}\n}\n'],
    ["four spaces, CRLF", '{\r\n    "theme": "dark",\r\n    "env": {\r\n        "FOO": "1"\r\n    }\r\n}\r\n', '{\r\n    "theme": "dark",\r\n    "env": {\r\n        "FOO": "1",\r\n        "ANTHROPIC_BASE_URL": "G",\r\n        "ANTHROPIC_AUTH_TOKEN": "K"\r\n    }\r\n}\r\n'],
    ["only {}", "{}\n", '{\n  "env": {\n    "ANTHROPIC_BASE_URL": "G",\n    "ANTHROPIC_AUTH_TOKEN": "K"\n  }\n}\n'],
    // Members written twice off the edited path are the user's business: only env and the two keys
    // setup writes in it are checked (a review of session 39's refusal found no test of this side).
    ["a member off the edited path written twice", '{\n  "theme": "a",\n  "theme": "b",\n  "hooks": [{ "env": 1 }, { "env": 2 }],\n  "other": { "env": 1, "env": 2 },\n  "env": {\n    "X": "1",\n    "X": "2"\n  }\n}\n', '{\n  "theme": "a",\n  "theme": "b",\n  "hooks": [{ "env": 1 }, { "env": 2 }],\n  "other": { "env": 1, "env": 2 },\n  "env": {\n    "X": "1",\n    "X": "2",\n    "ANTHROPIC_BASE_URL": "G",\n    "ANTHROPIC_AUTH_TOKEN": "K"\n  }\n}\n'],
  ];
  for (const [name, before, after] of layouts) {
    test(`claude-code: ${name}`, () => {
      const home = scratch();
      mkdirSync(join(home, ".claude"));
      const path = join(home, ".claude", "settings.json");
      writeFileSync(path, before);
      runSetup({ target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 1 });
      expect(readFileSync(path, "utf8")).toBe(after.replaceAll('"G"', JSON.stringify(GW)).replaceAll('"K"', JSON.stringify(PLACEHOLDER_KEY)));
      expect(readFileSync(`${path}.switchyard-original`, "utf8")).toBe(before);
    });
  }
});

describe("a settings file setup cannot read: refused saying where and what was expected, nothing written", () => {
  const refusal = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error("no refusal");
  };
  const filesIn = (dir: string) => Array.from(new Bun.Glob("**/*").scanSync({ cwd: dir, dot: true })).sort();

  test("claude-code: a trailing comma in settings.json (it said only 'is not valid JSON')", () => {
    const home = scratch();
    mkdirSync(join(home, ".claude"));
    const path = join(home, ".claude", "settings.json");
    const broken = '{\n  "env": {\n    "FOO": "1",\n  }\n}\n';
    writeFileSync(path, broken);
    const m = refusal(() => runSetup({ target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 1 }));
    expect(m).toBe(`${path} is not valid JSON at line 4, column 3: expected a property name in double quotes, found '}'; nothing was written: fix or move it, then run setup again`);
    expect(readFileSync(path, "utf8")).toBe(broken);
    expect(filesIn(home)).toEqual([".claude/settings.json"]);
  });

  // review28: JSON.parse (and the CLI) keep the last of two members of one name, an edit in place the
  // first: the setting would not apply, or the edit met a string where it wanted an object.
  for (const [name, text, member] of [
    ["an env object written twice", '{\n  "env": { "A": "1" },\n  "theme": "dark",\n  "env": { "B": "2" }\n}\n', "env"],
    ["env a string, then an object", '{\n  "env": "x",\n  "env": { "B": "2" }\n}\n', "env"],
    ["a key inside env written twice", '{\n  "env": {\n    "ANTHROPIC_BASE_URL": "a",\n    "ANTHROPIC_BASE_URL": "b"\n  }\n}\n', "env.ANTHROPIC_BASE_URL"],
  ] as const) {
    test(`claude-code: ${name} is refused naming it, nothing written`, () => {
      const home = scratch();
      mkdirSync(join(home, ".claude"));
      const path = join(home, ".claude", "settings.json");
      writeFileSync(path, text);
      const m = refusal(() => runSetup({ target: "claude-code", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 1 }));
      expect(m).toBe(`${path}: "${member}" is written 2 times (the last one counts); keep one, then run setup again; nothing was written`);
      expect(readFileSync(path, "utf8")).toBe(text);
      expect(filesIn(home)).toEqual([".claude/settings.json"]);
    });
  }

  test("gemini: the column counts the comments Gemini CLI allows; the .env beside it is not written either", () => {
    const home = scratch();
    mkdirSync(join(home, ".gemini"));
    const path = join(home, ".gemini", "settings.json");
    writeFileSync(path, '{\n  // theme\n  "ui": { "theme": "x" } // mine\n  "security": {}\n}\n');
    const m = refusal(() => runSetup({ target: "gemini", gatewayUrl: GW, key: PLACEHOLDER_KEY, home, dryRun: false, now: () => 1 }));
    expect(m).toBe(`${path} is not valid JSON (comments aside) at line 4, column 3: expected ',' or '}', found '"'; nothing was written: fix or move it, then run setup again`);
    expect(filesIn(home)).toEqual([".gemini/settings.json"]);
  });

  test("codex: config.toml with a table header left open names its line and Bun's reason, without the line's text (it may hold a key)", () => {
    const home = scratch();
    mkdirSync(join(home, ".codex"));
    const path = join(home, ".codex", "config.toml");
    const broken = 'model = "o3"\nexperimental_bearer_token = "sk-secret"\n\n[profiles.fast\nmodel = "o4-mini"\n';
    writeFileSync(path, broken);
    const m = refusal(() => runSetup({ target: "codex", gatewayUrl: GW, key: PLACEHOLDER_KEY, codexInstructions: PROMPT, home, dryRun: false, now: () => 1 }));
    expect(m).toBe(`${path} is not valid TOML at line 4: expected ']' to close a table header but found the end of the line; nothing was written: fix or move it, then run setup again`);
    expect(m).not.toContain("sk-secret");
    expect(readFileSync(path, "utf8")).toBe(broken);
    expect(filesIn(home)).toEqual([".codex/config.toml"]);
  });
});
