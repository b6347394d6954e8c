/**
 * Chat Completions requests, both sides (REFERENCE §2.1, §5.3–5.12; SPEC F-3, F-7).
 *
 * - {@link parseRequest}: a Chat client's body → {@link HubRequest}.
 * - {@link buildRequest}: a hub request → the body for a Chat provider of kind `openai`
 *   (`max_completion_tokens`) or `openai-compatible` (`max_tokens`).
 * - {@link tidyRequest}: a Chat client's body → the body for an `openai-compatible` provider without
 *   a hub round trip (cache markers, empty messages, tool-result order, null optional fields).
 */
import * as v from "valibot";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import {
  FormatError,
  hubError,
  type AudioPart,
  type CacheControl,
  type DocumentPart,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ImagePart,
  type MediaSource,
  type ReasoningEffort,
  type ResponseFormat,
  type TextPart,
  type ToolChoice,
  type ToolResultPart,
  Warnings,
} from "../hub.ts";
import { chatToolId, shortHash } from "./mapping.ts";
import { ChatRequestSchema, type ChatContentPart, type ChatMessage } from "./schema.ts";

const isObj = (x: unknown): x is Record<string, any> => typeof x === "object" && x !== null && !Array.isArray(x);

const EFFORTS = new Set<string>(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/** Top-level fields {@link parseRequest} maps into hub slots; everything else goes to `source.extra`. */
const CONSUMED = new Set([
  "model",
  "messages",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "top_k",
  "n",
  "stop",
  "stream",
  "stream_options",
  "reasoning_effort",
  "response_format",
  "user",
  "safety_identifier",
  "prompt_cache_key",
]);

function invalid(message: string, param?: string): FormatError {
  return new FormatError(hubError("invalid_request", message, param ? { param } : {}));
}

// =============================================================================================
// parse
// =============================================================================================

/**
 * Splits a data URL `data:<mime>[;params][;base64],<payload>` (REFERENCE §5.5). Returns `undefined` for
 * anything that is not a base64 data URL (those stay URLs).
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  if (comma < 0) return undefined;
  const meta = url.slice(5, comma);
  const params = meta.split(";");
  if (!params.slice(1).some((p) => p.trim().toLowerCase() === "base64")) return undefined;
  return { mediaType: params[0] || "application/octet-stream", data: url.slice(comma + 1) };
}

function cacheOf(cc: { type: string; ttl?: string } | null | undefined): CacheControl | undefined {
  if (!cc || cc.type !== "ephemeral") return undefined;
  return cc.ttl ? { type: "ephemeral", ttl: cc.ttl } : { type: "ephemeral" };
}

function textPart(text: string, cc?: { type: string; ttl?: string } | null): TextPart {
  const p: TextPart = { type: "text", text };
  const c = cacheOf(cc);
  if (c) p.cacheControl = c;
  return p;
}

function mediaSourceOf(url: string): MediaSource {
  const d = parseDataUrl(url);
  return d ? { kind: "base64", mediaType: d.mediaType, data: d.data } : { kind: "url", url };
}

/** One user-side content part → hub part. Empty text parts yield nothing. */
function userPart(p: ChatContentPart, where: string): HubPart | undefined {
  switch (p.type) {
    case "text":
    case "input_text":
      if (typeof p.text !== "string") throw invalid(`${where}: a text part needs "text".`, where);
      return p.text.length > 0 ? textPart(p.text, p.cache_control) : undefined;
    case "image_url": {
      const iu = p.image_url;
      const url = typeof iu === "string" ? iu : iu?.url;
      if (!url) throw invalid(`${where}: an image_url part needs "image_url.url".`, where);
      const img: ImagePart = { type: "image", source: mediaSourceOf(url) };
      if (typeof iu === "object" && iu.detail) img.detail = iu.detail;
      const c = cacheOf(p.cache_control);
      if (c) img.cacheControl = c;
      return img;
    }
    case "input_audio": {
      if (!p.input_audio) throw invalid(`${where}: an input_audio part needs "input_audio".`, where);
      const a: AudioPart = { type: "audio", data: p.input_audio.data, format: p.input_audio.format };
      return a;
    }
    case "file": {
      const f = p.file;
      if (!f || (!f.file_data && !f.file_id)) throw invalid(`${where}: a file part needs "file.file_data" or "file.file_id".`, where);
      let source: MediaSource;
      if (f.file_data) {
        const d = parseDataUrl(f.file_data);
        // Judgement: bare base64 without a data: prefix is read as a PDF (the only file type Chat documents).
        source = d ? { kind: "base64", mediaType: d.mediaType, data: d.data } : { kind: "base64", mediaType: "application/pdf", data: f.file_data };
      } else {
        source = { kind: "file_id", fileId: f.file_id! };
      }
      const doc: DocumentPart = { type: "document", source };
      if (f.filename) doc.filename = f.filename;
      const c = cacheOf(p.cache_control);
      if (c) doc.cacheControl = c;
      return doc;
    }
    case "refusal":
      return typeof p.refusal === "string" && p.refusal.length > 0 ? { type: "text", text: p.refusal } : undefined;
    default:
      throw invalid(`${where}: content part type "${p.type}" is not supported.`, where);
  }
}

/** Text-only content (system, developer, tool, assistant) → text parts; other part types are a 400. */
function textParts(content: ChatMessage["content"], where: string): TextPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return content.length > 0 ? [textPart(content)] : [];
  const out: TextPart[] = [];
  content.forEach((p, i) => {
    const part = userPart(p, `${where}.content[${i}]`);
    if (!part) return;
    if (part.type !== "text") throw invalid(`${where}.content[${i}]: only text parts are allowed here.`, `${where}.content[${i}]`);
    out.push(part);
  });
  return out;
}

