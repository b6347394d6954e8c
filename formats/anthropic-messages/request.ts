/**
 * Anthropic Messages requests ↔ hub (REFERENCE §1.1, §5.4–§5.9, §5.11, §5.12, §7.5).
 *
 * - {@link parseRequest}: a client body → {@link HubRequest}.
 * - {@link buildRequest}: a {@link HubRequest} → a provider body for kinds `anthropic`, `claude-code`
 *   and `anthropic-compatible`, with a {@link Warning} for everything dropped or changed.
 * - {@link tidyRequest}: an Anthropic client body for an `anthropic-compatible` third party, tidied
 *   without a hub round trip (SPEC F-3); also the path of a native body to `claude-code` that lacks
 *   Claude Code's identity line ({@link hasClaudeCodeIdentity}).
 */
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import {
  FormatError,
  hubError,
  type CacheControl,
  type DocumentPart,
  type FunctionTool,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ImagePart,
  type MediaSource,
  type ProviderFamily,
  type ReasoningConfig,
  type ReasoningEffort,
  type TextPart,
  type ToolCallPart,
  type ToolChoice,
  type ToolResultPart,
  Warnings,
} from "../hub.ts";
import { readCacheControl, readOpaque, sanitizeToolId, writeCacheControl } from "./mapping.ts";
import { check, RequestSchema } from "./schema.ts";

type Json = Record<string, unknown>;

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
  messages?: Record<string, Json>;
  tools?: Record<string, Json>;
}

const TOP_LEVEL_KNOWN = new Set([
  "model",
  "messages",
  "max_tokens",
  "system",
  "tools",
  "tool_choice",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "thinking",
  "output_config",
  "metadata",
  "stream",
]);
const EFFORTS = new Set<string>(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);
const FUNCTION_TOOL_KNOWN = new Set(["name", "type", "description", "input_schema", "cache_control", "strict", "defer_loading"]);

function invalid(message: string, param?: string): FormatError {
  return new FormatError(hubError("invalid_request", message, param ? { param } : {}));
}

