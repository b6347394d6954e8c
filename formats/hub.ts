/**
 * The hub: switchyard's canonical in-memory representation of requests, responses and stream events
 * (SPEC F-2). Every wire format converts to and from these types; no format's vocabulary leaks in here.
 *
 * The hub is a superset of what the four formats can say: thinking with signatures, redacted thinking,
 * cache-control markers, images and documents (also inside tool results), tool calls with ids,
 * parallel calls, usage with cache read/write and reasoning tokens, stop reasons and stop sequences,
 * reasoning effort and budget. A value a target format cannot express is dropped by that format's
 * builder and reported as a {@link Warning}, never silently.
 *
 * Pure types and tiny helpers only: no I/O.
 */

/** The wire formats switchyard speaks. Client side: the first three; provider side: all four. */
export type WireFormat = "openai-chat" | "openai-responses" | "anthropic-messages" | "gemini";

/**
 * The provider family that minted an opaque value (thinking signature, encrypted reasoning, Gemini
 * thought signature). Opaque state only goes back to the family that issued it (SPEC F-8).
 * `anthropic` (anthropic, claude-code), `openai` (openai, openai-responses, codex), `gemini`, or
 * `provider:<id>` for a third-party `*-compatible` provider, whose state only goes back to itself.
 * Decoders are told the family of the provider they decode for.
 */
export type ProviderFamily = "anthropic" | "openai" | "gemini" | `provider:${string}`;

/** An opaque continuity token together with the family that issued it. */
export interface Opaque {
  family: ProviderFamily;
  /** The bytes exactly as received (base64 or provider-specific text). */
  value: string;
}

/**
 * Prefix that marks opaque state handed to a client of another family than the one that minted it
 * (SPEC F-8, REFERENCE §5.9 "keep signatures round-trippable"): `sy|<family>|<value>`. `|` is in neither
 * base64's alphabet nor OpenAI's encrypted content, so a provider's own value never starts with it. The
 * client stores the string and sends it back unchanged; {@link readTaggedOpaque} recovers the family,
 * so the state only goes back to the provider that issued it.
 */
export const OPAQUE_TAG = "sy|";

/** Hub {@link Opaque} → the string a client of format family `native` sees: raw when `native` minted it, tagged otherwise. */
export function writeTaggedOpaque(o: Opaque, native: ProviderFamily): string {
  return o.family === native ? o.value : OPAQUE_TAG + o.family + "|" + o.value;
}

/**
 * A string a client of format family `native` sent back → hub {@link Opaque}: untagged values are
 * `native`'s; tagged values get their family back; a malformed tag (no second `|`) is kept verbatim as `native`'s.
 */
export function readTaggedOpaque(value: string, native: ProviderFamily): Opaque {
  if (value.startsWith(OPAQUE_TAG)) {
    const bar = value.indexOf("|", OPAQUE_TAG.length);
    if (bar > OPAQUE_TAG.length) return { family: value.slice(OPAQUE_TAG.length, bar) as ProviderFamily, value: value.slice(bar + 1) };
  }
  return { family: native, value };
}

/** Anthropic-style prompt-cache breakpoint (REFERENCE §1.1). */
export interface CacheControl {
  type: "ephemeral";
  /** e.g. "5m" or "1h" */
  ttl?: string;
}

/** Where the bytes of an image, document or audio clip live. */
export type MediaSource =
  | { kind: "base64"; mediaType: string; data: string }
  | { kind: "url"; url: string; mediaType?: string }
  | { kind: "file_id"; fileId: string; mediaType?: string }
  /** Plain-text document body (Anthropic `document` with `source.type: "text"`). */
  | { kind: "text"; mediaType: string; data: string };

// ---------------------------------------------------------------------------------------------
// Content parts
// ---------------------------------------------------------------------------------------------

/**
 * A token the model could have produced at one position, with its log probability (natural log, ≤ 0).
 * `bytes`: the token's UTF-8 bytes when the provider gave them (Chat, Responses parts); absent
 * otherwise (Gemini gives none).
 */
export interface TokenAlternative {
  token: string;
  logprob: number;
  bytes?: number[];
}