function argumentsText(a: unknown): string {
  if (typeof a === "string") return a;
  if (a === null || a === undefined) return "";
  return JSON.stringify(a);
}

/**
 * Chat client body → hub request (REFERENCE §2.1, §5.4–5.12). Validated with the lenient
 * {@link ChatRequestSchema}; throws {@link FormatError} (400 `invalid_request`, `param` = the offending
 * path) when a field the translator reads has the wrong shape, or for a content part type Chat does not
 * define.
 *
 * Mapping:
 * - `system`/`developer` messages stay hub messages with that role, in position (`hub.system` stays
 *   empty; Anthropic/Gemini builders hoist them, REFERENCE §5.4); per-part `cache_control` is kept.
 * - user parts: `text`, `image_url` (data URL → base64 source, else URL; `detail` kept),
 *   `input_audio`, `file` (`file_data` data URL → base64 document, `file_id` → file id). Empty text is
 *   dropped (B34: no empty text blocks downstream).
 * - assistant: `reasoning_content` (vendor field) → a thinking part first; text/refusal → text;
 *   `tool_calls` → tool-call parts (`arguments` kept as the JSON text; an object is serialised); the
 *   legacy `function_call` → a tool call with a minted id that the following `function` message pairs with.
 * - `tool` (and legacy `function`) messages → `tool_result` parts; consecutive ones form ONE user turn,
 *   in order (REFERENCE §5.7).
 * - tools: `function` tools (missing/null `description` stays absent, B35; missing `parameters` →
 *   empty object schema); other tool types → provider tools of format `openai-chat`.
 * - `tool_choice` strings/objects, `parallel_tool_calls`, `max_completion_tokens` (preferred) or
 *   `max_tokens`, `stop` (string or list), `reasoning_effort`, `response_format`, `n`, `user` (or
 *   `safety_identifier`), `prompt_cache_key`, `stream`, `stream_options.include_usage` → `includeUsage`.
 * - Any other non-null top-level field → `source.extra` (re-emitted by the Chat builder, reported as
 *   dropped by others).
 */