function isObj(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Fields of `o` whose keys are not in `known` and whose value is not null/undefined. */
function leftover(o: Json, known: Set<string>): Json | undefined {
  let out: Json | undefined;
  for (const k in o) {
    if (known.has(k)) continue;
    const val = o[k];
    if (val === undefined || val === null) continue;
    (out ??= {})[k] = val;
  }
  return out;
}

// =============================================================================================
// parse
// =============================================================================================

function parseSource(src: unknown, path: string, forDocument: boolean): MediaSource {
  if (!isObj(src)) throw invalid(`${path}: source must be an object`, path);
  switch (src.type) {
    case "base64":
      if (typeof src.data !== "string") throw invalid(`${path}.data: expected a string`, `${path}.data`);
      return {
        kind: "base64",
        mediaType: typeof src.media_type === "string" ? src.media_type : forDocument ? "application/pdf" : "image/png",
        data: src.data,
      };
    case "url":
      if (typeof src.url !== "string") throw invalid(`${path}.url: expected a string`, `${path}.url`);
      return { kind: "url", url: src.url };
    case "file":
      if (typeof src.file_id !== "string") throw invalid(`${path}.file_id: expected a string`, `${path}.file_id`);
      return { kind: "file_id", fileId: src.file_id };
    case "text":
      if (forDocument && typeof src.data === "string") {
        return { kind: "text", mediaType: typeof src.media_type === "string" ? src.media_type : "text/plain", data: src.data };
      }
      break;
  }
  throw invalid(`${path}.type: unsupported source type ${JSON.stringify(src.type)}`, `${path}.type`);
}

function withCache<T extends { cacheControl?: CacheControl }>(part: T, b: Json): T {
  const cc = readCacheControl(b.cache_control);
  if (cc) part.cacheControl = cc;
  return part;
}

function parseText(b: Json, path: string): TextPart {
  if (typeof b.text !== "string") throw invalid(`${path}.text: expected a string`, `${path}.text`);
  return withCache<TextPart>({ type: "text", text: b.text }, b);
}

function parseImage(b: Json, path: string): ImagePart {
  return withCache<ImagePart>({ type: "image", source: parseSource(b.source, `${path}.source`, false) }, b);
}

function parseDocument(b: Json, path: string): DocumentPart | null {
  if (isObj(b.source) && b.source.type === "content") return null; // custom content documents: no hub slot
  const part: DocumentPart = { type: "document", source: parseSource(b.source, `${path}.source`, true) };
  if (typeof b.title === "string") part.title = b.title;
  return withCache(part, b);
}

/** One block of a user/assistant/system message → a hub part, or null for a block the hub cannot hold. */
function parseBlock(b: Json, path: string): HubPart | null {
  switch (b.type) {
    case "text":
      return parseText(b, path);
    case "image":
      return parseImage(b, path);
    case "document":
      return parseDocument(b, path);
    case "tool_use": {
      if (typeof b.id !== "string") throw invalid(`${path}.id: expected a string`, `${path}.id`);
      if (typeof b.name !== "string") throw invalid(`${path}.name: expected a string`, `${path}.name`);
      const input = b.input === undefined || b.input === null ? {} : b.input;
      return withCache<ToolCallPart>({ type: "tool_call", id: b.id, name: b.name, arguments: JSON.stringify(input) }, b);
    }
    case "tool_result": {
      if (typeof b.tool_use_id !== "string") throw invalid(`${path}.tool_use_id: expected a string`, `${path}.tool_use_id`);
      const content: ToolResultPart["content"] = [];
      if (typeof b.content === "string") {
        if (b.content.length > 0) content.push({ type: "text", text: b.content });
      } else if (Array.isArray(b.content)) {
        b.content.forEach((c: unknown, j: number) => {
          if (!isObj(c)) return;
          const p = `${path}.content.${j}`;
          if (c.type === "text") content.push(parseText(c, p));
          else if (c.type === "image") content.push(parseImage(c, p));
          else if (c.type === "document") {
            const d = parseDocument(c, p);
            if (d) content.push(d);
          } else if (typeof c.text === "string") {
            content.push({ type: "text", text: c.text }); // e.g. search_result-like blocks with text
          }
        });
      }
      const part: ToolResultPart = { type: "tool_result", callId: b.tool_use_id, content };
      if (typeof b.is_error === "boolean") part.isError = b.is_error;
      return withCache(part, b);
    }
    case "thinking": {
      const text = typeof b.thinking === "string" ? b.thinking : "";
      return typeof b.signature === "string" && b.signature.length > 0
        ? { type: "thinking", text, signature: readOpaque(b.signature) }
        : { type: "thinking", text };
    }
    case "redacted_thinking":
      if (typeof b.data !== "string") throw invalid(`${path}.data: expected a string`, `${path}.data`);
      return { type: "redacted_thinking", data: readOpaque(b.data) };
    default:
      return null; // server_tool_use, web_search_tool_result, container_upload, …: no hub slot
  }
}

function parseContent(content: string | Json[], path: string): HubPart[] {
  if (typeof content === "string") return content.length > 0 ? [{ type: "text", text: content }] : [];
  const out: HubPart[] = [];
  content.forEach((b, i) => {
    const p = parseBlock(b, `${path}.${i}`);
    if (p) out.push(p);
  });
  return out;
}

function parseTool(t: Json, i: number, fields: ItemFields): HubTool {
  const type = t.type;
  if (type === undefined || type === null || type === "custom") {
    if (typeof t.name !== "string") throw invalid(`tools.${i}.name: expected a string`, `tools.${i}.name`);
    const tool: FunctionTool = {
      kind: "function",
      name: t.name,
      parameters: isObj(t.input_schema) ? t.input_schema : { type: "object", properties: {} },
    };
    if (typeof t.description === "string") tool.description = t.description;
    if (typeof t.strict === "boolean") tool.strict = t.strict;
    if (typeof t.defer_loading === "boolean") tool.deferLoading = t.defer_loading;
    const cc = readCacheControl(t.cache_control);
    if (cc) tool.cacheControl = cc;
    const rest = leftover(t, FUNCTION_TOOL_KNOWN);
    if (rest) (fields.tools ??= {})[t.name] = rest;
    return tool;
  }
  return { kind: "provider", format: "anthropic-messages", raw: t, name: typeof t.name === "string" ? t.name : undefined };
}

/** Anthropic `tool_choice` → hub; undefined for a type the hub has no slot for (kept in `source.extra`). */
function parseToolChoice(tc: Json): ToolChoice | undefined {
  switch (tc.type) {
    case "auto":
      return { type: "auto" };
    case "any":
      return { type: "required" };
    case "none":
      return { type: "none" };
    case "tool":
      if (typeof tc.name !== "string") throw invalid("tool_choice.name: expected a string", "tool_choice.name");
      return { type: "tool", name: tc.name };
    default:
      return undefined;
  }
}

/**
 * Anthropic Messages client body → {@link HubRequest}.
 *
 * Mapping: `system` (string or text blocks, `cache_control` per block) → `hub.system`; `messages`
 * (`user`, `assistant`, and Claude Code's `role: "system"` entries kept in place as hub `system`
 * turns); blocks text/image/document/tool_use/tool_result/thinking/redacted_thinking; server-tool
 * blocks have no hub slot and are left out. Signatures: an untagged value is Anthropic's, a
 * `sy|<family>|…` value (mapping.ts) gets its family back. `tools` (function tools; server tools as
 * provider tools), `tool_choice` (+ `disable_parallel_tool_use` → `parallelToolCalls: false`),
 * `max_tokens`, sampling, `stop_sequences`, `thinking` (enabled → budget, adaptive, disabled; `display`),
 * `output_config.effort`/`.format`, `metadata.user_id` → `user`, `stream`. Any other top-level field (and
 * the unknown rest of `output_config` / `metadata`) goes to `source.extra`; unknown per-message and
 * per-tool fields to `source.extra[ITEM_FIELDS_KEY]`.
 *
 * A `thinking` or `tool_choice` of a type this code does not know (a newer API) is kept whole in
 * `source.extra`, not guessed at.
 *
 * @throws FormatError (invalid_request, 400, `param` = dotted path) when the body is not a Messages
 *   request: missing `model`/`messages`, a block missing a required field, an unknown role.
 */
export function parseRequest(body: unknown): HubRequest {
  const r = check(RequestSchema, body);
  if (!r.ok) throw invalid(r.message, r.path);
  const b = r.value as Json & typeof r.value;
  const extra: Json = {};
  for (const k in b) {
    if (!TOP_LEVEL_KNOWN.has(k) && b[k] !== undefined && b[k] !== null) extra[k] = b[k];
  }
  const fields: ItemFields = {};

  const system: TextPart[] = [];
  if (typeof b.system === "string") {
    if (b.system.length > 0) system.push({ type: "text", text: b.system });
  } else if (Array.isArray(b.system)) {
    b.system.forEach((blk, i) => {
      if (blk.type === "text") system.push(parseText(blk, `system.${i}`));
    });
  }

  const messages: HubMessage[] = b.messages.map((m, i) => {
    const role = m.role;
    if (role !== "user" && role !== "assistant" && role !== "system" && role !== "developer") {
      throw invalid(`messages.${i}.role: unknown role ${JSON.stringify(role)}`, `messages.${i}.role`);
    }
    const rest = leftover(m, new Set(["role", "content"]));
    if (rest) (fields.messages ??= {})[String(i)] = rest;
    return { role, content: parseContent(m.content as string | Json[], `messages.${i}.content`) };
  });

  const tools: HubTool[] = (b.tools ?? []).map((t, i) => parseTool(t as Json, i, fields));

  const hub: HubRequest = {
    model: b.model,
    system,
    messages,
    tools,
    stream: b.stream ?? false,
    source: { format: "anthropic-messages", extra },
  };
  if (b.tool_choice) {
    const tc = parseToolChoice(b.tool_choice);
    if (tc) hub.toolChoice = tc;
    else extra.tool_choice = b.tool_choice;
    if (typeof b.tool_choice.disable_parallel_tool_use === "boolean") hub.parallelToolCalls = !b.tool_choice.disable_parallel_tool_use;
  }
  if (typeof b.max_tokens === "number") hub.maxOutputTokens = b.max_tokens;
  if (typeof b.temperature === "number") hub.temperature = b.temperature;
  if (typeof b.top_p === "number") hub.topP = b.top_p;
  if (typeof b.top_k === "number") hub.topK = b.top_k;
  if (b.stop_sequences && b.stop_sequences.length > 0) hub.stopSequences = [...b.stop_sequences];

  const reasoning: ReasoningConfig = {};
  let hasReasoning = false;
  const thinkingKnown = b.thinking && ["enabled", "adaptive", "disabled"].includes(b.thinking.type);
  if (b.thinking && !thinkingKnown) extra.thinking = b.thinking; // a newer type: kept whole, not guessed
  if (b.thinking && thinkingKnown) {
    hasReasoning = true;
    switch (b.thinking.type) {
      case "enabled":
        reasoning.enabled = true;
        if (typeof b.thinking.budget_tokens === "number") reasoning.budgetTokens = b.thinking.budget_tokens;
        break;
      case "adaptive":
        reasoning.enabled = true;
        reasoning.adaptive = true;
        break;
      case "disabled":
        reasoning.enabled = false;
        break;
    }
    if (typeof b.thinking.display === "string") reasoning.display = b.thinking.display;
    const rest = leftover(b.thinking, new Set(["type", "budget_tokens", "display"]));
    if (rest) extra.thinking = rest;
  }
  if (b.output_config) {
    const oc = b.output_config as Json;
    const known = new Set<string>();
    if (typeof oc.effort === "string" && EFFORTS.has(oc.effort)) {
      reasoning.effort = oc.effort as ReasoningEffort;
      hasReasoning = true;
      known.add("effort");
    }
    const fmt = oc.format;
    if (isObj(fmt) && fmt.type === "json_schema" && isObj(fmt.schema)) {
      hub.responseFormat = { type: "json_schema", schema: fmt.schema };
      known.add("format");
    }
    const rest = leftover(oc, known);
    if (rest) extra.output_config = rest;
  }
  if (hasReasoning) hub.reasoning = reasoning;
  if (b.metadata) {
    if (typeof b.metadata.user_id === "string") hub.user = b.metadata.user_id;
    const rest = leftover(b.metadata as Json, new Set(["user_id"]));
    if (rest) extra.metadata = rest;
  }
  if (fields.messages || fields.tools) extra[ITEM_FIELDS_KEY] = fields;
  return hub;
}

// =============================================================================================
// build
// =============================================================================================

interface OutMessage {
  role: "user" | "assistant" | "system";
  content: Json[];
  /** Same-format per-message fields to re-emit. */
  fields?: Json;
  /** Thinking or redacted-thinking blocks were dropped from this turn (foreign or unsigned). */
  droppedThinking?: boolean;
}

function cacheField(block: Json, cc: CacheControl | undefined): Json {
  if (cc) block.cache_control = writeCacheControl(cc);
  return block;
}

function sourceJson(s: MediaSource, forDocument: boolean): Json | null {
  switch (s.kind) {
    case "base64":
      return { type: "base64", media_type: s.mediaType, data: s.data };
    case "url":
      return { type: "url", url: s.url };
    case "file_id":
      return { type: "file", file_id: s.fileId };
    case "text":
      return forDocument ? { type: "text", media_type: s.mediaType || "text/plain", data: s.data } : null;
  }
}

function textBlock(p: TextPart): Json | null {
  if (p.text.length === 0) return null; // "text content blocks must be non-empty" (REFERENCE §1.1)
  return cacheField({ type: "text", text: p.text }, p.cacheControl);
}

function mediaBlock(p: ImagePart | DocumentPart, w: Warnings): Json | null {
  const isDoc = p.type === "document";
  const src = sourceJson(p.source, isDoc);
  if (!src) {
    w.add("dropped_content", `A ${p.type} with a ${p.source.kind} source cannot be sent to Anthropic and was dropped`);
    return null;
  }
  const block: Json = { type: p.type, source: src };
  if (isDoc) {
    const title = p.title ?? p.filename;
    if (title) block.title = title;
  }
  return cacheField(block, p.cacheControl);
}

function toolInput(args: string, w: Warnings): Json {
  if (args.trim().length === 0) return {};
  try {
    const v = JSON.parse(args);
    if (isObj(v)) return v;
    w.add("invalid_tool_arguments", "Tool-call arguments that are not a JSON object were wrapped as {\"value\": …}");
    return { value: v };
  } catch {
    w.add("invalid_tool_arguments", "Tool-call arguments that are not valid JSON were replaced by {}");
    return {};
  }
}

function toolResultBlock(p: ToolResultPart, w: Warnings): Json {
  const block: Json = { type: "tool_result", tool_use_id: sanitizeToolId(p.callId) };
  const parts: Json[] = [];
  for (const c of p.content) {
    const b = c.type === "text" ? textBlock(c) : mediaBlock(c, w);
    if (b) parts.push(b);
  }
  if (parts.length === 1 && parts[0].type === "text" && parts[0].cache_control === undefined) block.content = parts[0].text;
  else if (parts.length > 0) block.content = parts;
  if (p.isError !== undefined) block.is_error = p.isError;
  return cacheField(block, p.cacheControl);
}

/** Converts one hub turn's parts into Anthropic blocks for a user/assistant/system message. */
function convertParts(m: HubMessage, family: ProviderFamily, w: Warnings, out: OutMessage): void {
  const assistant = m.role === "assistant";
  for (const p of m.content) {
    let b: Json | null = null;
    switch (p.type) {
      case "text":
        if (p.signature) w.add("dropped_opaque_state", "A provider signature on a text part has no Anthropic slot and was dropped");
        b = textBlock(p);
        break;
      case "image":
      case "document":
        if (assistant) {
          w.add("dropped_content", `An assistant ${p.type} cannot be sent to Anthropic and was dropped`);
        } else {
          b = mediaBlock(p, w);
        }
        break;
      case "audio":
      case "video":
        w.add("dropped_content", `${p.type} input is not supported by Anthropic and was dropped`);
        break;
      case "tool_call":
        if (!assistant) {
          w.add("dropped_content", "A tool call outside an assistant turn was dropped");
          break;
        }
        if (p.signature && p.signature.family !== family) {
          w.add("dropped_opaque_state", "A provider signature on a tool call has no Anthropic slot and was dropped");
        }
        b = cacheField({ type: "tool_use", id: sanitizeToolId(p.id), name: p.name, input: toolInput(p.arguments, w) }, p.cacheControl);
        break;
      case "tool_result":
        if (assistant) {
          w.add("dropped_content", "A tool result inside an assistant turn was dropped");
          break;
        }
        b = toolResultBlock(p, w);
        break;
      case "thinking":
        if (!assistant) break;
        if (p.signature && p.signature.family === family && p.signature.value.length > 0) {
          b = { type: "thinking", thinking: p.text, signature: p.signature.value };
        } else {
          out.droppedThinking = true;
          w.add("dropped_thinking", "Thinking without a signature from this provider cannot be replayed to it and was dropped");
        }
        break;
      case "redacted_thinking":
        if (!assistant) break;
        if (p.data.family === family) {
          b = { type: "redacted_thinking", data: p.data.value };
        } else {
          out.droppedThinking = true;
          w.add("dropped_thinking", "Redacted thinking from another provider cannot be replayed and was dropped");
        }
        break;
    }
    if (b) out.content.push(b);
  }
}

/** Stable partition: `tool_result` blocks first in a user turn (REFERENCE §1.1, §5.7). */
function resultsFirst(content: Json[]): Json[] {
  let seenOther = false;
  let needs = false;
  for (const b of content) {
    if (b.type === "tool_result") {
      if (seenOther) {
        needs = true;
        break;
      }
    } else seenOther = true;
  }
  if (!needs) return content;
  return [...content.filter((b) => b.type === "tool_result"), ...content.filter((b) => b.type !== "tool_result")];
}

/**
 * Drops empty turns, merges consecutive user (or assistant) turns — N consecutive tool-result turns
 * become one user message (REFERENCE §5.7) — and puts tool results first in every user turn.
 * `system` turns (kept only for Anthropic's own API) are never merged.
 */
function mergeTurns(list: OutMessage[]): OutMessage[] {
  const out: OutMessage[] = [];
  for (const m of list) {
    if (m.content.length === 0) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === m.role && m.role !== "system") {
      prev.content.push(...m.content);
      if (m.droppedThinking) prev.droppedThinking = true;
      if (m.fields && !prev.fields) prev.fields = m.fields;
    } else {
      out.push({ ...m, content: [...m.content] });
    }
  }
  for (const m of out) if (m.role === "user") m.content = resultsFirst(m.content);
  return out;
}

