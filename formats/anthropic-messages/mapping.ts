/**
 * Small vocabulary tables shared by the Anthropic Messages request, response, stream and error code:
 * stop reasons, usage, error types, tool-id sanitising and the signature tag that lets foreign opaque
 * state ride through an Anthropic client. Pure functions, no I/O.
 */
import type { CacheControl, ErrorKind, Opaque, ProviderFamily, ReasoningEffort, StopReason, Usage } from "../hub.ts";
import { OPAQUE_TAG, readTaggedOpaque, writeTaggedOpaque } from "../hub.ts";

// ---------------------------------------------------------------------------------------------
// Stop reasons (REFERENCE §1.2, §5.1)
// ---------------------------------------------------------------------------------------------

/**
 * Anthropic `stop_reason` → hub {@link StopReason}. Vocabulary from `anthropic-sdk-python`
 * `types/stop_reason.py`: end_turn, max_tokens, stop_sequence, tool_use, pause_turn, refusal,
 * model_context_window_exceeded. Anything else (a newer or third-party value) becomes `other`; the
 * caller keeps the raw string for traces.
 */
export function stopFromAnthropic(raw: string): StopReason {
  switch (raw) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "refusal":
    case "pause_turn":
      return raw;
    case "model_context_window_exceeded":
      return "context_window_exceeded";
    default:
      return "other";
  }
}

/**
 * The `explanation` of an Anthropic `stop_details` object (sent with a `refusal` stop, in the message
 * and in `message_delta.delta`: `{type: "refusal", category, explanation, recommended_model}`), when it
 * is a non-empty string; undefined otherwise.
 */
export function stopExplanationOf(details: unknown): string | undefined {
  if (typeof details !== "object" || details === null) return undefined;
  const e = (details as { explanation?: unknown }).explanation;
  return typeof e === "string" && e.length > 0 ? e : undefined;
}

/**
 * The `stop_details` object an Anthropic client reads beside `stop_reason: refusal` (REFERENCE §1.2,
 * recorded anthropic-messages/refusal.sse: `{type: "refusal", category, explanation, …}`) for a refusal
 * finish's `explanation` (another provider's words on why, e.g. "Gemini blocked the prompt
 * (PROHIBITED_CONTENT)."); `category` is null (the hub carries none: Claude Code takes null as "not said").
 * Undefined when the finish is not a refusal or says no explanation.
 */
export function stopDetailsFor(reason: StopReason | null, explanation: string | undefined): { type: "refusal"; category: null; explanation: string } | undefined {
  return reason === "refusal" && explanation !== undefined ? { type: "refusal", category: null, explanation } : undefined;
}

/**
 * Hub {@link StopReason} → Anthropic `stop_reason`. `other` (Gemini MALFORMED_FUNCTION_CALL and the
 * like) becomes `end_turn` (REFERENCE §5.1 judgement row: post-commit these read as a plain end).
 */
export function stopToAnthropic(reason: StopReason): string {
  switch (reason) {
    case "context_window_exceeded":
      return "model_context_window_exceeded";
    case "other":
      return "end_turn";
    default:
      return reason;
  }
}

// ---------------------------------------------------------------------------------------------
// Usage (REFERENCE §5.10)
// ---------------------------------------------------------------------------------------------

/**
 * Anthropic `usage` object → hub {@link Usage}. Only fields that are present and numeric are set
 * (null/absent means "not said"). `input_tokens` excludes cache reads/writes in both vocabularies.
 * `output_tokens_details.thinking_tokens` (newer API) becomes `reasoningTokens`;
 * `cache_creation.ephemeral_1h_input_tokens`, when a number (0 included: the breakdown was said),
 * `cacheWrite1hTokens` (the one-hour part of the cache writes, priced apart; written back to an
 * Anthropic client as the `cache_creation` breakdown by {@link usageJson} / {@link cacheCreationOf});
 * `server_tool_use.web_search_requests` `webSearches` (billed per search, priced apart).
 */
