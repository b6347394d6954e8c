/**
 * Claude Code's identity line (provider kind `claude-code`): subscription tokens are honoured only for
 * requests whose system prompt starts the way Claude Code's does. Used by build.ts and tidy.ts, and by
 * pipeline/translate.ts to decide whether a native body needs tidying.
 */
import { isObj, type JsonObject as Json } from "../json.ts";

/** The identity line Claude Code's interactive CLI puts first in its system prompt. */
export const CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";

/** Identity lines the subscription endpoint accepts as the start of the system prompt (Claude Code CLI and Agent SDK). */
export const ACCEPTED_IDENTITIES: readonly string[] = [
  "You are Claude Code, Anthropic's official CLI for Claude",
  "You are a Claude agent, built on Anthropic's Claude Agent SDK",
];

/** The text Claude Code's per-request billing block starts with; it comes before the identity line. */
const BILLING_HEADER = "x-anthropic-billing-header";

function isIdentity(text: unknown): boolean {
  if (typeof text !== "string") return false;
  const t = text.trimStart();
  return ACCEPTED_IDENTITIES.some((id) => t.startsWith(id));
}

/**
 * Whether an Anthropic body's `system` value (a string or text blocks) starts with a Claude Code /
 * Agent SDK identity line ({@link ACCEPTED_IDENTITIES}): the string itself, or the first text block
 * that is not Claude Code's `x-anthropic-billing-header` block. Reads at most the first few blocks,
 * never the prompt text beyond the line: cheap enough to run on every native `claude-code` request
 * (pipeline/translate.ts sends a body through {@link tidyRequest} only when this is false, so Claude
 * Code's own requests keep their bytes).
 */
export function hasClaudeCodeIdentity(system: unknown): boolean {
  if (typeof system === "string") return isIdentity(system);
  if (!Array.isArray(system)) return false;
  for (const b of system) {
    if (!isObj(b) || b.type !== "text") continue;
    if (typeof b.text === "string" && b.text.startsWith(BILLING_HEADER)) continue;
    return isIdentity(b.text);
  }
  return false;
}

/**
 * Puts {@link CLAUDE_CODE_IDENTITY} first in `system` (text blocks, mutated in place) when it does not
 * start with an accepted identity line: subscription tokens are only honoured for requests shaped like
 * Claude Code's (401/403 "This credential is only authorized for use with Claude Code"; observed
 * client behaviour, as reproduced by the OpenCode Anthropic auth plugin). The block goes after Claude
 * Code's billing block when that is first, and carries no `cache_control`, so the client's cache
 * breakpoints stay within Anthropic's limit of four.
 */
export function withClaudeCodeIdentity(system: Json[]): void {
  if (hasClaudeCodeIdentity(system)) return;
  const first = system[0];
  const afterBilling = isObj(first) && typeof first.text === "string" && first.text.startsWith(BILLING_HEADER);
  system.splice(afterBilling ? 1 : 0, 0, { type: "text", text: CLAUDE_CODE_IDENTITY });
}