type ThinkingPlan = { kind: "none" } | { kind: "disabled" } | { kind: "adaptive" } | { kind: "budget"; budget: number };

function planThinking(r: ReasoningConfig | undefined, same: boolean): ThinkingPlan {
  if (!r) return { kind: "none" };
  if (r.enabled === false || r.effort === "none") return same && r.enabled === false ? { kind: "disabled" } : { kind: "none" };
  if (r.adaptive) return { kind: "adaptive" };
  if (r.budgetTokens !== undefined) {
    if (r.budgetTokens === 0) return { kind: "none" };
    if (r.budgetTokens < 0) return { kind: "budget", budget: EFFORT_BUDGET.medium }; // Gemini -1 = dynamic
    return { kind: "budget", budget: Math.max(MIN_THINKING_BUDGET, Math.floor(r.budgetTokens)) };
  }
  if (r.effort) return { kind: "budget", budget: EFFORT_BUDGET[r.effort] };
  if (r.enabled === true) return { kind: "budget", budget: EFFORT_BUDGET.medium };
  return { kind: "none" }; // summary / includeThoughts alone do not ask for thinking
}

/**
 * Whether the last assistant turn that calls tools is fit for budgeted thinking: the API wants that
 * turn to start with its signed thinking (REFERENCE §1.1: "Expected thinking or redacted_thinking, but
 * found tool_use"). Unfit when thinking was dropped from it here, or when it does not start with a
 * thinking block and either the request came from another format (its history has no Anthropic
 * thinking, case B27) or, for Anthropic's own API, its tool ids were not minted by Anthropic (`toolu…`:
 * the turn came from another provider and its thinking was stripped before building).
 * An Anthropic client's own history (Anthropic ids, nothing dropped) is left as the client sent it.
 */
