/**
 * The Codex backend's body rules (provider kind `codex`, SPEC P-2, F-9), applied by build.ts and
 * tidy.ts.
 */
import type { BuildTarget } from "../codec.ts";
import type { Warnings } from "../hub.ts";

/**
 * Fields the Codex backend rejects with 400 "Unsupported parameter" (the Codex CLI never sends them;
 * as reported against chatgpt.com/backend-api/codex by other gateways: sub2api, CLIProxyAPI,
 * codex-proxy issues).
 */
export const CODEX_UNSUPPORTED_FIELDS = ["max_output_tokens", "max_completion_tokens", "temperature", "top_p", "service_tier", "user", "safety_identifier"];

/**
 * The Codex backend's body rules (SPEC P-2, F-9), applied by `buildRequest` (build.ts) and
 * `tidyRequest` (tidy.ts) for kind `codex` to a body object the caller owns (its top-level fields are
 * set in place; `input` items are replaced, never mutated, so a tidied client body stays intact).
 * The ChatGPT-backed endpoint (`https://chatgpt.com/backend-api/codex/responses`) only streams, keeps
 * nothing server-side, and refuses what the public Responses API takes:
 * - `stream: true` (400 "Stream must be set to true") and `store: false`;
 * - `previous_response_id` dropped (nothing is stored to continue from) and
 *   {@link CODEX_UNSUPPORTED_FIELDS} dropped, each with a `dropped_field` warning;
 * - a string `input` sent as one user message (400 "Input must be a list");
 * - `instructions` present (400 "Instructions are required"; an empty string is accepted);
 * - `system` input messages sent as `developer` (the Codex CLI's own role for instructions in input);
 * - `prompt_cache_key` = `target.promptCacheKey` when the body has none (the backend routes a
 *   conversation to a warm cache by it).
 * What `store: false` implies for every Responses target (reasoning without encrypted state dropped,
 * `reasoning.encrypted_content` requested, foreign item ids removed) is done by the callers. The
 * backend's refusals are as reported by other gateways that proxy it (sub2api, CLIProxyAPI,
 * codex-proxy issues). Never throws.
 */
export function applyCodexFixes(body: Record<string, unknown>, target: BuildTarget, w: Warnings): void {
  body.stream = true;
  body.store = false;
  if (body.previous_response_id !== undefined) {
    delete body.previous_response_id;
    w.add("dropped_field", "previous_response_id was not sent: the Codex backend stores no responses to continue from.");
  }
  for (const f of CODEX_UNSUPPORTED_FIELDS) {
    if (body[f] === undefined) continue;
    delete body[f];
    w.add("dropped_field", `${f} is not accepted by the Codex backend and was not sent.`);
  }
  if (typeof body.input === "string") body.input = [{ type: "message", role: "user", content: [{ type: "input_text", text: body.input }] }];
  if (typeof body.instructions !== "string") body.instructions = "";
  if (Array.isArray(body.input)) {
    body.input = (body.input as unknown[]).map((raw) => {
      const item = raw as Record<string, unknown> | null;
      if (!item || typeof item !== "object" || item.role !== "system" || (item.type !== undefined && item.type !== "message")) return raw;
      return { ...item, role: "developer" };
    });
  }
  if (body.prompt_cache_key === undefined && target.promptCacheKey) body.prompt_cache_key = target.promptCacheKey;
}