/**
 * One generated token's log probability and, when the client asked for them, the most likely tokens
 * at its position, best first (`top`). The same thing in each format: Chat `choices[].logprobs.content[]`
 * `{token, logprob, bytes, top_logprobs}` (platform.openai.com/docs/api-reference/chat/object), Responses
 * `output_text.logprobs[]` and `response.output_text.delta` `logprobs[]` (…/api-reference/responses),
 * Gemini `candidates[].logprobsResult.chosenCandidates[i]` `{token, tokenId, logProbability}` with
 * `topCandidates[i].candidates` (ai.google.dev/api/generate-content#LogprobsResult).
 */
export interface TokenLogprob extends TokenAlternative {
  top?: TokenAlternative[];
}

/** Visible text. */
export interface TextPart {
  type: "text";
  text: string;
  cacheControl?: CacheControl;
  /** Gemini may put a thought signature on a visible text part; it must go back on the same part. */
  signature?: Opaque;
  /** Responses assistant message `phase` ("commentary" | "final_answer"), kept for round trips. */
  phase?: string;
  /** The model's refusal (Chat `refusal`, Responses `refusal` part): OpenAI clients read it from its own field, others as text. */
  refusal?: boolean;
  /** An Anthropic `tool_reference` in a tool result (the tool it loaded): sent back as one to Anthropic, as `text` elsewhere. */
  toolReference?: string;
  /** Log probabilities of the text's tokens, in order, when the client asked for them and the provider sent them. */
  logprobs?: TokenLogprob[];
}

/** An image input. */
export interface ImagePart {
  type: "image";
  source: MediaSource;
  /** OpenAI `detail` ("auto" | "low" | "high"). */
  detail?: string;
  cacheControl?: CacheControl;
}

/** A document (PDF or plain text) input. */
export interface DocumentPart {
  type: "document";
  source: MediaSource;
  filename?: string;
  title?: string;
  cacheControl?: CacheControl;
}

/** An audio input (Chat `input_audio`). `format` is e.g. "wav" or "mp3"; `data` is base64. */
export interface AudioPart {
  type: "audio";
  data: string;
  format: string;
}

/** A video input (Gemini inlineData/fileData with a video mime type). */
export interface VideoPart {
  type: "video";
  source: MediaSource;
}

/** A tool call made by the assistant. */
export interface ToolCallPart {
  type: "tool_call";
  /** The id the client sees and sends back with the result (Anthropic `tool_use.id`, Chat `tool_calls[].id`, Responses `call_id`). */
  id: string;
  name: string;
  /** The arguments as JSON text, exactly as produced; "" means no arguments (read as `{}`). */
  arguments: string;
  /** Responses item id (`fc_…`) when the call came from a Responses source. */
  itemId?: string;
  /** Gemini thought signature carried on the functionCall part. */
  signature?: Opaque;
  /** Responses namespace the function belongs to (Codex `namespace` tools), when known. */
  namespace?: string;
  /** A Responses `custom_tool_call` (freeform; `arguments` = `{"input": …}`): tells a namespace's function and custom member of one name apart. */
  custom?: true;
  cacheControl?: CacheControl;
}

/** The result of a tool call, sent back by the client. */
export interface ToolResultPart {
  type: "tool_result";
  /** The id of the matching {@link ToolCallPart}. */
  callId: string;
  /** Tool name when the source format carries it (Gemini needs it; Chat/Anthropic do not send it). */
  name?: string;
  /** Text, image and document parts. A plain-string result is one text part. */
  content: Array<TextPart | ImagePart | DocumentPart>;
  isError?: boolean;
  cacheControl?: CacheControl;
}

/**
 * Visible reasoning (Anthropic thinking, Chat `reasoning_content`, Responses reasoning summary or
 * reasoning text, Gemini `thought: true` parts), optionally with the opaque state that lets the
 * issuing provider resume it (Anthropic signature, Responses `encrypted_content`).
 */
export interface ThinkingPart {
  type: "thinking";
  text: string;
  signature?: Opaque;
  /** Responses reasoning item id (`rs_…`). */
  itemId?: string;
  /** Responses: one string per summary part, when the source split them. */
  summary?: string[];
  /** true when the text is raw reasoning (Responses `reasoning_text`) rather than a summary. */
  raw?: boolean;
}