export function parseRequest(body: unknown): HubRequest {
  const r = v.safeParse(ChatRequestSchema, body);
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue) ?? undefined;
    throw invalid(`Invalid request${path ? ` at ${path}` : ""}: ${issue.message}`, path);
  }
  const b = r.output;
  const raw = body as Record<string, unknown>;

  const messages: HubMessage[] = [];
  let toolTurn: HubMessage | null = null;
  const legacyCalls: Array<{ id: string; name: string; answered: boolean }> = [];
  b.messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (m.role === "tool" || m.role === "function") {
      let callId: string;
      let name: string | undefined;
      if (m.role === "tool") {
        if (!m.tool_call_id) throw invalid(`${where}: a tool message needs "tool_call_id".`, `${where}.tool_call_id`);
        callId = m.tool_call_id;
      } else {
        name = m.name ?? undefined;
        const call = [...legacyCalls].reverse().find((c) => !c.answered && (!name || c.name === name)) ?? legacyCalls.at(-1);
        if (!call) throw invalid(`${where}: a function message needs a preceding assistant function_call.`, where);
        call.answered = true;
        callId = call.id;
      }
      const result: ToolResultPart = { type: "tool_result", callId, content: textParts(m.content, where) };
      if (name) result.name = name;
      const c = cacheOf(m.cache_control);
      if (c) result.cacheControl = c;
      if (!toolTurn) {
        toolTurn = { role: "user", content: [] };
        messages.push(toolTurn);
      }
      toolTurn.content.push(result);
      return;
    }
    toolTurn = null;
    const msg: HubMessage = { role: m.role, content: [] };
    if (m.name) msg.name = m.name;
    switch (m.role) {
      case "system":
      case "developer":
        msg.content = textParts(m.content, where);
        break;
      case "user": {
        const content = m.content;
        if (typeof content === "string") {
          if (content.length > 0) msg.content.push(textPart(content, m.cache_control));
        } else if (content) {
          content.forEach((p, j) => {
            const part = userPart(p, `${where}.content[${j}]`);
            if (part) msg.content.push(part);
          });
        }
        break;
      }
      case "assistant": {
        if (typeof m.reasoning_content === "string" && m.reasoning_content.length > 0) {
          msg.content.push({ type: "thinking", text: m.reasoning_content });
        }
        msg.content.push(...textParts(m.content, where));
        (m.tool_calls ?? []).forEach((tc, j) => {
          const id = tc.id || `call_${shortHash(`${i}:${j}:${tc.function.name}`)}`;
          msg.content.push({ type: "tool_call", id, name: tc.function.name, arguments: argumentsText(tc.function.arguments) });
        });
        if (m.function_call) {
          const id = `call_${shortHash(`legacy:${i}:${m.function_call.name}`)}`;
          legacyCalls.push({ id, name: m.function_call.name, answered: false });
          msg.content.push({ type: "tool_call", id, name: m.function_call.name, arguments: argumentsText(m.function_call.arguments) });
        }
        break;
      }
    }
    messages.push(msg);
  });

  const tools: HubTool[] = [];
  for (const t of b.tools ?? []) {
    if (t.type === "function" && t.function) {
      const f = t.function;
      const tool: HubTool = { kind: "function", name: f.name, parameters: f.parameters ?? { type: "object", properties: {} } };
      if (typeof f.description === "string") tool.description = f.description;
      if (typeof f.strict === "boolean") tool.strict = f.strict;
      const c = cacheOf(t.cache_control);
      if (c) tool.cacheControl = c;
      tools.push(tool);
    } else {
      const name = isObj(t.custom) && typeof t.custom.name === "string" ? t.custom.name : typeof t.name === "string" ? t.name : undefined;
      tools.push(name ? { kind: "provider", format: "openai-chat", raw: t, name } : { kind: "provider", format: "openai-chat", raw: t });
    }
  }

  const extra: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(raw)) {
    if (!CONSUMED.has(k) && val !== null && val !== undefined) extra[k] = val;
  }

  const hub: HubRequest = {
    model: b.model,
    system: [],
    messages,
    tools,
    stream: b.stream === true,
    source: { format: "openai-chat", extra },
  };

  const tc = b.tool_choice;
  if (typeof tc === "string") {
    if (tc === "auto" || tc === "required" || tc === "none") hub.toolChoice = { type: tc };
    else throw invalid(`Invalid tool_choice "${tc}".`, "tool_choice");
  } else if (tc) {
    const fnName = tc.type === "function" && isObj(tc.function) && typeof tc.function.name === "string" ? tc.function.name : undefined;
    if (fnName) hub.toolChoice = { type: "tool", name: fnName };
    else extra.tool_choice = tc; // allowed_tools, custom: no hub slot
  }
  if (typeof b.parallel_tool_calls === "boolean") hub.parallelToolCalls = b.parallel_tool_calls;
  const max = b.max_completion_tokens ?? b.max_tokens;
  if (typeof max === "number") hub.maxOutputTokens = max;
  if (typeof b.temperature === "number") hub.temperature = b.temperature;
  if (typeof b.top_p === "number") hub.topP = b.top_p;
  if (typeof b.top_k === "number") hub.topK = b.top_k;
  if (typeof b.n === "number") hub.n = b.n;
  if (typeof b.stop === "string") hub.stopSequences = [b.stop];
  else if (Array.isArray(b.stop)) hub.stopSequences = b.stop;
  if (b.reasoning_effort) {
    if (EFFORTS.has(b.reasoning_effort)) hub.reasoning = { effort: b.reasoning_effort as ReasoningEffort };
    else extra.reasoning_effort = b.reasoning_effort;
  }
  const rf = b.response_format;
  if (rf) {
    if (rf.type === "text" || rf.type === "json_object") hub.responseFormat = { type: rf.type };
    else if (rf.type === "json_schema" && isObj(rf.json_schema)) {
      const js = rf.json_schema;
      const f: ResponseFormat = { type: "json_schema", schema: isObj(js.schema) ? js.schema : {} };
      if (typeof js.name === "string") f.name = js.name;
      if (typeof js.strict === "boolean") f.strict = js.strict;
      hub.responseFormat = f;
    } else extra.response_format = rf;
  }
  if (b.stream_options && typeof b.stream_options.include_usage === "boolean") hub.includeUsage = b.stream_options.include_usage;
  if (b.user) {
    hub.user = b.user;
    if (b.safety_identifier) extra.safety_identifier = b.safety_identifier;
  } else if (b.safety_identifier) hub.user = b.safety_identifier;
  if (b.prompt_cache_key) hub.promptCacheKey = b.prompt_cache_key;
  return hub;
}