function lastToolTurnFit(messages: OutMessage[], same: boolean, family: ProviderFamily): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    const uses = m.content.filter((b) => b.type === "tool_use");
    if (uses.length === 0) continue;
    const first = m.content[0]?.type;
    if (first === "thinking" || first === "redacted_thinking") return true;
    if (m.droppedThinking) return false;
    if (!same) return false;
    if (family === "anthropic" && !uses.every((u) => typeof u.id === "string" && u.id.startsWith("toolu"))) return false;
    return true;
  }
  return true;
}

function toolJson(t: FunctionTool, same: boolean, fields: ItemFields | undefined): Json {
  let schema = t.parameters;
  if (!isObj(schema) || Object.keys(schema).length === 0) schema = { type: "object", properties: {} };
  else if (schema.type === undefined) schema = { type: "object", ...schema };
  const out: Json = { name: t.name };
  if (t.description !== undefined && t.description !== null) out.description = t.description;
  out.input_schema = schema;
  if (same && t.strict !== undefined) out.strict = t.strict;
  if (t.deferLoading !== undefined) out.defer_loading = t.deferLoading;
  cacheField(out, t.cacheControl);
  const rest = same ? fields?.tools?.[t.name] : undefined;
  if (rest) for (const k in rest) if (!(k in out)) out[k] = rest[k];
  return out;
}