export function usageFromAnthropic(u: unknown): Usage | undefined {
  if (!u || typeof u !== "object") return undefined;
  const o = u as Record<string, unknown>;
  const out: Usage = {};
  if (typeof o.input_tokens === "number") out.inputTokens = o.input_tokens;
  if (typeof o.output_tokens === "number") out.outputTokens = o.output_tokens;
  if (typeof o.cache_read_input_tokens === "number") out.cacheReadTokens = o.cache_read_input_tokens;
  if (typeof o.cache_creation_input_tokens === "number") out.cacheWriteTokens = o.cache_creation_input_tokens;
  const creation = o.cache_creation as Record<string, unknown> | undefined | null;
  if (creation && typeof creation === "object" && typeof creation.ephemeral_1h_input_tokens === "number" && creation.ephemeral_1h_input_tokens >= 0) {
    out.cacheWrite1hTokens = creation.ephemeral_1h_input_tokens;
  }
  const det = o.output_tokens_details as Record<string, unknown> | undefined | null;
  if (det && typeof det === "object") {
    const t = det.thinking_tokens ?? det.reasoning_tokens;
    if (typeof t === "number") out.reasoningTokens = t;
  }
  const tools = o.server_tool_use as Record<string, unknown> | undefined | null;
  if (tools && typeof tools === "object" && typeof tools.web_search_requests === "number" && tools.web_search_requests >= 0) out.webSearches = tools.web_search_requests;
  return out;
}

/**
 * The `cache_creation` breakdown of an Anthropic usage object (`{ephemeral_5m_input_tokens,
 * ephemeral_1h_input_tokens}`, Anthropic's `Usage.cache_creation`, @anthropic-ai/sdk
 * resources/messages `CacheCreation`) when the provider said it: `cacheWrite1hTokens` known (Anthropic
 * upstreams) and `cacheWriteTokens` known; the five-minute part is the rest of the writes. Undefined
 * otherwise (a Chat, Responses or Gemini upstream says nothing of lifetimes: no breakdown is made up).
 * Claude Code prices one-hour writes from it (newuser14 K5).
 */