/** Anthropic `redacted_thinking`: encrypted reasoning with no visible text. */
export interface RedactedThinkingPart {
  type: "redacted_thinking";
  data: Opaque;
}

/** Any content part of a hub message. */
export type HubPart =
  | TextPart
  | ImagePart
  | DocumentPart
  | AudioPart
  | VideoPart
  | ToolCallPart
  | ToolResultPart
  | ThinkingPart
  | RedactedThinkingPart;

/**
 * One conversation turn. `system` and `developer` turns may appear anywhere (Chat system/developer
 * messages, Claude Code's mid-conversation `role: "system"` entry, Responses developer items); the
 * top-level system prompt lives in {@link HubRequest.system}. Tool results are parts of `user` turns
 * (Chat `tool` messages and Responses `function_call_output` items become `user` turns).
 */
export interface HubMessage {
  role: "user" | "assistant" | "system" | "developer";
  content: HubPart[];
  /** Chat `name` on a message. */
  name?: string;
}

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/** A function tool the model may call. */
export interface FunctionTool {
  kind: "function";
  name: string;
  /** Absent when the client sent none (never null, REFERENCE §5.6). */
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  strict?: boolean;
  cacheControl?: CacheControl;
  /** Codex namespace the tool was declared in (flattened for formats without namespaces). */
  namespace?: string;
  /** Anthropic `defer_loading` and similar hints, kept for same-family round trips. */
  deferLoading?: boolean;
}

/**
 * A tool only one format or provider understands (Responses `web_search`, `custom` freeform tools,
 * Anthropic server tools). Passed through to the same format, dropped with a warning otherwise.
 */
export interface ProviderTool {
  kind: "provider";
  format: WireFormat;
  /** The tool definition exactly as the client sent it. */
  raw: Record<string, unknown>;
  name?: string;
}

/** A tool the request declares: a function tool every format can express, or a provider-specific one. */
export type HubTool = FunctionTool | ProviderTool;

/**
 * What the model may do with tools (REFERENCE §5.6). `allowed`: only the named function tools, the
 * rest of `tools` staying declared (OpenAI's `allowed_tools` choice, which keeps the prompt cache:
 * Chat `{type: "allowed_tools", allowed_tools: {mode, tools: [{type: "function", function: {name}}]}}`,
 * Responses `{type: "allowed_tools", mode, tools: [{type: "function", name}]}`); `mode` `auto` lets the
 * model answer without a call, `required` makes it call one of them.
 */
export type ToolChoice =
  | { type: "auto" }
  | { type: "required" }
  | { type: "none" }
  | { type: "tool"; name: string }
  | { type: "allowed"; mode: "auto" | "required"; names: string[] };

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/** Reasoning effort levels, the union of what the formats accept. */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** Reasoning controls. Any subset may be present; builders map them per REFERENCE §5.9. */
export interface ReasoningConfig {
  /** false when the client explicitly disabled reasoning. */
  enabled?: boolean;
  effort?: ReasoningEffort;
  /** Thinking budget in tokens (Anthropic `budget_tokens`, Gemini `thinkingBudget`). */
  budgetTokens?: number;
  /** Anthropic `thinking.type: "adaptive"`. */
  adaptive?: boolean;
  /** Responses `reasoning.summary` ("auto" | "concise" | "detailed"). */
  summary?: string;
  /** Anthropic `thinking.display` ("summarized" | "omitted"). */
  display?: string;
  /** Gemini `includeThoughts`. */
  includeThoughts?: boolean;
}

/** Structured output request (Chat `response_format`, Responses `text.format`, Gemini mime + schema). */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name?: string; schema: Record<string, unknown>; strict?: boolean };

/**
 * The canonical request. Built by a client format's `parseRequest` and turned into a provider body by
 * a provider format's `buildRequest`.
 */
