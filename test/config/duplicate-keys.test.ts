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
import { duplicateKeys } from "../../src/config/duplicate-keys.ts";

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
