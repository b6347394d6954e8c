/**
 * Small Chat Completions ↔ hub mappings shared by the decoder, encoder, tap and non-streaming paths:
 * usage objects (REFERENCE §5.10), finish reasons (§5.1) and tool-call ids (§5.3). Pure functions, no
 * valibot: they run per stream event.
 */
import type { StopReason, Usage } from "../hub.ts";
import { isObj, finiteNumber } from "../json.ts";

/**
 * Chat `usage` object → hub {@link Usage} (REFERENCE §5.10). Returns `undefined` when `u` is not an
 * object (Chat streams send `usage: null` on most chunks).
 *
 * - `inputTokens` = `prompt_tokens` − cached − cache-write (Chat's `prompt_tokens` INCLUDES cached tokens;
 *   the hub's input excludes them). Never negative.
 * - `cacheReadTokens` = `prompt_tokens_details.cached_tokens`, falling back to DeepSeek's top-level
 *   `prompt_cache_hit_tokens` when the details object is absent.
 * - `cacheWriteTokens` = `prompt_tokens_details.cache_write_tokens` (OpenRouter-style, newer) when present.
 * - `outputTokens` = `completion_tokens`, which INCLUDES reasoning tokens on OpenAI. Judgement: some
 *   providers (xAI, recorded in `recorded/openai-chat/reasoning-content-tool-call-xai.sse`) report
 *   reasoning tokens outside `completion_tokens`; that is detected when `total_tokens` equals
 *   prompt + completion + reasoning (and not prompt + completion), and the reasoning tokens are then
 *   added so the hub's "output includes reasoning" convention holds.
 * - `reasoningTokens` = `completion_tokens_details.reasoning_tokens`.
 */
export function usageFromChat(u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const out: Usage = {};
  const prompt = finiteNumber(u.prompt_tokens);
  const completion = finiteNumber(u.completion_tokens);
  const total = finiteNumber(u.total_tokens);
  const pd = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : undefined;
  const cd = isObj(u.completion_tokens_details) ? u.completion_tokens_details : undefined;
  const cached = finiteNumber(pd?.cached_tokens) ?? finiteNumber(u.prompt_cache_hit_tokens);
  const cacheWrite = finiteNumber(pd?.cache_write_tokens);
  const reasoning = finiteNumber(cd?.reasoning_tokens);
  if (prompt !== undefined) out.inputTokens = Math.max(0, prompt - (cached ?? 0) - (cacheWrite ?? 0));
  if (cached !== undefined) out.cacheReadTokens = cached;
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite;
  if (completion !== undefined) {
    out.outputTokens = completion;
    if (
      reasoning !== undefined &&
      reasoning > 0 &&
      prompt !== undefined &&
      total !== undefined &&
      total !== prompt + completion &&
      total === prompt + completion + reasoning
    ) {
      out.outputTokens = completion + reasoning;
    }
  }
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** The Chat usage object the encoders write: every counter an integer (0 when the provider did not say). */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** `cache_write_tokens` only when the upstream reported cache writes above 0 (see {@link usageToChat}). */
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/**
 * Hub {@link Usage} → Chat usage object (REFERENCE §5.10): `prompt_tokens` = input + cache read +
 * cache write, `completion_tokens` = output (reasoning included), `total_tokens` = their sum,
 * `cached_tokens` = cache read, `reasoning_tokens` = reasoning. Unknown counters are 0.
 *
 * Cache writes above 0 are also written as `prompt_tokens_details.cache_write_tokens`: the "newer"
 * field of REFERENCE §5.10 (OpenRouter's name for it) that {@link usageFromChat} reads, so a Chat
 * client learns of an Anthropic upstream's `cache_creation_input_tokens` (newuser14 K4). Left out at 0:
 * OpenAI's documented object has no such member.
 */
export function usageToChat(u: Usage): ChatUsage {
  const cacheRead = u.cacheReadTokens ?? 0;
  const write = u.cacheWriteTokens ?? 0;
  const prompt = (u.inputTokens ?? 0) + cacheRead + write;
  const completion = u.outputTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: write > 0 ? { cached_tokens: cacheRead, cache_write_tokens: write } : { cached_tokens: cacheRead },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
  };
}