// =============================================================================================
// build
// =============================================================================================

type Json = Record<string, unknown>;

function joinText(parts: HubPart[], sep: string): string {
  let out = "";
  let first = true;
  for (const p of parts) {
    if (p.type !== "text" || p.text.length === 0) continue;
    out += first ? p.text : sep + p.text;
    first = false;
  }
  return out;
}

function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

/** Reasoning budget (tokens) → effort bucket (REFERENCE §5.9 table; judgement on the thresholds). */
function effortFromBudget(budget: number): ReasoningEffort {
  if (budget <= 2048) return "low";
  if (budget <= 8192) return "medium";
  return "high";
}

class Builder {
  readonly w = new Warnings();

  constructor(private readonly target: BuildTarget) {}

  /** A user-side media/text part → Chat content part, or undefined (dropped with a warning). */
  part(p: HubPart): Json | undefined {
    switch (p.type) {
      case "text":
        return p.text.length > 0 ? { type: "text", text: p.text } : undefined;
      case "image": {
        const s = p.source;
        let url: string;
        if (s.kind === "base64") url = dataUrl(s.mediaType, s.data);
        else if (s.kind === "url") url = s.url;
        else {
          this.w.add("dropped_content", `An image given as ${s.kind === "file_id" ? "a file id" : "text"} cannot be sent to a Chat Completions upstream; it was dropped.`);
          return undefined;
        }
        const iu: Json = { url };
        if (p.detail) iu.detail = p.detail;
        return { type: "image_url", image_url: iu };
      }
      case "document": {
        const s = p.source;
        if (s.kind === "text") {
          return { type: "text", text: p.title ? `${p.title}\n\n${s.data}` : s.data };
        }
        if (s.kind === "base64") {
          return { type: "file", file: { file_data: dataUrl(s.mediaType, s.data), filename: p.filename ?? p.title ?? (s.mediaType === "application/pdf" ? "document.pdf" : "document") } };
        }
        if (s.kind === "file_id") {
          const file: Json = { file_id: s.fileId };
          if (p.filename) file.filename = p.filename;
          return { type: "file", file };
        }
        this.w.add("dropped_content", "A document given by URL cannot be sent to a Chat Completions upstream; it was dropped.");
        return undefined;
      }
      case "audio":
        return { type: "input_audio", input_audio: { data: p.data, format: p.format } };
      case "video":
        this.w.add("dropped_content", "Video input cannot be sent to a Chat Completions upstream; it was dropped.");
        return undefined;
      default:
        return undefined;
    }
  }

