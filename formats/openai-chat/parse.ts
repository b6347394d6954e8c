/**
 * Chat Completions client body → {@link HubRequest} (REFERENCE §2.1, §5.3–5.12; SPEC F-7):
 * {@link parseRequest}.
 */
import * as v from "valibot";
import { openAiParam, specificIssue } from "../schema-issues.ts";
import {
  invalidRequest as invalid,
  type AudioPart,
  type CacheControl,
  type DocumentPart,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ImagePart,
  type MediaSource,
  type Opaque,
  type ReasoningEffort,
  type ResponseFormat,
  type TextPart,
  type ToolCallPart,
  type ToolChoice,
  type ToolResultPart,
} from "../hub.ts";
import { shortHash } from "./mapping.ts";
import { customCallArguments } from "./custom-calls.ts";
import { ChatRequestSchema, type ChatContentPart, type ChatMessage } from "./schema.ts";
import { isObj } from "../json.ts";
import { readCallSignatures, readReasoningDetails } from "./reasoning-details.ts";

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
  "verbosity",
  "logprobs",
  "top_logprobs",
  "store",
]);


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
      return typeof p.refusal === "string" && p.refusal.length > 0 ? { type: "text", text: p.refusal, refusal: true } : undefined;
    default:
      throw invalid(`${where}: content part type "${p.type}" is not supported.`, where);
  }
}

/**
 * The signature of an assistant message's `reasoning_details` when it names exactly one call
 * (reasoning-details.ts `readCallSignatures`), for a legacy `function_call` (no id of its own); none
 * when there are several (which is which cannot be told) or none.
 */