/**
 * Chat `finish_reason` → hub {@link StopReason} (REFERENCE §5.1). `stop` → `end_turn` (the normalizer
 * promotes it to `tool_use` when a call was emitted); `length` → `max_tokens`; `tool_calls` and the
 * deprecated `function_call` → `tool_use`; `content_filter` → `refusal`. A few spellings seen from
 * OpenAI-compatible servers are accepted (`eos`, `end_turn`, `max_tokens`, `model_length`, `tool_use`,
 * `stop_sequence`); anything else → `other`. Returns `null` for `"error"` and DeepSeek's
 * `insufficient_system_resource`: those are failures, not finishes (see {@link finishIsFailure}).
 */
export function stopFromChat(finish: string): StopReason | null {
  switch (finish) {
    case "stop":
    case "eos":
    case "end_turn":
      return "end_turn";
    case "length":
    case "max_tokens":
    case "model_length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool_use";
    case "content_filter":
      return "refusal";
    case "stop_sequence":
      return "stop_sequence";
    case "error":
    case "insufficient_system_resource":
      return null;
    default:
      return "other";
  }
}

/**
 * Whether a Chat `finish_reason` reports a failure rather than a finish: OpenRouter's `error` (sent
 * after an in-band error object) and DeepSeek's `insufficient_system_resource` (the reply was cut off
 * by server load). Neither may reach a client as a finished reply (SPEC 6.4).
 */
export function finishIsFailure(finish: string): boolean {
  return finish === "error" || finish === "insufficient_system_resource";
}

/**
 * Hub {@link StopReason} → Chat `finish_reason` (REFERENCE §5.1). `other` becomes `stop` (judgement:
 * Chat has no closer word; the client sees a finished turn, which is what the provider said);
 * `max_tokens` and `context_window_exceeded` → `length`; `pause_turn` (Anthropic paused a long
 * server-tool turn; the client sends the reply back to go on) → `stop`, REFERENCE §5.1's table
 * (until 2026-12-07 `length`, which sends a client after a token limit that was not reached). No
 * other value is sent: typed clients refuse a `finish_reason` outside stop, length, tool_calls,
 * content_filter, function_call. The same turn reaches a Gemini client as `STOP`
 * (gemini/mapping.ts `finishReasonToGemini`) and a Responses client as `incomplete`
 * (openai-responses/common.ts `terminalForStop`). `refusal` →
 * `content_filter`, except when the reply carried its refusal text in the refusal field
 * (`refusalSent`): that is how OpenAI ends a refusal (`stop`), and the SDKs' structured-output helpers
 * read `message.refusal` on it where they raise on `content_filter`.
 */
export function stopToChat(reason: StopReason, refusalSent = false): "stop" | "length" | "tool_calls" | "content_filter" {
  switch (reason) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "context_window_exceeded":
      return "length";
    case "refusal":
      return refusalSent ? "stop" : "content_filter";
    default:
      return "stop";
  }
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** 32-bit FNV-1a over UTF-16 code units, with a seed (two seeds give a 64-bit digest). */
function fnv1a(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A 16-hex-digit digest of `text` (not cryptographic: collision-safety for ids, nothing more). */
export function shortHash(text: string): string {
  return fnv1a(text, 0x811c9dc5).toString(16).padStart(8, "0") + fnv1a(text, 0x9747b28c).toString(16).padStart(8, "0");
}

/**
 * Maps a tool-call id to one Chat accepts (REFERENCE §5.3: max 64 characters; judgement: only
 * `[A-Za-z0-9_-]`, the pattern every format accepts). Ids that already fit pass unchanged. Others
 * become a cleaned prefix + `_` + a 16-hex digest of the ORIGINAL id: deterministic (the same id maps
 * the same way in the call and in its result, every turn) and collision-safe.
 */
export function chatToolId(id: string): string {
  if (SAFE_ID.test(id)) return id;
  const cleaned = id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64 - 17);
  return (cleaned.length > 0 ? cleaned : "call") + "_" + shortHash(id);
}

/**
 * Whether an Azure `prompt_filter_results` array (on a `choices: []` body or stream chunk) says a
 * category of some prompt was filtered (`content_filter_results.<category>.filtered: true`).
 */
export function promptFiltered(results: unknown): boolean {
  if (!Array.isArray(results)) return false;
  for (const r of results) {
    if (!isObj(r) || !isObj(r.content_filter_results)) continue;
    for (const c of Object.values(r.content_filter_results)) if (isObj(c) && c.filtered === true) return true;
  }
  return false;
}
