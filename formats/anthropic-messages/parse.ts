/**
 * Anthropic Messages client body → hub (REFERENCE §1.1, §5.4–§5.12): {@link parseRequest}.
 */
import {
  type CacheControl,
  type DocumentPart,
  type FunctionTool,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ImagePart,
  invalidRequest as invalid,
  type MediaSource,
  type ReasoningConfig,
  type ReasoningEffort,
  type TextPart,
  type ToolCallPart,
  type ToolChoice,
  type ToolResultPart,
} from "../hub.ts";
import { isObj, leftover, type JsonObject as Json } from "../json.ts";
import { ITEM_FIELDS_KEY, readCacheControl, readOpaque, type ItemFields } from "./mapping.ts";
import { acceptedEnvelope } from "./request-shape.ts";
import { check, RequestSchema, type RequestBody } from "./schema.ts";
import { signaturesOntoCalls } from "../call-signatures.ts";
import { toolReferenceText } from "../tool-references.ts";

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
const MESSAGE_KNOWN = new Set(["role", "content"]);

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

/**
 * A `tool_reference` block of a tool result (`{type: "tool_reference", tool_name}`: Claude Code's
 * ToolSearch result, which Anthropic's API expands into the named deferred tool's definition (Anthropic
 * tool search docs) → a text part that says the tool is loaded, keeping the name for an Anthropic build.
 * Other providers have the tool declared as any other (their builds send `defer_loading` tools as usual).
 */
function toolReferencePart(toolName: string): TextPart {
  // The text names the client's tool; each builder renders it with the name it gives the tool (tool-references.ts).
  return { type: "text", text: toolReferenceText(toolName), toolReference: toolName };
}

/** One block of a user/assistant/system message → a hub part, or null for a block the hub cannot hold. */
function parseBlock(b: Json, path: string, left: LeftOut): HubPart | null {
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
          } else if (c.type === "tool_reference" && typeof c.tool_name === "string") {
            content.push(toolReferencePart(c.tool_name));
          } else if (typeof c.text === "string") {
            content.push({ type: "text", text: c.text }); // e.g. search_result-like blocks with text
          } else {
            // A block with no hub slot and no text: left out, and named (never silently).
            const type = `${String(c.type)} (in a tool_result)`;
            if (!left.types.includes(type)) left.types.push(type);
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

/** What {@link parseContent} left out, for the request's `droppedItemTypes` and `emptiedTurns` (SPEC F-2). */
interface LeftOut {
  /** Types of blocks the hub has no slot for, each once, in first-seen order. */
  types: string[];
  /** Messages whose every block was of such a type. */
  emptied: number;
}

function parseContent(content: string | Json[], path: string, left: LeftOut): HubPart[] {
  if (typeof content === "string") return content.length > 0 ? [{ type: "text", text: content }] : [];
  const out: HubPart[] = [];
  let dropped = false;
  content.forEach((b, i) => {
    const p = parseBlock(b, `${path}.${i}`, left);
    if (p) out.push(p);
    else {
      // No hub slot (a server tool's block, a type this code does not know): named, not silent.
      dropped = true;
      const type = String(b.type);
      if (!left.types.includes(type)) left.types.push(type);
    }
  });
  if (dropped && out.length === 0) left.emptied++;
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
 * blocks have no hub slot and are left out, named in `droppedItemTypes` (a message left with no block
 * by that is counted in `emptiedTurns`, not as an empty message). Signatures: an untagged value is Anthropic's, a
 * `sy|<family>|…` value (mapping.ts) gets its family back; a thinking block with no text and a Gemini
 * signature right before a `tool_use` is that call's signature (formats/call-signatures.ts). `tools` (function tools; server tools as
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
  // The envelope checked by hand (request-shape.ts, no copy of the body); the schema when that is not sure.
  return parseEnvelope(acceptedEnvelope(body) ?? checkedEnvelope(body));
}

/** valibot's check of the body (schema.ts `RequestSchema`) and its output. @throws FormatError naming the first failing path. */
export function checkedEnvelope(body: unknown): Json & RequestBody {
  const r = check(RequestSchema, body);
  if (!r.ok) throw invalid(r.message, r.path);
  return r.value as Json & typeof r.value;
}

/** {@link parseRequest} of a checked envelope: `RequestSchema`'s output, or what request-shape.ts reads in its place. */
export function parseEnvelope(b: Json & RequestBody): HubRequest {
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

  const left: LeftOut = { types: [], emptied: 0 };
  const messages: HubMessage[] = b.messages.map((m, i) => {
    const role = m.role;
    if (role !== "user" && role !== "assistant" && role !== "system" && role !== "developer") {
      throw invalid(`messages.${i}.role: unknown role ${JSON.stringify(role)}`, `messages.${i}.role`);
    }
    const rest = leftover(m, MESSAGE_KNOWN);
    if (rest) (fields.messages ??= {})[String(i)] = rest;
    return { role, content: parseContent(m.content as string | Json[], `messages.${i}.content`, left) };
  });
  // A tool call's Gemini signature came as a signature-only thinking block before its tool_use (encoder.ts).
  signaturesOntoCalls(messages);

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
  if (left.types.length > 0) hub.droppedItemTypes = left.types;
  if (left.emptied > 0) hub.emptiedTurns = left.emptied;
  return hub;
}
