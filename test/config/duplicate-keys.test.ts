/**
 * A key written twice in one mapping of the config file is an error naming both lines (SPEC 2.3),
 * never the silent "last one wins" of Bun's YAML parser; documents the scanner cannot follow are left
 * to the parser (no invented duplicates).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkConfig } from "../../src/config/index.ts";
import { duplicateKeys, keyLines } from "../../src/config/duplicate-keys.ts";

const dir = mkdtempSync(join(tmpdir(), "sy-dup-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("keys written twice in a config file", () => {
  test("a second settings: block pasted at the end is refused, not put in force without the first", () => {
    const p = join(dir, "two-settings.yaml");
    // README's cost snippet appended to a file that already had settings: its redaction was lost without a word
    writeFileSync(p, "settings:\n  redaction: { enabled: true }\nkeys: []\nsettings:\n  pricing:\n    openai/gpt-5: { input: 1, output: 8 }\n");
    expect(Bun.YAML.parse("settings: 1\nsettings: 2\n")).toEqual({ settings: 2 }); // what the parser alone does
    expect(checkConfig(p, {})).toEqual({
      ok: false,
      lines: [
        'settings: "settings" is written twice in the same mapping (lines 1 and 4); YAML keeps only the last, so everything under line 1 would be lost: write it once (merge the two blocks)',
      ],
    });
  });

  test("nested mappings and sequence items are told apart, with their paths", () => {
    const text = [
      "providers:",
      "  - id: a", // 2
      "    kind: openai-compatible",
      "    base_url: http://127.0.0.1:1/v1",
      "    kind: anthropic-compatible", // 5: twice in item 0
      "  - id: b", // a new item: its keys are its own
      "    kind: openai-compatible",
      "settings:",
      "  alerts:",
      "    quota_thresholds: [0.5]", // 10
      "  pricing: {}",
      "  alerts:", // 12: twice in settings
      "    quota_thresholds: [0.9]",
      "combos:",
      "- name: c", // a compact sequence (same indent as its key)
      "  targets: [{ model: a/m }]",
      "- name: d",
      "  name: e", // 18: twice in item 1
    ].join("\n");
    expect(duplicateKeys(text).map((d) => [d.path, d.first, d.second])).toEqual([
      [["providers", 0, "kind"], 3, 5],
      [["settings", "alerts"], 9, 12],
      [["combos", 1, "name"], 17, 18],
    ]);
  });

  test("what is not a repeated key of one mapping reads as none", () => {
    for (const text of [
      "a:\n  x: 1\nb:\n  x: 1\n", // the same key in two mappings
      "p:\n  - id: a\n  - id: a\n", // the same key in two items
      "a: |\n  b: 1\n  b: 2\nc: 1\n", // lines of a block scalar
      "a: {\n  b: 1,\n  b: 2 }\nc: 1\n", // a flow mapping over lines (not looked into)
      "base: &b { x: 1 }\nother: *b\nother: 2\n", // anchors and aliases: not followed at all
      "a: 'x: 1'\nb: \"a: 2\" # a: 3\n", // colons inside quotes and comments
      "# cost & limits\na: 1\n",
    ]) {
      expect({ text, found: duplicateKeys(text) }).toEqual({ text, found: [] });
    }
    // the comment above does not stop the scan
    expect(duplicateKeys("# cost & limits\na: 1 # & x\na: 2\n").map((d) => d.key)).toEqual(["a"]);
    // "a" and a are the same key
    expect(duplicateKeys('"a": 1\na: 2\n').map((d) => [d.first, d.second])).toEqual([[1, 2]]);
  });

  test("the example config has none", () => {
    expect(duplicateKeys(readFileSync(join(import.meta.dir, "..", "..", "examples", "config.yaml"), "utf8"))).toEqual([]);
  });
});

describe("the line of each problem (found trying check-config as a new user: a path alone had to be counted out in a long file)", () => {
  test("each key's line by its path; a flow mapping's members are listed at their item's line", () => {
    const text = "server:\n  port: 1\nproviders:\n  - id: p\n    models:\n      \"glm-5.3\": { context_window: 5 }\naccounts:\n  - { id: a, provider: p }\n";
    expect(Object.fromEntries(keyLines(text))).toEqual({
      server: 1,
      "server.port": 2,
      providers: 3,
      "providers[0]": 4,
      "providers[0].id": 4,
      "providers[0].models": 5,
      'providers[0].models["glm-5.3"]': 6,
      accounts: 7,
      "accounts[0]": 8,
    });
  });

  test("check-config names the line of the key, else of the nearest key or item around it (a required key, a flow member)", () => {
    const p = join(dir, "lines.yaml");
    writeFileSync(p, "# my gateway\nproviders:\n  - id: glm\n    kind: openai-compatable\n    base_url: http://127.0.0.1:1/v1\naccounts:\n  - { id: a, provider: glmx, api_key: k }\n  - id: b\n    api_key: k\n");
    expect(checkConfig(p, {}).lines).toEqual([
      "providers[0].kind (line 4): kind must be one of anthropic, openai, openai-responses, gemini, claude-code, codex, openai-compatible, anthropic-compatible; got \"openai-compatable\"",
      "accounts[1].provider (line 8): required",
    ]);
    writeFileSync(p, "providers:\n  - { id: glm, kind: openai-compatible, base_url: \"http://127.0.0.1:1/v1\" }\naccounts:\n  - { id: a, provider: glmx, api_key: k }\n");
    expect(checkConfig(p, {}).lines).toEqual(['accounts[0].provider (line 4): unknown provider "glmx" (did you mean "glm"?); known: "anthropic", "openai", "gemini", "cc", "cx", "glm"']);
  });

  test("a file the scanner stops following (an anchor) keeps the lines before it and names none after it", () => {
    const p = join(dir, "anchor.yaml");
    writeFileSync(p, "server:\n  port: x\nsettings: &s\n  account_strategy: nope\n");
    expect(checkConfig(p, {}).lines.sort()).toEqual([
      "server.port (line 2): port must be a number; got \"x\"",
      "settings.account_strategy: account_strategy must be one of scored, p2c, random, round-robin; got \"nope\"",
    ]);
  });
});