/**
 * {@link HubRequest} → Anthropic Messages body for kinds `anthropic`, `claude-code` and
 * `anthropic-compatible` (REFERENCE §1.1, §5.4–§5.12). Decisions, each dropped or changed value
 * reported as a {@link Warning}:
 * - `model` = target model; `max_tokens` (required) = hub limit, else `target.defaultMaxOutputTokens`,
 *   else {@link DEFAULT_MAX_TOKENS}.
 * - `system`: hub system blocks (non-empty, `cache_control` per block) then, in order, the text of
 *   every hub `system`/`developer` turn (hoisted, REFERENCE §5.4) — except that an Anthropic client's
 *   own `role: "system"` turns stay in place for Anthropic's API (`anthropic`, `claude-code`), which
 *   accepts them. Empty system → omitted (case B34).
 * - messages: no empty text blocks; consecutive same-role turns merged, tool results first (§5.7);
 *   tool ids sanitised deterministically (mapping.ts `sanitizeToolId`); arguments "" → `input: {}`;
 *   thinking/redacted thinking only when signed by `target.family` (never unsigned or foreign, F-8);
 *   audio/video dropped.
 * - tools: missing description omitted (never null), empty schema → `{type: object, properties: {}}`;
 *   provider tools of another format dropped. `tool_choice` only with tools; `parallelToolCalls:
 *   false` → `disable_parallel_tool_use: true` (on `{type: auto}` when no choice was given).
 * - thinking: adaptive / budget / effort (table {@link EFFORT_BUDGET}) / disabled. Budget ≥ 1024; when
 *   the budget is not below `max_tokens`, `max_tokens` is raised by the budget (never the answer
 *   shrunk, §5.8). Budgeted thinking is not sent with a forced tool choice (the choice wins) nor when
 *   the last tool turn lacks its signed thinking (case B27, {@link lastToolTurnFit}). An Anthropic
 *   client's own explicit budget is not raised against (interleaved thinking allows budget ≥
 *   max_tokens). With thinking, `temperature` (other than the default 1) and `top_k` are dropped and
 *   `top_p` below 0.95 too (case B28).
 * - `temperature` clamped to [0, 1]; `stop_sequences`; `metadata.user_id` ← `hub.user`;
 *   `output_config.effort` only for an Anthropic source; `output_config.format` from a JSON-schema
 *   response format.
 * - `source.extra` (and per-message/per-tool fields) re-emitted only when the source is Anthropic
 *   Messages; otherwise each key is reported dropped.
 * - kind `claude-code`: Claude Code's identity block first in `system` when missing
 *   ({@link withClaudeCodeIdentity}).
 *
 * @throws FormatError (invalid_request, param `previous_response_id`) when the hub carries a
 *   `previousResponseId`: the history lives at OpenAI and Anthropic cannot continue it (case B41).
 */
