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
 * - the Messages URL with `?beta=true` (Claude Code calls `/v1/messages?beta=true`);
 * - a system prompt whose first text block (after Claude Code's `x-anthropic-billing-header` block)
 *   is a Claude Code / Agent SDK identity line: subscription tokens are only honoured for requests
 *   shaped like Claude Code's ("This credential is only authorized for use with Claude Code").
 *   Claude Code's own requests already carry it and pass byte for byte; other clients get
 *   {@link CLAUDE_CODE_IDENTITY} as a first block (without a cache marker, so the client's cache
 *   breakpoints stay within the limit of four).
 */
import type { UpstreamCall } from "../../pipeline/execute.ts";

/** Betas every subscription call carries (see the module comment). */
export const CLAUDE_CODE_BETAS = ["claude-code-20250219", "oauth-2025-04-20"] as const;

/** The identity line Claude Code's interactive CLI puts first in its system prompt. */
export const CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";

/** Identity lines the subscription endpoint accepts as the start of the system prompt (Claude Code CLI and Agent SDK). */
export const ACCEPTED_IDENTITIES = [
  "You are Claude Code, Anthropic's official CLI for Claude",
  "You are a Claude agent, built on Anthropic's Claude Agent SDK",
];

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

function hasIdentity(text: unknown): boolean {
  return typeof text === "string" && ACCEPTED_IDENTITIES.some((id) => text.trimStart().startsWith(id));
}

/**
 * The body with a Claude Code identity block first in `system` when it has none (see the module
 * comment); the very same bytes when nothing changes or the body is not JSON.
 */
export function claudeCodeBody(call: Pick<UpstreamCall, "body">): string | Uint8Array {
  const text = typeof call.body === "string" ? call.body : new TextDecoder().decode(call.body);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return call.body;
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) return call.body;
  const system = body.system;
  const identity = { type: "text", text: CLAUDE_CODE_IDENTITY };
  if (typeof system === "string") {
    if (hasIdentity(system)) return call.body;
    body.system = system ? [identity, { type: "text", text: system }] : [identity];
  } else if (Array.isArray(system)) {
    const texts = system.filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text") as Array<{ text?: unknown }>;
    const leading = texts.filter((b) => !(typeof b.text === "string" && b.text.startsWith("x-anthropic-billing-header"))).slice(0, 1);
    if (leading.some((b) => hasIdentity(b.text))) return call.body;
    const billing = system.findIndex((b) => typeof (b as { text?: unknown })?.text === "string" && ((b as { text: string }).text).startsWith("x-anthropic-billing-header"));
    const copy = [...system];
    copy.splice(billing === 0 ? 1 : 0, 0, identity);
    body.system = copy;
  } else {
    body.system = [identity];
  }
  return JSON.stringify(body);
}