export interface HubRequest {
  /** The model name as the client sent it (resolution replaces it with the upstream model). */
  model: string;
  /** Top-level system prompt blocks (Anthropic `system`, Responses `instructions`, Gemini `systemInstruction`). */
  system: TextPart[];
  messages: HubMessage[];
  tools: HubTool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** Output token limit, in tokens, whatever the source field was called. */
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  reasoning?: ReasoningConfig;
  responseFormat?: ResponseFormat;
  /** Whether the client asked for a stream. */
  stream: boolean;
  /** Chat `stream_options.include_usage` as the client sent it. */
  includeUsage?: boolean;
  /** End-user id (Anthropic `metadata.user_id`, OpenAI `user` / `safety_identifier`). */
  user?: string;
  /** OpenAI `prompt_cache_key`. */
  promptCacheKey?: string;
  /** Responses `store`. */
  store?: boolean;
  /** Responses `previous_response_id` (only a Responses provider can honour it). */
  previousResponseId?: string;
  /**
   * Types of the client's input items the hub has no slot for (Responses `item_reference`,
   * `web_search_call`, a type this code does not know; a Gemini part of a kind the parser does not read,
   * as `<member> part`), each once, in first-seen order: not carried, so whatever is built from the hub
   * says so in a warning (SPEC F-2).
   */
  droppedItemTypes?: string[];
  /**
   * Turns of the client's conversation its parser left out for holding nothing it could carry (a
   * Gemini content whose parts are all empty texts, or no parts): not in `messages`, so whatever is
   * built from the hub says so in a `dropped_empty_message` warning (SPEC F-2), as for the empty turns
   * that are in `messages` (no builder sends those either). Absent: none.
   */
  droppedEmptyTurns?: number;
  /**
   * Turns in `messages` left with no part because every part the client wrote was of a type named in
   * `droppedItemTypes` (an Anthropic message of server-tool blocks only): not empty as the client sent
   * them, so not counted in the `dropped_empty_message` warning (the `dropped_input_item` one says why).
   */
  emptiedTurns?: number;
  /**
   * A reasoning effort the client asked for that is none of the hub's levels ({@link ReasoningEffort}:
   * a typo such as `"hihg"`, a capital, a level of one provider only): its field as the client wrote it
   * (Chat `reasoning_effort`, Responses `reasoning.effort`) and its value. Not carried (the request has
   * no effort): whatever is built from the hub says so in a `dropped_reasoning_effort` warning (SPEC
   * F-2), naming the value and the levels (pipeline/translate.ts). Absent: none, or a known level.
   */
  droppedEffort?: { field: string; value: unknown };
  /** Responses `include` list. */
  include?: string[];
  /** How long the answer should be (OpenAI Chat `verbosity`, Responses `text.verbosity`). */
  verbosity?: "low" | "medium" | "high";
  /** Number of choices (Chat `n`, Gemini `candidateCount`). */
  n?: number;
  /**
   * Whether the reply should carry the log probability of each output token (Chat `logprobs`,
   * Responses `include: ["message.output_text.logprobs"]`, Gemini `generationConfig.responseLogprobs`).
   */
  logprobs?: boolean;
  /**
   * How many most likely tokens to return at each position, 0–20 (Chat and Responses `top_logprobs`,
   * Gemini `generationConfig.logprobs`).
   */
  topLogprobs?: number;
  /**
   * The client's own format and its fields the hub has no slot for, kept so the same format can emit
   * them again and other formats can warn about dropping them. Keys are top-level field names.
   */
  source: { format: WireFormat; extra: Record<string, unknown> };
}

// ---------------------------------------------------------------------------------------------
// Response and usage
// ---------------------------------------------------------------------------------------------

/**
 * Why generation stopped, by meaning (REFERENCE §5.1). Each format maps these to its own vocabulary.
 * `other` covers provider-specific ends with no better match (Gemini MALFORMED_FUNCTION_CALL, …).
 */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn" | "context_window_exceeded" | "other";