export function buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest {
  if (req.previousResponseId) {
    throw invalid(
      "previous_response_id cannot be used with this model: send the whole conversation instead",
      "previous_response_id",
    );
  }
  const w = new Warnings();
  const same = req.source.format === "anthropic-messages";
  const keepSystemTurns = same && target.kind !== "anthropic-compatible";
  const family = target.family;
  const extra = req.source.extra ?? {};
  const itemFields = same && isObj(extra[ITEM_FIELDS_KEY]) ? (extra[ITEM_FIELDS_KEY] as ItemFields) : undefined;

  // ---- system and messages
  const system: Json[] = [];
  for (const p of req.system) {
    const b = textBlock(p);
    if (b) system.push(b);
  }
  const turns: OutMessage[] = [];
  let conversationStarted = false;
  req.messages.forEach((m, i) => {
    const fields = itemFields?.messages?.[String(i)];
    if (m.role === "system" || m.role === "developer") {
      if (keepSystemTurns && m.role === "system") {
        const out: OutMessage = { role: "system", content: [], fields };
        convertParts(m, family, w, out);
        turns.push(out);
        return;
      }
      let hoisted = false;
      for (const p of m.content) {
        if (p.type === "text") {
          const b = textBlock(p);
          if (b) {
            system.push(b);
            hoisted = true;
          }
        } else {
          w.add("dropped_content", `Non-text content in a ${m.role} message cannot be sent to Anthropic and was dropped`);
        }
      }
      if (hoisted && conversationStarted) {
        w.add("hoisted_system_message", "A mid-conversation system message was moved into the top-level system prompt");
      }
      return;
    }
    conversationStarted = true;
    const out: OutMessage = { role: m.role, content: [], fields };
    convertParts(m, family, w, out);
    turns.push(out);
  });
  const messages = mergeTurns(turns);
  if (target.kind === "claude-code") withClaudeCodeIdentity(system);

  // ---- tools
  const tools: Json[] = [];
  for (const t of req.tools) {
    if (t.kind === "function") tools.push(toolJson(t, same, itemFields));
    else if (t.format === "anthropic-messages") tools.push(t.raw);
    else w.add("dropped_tool", `Tool ${JSON.stringify(t.name ?? t.raw.type ?? "?")} is specific to ${t.format} and was dropped`);
  }

  // ---- limits and thinking
  let maxTokens = req.maxOutputTokens ?? target.defaultMaxOutputTokens ?? DEFAULT_MAX_TOKENS;
  const forced = req.toolChoice?.type === "required" || req.toolChoice?.type === "tool";
  let plan = planThinking(req.reasoning, same);
  if ((plan.kind === "budget" || plan.kind === "adaptive") && forced && tools.length > 0) {
    w.add("dropped_thinking_config", "Thinking is incompatible with a forced tool choice; thinking was not enabled");
    plan = { kind: "none" };
  }
  if (plan.kind === "budget" && !lastToolTurnFit(messages, same, family)) {
    w.add("dropped_thinking_config", "The last tool-use turn has no thinking signed by this provider; thinking was not enabled");
    plan = { kind: "none" };
  }
  let thinking: Json | undefined;
  if (plan.kind === "budget") {
    // An Anthropic client's own budget is left as sent: with the interleaved-thinking beta (which
    // Claude Code sends) a budget may exceed max_tokens, and raising it could pass the model's limit.
    const clientsOwn = same && req.reasoning?.budgetTokens !== undefined;
    if (plan.budget >= maxTokens && !clientsOwn) maxTokens += plan.budget;
    thinking = { type: "enabled", budget_tokens: plan.budget };
  } else if (plan.kind === "adaptive") {
    thinking = { type: "adaptive" };
  } else if (plan.kind === "disabled") {
    thinking = { type: "disabled" };
  }
  if (thinking && plan.kind !== "disabled" && req.reasoning?.display) thinking.display = req.reasoning.display;
  const thinkingOn = plan.kind === "budget" || plan.kind === "adaptive";

  // ---- assemble
  const body: Json = { model: target.model, max_tokens: maxTokens };
  body.messages = messages.map((m) => {
    const o: Json = { role: m.role, content: m.content };
    if (m.fields) for (const k in m.fields) if (!(k in o)) o[k] = m.fields[k];
    return o;
  });
  if (system.length > 0) body.system = system;
  if (tools.length > 0) {
    body.tools = tools;
    let tc: Json | undefined;
    switch (req.toolChoice?.type) {
      case "auto":
        tc = { type: "auto" };
        break;
      case "required":
        tc = { type: "any" };
        break;
      case "none":
        tc = { type: "none" };
        break;
      case "tool":
        tc = { type: "tool", name: req.toolChoice.name };
        break;
    }
    if (req.parallelToolCalls === false && tc?.type !== "none") {
      tc ??= { type: "auto" };
      tc.disable_parallel_tool_use = true;
    } else if (req.parallelToolCalls === true && same && tc && tc.type !== "none") {
      tc.disable_parallel_tool_use = false;
    }
    if (tc) body.tool_choice = tc;
  } else if (req.toolChoice && req.toolChoice.type !== "none" && req.toolChoice.type !== "auto") {
    w.add("dropped_field", "tool_choice was dropped because the request has no tools");
  }
  if (thinking) body.thinking = thinking;

  if (req.temperature !== undefined) {
    if (thinkingOn && req.temperature !== 1) w.add("dropped_field", "temperature is not allowed with thinking and was dropped");
    else {
      const t = Math.min(1, Math.max(0, req.temperature));
      if (t !== req.temperature) w.add("clamped_field", `temperature ${req.temperature} was clamped to Anthropic's range 0–1`);
      body.temperature = t;
    }
  }
  if (req.topP !== undefined) {
    if (thinkingOn && req.topP < 0.95) w.add("dropped_field", "top_p below 0.95 is not allowed with thinking and was dropped");
    else body.top_p = req.topP;
  }
  if (req.topK !== undefined) {
    if (thinkingOn) w.add("dropped_field", "top_k is not allowed with thinking and was dropped");
    else body.top_k = req.topK;
  }
  if (req.stopSequences && req.stopSequences.length > 0) body.stop_sequences = [...req.stopSequences];

  const outputConfig: Json = {};
  if (same && req.reasoning?.effort) outputConfig.effort = req.reasoning.effort;
  if (req.responseFormat?.type === "json_schema") {
    outputConfig.format = { type: "json_schema", schema: req.responseFormat.schema };
  } else if (req.responseFormat?.type === "json_object") {
    w.add("dropped_field", "JSON mode without a schema has no Anthropic equivalent and was dropped");
  }
  if (same && isObj(extra.output_config)) {
    for (const k in extra.output_config) if (!(k in outputConfig)) outputConfig[k] = extra.output_config[k];
  }
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;

  const metadata: Json = {};
  if (req.user !== undefined) metadata.user_id = req.user;
  if (same && isObj(extra.metadata)) for (const k in extra.metadata) if (!(k in metadata)) metadata[k] = extra.metadata[k];
  if (Object.keys(metadata).length > 0) body.metadata = metadata;

  if (req.n !== undefined && req.n > 1) w.add("dropped_field", "Anthropic returns one choice; n > 1 was dropped");

  // ---- the client's own fields, for the same format only
  for (const k in extra) {
    if (k === ITEM_FIELDS_KEY || k === "output_config" || k === "metadata") continue;
    if (same) {
      if (k === "thinking") {
        // Either the unknown rest of a known thinking config, or a whole config of a newer type.
        if (isObj(body.thinking) && isObj(extra.thinking)) body.thinking = { ...extra.thinking, ...body.thinking };
        else if (!("thinking" in body)) body.thinking = extra.thinking;
        continue;
      }
      if (k === "tool_choice" && !body.tools) continue;
      if (!(k in body)) body[k] = extra[k];
    } else {
      w.add("dropped_field", `Field ${JSON.stringify(k)} has no Anthropic equivalent and was dropped`);
    }
  }
  body.stream = target.stream;
  return { body, warnings: w.list };
}