export function cacheCreationOf(u: Usage): { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | undefined {
  if (u.cacheWrite1hTokens === undefined || u.cacheWriteTokens === undefined) return undefined;
  const h1 = Math.min(u.cacheWrite1hTokens, u.cacheWriteTokens);
  return { ephemeral_5m_input_tokens: u.cacheWriteTokens - h1, ephemeral_1h_input_tokens: h1 };
}

/**
 * Hub {@link Usage} → the JSON text of an Anthropic `usage` object. Always has
 * `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens` and `output_tokens` (0 when
 * unknown, as Anthropic always sends them: code adding the three input counts, as Anthropic's docs
 * suggest, would get NaN from a missing one; sdk16 S2). With `breakdown` (a message's and `message_start`'s usage, Anthropic's `Usage`), also
 * the `cache_creation` breakdown when known ({@link cacheCreationOf}); `message_delta`'s usage
 * (`MessageDeltaUsage`) has no such member. Built by concatenation (hot path).
 */
export function usageJson(u: Usage, breakdown = false): string {
  let s = `{"input_tokens":${u.inputTokens ?? 0}`;
  s += `,"cache_creation_input_tokens":${u.cacheWriteTokens ?? 0},"cache_read_input_tokens":${u.cacheReadTokens ?? 0}`;
  if (breakdown) {
    const c = cacheCreationOf(u);
    if (c) s += `,"cache_creation":{"ephemeral_5m_input_tokens":${c.ephemeral_5m_input_tokens},"ephemeral_1h_input_tokens":${c.ephemeral_1h_input_tokens}}`;
  }
  s += `,"output_tokens":${u.outputTokens ?? 0}}`;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Errors (REFERENCE §1.4, §5.2)
// ---------------------------------------------------------------------------------------------

/** Hub {@link ErrorKind} → Anthropic `error.type` (REFERENCE §5.2 table). */
export function errorTypeFor(kind: ErrorKind): string {
  switch (kind) {
    case "invalid_request":
    case "context_length_exceeded":
      return "invalid_request_error";
    case "request_too_large":
      return "request_too_large";
    case "authentication":
      return "authentication_error";
    case "permission":
      return "permission_error";
    case "not_found":
    case "model_not_found":
      return "not_found_error";
    case "billing":
      return "billing_error";
    case "quota_exhausted":
    case "rate_limit":
      return "rate_limit_error";
    case "overloaded":
      return "overloaded_error";
    case "timeout":
      return "timeout_error";
    case "api_error":
      return "api_error";
  }
}

/** Anthropic `error.type` → hub {@link ErrorKind}, or undefined for a type this table does not know. */
export function kindForErrorType(type: string): ErrorKind | undefined {
  switch (type) {
    case "invalid_request_error":
      return "invalid_request";
    case "request_too_large":
      return "request_too_large";
    case "authentication_error":
      return "authentication";
    case "permission_error":
      return "permission";
    case "not_found_error":
      return "not_found";
    case "billing_error":
      return "billing";
    case "rate_limit_error":
      return "rate_limit";
    case "overloaded_error":
      return "overloaded";
    case "timeout_error":
      return "timeout";
    case "api_error":
      return "api_error";
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Opaque state tagging (SPEC F-8, REFERENCE §5.9 "keep signatures round-trippable")
// ---------------------------------------------------------------------------------------------

/** The tag of opaque state minted by another family ({@link OPAQUE_TAG}, formats/hub.ts). */
export { OPAQUE_TAG };

/** Hub {@link Opaque} → the signature string an Anthropic client sees (raw for `anthropic`, tagged otherwise). */
export function writeOpaque(o: Opaque): string {
  return writeTaggedOpaque(o, "anthropic");
}

/** A signature string from an Anthropic client body → hub {@link Opaque} (untagged values are `anthropic`). */
export function readOpaque(value: string): Opaque {
  return readTaggedOpaque(value, "anthropic");
}

// ---------------------------------------------------------------------------------------------
// Tool ids (REFERENCE §1.1, §5.3)
// ---------------------------------------------------------------------------------------------

const TOOL_ID_OK = /^[a-zA-Z0-9_-]+$/;

/** 32-bit FNV-1a of a string, base36 (deterministic, collision-resistant enough for id suffixes). */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/**
 * Makes a tool id acceptable to Anthropic (`^[a-zA-Z0-9_-]+$`, REFERENCE §1.1). Valid ids pass through
 * unchanged; others have every other character replaced by `_` and a hash of the original appended,
 * so the mapping is deterministic (same id in a `tool_use` and its `tool_result`, every turn) and two
 * ids that clean to the same text stay distinct (REFERENCE §5.3).
 */
export function sanitizeToolId(id: string): string {
  if (TOOL_ID_OK.test(id)) return id;
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, "_");
  return (clean.length > 0 ? clean : "toolu") + "_" + fnv1a(id);
}

// ---------------------------------------------------------------------------------------------
// Cache control
// ---------------------------------------------------------------------------------------------

/** Reads an Anthropic `cache_control` value (only `ephemeral`, with an optional string `ttl`). */
export function readCacheControl(v: unknown): CacheControl | undefined {
  if (!v || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  if (o.type !== "ephemeral") return undefined;
  return typeof o.ttl === "string" ? { type: "ephemeral", ttl: o.ttl } : { type: "ephemeral" };
}

/** Hub {@link CacheControl} → Anthropic `cache_control` object. */
export function writeCacheControl(c: CacheControl): Record<string, unknown> {
  return c.ttl !== undefined ? { type: "ephemeral", ttl: c.ttl } : { type: "ephemeral" };
}

// ---------------------------------------------------------------------------------------------
// Request limits and kept fields (parse.ts, build.ts, tidy.ts)
// ---------------------------------------------------------------------------------------------

/** Output-token limit used when neither the request nor the target gives one (Anthropic requires one). */
export const DEFAULT_MAX_TOKENS = 8192;

/** Anthropic's minimum thinking budget (REFERENCE §1.1). */
export const MIN_THINKING_BUDGET = 1024;

/**
 * Effort → `thinking.budget_tokens` for Anthropic models with budgeted thinking (REFERENCE §5.9 leaves
 * the table open; judgement: powers of two from the minimum, `high` at 16k as in the §5.9 table).
 */
export const EFFORT_BUDGET: Record<Exclude<ReasoningEffort, "none">, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32768,
};

/**
 * Key in `HubRequest.source.extra` under which {@link parseRequest} keeps per-message and per-tool
 * fields the hub has no slot for (Claude Code's per-message `output_config`, a tool's
 * `eager_input_streaming`, …), so {@link buildRequest} can re-emit them for the same format.
 * Shape: {@link ItemFields}.
 */
export const ITEM_FIELDS_KEY = "$anthropic_item_fields";

/** Unknown fields of individual messages (by index in `messages`) and tools (by name). */
export interface ItemFields {
  messages?: Record<string, Record<string, unknown>>;
  tools?: Record<string, Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------------
// Sampling parameters
// ---------------------------------------------------------------------------------------------

/** `claude-<family>-<major>[-<minor>]` (also inside Bedrock/Vertex ids); a date after the major is no minor. */
const CLAUDE_VERSION = /claude-(?:opus|sonnet|haiku|fable|mythos)-(\d+)(?:[-.](\d{1,2}))?(?!\d)/;

/** The `[major, minor]` a Claude model id names (`claude-opus-4-7` → [4, 7]), or undefined for other ids. */
function claudeVersion(model: string): [number, number] | undefined {
  const v = CLAUDE_VERSION.exec(model.toLowerCase());
  if (!v) return undefined;
  return [Number(v[1]), v[2] === undefined ? 0 : Number(v[2])];
}

/**
 * Whether a Claude model refuses the sampling parameters altogether: `temperature`, `top_p` and `top_k`
 * at any non-default value are a 400 ("`temperature` is deprecated for this model."). Anthropic's
 * migration guide (platform.claude.com/docs/en/about-claude/models/migration-guide, "Migrating to
 * Claude Opus 4.7", "Sampling parameters removed": "Starting with Claude Opus 4.7, setting
 * `temperature`, `top_p`, or `top_k` to any non-default value will return a 400 error. The safest
 * migration path is to omit these parameters entirely"), its model-deprecations page ("Claude 4.7 and
 * later models") and the claude-api skill's migration notes (anthropics/skills, "Remove the field
 * entirely on Opus 4.7"; Sonnet 5 the same). So: a `claude-<family>-<major>[-<minor>]` id from
 * version 4.7 on. Ids that do not name a version this way keep what the client sent.
 */
export function refusesSampling(model: string): boolean {
  const v = claudeVersion(model);
  return v !== undefined && (v[0] > 4 || (v[0] === 4 && v[1] >= 7));
}

/**
 * Whether a Claude model thinks only adaptively: `thinking: {type: "enabled", budget_tokens}` is a 400
 * there ("\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and
 * \"output_config.effort\" to control thinking behavior.", the answer reported in
 * NousResearch/hermes-agent#11137), and how hard it thinks is `output_config.effort` (`low` … `xhigh`,
 * `max`). Anthropic's migration guide ("Migrating to Claude Opus 4.7": extended thinking budgets
 * removed, adaptive thinking the only thinking mode), as OpenRouter's Claude 4.7 migration guide
 * restates it ("Adaptive-only thinking … thinking.budget_tokens is no longer supported"). The same
 * versions as {@link refusesSampling}: a `claude-<family>-<major>[-<minor>]` id from 4.7 on.
 */
export function thinksAdaptiveOnly(model: string): boolean {
  return refusesSampling(model);
}

/**
 * Whether a Claude model refuses `temperature` and `top_p` in the same request (400 "temperature and
 * top_p cannot both be specified for this model. Please use only one."). Anthropic's migration guide
 * (platform.claude.com/docs/en/about-claude/models/migrating-to-claude-4, "Update sampling
 * parameters": "Use only temperature OR top_p, not both", a breaking change from Sonnet 3.7) names
 * Sonnet 4.5 and Haiku 4.5; Opus 4.1 answers the same 400 (open-webui/functions#9), and so do the
 * models after them. So: a `claude-<family>-<major>[-<minor>]` id (also inside a Bedrock or Vertex
 * id) from version 4.1 on. The `claude-3-…` ids, Opus 4 and Sonnet 4, ids that do not name a version
 * this way and the non-Claude models of Anthropic-compatible servers (GLM, Kimi, …) keep both.
 */
export function refusesTemperatureWithTopP(model: string): boolean {
  const v = claudeVersion(model);
  return v !== undefined && (v[0] > 4 || (v[0] === 4 && v[1] >= 1));
}

/**
 * How a block's start (its `content_block.type`) changes the count of server tools in flight upstream
 * (StreamDecoder.serverTools, TapState.serverTools, for the keep-alive bound): +1 for a server tool's
 * call (`server_tool_use`, `mcp_tool_use`), −1 for a server tool's result (`web_search_tool_result`,
 * `web_fetch_tool_result`, `code_execution_tool_result`, `mcp_tool_result`, …), else 0 (a client
 * `tool_use`, text, thinking).
 */
export function serverToolStep(blockType: string): number {
  if (blockType.endsWith("_tool_use")) return 1;
  if (blockType.endsWith("_tool_result")) return -1;
  return 0;
}