/**
 * Token usage in tokens (REFERENCE §5.10). Every field is optional: absent means the provider did not
 * say. `inputTokens` EXCLUDES cache reads and writes (Anthropic convention); total input is
 * `inputTokens + cacheReadTokens + cacheWriteTokens`. `outputTokens` INCLUDES reasoning tokens.
 */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /**
   * Of `cacheWriteTokens`, those written with a one-hour lifetime (Anthropic
   * `usage.cache_creation.ephemeral_1h_input_tokens`), which cost more than five-minute writes (SPEC 9.5).
   * Present (0 included) only when the provider gave that breakdown; an Anthropic client then gets it back.
   */
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
  /** Server-side web searches billed per search (Anthropic `server_tool_use.web_search_requests`, Responses `web_search_call` items; SPEC 9.5, src/pricing/prices.ts). */
  webSearches?: number;
}

/** A complete (non-streamed, or accumulated) assistant reply. */
export interface HubResponse {
  /** Provider's response/message id when it gave one. */
  id?: string;
  model?: string;
  /** The assistant's content parts in output order. */
  content: HubPart[];
  /** null when the provider never said why it stopped (only possible for a failed reply). */
  stopReason: StopReason | null;
  /** The custom stop sequence that matched, when the provider said. */
  stopSequence?: string | null;
  usage: Usage;
  /** The provider's own stop vocabulary, kept for traces ("STOP", "length", …). */
  rawStopReason?: string;
  /** The provider's words on why it stopped: Anthropic `stop_details.explanation` of a `refusal` ({@link HubEvent} `finish`). */
  stopExplanation?: string;
  /**
   * What the provider's reply held that the hub has no slot for and the decoder left out, one name per
   * kind (`inlineData part`, `server_tool_use block`, `image_generation_call item`, `audio`): a reply
   * written from the hub says so in a warning (SPEC F-2: dropped explicitly, never silently).
   */
  dropped?: string[];
}

/** Adds `name` to `resp.dropped` once (see {@link HubResponse.dropped}). */
export function noteDropped(resp: HubResponse, name: string): void {
  const list = (resp.dropped ??= []);
  if (!list.includes(name)) list.push(name);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * Kinds of error, by meaning (REFERENCE §5.2). Each format maps them to its own error type/code and
 * HTTP status.
 */
export type ErrorKind =
  | "invalid_request"
  | "context_length_exceeded"
  | "request_too_large"
  | "authentication"
  | "permission"
  | "not_found"
  | "model_not_found"
  | "billing"
  | "quota_exhausted"
  | "rate_limit"
  | "overloaded"
  | "timeout"
  | "api_error";

/** A format-neutral error. `status` is the HTTP status to answer with (before commit). */
export interface HubError {
  kind: ErrorKind;
  message: string;
  status: number;
  /** Provider or gateway error code (`unsupported_parameter`, `insufficient_quota`, …). */
  code?: string;
  /** The offending parameter, when known. */
  param?: string;
  /** Seconds until a retry may succeed (becomes `Retry-After`). */
  retryAfterSeconds?: number;
  /**
   * Set when a usage limit is used up (a client key's budget, SPEC 9.6): when it resets, ms since the
   * epoch. The Responses format writes the error as the Codex backend's `usage_limit_reached` with
   * `resets_at` (formats/openai-responses/errors.ts), the one 429 Codex reports as such.
   */
  usageLimitResetsAt?: number;
  /**
   * What the route trace's attempt says instead of `message`, when the operator may read more than the
   * client (e.g. the upstream URL a wrong `base_url` led to, pipeline/classify.ts). Never sent to the client.
   */
  traceMessage?: string;
  /**
   * Set when a retry cannot help until an operator changes the gateway (no account configured, every
   * credential refused): answered with `x-should-retry: false` (obeyed by the OpenAI and Anthropic SDKs
   * and Claude Code), and to a Gemini client as Google's 400 `FAILED_PRECONDITION` (Gemini CLI retries
   * any 5xx: 10 tries over 218 s, observed; never a 400).
   */
  operatorOnly?: true;
}

/** Default HTTP status for each error kind (REFERENCE §5.2). */
export const ERROR_STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  context_length_exceeded: 400,
  request_too_large: 413,
  authentication: 401,
  permission: 403,
  not_found: 404,
  model_not_found: 404,
  billing: 402,
  quota_exhausted: 429,
  rate_limit: 429,
  overloaded: 529,
  timeout: 504,
  api_error: 500,
};