// =============================================================================================
// Claude Code identity (kind claude-code)
// =============================================================================================

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
function withClaudeCodeIdentity(system: Json[]): void {
  if (hasClaudeCodeIdentity(system)) return;
  const first = system[0];
  const afterBilling = isObj(first) && typeof first.text === "string" && first.text.startsWith(BILLING_HEADER);
  system.splice(afterBilling ? 1 : 0, 0, { type: "text", text: CLAUDE_CODE_IDENTITY });
}

// =============================================================================================
// tidy (anthropic-compatible, same format)
// =============================================================================================

function tidyBlocks(content: unknown, role: string, family: ProviderFamily, w: Warnings, state: { dropped: boolean }): Json[] {
  if (typeof content === "string") return content.length > 0 ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  const out: Json[] = [];
  for (const raw of content) {
    if (!isObj(raw)) continue;
    const b = raw;
    switch (b.type) {
      case "text":
        if (typeof b.text !== "string" || b.text.length === 0) {
          w.add("dropped_empty_text", "Empty text blocks were removed");
          continue;
        }
        out.push(b);
        continue;
      case "thinking":
      case "redacted_thinking": {
        if (role !== "assistant") continue;
        const value = b.type === "thinking" ? b.signature : b.data;
        const o = typeof value === "string" && value.length > 0 ? readOpaque(value) : undefined;
        if (!o || o.family !== family) {
          state.dropped = true;
          w.add("dropped_thinking", "Thinking not signed by this provider cannot be replayed to it and was dropped");
          continue;
        }
        out.push(b.type === "thinking" ? { ...b, signature: o.value } : { ...b, data: o.value });
        continue;
      }
      case "tool_use":
        out.push(typeof b.id === "string" ? { ...b, id: sanitizeToolId(b.id) } : b);
        continue;
      case "tool_result": {
        const t: Json = typeof b.tool_use_id === "string" ? { ...b, tool_use_id: sanitizeToolId(b.tool_use_id) } : { ...b };
        if (t.content === "" || (Array.isArray(t.content) && t.content.length === 0)) delete t.content;
        else if (Array.isArray(t.content)) t.content = t.content.filter((c) => !(isObj(c) && c.type === "text" && c.text === ""));
        out.push(t);
        continue;
      }
      default:
        out.push(b);
    }
  }
  return out;
}

