/**
 * The `claude-code` provider kind (SPEC P-1, P-2): Anthropic Messages on `api.anthropic.com` with a
 * Claude subscription's OAuth access token instead of an API key. What a subscription call needs,
 * as Claude Code itself sends it with an OAuth token (observed client behaviour; the fixtures in
 * test/fixtures/shared/clients show the headers of Claude Code 2.1.332, and the OpenCode Anthropic
 * auth plugin reproduces the OAuth-specific parts):
 *
 * - `Authorization: Bearer <access token>` and no `x-api-key`;
 * - `anthropic-beta` containing `oauth-2025-04-20` (without it the API answers 401 "OAuth
 *   authentication is currently not supported") and `claude-code-20250219`, merged with the
 *   client's own betas;
 * - `anthropic-version`, and Claude Code's client headers when the client did not send them:
 *   `x-app: cli`, `anthropic-dangerous-direct-browser-access: true`, a `claude-cli/…` User-Agent;
 * - the Messages URL with `?beta=true` (Claude Code calls `/v1/messages?beta=true`).
 *
 * The body rule — a system prompt that starts with a Claude Code / Agent SDK identity line, since
 * subscription tokens are only honoured for requests shaped like Claude Code's — is the Anthropic
 * codec's for kind `claude-code` (formats/anthropic-messages/claude-code.ts `withClaudeCodeIdentity`,
 * applied when the body is built or tidied; pipeline/translate.ts tidies a native body only when the
 * line is missing), so the executor never parses a body and Claude Code's own requests pass byte for
 * byte.
 */

/** Betas every subscription call carries (see the module comment). */
export const CLAUDE_CODE_BETAS = ["claude-code-20250219", "oauth-2025-04-20"] as const;

/** User-Agent sent when the client sent none (Claude Code's own, as in the recorded client headers). */
export const CLAUDE_CLI_USER_AGENT = "claude-cli/2.1.332 (external, cli)";

/** The Messages URL of a subscription call: `?beta=true` like Claude Code's. */
export function claudeCodeUrl(url: string): string {
  const u = new URL(url);
  if (!u.searchParams.has("beta")) u.searchParams.set("beta", "true");
  return u.toString();
}

/** Adds the OAuth betas and Claude Code's client headers (never overriding what the client sent). */
export function claudeCodeHeaders(headers: Headers): void {
  const betas = (headers.get("anthropic-beta") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const b of CLAUDE_CODE_BETAS) if (!betas.includes(b)) betas.push(b);
  headers.set("anthropic-beta", betas.join(","));
  headers.delete("x-api-key");
  if (!headers.has("x-app")) headers.set("x-app", "cli");
  if (!headers.has("anthropic-dangerous-direct-browser-access")) headers.set("anthropic-dangerous-direct-browser-access", "true");
  if (!headers.has("user-agent")) headers.set("user-agent", CLAUDE_CLI_USER_AGENT);
}