/**
 * The HTTP status an error goes out with to a client of `format`, before its stream starts and in
 * the status a stream's in-band error carries (Gemini's `error.code`): Anthropic's 529 (overloaded),
 * a status OpenAI's and Gemini's APIs never use, is 503 for every client but an Anthropic Messages
 * one (REFERENCE §5.2; the native lane keeps 529); a 5xx only an operator can end
 * ({@link HubError.operatorOnly}) is 400 for a Gemini client (Google's `FAILED_PRECONDITION`); any
 * other status as it is.
 */
export function clientErrorStatus(format: WireFormat, status: number, operatorOnly?: boolean): number {
  if (operatorOnly && format === "gemini" && status >= 500) return 400;
  return status === 529 && format !== "anthropic-messages" ? 503 : status;
}

/** Builds a {@link HubError} with the kind's default status. */
export function hubError(kind: ErrorKind, message: string, extra: Partial<HubError> = {}): HubError {
  return { kind, message, status: ERROR_STATUS[kind], ...extra };
}

/**
 * Thrown by format code for input it cannot accept (malformed request, unknown
 * `previous_response_id`, …). Carries a {@link HubError} so the server can answer in the client's format.
 */
export class FormatError extends Error {
  readonly error: HubError;
  constructor(error: HubError) {
    super(error.message);
    this.name = "FormatError";
    this.error = error;
  }
}

/**
 * A {@link FormatError} for a client body the format cannot accept: kind `invalid_request` (400),
 * with `param` (the dotted path of the offending field) when given.
 */
export function invalidRequest(message: string, param?: string): FormatError {
  return new FormatError(hubError("invalid_request", message, param ? { param } : {}));
}

// ---------------------------------------------------------------------------------------------
// Warnings
// ---------------------------------------------------------------------------------------------

/**
 * Something dropped or changed on the way (SPEC F-2, F-8). Collected per request, written to the route
 * trace and sent to the client as `X-Switchyard-Warning`.
 */
export interface Warning {
  /** Stable machine code, e.g. `dropped_field`, `stripped_signature`, `dropped_tool`. */
  code: string;
  /** Human-readable, no secrets, no prompt text. */
  message: string;
}

/**
 * Collects {@link Warning}s, each distinct one (same code and message) once, in first-seen order, so
 * a long history does not produce hundreds of identical lines. The one collector of the request
 * builders and of the pipeline (a request's warnings). Pass an existing array to add to it in place:
 * its entries count as already seen.
 */
export class Warnings {
  private readonly seen = new Set<string>();

  constructor(readonly list: Warning[] = []) {
    for (const w of list) this.seen.add(w.code + "\u0000" + w.message);
  }

  /** Adds a warning unless an equal one is already collected; returns whether it was added. */
  add(code: string, message: string): boolean {
    const key = code + "\u0000" + message;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    this.list.push({ code, message });
    return true;
  }

  /** Adds each warning of `warnings` as {@link add} does. */
  addAll(warnings: readonly Warning[]): void {
    for (const w of warnings) this.add(w.code, w.message);
  }
}

/**
 * The stop sequences a builder may send, in the client's order: an empty string is never sent (it
 * would match at once or be refused; Chat's `stop: ""` used to reach providers as `[""]`), and with
 * `nonBlank` neither is a whitespace-only one (Anthropic's Messages API answers 400 "stop_sequences:
 * each stop sequence must contain non-whitespace", BerriAI/litellm#3286). Each dropped kind is named in
 * one `dropped_field` warning. Undefined when nothing is left to send.
 */
export function sendableStops(stops: readonly string[] | undefined, w: Warnings, nonBlank = false): string[] | undefined {
  if (!stops || stops.length === 0) return undefined;
  let out: string[] | undefined;
  for (let i = 0; i < stops.length; i++) {
    const s = stops[i]!;
    const empty = s.length === 0;
    if (empty || (nonBlank && s.trim().length === 0)) {
      out ??= stops.slice(0, i);
      w.add("dropped_field", empty ? "An empty stop sequence was not sent." : "A stop sequence of only whitespace was not sent (Anthropic refuses it).");
    } else out?.push(s);
  }
  const kept = out ?? [...stops];
  return kept.length > 0 ? kept : undefined;
}

