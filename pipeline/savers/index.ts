/**
 * Tool-result compression (SPEC S-1): one tool result's text → a shorter text that keeps what an agent
 * needs, or undefined when the text is short, unrecognised, or would not get meaningfully shorter.
 *
 * - Only texts of {@link MIN_CHARS} characters or more are looked at.
 * - The clients' own wrappers are kept byte for byte and only the command output between them is
 *   compressed: Codex's exec header (`Chunk ID: …`, `Wall time: …`, `Process exited with code N`,
 *   `Original token count: N`, `Output:`), Claude Code's trailing `<system-reminder>` blocks, and
 *   Gemini CLI's shell result (`<untrusted_context>`, `Output: ` before the output's first line, its
 *   `Exit Code: N` / `Process Group PGID: N` lines and `</untrusted_context>` after it).
 * - Rules, first match wins: unified diff, `git status`, `tree`, `ls -l`, compiler diagnostics, search
 *   results, repeated log lines (pipeline/savers/*.ts). Compiler output comes before search results
 *   (its `path:line:col: warning:` lines are not grep matches) and takes only output that is mostly
 *   diagnostics, so a build log with a few warnings reaches the log rule; the search rule takes only what
 *   reads as a search, so a log with `host:port:` lines reaches the log rule, which keeps error lines.
 *   Each states what it elided, in the text (`… 312 similar lines elided`) and in one closing note
 *   line: `[switchyard: git diff shortened; elided: 48 unchanged context lines, 6 index lines]`.
 * - A result is replaced only when the new text (note included) is at least {@link MIN_SAVING} shorter:
 *   never longer, and not rewritten for a trifle.
 * - Pure and deterministic: the same text always gives the same bytes, so a history compresses the
 *   same way every turn (prompt caches of OpenAI-style providers key on stable prefixes).
 */
import type { RuleName, SaverRule } from "./common.ts";
import { compilerRule } from "./compiler.ts";
import { diffRule } from "./diff.ts";
import { gitStatusRule } from "./git-status.ts";
import { listingRule } from "./listing.ts";
import { logRule } from "./log.ts";
import { searchRule } from "./search.ts";
import { treeRule } from "./tree.ts";

export type { RuleName } from "./common.ts";

import { envelope } from "./envelope.ts";
import { MIN_CHARS, MIN_SAVING } from "./thresholds.ts";

export { envelope } from "./envelope.ts";

export { MIN_CHARS, MIN_SAVING } from "./thresholds.ts";

/** The rules in the order they are tried. */
export const RULES: readonly SaverRule[] = [diffRule, gitStatusRule, treeRule, listingRule, compilerRule, searchRule, logRule];

const RULE_LABEL: Record<RuleName, string> = {
  diff: "diff",
  git_status: "git status",
  compiler: "compiler output",
  search: "search results",
  listing: "directory listing",
  tree: "tree",
  log: "log",
};

/** A compressed tool result. Lengths in UTF-16 code units (JavaScript string length). */
export interface Compressed {
  text: string;
  rule: RuleName;
}

/**
 * Compresses one tool result's text (see the module doc). Returns undefined when the text stays as
 * it is. Never throws.
 */
export function compressToolResult(text: string): Compressed | undefined {
  if (text.length < MIN_CHARS) return undefined;
  const { head, body, tail } = envelope(text);
  // Line endings: CRLF output is read (and written) with LF.
  const lines = (body.includes("\r") ? body.replace(/\r\n?/g, "\n") : body).split("\n");
  let trailingNewline = false;
  if (lines.length > 1 && lines[lines.length - 1] === "") {
    lines.pop();
    trailingNewline = true;
  }
  for (const rule of RULES) {
    let r;
    try {
      r = rule.apply(lines);
    } catch {
      r = undefined; // a rule bug must never fail a request: the text stays as it is
    }
    if (!r) continue;
    const note = `[switchyard: ${RULE_LABEL[rule.name]} shortened; elided: ${r.elided.join(", ")}]`;
    const out = `${head}${r.text}\n${note}${trailingNewline ? "\n" : ""}${tail}`;
    if (out.length <= text.length * (1 - MIN_SAVING)) return { text: out, rule: rule.name };
    return undefined; // recognised, but not worth rewriting: no other rule is tried
  }
  return undefined;
}
