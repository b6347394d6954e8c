/**
 * The README's examples (its fenced code blocks) and examples/config.yaml name no Claude model that
 * Claude Code calls retired: a user who copies `claude --model anthropic/claude-sonnet-4-5` from the
 * quick start got "Claude Sonnet 4.5 was retired on November 30, 2026" from Claude Code 2.1.332 (try19
 * D10). RETIRED is that Claude Code's own table of first-party retirement dates (its bundled model
 * catalog), the models retired by 2026-12-06, with the aliases and dated ids of each; a model id is
 * compared without its `-YYYYMMDD` / `-latest` suffix, with or without a `provider/` in front.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** Claude Code 2.1.332's retired first-party models (retirement date on or before 2026-12-06), by undated id. */
const RETIRED: Record<string, string> = {
  "claude-3-5-sonnet": "October 28, 2025",
  "claude-3-opus": "January 5, 2026",
  "claude-3-5-haiku": "February 19, 2026",
  "claude-3-7-sonnet": "February 19, 2026",
  "claude-opus-4-0": "June 15, 2026",
  "claude-opus-4": "June 15, 2026",
  "claude-sonnet-4-0": "June 15, 2026",
  "claude-sonnet-4": "June 15, 2026",
  "claude-sonnet-4-5": "November 30, 2026",
};

/** The Claude model ids in `text` that {@link RETIRED} lists, each with what it was retired on. */
function retiredIn(text: string): string[] {
  const out: string[] = [];
  for (const [id] of text.matchAll(/claude-[a-z0-9-]*[a-z0-9]/g)) {
    const undated = id.replace(/-(?:\d{8}|latest)$/, "");
    if (RETIRED[undated]) out.push(`${id} (retired ${RETIRED[undated]})`);
  }
  return out;
}

/** The fenced code blocks of a Markdown text, joined. */
function codeBlocks(markdown: string): string {
  return [...markdown.matchAll(/^\s*```[^\n]*\n([\s\S]*?)^\s*```/gm)].map((m) => m[1]).join("\n");
}

describe("examples name current Claude models", () => {
  test("README's code blocks name no model Claude Code calls retired", () => {
    const blocks = codeBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
    expect(blocks).toContain("claude --model anthropic/"); // the quick start's block is read
    expect(retiredIn(blocks)).toEqual([]);
  });

  test("examples/config.yaml names no model Claude Code calls retired", () => {
    expect(retiredIn(readFileSync(join(ROOT, "examples/config.yaml"), "utf8"))).toEqual([]);
  });

  test("the check finds a retired model, dated or behind a provider, and passes a current one", () => {
    expect(retiredIn("claude --model anthropic/claude-sonnet-4-5\n  - { model: cc/claude-sonnet-4-20250514 }")).toEqual([
      "claude-sonnet-4-5 (retired November 30, 2026)",
      "claude-sonnet-4-20250514 (retired June 15, 2026)",
    ]);
    expect(retiredIn("claude --model anthropic/claude-sonnet-5-5 # claude-opus-5-5, claude-code")).toEqual([]);
  });
});