function onlySignature(details: unknown): Opaque | undefined {
  const sigs = readCallSignatures(details);
  return sigs.size === 1 ? sigs.values().next().value : undefined;
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
 * Chat `{type: "allowed_tools", allowed_tools: {mode, tools}}` naming function tools only (OpenAI
 * Chat Completions reference, `tool_choice`) → hub `allowed` choice; anything else → undefined.
 */
function allowedFunctions(tc: Record<string, unknown>): ToolChoice | undefined {
  if (tc.type !== "allowed_tools" || !isObj(tc.allowed_tools)) return undefined;
  const { mode, tools } = tc.allowed_tools;
  if ((mode !== "auto" && mode !== "required") || !Array.isArray(tools) || tools.length === 0) return undefined;
  const names: string[] = [];
  for (const t of tools) {
    if (!isObj(t) || t.type !== "function" || !isObj(t.function) || typeof t.function.name !== "string") return undefined;
    if (Object.keys(t).length !== 2 || Object.keys(t.function).length !== 1) return undefined;
    names.push(t.function.name);
  }
  return { type: "allowed", mode, names };
}

/**
 * The legacy (deprecated, still sent by older GUI apps and SDK users) function-calling parameters:
 * `functions: [{name, description?, parameters?}]` → function tools appended to `tools` (a name
 * `tools` already declares is not declared twice), `function_call` `"none"` / `"auto"` / `{name}` →
 * the tool choice none / auto / that tool (used when `tool_choice` is absent). Returns the top-level
 * keys read (left out of `source.extra`) and the choice. A malformed `functions` entry leaves both
 * parameters unread (kept in `source.extra`: other formats name them dropped).
 */
function legacyFunctions(raw: Record<string, unknown>, tools: HubTool[]): { consumed: Set<string>; choice?: ToolChoice } {
  const consumed = new Set<string>();
  const fns = raw.functions;
  if (!Array.isArray(fns) || fns.length === 0 || !fns.every((f) => isObj(f) && typeof f.name === "string")) return { consumed };
  consumed.add("functions");
  const declared = new Set(tools.map((t) => t.name));
  for (const f of fns as Array<Record<string, unknown>>) {
    const name = f.name as string;
    if (declared.has(name)) continue;
    declared.add(name);
    const tool: HubTool = { kind: "function", name, parameters: isObj(f.parameters) ? f.parameters : { type: "object", properties: {} } };
    if (typeof f.description === "string") tool.description = f.description;
    tools.push(tool);
  }
  const fc = raw.function_call;
  let choice: ToolChoice | undefined;
  if (fc === "none" || fc === "auto") choice = { type: fc };
  else if (isObj(fc) && typeof fc.name === "string") choice = { type: "tool", name: fc.name };
  if (choice) consumed.add("function_call");
  return { consumed, choice };
}

/**
 * Whether a Chat request declares its functions only the legacy way: a `functions` list the parser
 * reads ({@link legacyFunctions}: a non-empty array of objects with a string `name`) and no `tools` (absent,
 * null or empty). Its reply then carries a call as the legacy `message.function_call` /
 * `delta.function_call` with finish_reason `function_call` (codec.ts `EncoderOptions.legacyFunctions`),
 * as the Chat API answers such a request: an app written for it reads nothing else.
 */
export function usesLegacyFunctions(body: Record<string, unknown>): boolean {
  const fns = body.functions;
  if (!Array.isArray(fns) || fns.length === 0 || !fns.every((f) => isObj(f) && typeof f.name === "string")) return false;
  const tools = body.tools;
  return tools === undefined || tools === null || (Array.isArray(tools) && tools.length === 0);
}

/**
 * The Chat request body checked against {@link ChatRequestSchema}, and its output. Also asked by the
 * same-format tidy lane (tidy.ts) before it drops or filters something for its type, so a malformed
 * body is the same 400 whatever the target.
 * @throws FormatError (400 `invalid_request`, `param` = the path of the first failing field as OpenAI writes it,
 *   `messages[0].role`: {@link openAiParam}).
 */
export function checkedRequest(body: unknown): v.InferOutput<typeof ChatRequestSchema> {
  const r = v.safeParse(ChatRequestSchema, body);
  if (!r.success) {
    const issue = specificIssue(r.issues[0]);
    const path = openAiParam(issue);
    throw invalid(`Invalid request${path ? ` at ${path}` : ""}: ${issue.message}`, path);
  }
  return r.output;
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
 * - assistant: `reasoning_content` (vendor field) → a thinking part first, or instead the signed
 *   thinking and redacted thinking of the `reasoning_details` this gateway tagged (reasoning-details.ts);
 *   a tagged `reasoning.encrypted` entry with a tool call's `id` → that call's signature;
 *   text → text; refusal parts
 *   and the message's `refusal` field → text marked `refusal` (builders send it as text);
 *   `tool_calls` → tool-call parts (`arguments` kept as the JSON text; an object is serialised; a
 *   `custom` tool's call `{type:"custom", custom:{name, input}}` → arguments `{"input": …}`); the
 *   legacy `function_call` → a tool call with a minted id that the following `function` message pairs
 *   with, and the message's call signature when its `reasoning_details` name exactly one (the reply's
 *   call id, which the legacy form does not carry back).
 * - `tool` (and legacy `function`) messages → `tool_result` parts; consecutive ones form ONE user turn,
 *   in order (REFERENCE §5.7).
 * - tools: `function` tools (missing/null `description` stays absent, B35; missing `parameters` →
 *   empty object schema); other tool types → provider tools of format `openai-chat`. The legacy
 *   `functions` / `function_call` parameters → function tools / tool choice ({@link legacyFunctions}).
 * - `tool_choice` strings/objects (an `allowed_tools` choice of function tools → `allowed`),
 *   `verbosity` (low/medium/high), `parallel_tool_calls`, `max_completion_tokens` (preferred) or
 *   `max_tokens`, `stop` (string or list), `reasoning_effort`, `response_format`, `n`, `user` (or
 *   `safety_identifier`), `prompt_cache_key`, `stream`, `stream_options.include_usage` → `includeUsage`,
 *   `logprobs` (boolean) and `top_logprobs` (number) → `logprobs` / `topLogprobs`, `store`
 *   (boolean) → `store` (a Responses target needs it: OpenAI stores Responses by default).
 * - Any other non-null top-level field → `source.extra` (re-emitted by the Chat builder, reported as
 *   dropped by others).
 */
export function parseRequest(body: unknown): HubRequest {
  const b = checkedRequest(body);
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
        // Signed reasoning this gateway handed out in `reasoning_details` (reasoning-details.ts) replaces
        // the same text in `reasoning_content`.
        const signed = readReasoningDetails(m.reasoning_details);
        if (signed.length > 0) msg.content.push(...signed);
        else if (typeof m.reasoning_content === "string" && m.reasoning_content.length > 0) {
          msg.content.push({ type: "thinking", text: m.reasoning_content });
        }
        msg.content.push(...textParts(m.content, where));
        // A reply appended back to history as the SDK returned it: `content: null, refusal: "…"`.
        if (typeof m.refusal === "string" && m.refusal.length > 0) msg.content.push({ type: "text", text: m.refusal, refusal: true });
        const callSigs = m.tool_calls && m.tool_calls.length > 0 ? readCallSignatures(m.reasoning_details) : undefined;
        (m.tool_calls ?? []).forEach((tc, j) => {
          // A function call, or a call of a `custom` tool held with `{"input": …}` arguments (custom-calls.ts).
          const fn = tc.function ?? (tc.custom ? { name: tc.custom.name, arguments: customCallArguments(tc.custom.input) } : undefined);
          if (!fn) throw invalid(`messages[${i}].tool_calls[${j}].function: a tool call needs "function" (its name and arguments), or "custom" for a custom tool.`, `messages[${i}].tool_calls[${j}].function`);
          const id = tc.id || `call_${shortHash(`${i}:${j}:${fn.name}`)}`;
          const call: ToolCallPart = { type: "tool_call", id, name: fn.name, arguments: argumentsText(fn.arguments) };
          const signature = tc.id ? callSigs?.get(tc.id) : undefined;
          if (signature) call.signature = signature;
          msg.content.push(call);
        });
        if (m.function_call) {
          const id = `call_${shortHash(`legacy:${i}:${m.function_call.name}`)}`;
          legacyCalls.push({ id, name: m.function_call.name, answered: false });
          const call: ToolCallPart = { type: "tool_call", id, name: m.function_call.name, arguments: argumentsText(m.function_call.arguments) };
          // The legacy form has no call id, so the signature entry (named by the reply's call id) cannot be
          // matched by id: a message holds one function_call, so the message's one call signature is its.
          const legacySig = m.tool_calls && m.tool_calls.length > 0 ? undefined : onlySignature(m.reasoning_details);
          if (legacySig) call.signature = legacySig;
          msg.content.push(call);
        }
        break;
      }
    }
    messages.push(msg);
  });

  const tools: HubTool[] = [];
  (b.tools ?? []).forEach((t, i) => {
    // A function tool without its function is malformed (OpenAI answers 400 `tools[0].function`), not
    // a tool of another kind to drop with a warning.
    if (t.type === "function" && !t.function) throw invalid(`tools[${i}].function: a function tool needs "function" (its name and parameters).`, `tools[${i}].function`);
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
  });

  const legacy = legacyFunctions(raw, tools);
  const extra: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(raw)) {
    if (!CONSUMED.has(k) && val !== null && val !== undefined && !legacy.consumed.has(k)) extra[k] = val;
  }

  const hub: HubRequest = {
    model: b.model,
    system: [],
    messages,
    tools,
    stream: b.stream === true,
    source: { format: "openai-chat", extra },
  };

  if (legacy.choice && (b.tool_choice === undefined || b.tool_choice === null)) hub.toolChoice = legacy.choice;
  const tc = b.tool_choice;
  if (typeof tc === "string") {
    if (tc === "auto" || tc === "required" || tc === "none") hub.toolChoice = { type: tc };
    else throw invalid(`Invalid tool_choice "${tc}".`, "tool_choice");
  } else if (tc) {
    const fnName = tc.type === "function" && isObj(tc.function) && typeof tc.function.name === "string" ? tc.function.name : undefined;
    const allowed = fnName ? undefined : allowedFunctions(tc);
    if (fnName) hub.toolChoice = { type: "tool", name: fnName };
    else if (allowed) hub.toolChoice = allowed;
    else extra.tool_choice = tc; // custom, allowed_tools naming other tool kinds: no hub slot
  }
  const verbosity = raw.verbosity;
  if (verbosity === "low" || verbosity === "medium" || verbosity === "high") hub.verbosity = verbosity;
  else if (verbosity !== undefined && verbosity !== null) extra.verbosity = verbosity;
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
    // Not a level the hub carries: said as such where the request is built (HubRequest.droppedEffort);
    // a Chat target keeps the client's own body (tidy or native lanes), value and all.
    else hub.droppedEffort = { field: "reasoning_effort", value: b.reasoning_effort };
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
  if (typeof raw.logprobs === "boolean") hub.logprobs = raw.logprobs;
  else if (raw.logprobs !== undefined && raw.logprobs !== null) extra.logprobs = raw.logprobs;
  if (typeof raw.top_logprobs === "number") hub.topLogprobs = raw.top_logprobs;
  else if (raw.top_logprobs !== undefined && raw.top_logprobs !== null) extra.top_logprobs = raw.top_logprobs;
  if (typeof raw.store === "boolean") hub.store = raw.store;
  else if (raw.store !== undefined && raw.store !== null) extra.store = raw.store;
  return hub;
}
