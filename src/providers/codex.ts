/**
 * The Codex provider's request fixes (SPEC P-2). The ChatGPT-backed Codex endpoint
 * (`https://chatgpt.com/backend-api/codex/responses`) only streams, keeps nothing server-side, and
 * rejects parameters the public Responses API takes. These fixes run on every body sent to a `codex`
 * provider, native passthrough included, because the backend refuses the body otherwise.
 */

/** Item id prefixes the Responses backend mints; other ids (foreign providers) cannot be looked up. */
const OPENAI_ITEM_ID = /^(msg|fc|fco|rs|ctc|ws|ci|lsh|mcp|ig|cu|cuo)_/;

/**
 * Fields the Codex backend rejects with 400 "Unsupported parameter" (observed from Codex CLI
 * traffic, which never sends them, and from gateways that proxy it).
 */
export const CODEX_UNSUPPORTED_FIELDS = ["max_output_tokens", "max_completion_tokens", "temperature", "top_p", "service_tier", "user", "safety_identifier"];

/**
 * Applies the Codex fixes to a Responses body: `stream: true` (the backend only streams, F-9: 400
 * "Stream must be set to true"), `store: false`, `include` with `reasoning.encrypted_content`,
 * reasoning items that carry only an id dropped (with store false the backend cannot look them up:
 * 404 "Item with id 'rs_…' not found"), foreign item ids removed, unsupported fields removed, a
 * `previous_response_id` dropped (nothing is stored to continue from), a string `input` wrapped as
 * one user message (400 "Input must be a list"), `instructions` present (400 "Instructions are
 * required"; an empty string is accepted), `system` input messages sent as `developer` (the Codex
 * CLI's own role for instructions in input), and a `prompt_cache_key` when missing (`cacheKey`,
 * derived by the caller from the session). Returns the names of what was dropped. The backend's
 * refusals are as reported against chatgpt.com/backend-api/codex by other gateways (sub2api,
 * CLIProxyAPI, codex-proxy issues).
 */
export function applyCodexFixes(body: Record<string, unknown>, cacheKey: string | undefined): string[] {
  const dropped: string[] = [];
  body.stream = true;
  body.store = false;
  if ("previous_response_id" in body) {
    delete body.previous_response_id;
    dropped.push("previous_response_id");
  }
  if (typeof body.input === "string") body.input = [{ type: "message", role: "user", content: [{ type: "input_text", text: body.input }] }];
  if (typeof body.instructions !== "string") body.instructions = "";
  const include = Array.isArray(body.include) ? [...(body.include as unknown[])] : [];
  if (!include.includes("reasoning.encrypted_content")) include.push("reasoning.encrypted_content");
  body.include = include;
  for (const f of CODEX_UNSUPPORTED_FIELDS) {
    if (f in body) {
      delete body[f];
      dropped.push(f);
    }
  }
  if (Array.isArray(body.input)) {
    body.input = (body.input as Array<Record<string, unknown>>).filter((item) => {
      if (!item || typeof item !== "object") return true;
      if (item.type === "reasoning" && !item.encrypted_content) {
        dropped.push("input reasoning item without encrypted_content");
        return false;
      }
      if (typeof item.id === "string" && !OPENAI_ITEM_ID.test(item.id)) delete item.id;
      if (item.role === "system" && (item.type === undefined || item.type === "message")) item.role = "developer";
      return true;
    });
  }
  if (body.prompt_cache_key === undefined && cacheKey) body.prompt_cache_key = cacheKey;
  return dropped;
}

/** A stable prompt-cache key: the client's session id, else a hash of the conversation's opening. */
export function codexCacheKey(headers: Headers, body: Record<string, unknown>): string | undefined {
  const session = headers.get("session-id") ?? headers.get("session_id") ?? headers.get("x-switchyard-session");
  if (session) return session;
  const input = Array.isArray(body.input) ? (body.input as unknown[]).slice(0, 2) : body.input;
  const opening = JSON.stringify([body.instructions ?? null, input ?? null]);
  return "sy-" + new Bun.CryptoHasher("sha256").update(opening).digest("hex").slice(0, 32);
}

/** The `originator` sent when the client sent none: the Codex CLI's (codex-rs default_client.rs). */
export const CODEX_DEFAULT_ORIGINATOR = "codex_cli_rs";

/**
 * A Codex call's body with its fixes applied (SPEC P-2) and the prompt-cache key it carries, which
 * also names the session in the headers.
 */
export function codexPrepare(body: string | Uint8Array, clientHeaders: Headers): { body: string; cacheKey?: string } {
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  applyCodexFixes(parsed, codexCacheKey(clientHeaders, parsed));
  const cacheKey = typeof parsed.prompt_cache_key === "string" ? parsed.prompt_cache_key : undefined;
  return { body: JSON.stringify(parsed), cacheKey };
}

/**
 * The headers the Codex CLI sends to the ChatGPT backend that a call lacks (never overriding the
 * client's): `chatgpt-account-id` is set with the auth; here `originator` (`codex_cli_rs`),
 * `OpenAI-Beta: responses=experimental` and a `session_id` equal to the prompt-cache key, which the
 * backend uses to route the conversation to a warm cache (observed Codex CLI behaviour).
 */
export function codexHeaders(headers: Headers, cacheKey: string | undefined): void {
  if (!headers.has("originator")) headers.set("originator", CODEX_DEFAULT_ORIGINATOR);
  if (!headers.has("openai-beta")) headers.set("openai-beta", "responses=experimental");
  if (cacheKey && !headers.has("session_id") && !headers.has("session-id")) headers.set("session_id", cacheKey);
  headers.set("accept", "text/event-stream");
}