  /** A hub user turn → tool messages (first, in order), then one user message with the rest. */
  user(m: HubMessage, out: Json[]): void {
    const follow: Json[] = [];
    const own: Json[] = [];
    for (const p of m.content) {
      if (p.type === "tool_result") {
        const id = chatToolId(p.callId);
        let text = "";
        const media: Json[] = [];
        for (const c of p.content) {
          if (c.type === "text") text += text.length > 0 && c.text.length > 0 ? "\n" + c.text : c.text;
          else {
            const part = this.part(c);
            if (part) media.push(part);
          }
        }
        if (p.isError) text = text.length > 0 ? `Error: ${text}` : "Error";
        out.push({ role: "tool", tool_call_id: id, content: text });
        if (media.length > 0) {
          // Chat tool messages carry text only (REFERENCE §5.5): the media follow as a user message.
          follow.push({ type: "text", text: `Image returned by tool call ${id}:` }, ...media);
        }
      } else if (p.type === "thinking" || p.type === "redacted_thinking" || p.type === "tool_call") {
        this.w.add("dropped_content", `A ${p.type} part in a user turn cannot be sent to a Chat Completions upstream; it was dropped.`);
      } else {
        const part = this.part(p);
        if (part) own.push(part);
      }
    }
    const parts = follow.concat(own);
    if (parts.length === 0) return; // empty messages are not sent
    const msg: Json = { role: "user", content: parts.length === 1 && parts[0].type === "text" ? parts[0].text : parts };
    if (m.name) msg.name = m.name;
    out.push(msg);
  }

  assistant(m: HubMessage, out: Json[]): void {
    let text = "";
    const calls: Json[] = [];
    for (const p of m.content) {
      switch (p.type) {
        case "text":
          text += p.text;
          break;
        case "tool_call":
          calls.push({ id: chatToolId(p.id), type: "function", function: { name: p.name, arguments: p.arguments.length > 0 ? p.arguments : "{}" } });
          break;
        case "thinking":
          // Chat has no input slot for reasoning; only opaque state is worth a warning (F-8).
          if (p.signature) this.w.add("stripped_signature", "Signed thinking in the conversation history cannot be sent to a Chat Completions upstream; it was removed.");
          break;
        case "redacted_thinking":
          this.w.add("stripped_signature", "Redacted thinking in the conversation history cannot be sent to a Chat Completions upstream; it was removed.");
          break;
        default:
          this.w.add("dropped_content", `A ${p.type} part in an assistant turn cannot be sent to a Chat Completions upstream; it was dropped.`);
      }
    }
    if (text.length === 0 && calls.length === 0) return;
    const msg: Json = { role: "assistant" };
    if (text.length > 0) msg.content = text;
    if (calls.length > 0) msg.tool_calls = calls;
    if (m.name) msg.name = m.name;
    out.push(msg);
  }

  system(m: HubMessage, out: Json[]): void {
    for (const p of m.content) {
      if (p.type !== "text") this.w.add("dropped_content", `A ${p.type} part in a ${m.role} message cannot be sent to a Chat Completions upstream; it was dropped.`);
    }
    const text = joinText(m.content, "\n\n");
    if (text.length === 0) return;
    // Judgement: third-party servers often reject "developer"; they get "system".
    const role = m.role === "developer" && this.target.kind !== "openai" ? "system" : m.role;
    out.push({ role, content: text });
  }
}