// ---------------------------------------------------------------------------------------------
// Stream events
// ---------------------------------------------------------------------------------------------

/** The kinds of content block a stream carries. */
export type BlockStart =
  | { type: "text"; signature?: Opaque; phase?: string; refusal?: boolean }
  | { type: "thinking"; itemId?: string; raw?: boolean }
  | { type: "redacted_thinking"; data: Opaque }
  | { type: "tool_call"; id: string; name: string; itemId?: string; signature?: Opaque; namespace?: string };

/** An increment to the open block. */
export type BlockDelta =
  /** Text; `logprobs`: its tokens' log probabilities when the provider sent them (absent otherwise, never empty). */
  | { type: "text"; text: string; logprobs?: TokenLogprob[] }
  | { type: "thinking"; text: string }
  /** A new reasoning summary part starts (Responses `summary_index`); text deltas follow. */
  | { type: "thinking_part" }
  /** Replaces the block's opaque state (Anthropic `signature_delta`, Responses `encrypted_content`, Gemini thoughtSignature). */
  | { type: "signature"; signature: Opaque }
  /** A fragment of the tool call's JSON arguments. Fragments concatenate to the arguments text. */
  | { type: "tool_args"; json: string };

/**
 * Hub stream events. A provider decoder produces them from provider bytes; a client encoder turns them
 * into client bytes.
 *
 * Decoders may produce loosely ordered events (a block opened twice, tool-call blocks interleaved,
 * `message_start` missing, empty deltas). `normalizeEvents()` (formats/normalize.ts) turns any such
 * sequence into the CANONICAL form that every encoder may rely on:
 *
 *   message_start  (block_start block_delta* block_stop)*  [finish]  usage*  [error]
 *
 * - exactly one `message_start`, first;
 * - block `index` counts from 0 with no gaps; one block open at a time (a later parallel tool call is
 *   buffered until the earlier block closes); every started block is stopped before `finish`;
 * - no empty text/thinking/tool_args deltas; no block opened for nothing;
 * - `finish.reason` is `tool_use` whenever a tool-call block was emitted (REFERENCE §5.1);
 * - `usage` events carry cumulative snapshots: a later field value replaces an earlier one;
 * - `error` is terminal: nothing follows it.
 *
 * The end of the event stream (the encoder's `end()`) means the provider stream ended. An
 * encoder that reaches the end with a `finish` but no closing frames adds the closing frames; one that
 * reaches it without a `finish` emits the format's in-band error (SPEC 6.4): a cut-off reply never reads
 * as a finished one.
 */
export type HubEvent =
  | { type: "message_start"; id?: string; model?: string; usage?: Usage }
  | { type: "block_start"; index: number; block: BlockStart }
  | { type: "block_delta"; index: number; delta: BlockDelta }
  | { type: "block_stop"; index: number }
  | { type: "usage"; usage: Usage }
  /** `explanation`: the provider's words on why (Anthropic `stop_details.explanation`, a refusal's). */
  | { type: "finish"; reason: StopReason; stopSequence?: string | null; raw?: string; explanation?: string }
  | { type: "error"; error: HubError };

/** Merges a usage snapshot into an accumulator: later defined values replace earlier ones. */
export function mergeUsage(into: Usage, next: Usage | undefined): Usage {
  if (!next) return into;
  if (next.inputTokens !== undefined) into.inputTokens = next.inputTokens;
  if (next.outputTokens !== undefined) into.outputTokens = next.outputTokens;
  if (next.cacheReadTokens !== undefined) into.cacheReadTokens = next.cacheReadTokens;
  if (next.cacheWriteTokens !== undefined) into.cacheWriteTokens = next.cacheWriteTokens;
  if (next.cacheWrite1hTokens !== undefined) into.cacheWrite1hTokens = next.cacheWrite1hTokens;
  if (next.reasoningTokens !== undefined) into.reasoningTokens = next.reasoningTokens;
  if (next.webSearches !== undefined) into.webSearches = next.webSearches;
  return into;
}
