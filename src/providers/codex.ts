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
 * Applies the Codex fixes to a Responses body: `stream: true` (the backend only streams, F-9),
 * `store: false`, `include` with `reasoning.encrypted_content`, reasoning items that carry only an id
 * dropped (with store false the backend cannot look them up: 404 "Item with id 'rs_…' not found"),
 * foreign item ids removed, unsupported fields removed, and a `prompt_cache_key` when missing
 * (`cacheKey`, derived by the caller from the session). Returns the names of what was dropped.
 */
export function applyCodexFixes(body: Record<string, unknown>, cacheKey: string | undefined): string[] {
  const dropped: string[] = [];
  body.stream = true;
  body.store = false;
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