/**
 * Hub request → Chat provider body (REFERENCE §2.1, §5.3–5.12; SPEC F-7). Target kinds: `openai`
 * (token limit as `max_completion_tokens`, never `max_tokens`: OpenAI reasoning models reject it,
 * B37-chat) and `openai-compatible` (and anything else: `max_tokens`, the field third-party servers know).
 *
 * - `hub.system` → one leading `system` message (blocks joined with a blank line; cache markers are
 *   not sent: plain Chat upstreams reject them, B33). System/developer turns stay in position.
 * - user turns: tool results first as `tool` messages (text joined; `isError` → "Error: " prefix), then
 *   one user message: media returned by tools (Chat tool messages carry text only, REFERENCE §5.5),
 *   then the turn's own parts. Empty messages are not sent.
 * - assistant turns: text → `content` (omitted when empty), tool calls → `tool_calls` (`arguments`
 *   `"{}"` when empty). Thinking is not sent (no Chat input slot); signed or redacted thinking is
 *   reported as `stripped_signature`.
 * - tool ids longer than 64 characters or with characters outside `[A-Za-z0-9_-]` are mapped
 *   deterministically ({@link chatToolId}) in calls and results alike.
 * - tools: `{type:"function",function:{name,description?,parameters,strict?}}`; no description → the
 *   key is omitted, never null (B35). Provider tools of another format are dropped with a warning.
 *   `tool_choice` / `parallel_tool_calls` only when tools are sent (OpenAI rejects them otherwise).
 * - `stop` (at most 4 for `openai`, the rest dropped with a warning), `temperature`, `top_p`, `n`,
 *   `reasoning_effort` (from the effort, or bucketed from a budget; `max` → `xhigh`),
 *   `response_format`, `user` (only when ≤ 64 characters), `prompt_cache_key` (`openai` only).
 *   `top_k` has no Chat field and is dropped with a warning.
 * - streaming builds always ask `stream_options: {include_usage: true}` (REFERENCE §5.10).
 * - `source.extra` is re-emitted when the client spoke Chat; otherwise its keys are reported dropped.
 * - Never writes a null or undefined value.
 *
 * Throws {@link FormatError} (400) when `previousResponseId` is set: a Chat upstream cannot resume a
 * stored Responses conversation, and answering without the context would be wrong (B41).
 */
