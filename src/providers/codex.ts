/**
 * The Codex provider's transport (SPEC P-2): the headers the Codex CLI sends to the ChatGPT-backed
 * Codex endpoint (`https://chatgpt.com/backend-api/codex/responses`). The backend's BODY rules (only
 * streams, `store:false`, unsupported fields, list input, instructions, …) are the Responses codec's,
 * applied for kind `codex` when the body is built or tidied (formats/openai-responses/codex.ts
 * `applyCodexFixes`), so the executor never parses a body. The prompt-cache key is derived where the
 * client's headers and body are both at hand (pipeline/translate.ts `codexCacheKey`) and reaches the
 * executor as `UpstreamCall.promptCacheKey`.
 */

/** The `originator` sent when the client sent none: the Codex CLI's (codex-rs default_client.rs). */
export const CODEX_DEFAULT_ORIGINATOR = "codex_cli_rs";

/**
 * The headers the Codex CLI sends to the ChatGPT backend that a call lacks (never overriding the
 * client's): `chatgpt-account-id` is set with the auth; here `originator` (`codex_cli_rs`),
 * `OpenAI-Beta: responses=experimental`, a `session_id` equal to the prompt-cache key (`cacheKey`, the
 * value the body carries), which the backend uses to route the conversation to a warm cache (observed
 * Codex CLI behaviour), and `accept: text/event-stream` (the backend only streams). Mutates `headers`.
 */
export function codexHeaders(headers: Headers, cacheKey: string | undefined): void {
  if (!headers.has("originator")) headers.set("originator", CODEX_DEFAULT_ORIGINATOR);
  if (!headers.has("openai-beta")) headers.set("openai-beta", "responses=experimental");
  if (cacheKey && !headers.has("session_id") && !headers.has("session-id")) headers.set("session_id", cacheKey);
  headers.set("accept", "text/event-stream");
}