/**
 * Tidies an Anthropic Messages client body for an `anthropic-compatible` third-party server without a
 * hub round trip (SPEC F-3). Also safe for `anthropic` / `claude-code` targets (a native pair whose body
 * carries tagged foreign signatures, `"sy|` in the raw text, must not be sent as is): there the
 * in-messages `role: "system"` turns stay in place. The input is not mutated. Changes, each reported
 * as a {@link Warning} (one per distinct message):
 * - null-valued top-level fields and null tool fields removed (REFERENCE §5.6, §7.5);
 * - for `anthropic-compatible`, `role: "system"` turns hoisted into the top-level `system`, in order
 *   (judgement: third-party servers implement the documented user/assistant roles only; §5.4);
 * - empty text blocks, empty turns and an empty `system` removed (REFERENCE §1.1, case B34);
 * - thinking / redacted thinking kept only when signed by this provider (`target.family`, a tagged
 *   `sy|provider:<id>|…` value is untagged); budgeted thinking is removed when the last tool turn lost
 *   its thinking that way;
 * - consecutive same-role turns merged, tool results first in a user turn (REFERENCE §5.7); tool ids
 *   sanitised;
 * - `max_tokens` added when missing (`target.defaultMaxOutputTokens`, else {@link DEFAULT_MAX_TOKENS});
 *   `model` = target model; `stream` = `target.stream`;
 * - kind `claude-code`: Claude Code's identity block first in `system` when missing
 *   ({@link withClaudeCodeIdentity}).
 * `cache_control` markers are kept: Anthropic-compatible servers accept or ignore them.
 */
export function tidyRequest(body: Record<string, unknown>, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const out: Json = {};
  for (const k in body) {
    if (body[k] === null || body[k] === undefined) {
      w.add("dropped_null_field", "Null-valued optional fields were removed");
      continue;
    }
    out[k] = body[k];
  }
  out.model = target.model;
  out.stream = target.stream;
  if (typeof out.max_tokens !== "number") out.max_tokens = target.defaultMaxOutputTokens ?? DEFAULT_MAX_TOKENS;

  let system: Json[] = [];
  if (typeof out.system === "string") {
    if (out.system.length > 0) system.push({ type: "text", text: out.system });
  } else if (Array.isArray(out.system)) {
    system = tidyBlocks(out.system, "system", target.family, w, { dropped: false });
  }
  if (target.kind === "claude-code") withClaudeCodeIdentity(system);
  const hadStringSystem = typeof out.system === "string" && out.system.length > 0;

  const turns: OutMessage[] = [];
  const list = Array.isArray(out.messages) ? out.messages : [];
  for (const raw of list) {
    if (!isObj(raw)) continue;
    const role = raw.role;
    const state = { dropped: false };
    if (role === "system" || role === "developer") {
      const blocks = tidyBlocks(raw.content, "system", target.family, w, state).filter((b) => b.type === "text");
      if (role === "system" && target.kind !== "anthropic-compatible") {
        // Anthropic's own API accepts Claude Code's in-messages system turn: keep it in place.
        if (blocks.length > 0) turns.push({ role: "system", content: blocks, fields: leftover(raw, new Set(["role", "content"])) });
        continue;
      }
      if (blocks.length > 0) {
        system.push(...blocks);
        w.add("hoisted_system_message", "A system message inside messages was moved into the top-level system prompt");
      }
      continue;
    }
    if (role !== "user" && role !== "assistant") {
      w.add("dropped_message", "Messages with a role other than user, assistant or system were removed");
      continue;
    }
    const fields = leftover(raw, new Set(["role", "content"]));
    const content = tidyBlocks(raw.content, role, target.family, w, state);
    if (content.length === 0) w.add("dropped_empty_message", "Messages with no content were removed");
    turns.push({ role, content, fields, droppedThinking: state.dropped });
  }
  const merged = mergeTurns(turns);
  out.messages = merged.map((m) => {
    const o: Json = { role: m.role, content: m.content };
    if (m.fields) for (const k in m.fields) if (!(k in o)) o[k] = m.fields[k];
    return o;
  });
  if (system.length === 0) delete out.system;
  else if (hadStringSystem && system.length === 1 && !system[0].cache_control) out.system = system[0].text;
  else out.system = system;

  if (Array.isArray(out.tools)) {
    out.tools = out.tools.map((t) => {
      if (!isObj(t)) return t;
      let copy: Json | undefined;
      for (const k in t) {
        if (t[k] === null) {
          copy ??= { ...t };
          delete copy[k];
        }
      }
      if (copy) w.add("dropped_null_field", "Null-valued optional fields were removed");
      return copy ?? t;
    });
  }

  const th = out.thinking;
  if (isObj(th) && th.type === "enabled") {
    // Only thinking dropped here makes the turn unfit: the history is the client's own otherwise.
    let fit = true;
    for (let i = merged.length - 1; i >= 0; i--) {
      const m = merged[i];
      if (m.role !== "assistant" || !m.content.some((b) => b.type === "tool_use")) continue;
      const first = m.content[0]?.type;
      fit = first === "thinking" || first === "redacted_thinking" || !m.droppedThinking;
      break;
    }
    if (!fit) {
      delete out.thinking;
      w.add("dropped_thinking_config", "The last tool-use turn has no thinking signed by this provider; thinking was disabled");
    }
  }
  return { body: out, warnings: w.list };
}