export function buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest {
  if (req.previousResponseId) {
    throw invalid("previous_response_id cannot be used with this model: its provider does not store conversations.", "previous_response_id");
  }
  const b = new Builder(target);
  const openai = target.kind === "openai";
  const messages: Json[] = [];
  const sys = joinText(req.system, "\n\n");
  if (sys.length > 0) messages.push({ role: "system", content: sys });
  for (const m of req.messages) {
    if (m.role === "user") b.user(m, messages);
    else if (m.role === "assistant") b.assistant(m, messages);
    else b.system(m, messages);
  }

  const body: Json = { model: target.model, messages };

  const tools: Json[] = [];
  for (const t of req.tools) {
    if (t.kind === "function") {
      const fn: Json = { name: t.name };
      if (t.description !== undefined && t.description !== null) fn.description = t.description;
      fn.parameters = t.parameters ?? { type: "object", properties: {} };
      if (typeof t.strict === "boolean") fn.strict = t.strict;
      tools.push({ type: "function", function: fn });
    } else if (t.format === "openai-chat") {
      tools.push(t.raw);
    } else {
      const which = t.name ?? (typeof t.raw.type === "string" ? t.raw.type : undefined);
      b.w.add("dropped_tool", `The ${t.format} tool ${which ? `"${which}" ` : ""}cannot be sent to a Chat Completions upstream; it was dropped.`);
    }
  }
  if (tools.length > 0) {
    body.tools = tools;
    const tc = req.toolChoice;
    if (tc) body.tool_choice = tc.type === "tool" ? { type: "function", function: { name: tc.name } } : tc.type;
    if (typeof req.parallelToolCalls === "boolean") body.parallel_tool_calls = req.parallelToolCalls;
  }

  if (req.maxOutputTokens !== undefined) body[openai ? "max_completion_tokens" : "max_tokens"] = req.maxOutputTokens;
  if (req.temperature !== undefined) body.temperature = Math.min(2, Math.max(0, req.temperature));
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) b.w.add("dropped_field", "top_k has no Chat Completions equivalent; it was dropped.");
  if (req.n !== undefined && req.n !== 1) body.n = req.n;
  if (req.stopSequences && req.stopSequences.length > 0) {
    let stop = req.stopSequences;
    if (openai && stop.length > 4) {
      b.w.add("dropped_field", `OpenAI accepts at most 4 stop sequences; ${stop.length - 4} were dropped.`);
      stop = stop.slice(0, 4);
    }
    body.stop = stop;
  }
  const r = req.reasoning;
  if (r) {
    let effort: ReasoningEffort | undefined = r.effort;
    if (!effort && r.enabled !== false && r.budgetTokens !== undefined) effort = effortFromBudget(r.budgetTokens);
    if (effort === "max") effort = "xhigh";
    if (effort) body.reasoning_effort = effort;
  }
  const rf = req.responseFormat;
  if (rf) {
    if (rf.type === "json_schema") {
      const js: Json = { name: rf.name ?? "response", schema: rf.schema };
      if (typeof rf.strict === "boolean") js.strict = rf.strict;
      body.response_format = { type: "json_schema", json_schema: js };
    } else body.response_format = { type: rf.type };
  }
  if (req.user) {
    if (req.user.length <= 64) body.user = req.user;
    else b.w.add("dropped_field", "The end-user id is longer than Chat Completions accepts (64); it was not sent.");
  }
  if (req.promptCacheKey) {
    if (openai) body.prompt_cache_key = req.promptCacheKey;
    else b.w.add("dropped_field", "prompt_cache_key is only sent to OpenAI; it was dropped.");
  }
  body.stream = target.stream;
  if (target.stream) body.stream_options = { include_usage: true };

  const extraKeys = Object.keys(req.source.extra);
  if (req.source.format === "openai-chat") {
    for (const k of extraKeys) {
      const val = req.source.extra[k];
      if (val !== null && val !== undefined && !(k in body)) body[k] = val;
    }
  } else if (extraKeys.length > 0) {
    b.w.add("dropped_field", `Fields with no Chat Completions equivalent were dropped: ${extraKeys.join(", ")}.`);
  }
  return { body, warnings: b.w.list };
}

// =============================================================================================
// tidy
// =============================================================================================

/** Copy of a content part without `cache_control`. */
function stripPart(p: unknown): unknown {
  if (!isObj(p) || !("cache_control" in p)) return p;
  const { cache_control: _cc, ...rest } = p;
  return rest;
}

/** Whether a message's content carries anything (a non-empty string, or a non-empty-text / non-text part). */
function hasContent(content: unknown): boolean {
  if (typeof content === "string") return content.length > 0;
  if (!Array.isArray(content)) return false;
  return content.some((p) => isObj(p) && (p.type !== "text" || (typeof p.text === "string" && p.text.length > 0)));
}

/**
 * Chat client body → body for a same-format third-party provider (SPEC F-3; REFERENCE §5.12, §5.7),
 * without a hub round trip. The input is not modified.
 *
 * - `model` → `target.model`.
 * - `cache_control` removed everywhere (top level, messages, content parts, tools, `tools[].function`):
 *   strict OpenAI-compatible servers 400 on it (B33, new-api#5982).
 * - null-valued optional fields omitted (top level, messages, tool definitions: a null `description`
 *   is removed, B35); an assistant `content: null` next to `tool_calls` is omitted; `tool_calls: []`
 *   is omitted.
 * - empty messages dropped (system/developer/user/assistant with no content and no tool calls); tool
 *   messages are kept (they pair with a call) with `content: ""` when they had none.
 * - tool messages are moved directly after the assistant message that made the call, in call order
 *   (REFERENCE §5.7); orphans stay where they are.
 * - `developer` → `system` for `openai-compatible` (judgement: many servers' chat templates know only
 *   `system`).
 * - token limit under the kind's field (`openai`: `max_completion_tokens`; others: `max_tokens`).
 * - streaming: `stream_options.include_usage: true` forced (usage is read from the stream; the encoder
 *   withholds it from a client that did not ask).
 *
 * Warnings: `dropped_empty_message`, `reordered_tool_results`.
 */
