/**
 * The built-in sibling table of SPEC R-10 and the configured siblings' precedence.
 */
import { describe, expect, test } from "bun:test";
import { siblingsOf } from "../../pipeline/siblings.ts";

describe("siblingsOf (SPEC R-10)", () => {
  const cases: Array<[string, string[]]> = [
    ["claude-sonnet-4-5-20250929", ["claude-sonnet-4-5", "claude-sonnet-4-6", "claude-sonnet-4-4"]],
    ["claude-opus-4-1", ["claude-opus-4-2", "claude-opus-4"]],
    ["claude-opus-4", ["claude-opus-4-1"]],
    ["claude-opus-4-20250514", ["claude-opus-4", "claude-opus-4-1"]],
    ["claude-3-5-sonnet-20241022", ["claude-3-5-sonnet-latest"]],
    ["gpt-5.1-codex", ["gpt-5.2-codex", "gpt-5-codex"]],
    ["gpt-5-mini-2025-08-07", ["gpt-5-mini", "gpt-5.1-mini"]],
    ["gpt-5", ["gpt-5.1"]],
    ["gemini-2.5-pro-preview-05-06", ["gemini-2.5-pro", "gemini-pro-latest"]],
    ["gemini-2.5-flash", ["gemini-2.5-flash-preview", "gemini-flash-latest"]],
    ["gpt-4o", []],
    ["llama-3.3-70b", []],
  ];
  for (const [model, want] of cases) test(`${model} → ${want.join(", ") || "none"}`, () => expect(siblingsOf(model)).toEqual(want));

  test("configured siblings first, then the table, without repeats or the model itself, at most 3", () => {
    expect(siblingsOf("claude-opus-4-1", ["my-opus", "claude-opus-4-2", "claude-opus-4-1"])).toEqual(["my-opus", "claude-opus-4-2", "claude-opus-4"]);
    expect(siblingsOf("house", ["a", "b", "c", "d"])).toEqual(["a", "b", "c"]);
  });
});