export function tidyRequest(body: Record<string, unknown>, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const out: Json = {};
  for (const [k, val] of Object.entries(body)) {
    if (val === null || val === undefined || k === "cache_control") continue;
    out[k] = val;
  }
  out.model = target.model;
  const compat = target.kind !== "openai";

  if (Array.isArray(body.messages)) {
    let dropped = 0;
    const msgs: Json[] = [];
    for (const m of body.messages) {
      if (!isObj(m)) continue;
      const msg: Json = {};
      for (const [k, val] of Object.entries(m)) {
        if (val === null || val === undefined || k === "cache_control") continue;
        msg[k] = val;
      }
      if (Array.isArray(msg.content)) msg.content = msg.content.map(stripPart);
      if (Array.isArray(msg.tool_calls) && msg.tool_calls.length === 0) delete msg.tool_calls;
      if (msg.role === "tool") {
        if (msg.content === undefined) msg.content = "";
      } else if (!hasContent(msg.content) && !Array.isArray(msg.tool_calls) && !isObj(msg.function_call)) {
        dropped++;
        continue;
      } else if (msg.role === "assistant" && !hasContent(msg.content) && msg.content !== undefined) {
        delete msg.content; // "" next to tool calls
      }
      if (compat && msg.role === "developer") msg.role = "system";
      msgs.push(msg);
    }
    if (dropped > 0) w.add("dropped_empty_message", `${dropped} empty message(s) were not sent.`);

    // Tool results directly after their call, in call order.
    const callIds = new Set<string>();
    for (const m of msgs) {
      if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls) if (isObj(c) && typeof c.id === "string") callIds.add(c.id);
      }
    }
    const results = new Map<string, Json[]>();
    for (const m of msgs) {
      if (m.role === "tool" && typeof m.tool_call_id === "string" && callIds.has(m.tool_call_id)) {
        const list = results.get(m.tool_call_id);
        if (list) list.push(m);
        else results.set(m.tool_call_id, [m]);
      }
    }
    const ordered: Json[] = [];
    for (const m of msgs) {
      if (m.role === "tool" && typeof m.tool_call_id === "string" && callIds.has(m.tool_call_id)) continue;
      ordered.push(m);
      if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls) {
          if (!isObj(c) || typeof c.id !== "string") continue;
          const list = results.get(c.id);
          if (list) {
            ordered.push(...list);
            results.delete(c.id);
          }
        }
      }
    }
    if (ordered.some((m, i) => m !== msgs[i])) {
      w.add("reordered_tool_results", "Tool results were moved directly after the calls they answer.");
    }
    out.messages = ordered;
  }

  if (Array.isArray(body.tools)) {
    out.tools = body.tools.map((t) => {
      if (!isObj(t)) return t;
      const tool: Json = {};
      for (const [k, val] of Object.entries(t)) {
        if (val === null || val === undefined || k === "cache_control") continue;
        tool[k] = val;
      }
      if (isObj(tool.function)) {
        const fn: Json = {};
        for (const [k, val] of Object.entries(tool.function)) {
          if (val === null || val === undefined || k === "cache_control") continue;
          fn[k] = val;
        }
        tool.function = fn;
      }
      return tool;
    });
  }

  const limit = out.max_completion_tokens ?? out.max_tokens;
  delete out.max_completion_tokens;
  delete out.max_tokens;
  if (limit !== undefined) out[compat ? "max_tokens" : "max_completion_tokens"] = limit;

  if (out.stream === true) {
    const so = isObj(out.stream_options) ? out.stream_options : {};
    const opts: Json = {};
    for (const [k, val] of Object.entries(so)) if (val !== null && val !== undefined) opts[k] = val;
    opts.include_usage = true;
    out.stream_options = opts;
  } else {
    delete out.stream_options;
  }
  return { body: out, warnings: w.list };
}
