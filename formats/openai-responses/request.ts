/**
 * OpenAI Responses requests both ways (REFERENCE §3.1, §5): a client body → {@link HubRequest}
 * (`parseRequest`), and a {@link HubRequest} → a provider body for kinds `openai-responses`, `openai`
 * (Responses endpoint) and `codex` (`buildRequest`).
 *
 * Mapping summary (parse):
 * - `instructions` → `hub.system`; `input` string → one user message.
 * - message items (roles user/assistant/system/developer; string or part content) → one hub message
 *   each, except that consecutive assistant-side items (reasoning, assistant message, function_call,
 *   custom_tool_call) merge into ONE assistant turn and consecutive tool outputs into ONE user turn
 *   (the shape Anthropic/Chat builders expect). `phase` is kept on text parts.
 * - `function_call` → tool_call part (`call_id` → id, `id` → itemId, `namespace`);
 *   `function_call_output` → tool_result part (string or parts).
 * - `custom_tool_call` (freeform) → tool_call whose arguments are `{"input": "<raw text>"}` (JSON, so
 *   every format can carry it); rebuilt as `custom_tool_call` for Responses targets.
 * - `reasoning` → thinking part: summary texts (joined by a blank line) or raw `reasoning_text`,
 *   `itemId`, and `encrypted_content` as an `openai`-family signature.
 * - tools: `function` → FunctionTool; `namespace` → one ProviderTool holding the namespace shell
 *   (name, description, non-function members) followed by its function members flattened with
 *   `namespace` set; any other type → ProviderTool (kept for Responses targets only).
 * - fields without a hub slot (`client_metadata`, `metadata`, `text.verbosity`, `truncation`,
 *   `service_tier`, unmappable `tool_choice`, …) → `source.extra`, re-emitted for Responses targets.
 *
 * Item types the hub cannot hold (`web_search_call`, `local_shell_call`, `item_reference`, …) are not
 * carried (see the report: a hub "provider item" part would be needed).
 */
import * as v from "valibot";
import {
  FormatError,
  hubError,
  type AudioPart,
  type DocumentPart,
  type FunctionTool,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ImagePart,
  type ProviderTool,
  type ReasoningEffort,
  type ResponseFormat,
  type TextPart,
  type ThinkingPart,
  type ToolCallPart,
  type ToolChoice,
  type ToolResultPart,
  Warnings,
} from "../hub.ts";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import {
  ContentPartSchema,
  CustomToolCallItemSchema,
  CustomToolCallOutputItemSchema,
  FunctionCallItemSchema,
  FunctionCallOutputItemSchema,
  FunctionToolSchema,
  MessageItemSchema,
  NamespaceToolSchema,
  ReasoningItemSchema,
  ResponsesRequestSchema,
} from "./schema.ts";
import { hasItemPrefix, isOpenAiItemId, mediaTypeForFilename, parseDataUrl, sanitizeCallId, sourceToUrl } from "./common.ts";

const FORMAT = "openai-responses" as const;

/** Top-level request fields the parser maps into hub slots; everything else goes to `source.extra`. */
const MAPPED_FIELDS = new Set([
  "model",
  "instructions",
  "input",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "temperature",
  "top_p",
  "reasoning",
  "text",
  "store",
  "include",
  "prompt_cache_key",
  "previous_response_id",
  "user",
  "stream",
]);

/**
 * `source.extra` key holding the fields of function tools the hub has no slot for (`output_schema`,
 * `allowed_callers`, …), by tool key (`name`, or `namespace/name`), so a Responses target gets them
 * back. Same convention as the Anthropic codec's `$anthropic_item_fields`.
 */
export const TOOL_FIELDS_KEY = "$responses_tool_fields";

/** Function-tool fields the hub maps itself. */
const FUNCTION_TOOL_FIELDS = new Set(["type", "name", "description", "parameters", "strict", "defer_loading"]);

const EFFORTS: ReadonlySet<string> = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

function invalid(message: string, param?: string): FormatError {
  return new FormatError(hubError("invalid_request", message, param ? { param } : {}));
}

function check<T extends v.GenericSchema>(schema: T, value: unknown, path: string): v.InferOutput<T> {
  const r = v.safeParse(schema, value);
  if (r.success) return r.output;
  const issue = r.issues[0];
  const sub = v.getDotPath(issue);
  const param = sub ? `${path}.${sub}` : path;
  throw invalid(`Invalid '${param}': ${issue.message}`, param);
}

// ---------------------------------------------------------------------------------------------
// parse
// ---------------------------------------------------------------------------------------------

/** One content part of a message or tool output → hub part; undefined for parts the hub cannot hold. */
function parsePart(p: Record<string, any>, phase: string | undefined): TextPart | ImagePart | DocumentPart | AudioPart | undefined {
  switch (p.type) {
    case "input_text":
    case "output_text":
    case "text":
    case "summary_text":
    case "reasoning_text": {
      const t: TextPart = { type: "text", text: typeof p.text === "string" ? p.text : "" };
      if (phase) t.phase = phase;
      return t;
    }
    case "refusal": {
      const t: TextPart = { type: "text", text: typeof p.refusal === "string" ? p.refusal : String(p.text ?? "") };
      if (phase) t.phase = phase;
      return t;
    }
    case "input_image": {
      let source: ImagePart["source"] | undefined;
      const url = typeof p.image_url === "string" ? p.image_url : typeof p.image_url?.url === "string" ? p.image_url.url : undefined;
      if (url) {
        const d = parseDataUrl(url);
        source = d ? { kind: "base64", mediaType: d.mediaType, data: d.data } : { kind: "url", url };
      } else if (typeof p.file_id === "string") source = { kind: "file_id", fileId: p.file_id };
      if (!source) return undefined;
      const img: ImagePart = { type: "image", source };
      if (typeof p.detail === "string") img.detail = p.detail;
      return img;
    }
    case "input_file": {
      const filename = typeof p.filename === "string" ? p.filename : undefined;
      let source: DocumentPart["source"] | undefined;
      if (typeof p.file_data === "string") {
        const d = parseDataUrl(p.file_data);
        source = d
          ? { kind: "base64", mediaType: d.mediaType, data: d.data }
          : { kind: "base64", mediaType: mediaTypeForFilename(filename), data: p.file_data };
      } else if (typeof p.file_url === "string") source = { kind: "url", url: p.file_url };
      else if (typeof p.file_id === "string") source = { kind: "file_id", fileId: p.file_id };
      if (!source) return undefined;
      const doc: DocumentPart = { type: "document", source };
      if (filename) doc.filename = filename;
      return doc;
    }
    case "input_audio": {
      const a = p.input_audio;
      if (a && typeof a.data === "string") return { type: "audio", data: a.data, format: typeof a.format === "string" ? a.format : "wav" };
      return undefined;
    }
    default:
      return typeof p.text === "string" ? { type: "text", text: p.text } : undefined;
  }
}

function parseContent(content: string | Array<Record<string, any>>, phase: string | undefined): HubPart[] {
  if (typeof content === "string") {
    const t: TextPart = { type: "text", text: content };
    if (phase) t.phase = phase;
    return [t];
  }
  const out: HubPart[] = [];
  for (const p of content) {
    const part = parsePart(p, phase);
    if (part) out.push(part);
  }
  return out;
}

function toolOutputContent(output: unknown): ToolResultPart["content"] {
  if (typeof output === "string") return [{ type: "text", text: output }];
  if (Array.isArray(output)) {
    const out: ToolResultPart["content"] = [];
    for (const p of output) {
      const part = p && typeof p === "object" ? parsePart(p as Record<string, any>, undefined) : undefined;
      if (part && part.type !== "audio") out.push(part);
    }
    return out;
  }
  // Legacy object form `{content, success}` (older Codex): keep its text.
  const o = output as Record<string, unknown>;
  if (o && typeof o.content === "string") return [{ type: "text", text: o.content }];
  return [{ type: "text", text: JSON.stringify(output) }];
}

/** Builds the hub messages from the `input` items (see the module doc for the grouping rules). */
function parseInput(input: string | Array<Record<string, any>> | null | undefined): HubMessage[] {
  if (input == null) return [];
  if (typeof input === "string") return [{ role: "user", content: [{ type: "text", text: input }] }];
  const messages: HubMessage[] = [];
  /** The open assistant turn that reasoning/calls/assistant text append to. */
  let assistant: HubMessage | null = null;
  /** The open user turn that tool outputs append to. */
  let toolTurn: HubMessage | null = null;
  const assistantTurn = (): HubMessage => {
    toolTurn = null;
    if (!assistant) {
      assistant = { role: "assistant", content: [] };
      messages.push(assistant);
    }
    return assistant;
  };
  const resultTurn = (): HubMessage => {
    assistant = null;
    if (!toolTurn) {
      toolTurn = { role: "user", content: [] };
      messages.push(toolTurn);
    }
    return toolTurn;
  };

  for (let i = 0; i < input.length; i++) {
    const item = input[i]!;
    const path = `input[${i}]`;
    const type = item.type ?? "message";
    switch (type) {
      case "message": {
        const m = check(MessageItemSchema, item, path);
        const phase = m.phase ?? undefined;
        const content = parseContent(m.content as string | Array<Record<string, any>>, m.role === "assistant" ? phase : undefined);
        if (m.role === "assistant") {
          assistantTurn().content.push(...content);
        } else {
          assistant = null;
          toolTurn = null;
          messages.push({ role: m.role, content });
        }
        break;
      }
      case "function_call": {
        const fc = check(FunctionCallItemSchema, item, path);
        const part: ToolCallPart = { type: "tool_call", id: fc.call_id, name: fc.name, arguments: fc.arguments };
        if (fc.id) part.itemId = fc.id;
        if (fc.namespace) part.namespace = fc.namespace;
        assistantTurn().content.push(part);
        break;
      }
      case "custom_tool_call": {
        const cc = check(CustomToolCallItemSchema, item, path);
        const part: ToolCallPart = { type: "tool_call", id: cc.call_id, name: cc.name, arguments: JSON.stringify({ input: cc.input }) };
        if (cc.id) part.itemId = cc.id;
        assistantTurn().content.push(part);
        break;
      }
      case "function_call_output": {
        const fo = check(FunctionCallOutputItemSchema, item, path);
        resultTurn().content.push({ type: "tool_result", callId: fo.call_id, content: toolOutputContent(fo.output) });
        break;
      }
      case "custom_tool_call_output": {
        const co = check(CustomToolCallOutputItemSchema, item, path);
        resultTurn().content.push({ type: "tool_result", callId: co.call_id, content: toolOutputContent(co.output) });
        break;
      }
      case "reasoning": {
        const r = check(ReasoningItemSchema, item, path);
        const summary = (r.summary ?? []).map((s) => s.text);
        const rawTexts = (r.content ?? []).map((c) => c.text ?? "").filter((t) => t.length > 0);
        const part: ThinkingPart = { type: "thinking", text: summary.length > 0 ? summary.join("\n\n") : rawTexts.join("\n\n") };
        if (summary.length > 0) part.summary = summary;
        else if (rawTexts.length > 0) part.raw = true;
        if (r.id) part.itemId = r.id;
        if (r.encrypted_content) part.signature = { family: "openai", value: r.encrypted_content };
        assistantTurn().content.push(part);
        break;
      }
      default:
        // web_search_call, local_shell_call, item_reference, … : no hub slot (see module doc).
        break;
    }
  }
  return messages;
}

function keepToolFields(t: Record<string, any>, key: string, fields: Record<string, Record<string, unknown>>): void {
  let rest: Record<string, unknown> | undefined;
  for (const k of Object.keys(t)) {
    if (FUNCTION_TOOL_FIELDS.has(k)) continue;
    (rest ??= {})[k] = t[k];
  }
  if (rest) fields[key] = rest;
}

/** Tools → hub tools (module doc). Namespaces: shell ProviderTool first, then flattened members. */
function parseTools(tools: Array<Record<string, any>> | null | undefined, extra: Record<string, unknown>): HubTool[] {
  if (!tools) return [];
  const out: HubTool[] = [];
  const fields: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]!;
    const path = `tools[${i}]`;
    if (t.type === "function") {
      out.push(parseFunctionTool(check(FunctionToolSchema, t, path)));
      keepToolFields(t, t.name, fields);
    } else if (t.type === "namespace") {
      const ns = check(NamespaceToolSchema, t, path);
      const others = ns.tools.filter((m) => m.type !== "function");
      const { tools: _members, ...shell } = ns;
      out.push({ kind: "provider", format: FORMAT, raw: { ...shell, tools: others }, name: ns.name });
      for (let j = 0; j < ns.tools.length; j++) {
        const m = ns.tools[j]!;
        if (m.type !== "function") continue;
        const f = parseFunctionTool(check(FunctionToolSchema, m, `${path}.tools[${j}]`));
        f.namespace = ns.name;
        out.push(f);
        keepToolFields(m, `${ns.name}/${f.name}`, fields);
      }
    } else {
      const p: ProviderTool = { kind: "provider", format: FORMAT, raw: t };
      if (typeof t.name === "string") p.name = t.name;
      out.push(p);
    }
  }
  if (Object.keys(fields).length > 0) extra[TOOL_FIELDS_KEY] = fields;
  return out;
}

function parseFunctionTool(f: v.InferOutput<typeof FunctionToolSchema>): FunctionTool {
  const tool: FunctionTool = {
    kind: "function",
    name: f.name,
    parameters: (f.parameters as Record<string, unknown> | null | undefined) ?? { type: "object", properties: {} },
  };
  if (typeof f.description === "string") tool.description = f.description;
  if (typeof f.strict === "boolean") tool.strict = f.strict;
  if (f.defer_loading === true) tool.deferLoading = true;
  return tool;
}

function parseToolChoice(tc: unknown, extra: Record<string, unknown>): ToolChoice | undefined {
  if (tc == null) return undefined;
  if (tc === "auto" || tc === "required" || tc === "none") return { type: tc };
  if (typeof tc === "object") {
    const o = tc as Record<string, any>;
    if ((o.type === "function" || o.type === "custom") && typeof o.name === "string") return { type: "tool", name: o.name };
  }
  // allowed_tools, hosted-tool choices, unknown strings: no hub equivalent, kept for Responses targets.
  extra.tool_choice = tc;
  return undefined;
}

function parseResponseFormat(format: Record<string, any> | null | undefined): ResponseFormat | undefined {
  if (!format) return undefined;
  switch (format.type) {
    case "text":
      return { type: "text" };
    case "json_object":
      return { type: "json_object" };
    case "json_schema": {
      const rf: ResponseFormat = { type: "json_schema", schema: (format.schema as Record<string, unknown>) ?? {} };
      if (typeof format.name === "string") rf.name = format.name;
      if (typeof format.strict === "boolean") rf.strict = format.strict;
      return rf;
    }
    default:
      return undefined;
  }
}

/**
 * Client body of `POST /v1/responses` → {@link HubRequest} (REFERENCE §3.1, §5; mapping in the module
 * doc). Validation is lenient (valibot `looseObject`): unknown fields pass into `source.extra`.
 * Accepts every Codex CLI body in `fixtures/clients/codex-*.json`. `stream` defaults to false (the
 * API's default).
 *
 * @throws FormatError (400 `invalid_request`, `param` = the JSON path such as `input[3].call_id`) when
 *   the body is not an object, `model` is missing, an item or tool lacks a field the mapping needs, or
 *   a message has an unknown role.
 */
export function parseRequest(body: unknown): HubRequest {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalid("The request body must be a JSON object.");
  const b = check(ResponsesRequestSchema, body, "body");
  const raw = body as Record<string, unknown>;
  const extra: Record<string, unknown> = {};
  for (const k of Object.keys(raw)) if (!MAPPED_FIELDS.has(k)) extra[k] = raw[k];

  const system: TextPart[] = [];
  if (typeof b.instructions === "string") {
    if (b.instructions.length > 0) system.push({ type: "text", text: b.instructions });
  } else if (Array.isArray(b.instructions)) {
    for (const m of parseInput(b.instructions as Array<Record<string, any>>)) {
      for (const p of m.content) if (p.type === "text" && p.text.length > 0) system.push({ type: "text", text: p.text });
    }
  }

  const req: HubRequest = {
    model: b.model,
    system,
    messages: parseInput(b.input as string | Array<Record<string, any>> | null | undefined),
    tools: parseTools(b.tools as Array<Record<string, any>> | null | undefined, extra),
    stream: b.stream === true,
    source: { format: FORMAT, extra },
  };
  const toolChoice = parseToolChoice(b.tool_choice, extra);
  if (toolChoice) req.toolChoice = toolChoice;
  if (typeof b.parallel_tool_calls === "boolean") req.parallelToolCalls = b.parallel_tool_calls;
  if (typeof b.max_output_tokens === "number") req.maxOutputTokens = b.max_output_tokens;
  if (typeof b.temperature === "number") req.temperature = b.temperature;
  if (typeof b.top_p === "number") req.topP = b.top_p;
  if (b.reasoning) {
    const r: NonNullable<HubRequest["reasoning"]> = {};
    const effort = b.reasoning.effort;
    if (typeof effort === "string" && EFFORTS.has(effort)) {
      r.effort = effort as ReasoningEffort;
      if (effort === "none") r.enabled = false;
    }
    if (typeof b.reasoning.summary === "string") r.summary = b.reasoning.summary;
    const { effort: _e, summary: _s, ...restReasoning } = b.reasoning as Record<string, unknown>;
    if (Object.keys(restReasoning).length > 0) extra.reasoning = restReasoning;
    if (r.effort !== undefined || r.summary !== undefined) req.reasoning = r;
  }
  if (b.text) {
    const rf = parseResponseFormat(b.text.format);
    if (rf) req.responseFormat = rf;
    const { format: _f, ...restText } = b.text as Record<string, unknown>;
    if (!rf && b.text.format) restText.format = b.text.format;
    if (Object.keys(restText).length > 0) extra.text = restText;
  }
  if (typeof b.store === "boolean") req.store = b.store;
  if (b.include) req.include = [...b.include];
  if (typeof b.prompt_cache_key === "string") req.promptCacheKey = b.prompt_cache_key;
  if (typeof b.previous_response_id === "string" && b.previous_response_id.length > 0) req.previousResponseId = b.previous_response_id;
  if (typeof b.user === "string") req.user = b.user;
  return req;
}

/**
 * The gateway's rule for `previous_response_id` (case B41): the gateway keeps no response store, so a
 * request that names a previous response can only be served by a Responses upstream that holds it.
 * The gateway calls this before routing such a request anywhere else.
 *
 * @throws FormatError 400 `invalid_request` with `param: "previous_response_id"` when
 *   `req.previousResponseId` is set; returns normally otherwise.
 */
export function assertNoPreviousResponse(req: HubRequest): void {
  if (req.previousResponseId) {
    throw new FormatError(
      hubError("invalid_request", `Previous response with id '${req.previousResponseId}' not found.`, {
        param: "previous_response_id",
        code: "previous_response_not_found",
      }),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// build
// ---------------------------------------------------------------------------------------------

function partToInputContent(p: HubPart, w: Warnings): Record<string, unknown> | undefined {
  switch (p.type) {
    case "text":
      return { type: "input_text", text: p.text };
    case "image": {
      if (p.source.kind === "file_id") return { type: "input_image", file_id: p.source.fileId, detail: p.detail ?? "auto" };
      const url = sourceToUrl(p.source);
      if (!url) {
        w.add("dropped_content", "An image with a text source cannot be sent to a Responses upstream; it was dropped.");
        return undefined;
      }
      return { type: "input_image", image_url: url, detail: p.detail ?? "auto" };
    }
    case "document": {
      const s = p.source;
      if (s.kind === "text") return { type: "input_text", text: s.data };
      const out: Record<string, unknown> = { type: "input_file" };
      if (s.kind === "file_id") out.file_id = s.fileId;
      else if (s.kind === "url") out.file_url = s.url;
      else out.file_data = `data:${s.mediaType};base64,${s.data}`;
      const filename = p.filename ?? p.title;
      if (filename) out.filename = filename;
      else if (s.kind === "base64") out.filename = s.mediaType === "application/pdf" ? "document.pdf" : "document";
      return out;
    }
    case "audio":
      return { type: "input_audio", input_audio: { data: p.data, format: p.format } };
    case "video":
      w.add("dropped_content", "Video input is not supported by the Responses format; it was dropped.");
      return undefined;
    default:
      return undefined;
  }
}

/** Tool-result content → `output`: a STRING when text-only (B31; some upstreams reject the list form). */
function toolResultOutput(r: ToolResultPart, w: Warnings): string | Array<Record<string, unknown>> {
  if (r.content.every((c) => c.type === "text")) return r.content.map((c) => (c as TextPart).text).join("\n");
  const parts: Array<Record<string, unknown>> = [];
  for (const c of r.content) {
    const x = partToInputContent(c, w);
    if (x) parts.push(x);
  }
  return parts;
}

interface BuildContext {
  target: BuildTarget;
  store: boolean | undefined;
  w: Warnings;
  /** Names of `custom` (freeform) tools: calls to them are rebuilt as `custom_tool_call`. */
  customTools: Set<string>;
  /** call ids of custom tool calls seen in the history (their outputs are `custom_tool_call_output`). */
  customCalls: Set<string>;
}

function customInput(args: string): string {
  try {
    const o = JSON.parse(args) as unknown;
    if (o && typeof o === "object" && typeof (o as Record<string, unknown>).input === "string") return (o as { input: string }).input;
  } catch {
    // not JSON: the raw text is the input
  }
  return args;
}

function thinkingItem(p: ThinkingPart, ctx: BuildContext): Record<string, unknown> | undefined {
  const sig = p.signature;
  if (sig && sig.family !== ctx.target.family) {
    ctx.w.add(
      "stripped_signature",
      `Reasoning state issued by '${sig.family}' cannot be sent to a '${ctx.target.family}' upstream; it was dropped.`,
    );
    return undefined;
  }
  const summaries = p.summary && p.summary.length > 0 ? p.summary : p.text.length > 0 && !p.raw ? [p.text] : [];
  const item: Record<string, unknown> = { type: "reasoning" };
  if (hasItemPrefix(p.itemId, "rs_")) item.id = p.itemId;
  item.summary = summaries.map((text) => ({ type: "summary_text", text }));
  if (p.raw && p.text.length > 0) item.content = [{ type: "reasoning_text", text: p.text }];
  if (sig) {
    item.encrypted_content = sig.value;
    return item;
  }
  // No encrypted state: only an item the upstream stored can be referenced, by id (B40).
  if (item.id && ctx.store !== false) return item;
  if (item.id) {
    ctx.w.add("dropped_reasoning", "Reasoning items without encrypted_content cannot be replayed with store:false; they were dropped.");
  } else {
    ctx.w.add("dropped_reasoning", "Reasoning without OpenAI encrypted state cannot be replayed to a Responses upstream; it was dropped.");
  }
  return undefined;
}

/** One hub message → Responses input items, in part order. */
function messageItems(m: HubMessage, ctx: BuildContext, out: Array<Record<string, unknown>>): void {
  if (m.role === "assistant") {
    let msg: { item: Record<string, unknown>; content: Array<Record<string, unknown>>; phase: string | undefined } | null = null;
    for (const p of m.content) {
      if (p.type === "text") {
        if (p.text.length === 0) continue;
        if (!msg || msg.phase !== p.phase) {
          const content: Array<Record<string, unknown>> = [];
          const item: Record<string, unknown> = { type: "message", role: "assistant", content };
          if (p.phase) item.phase = p.phase;
          out.push(item);
          msg = { item, content, phase: p.phase };
        }
        msg.content.push({ type: "output_text", text: p.text });
        continue;
      }
      msg = null;
      if (p.type === "thinking") {
        const item = thinkingItem(p, ctx);
        if (item) out.push(item);
      } else if (p.type === "redacted_thinking") {
        ctx.w.add("stripped_signature", "Redacted thinking cannot be sent to a Responses upstream; it was dropped.");
      } else if (p.type === "tool_call") {
        const callId = sanitizeCallId(p.id);
        if (ctx.customTools.has(p.name)) {
          ctx.customCalls.add(p.id);
          const item: Record<string, unknown> = { type: "custom_tool_call" };
          if (hasItemPrefix(p.itemId, "ctc_")) item.id = p.itemId;
          item.call_id = callId;
          item.name = p.name;
          item.input = customInput(p.arguments);
          out.push(item);
          continue;
        }
        const item: Record<string, unknown> = { type: "function_call" };
        if (hasItemPrefix(p.itemId, "fc_")) item.id = p.itemId;
        item.call_id = callId;
        item.name = p.name;
        if (p.namespace) item.namespace = p.namespace;
        item.arguments = p.arguments.length > 0 ? p.arguments : "{}";
        out.push(item);
      } else {
        // images/documents in an assistant turn: Responses assistant messages carry text only
        ctx.w.add("dropped_content", "Non-text content in an assistant turn cannot be sent to a Responses upstream; it was dropped.");
      }
    }
    return;
  }
  // user / system / developer: tool results become function_call_output items; the rest message items.
  let content: Array<Record<string, unknown>> | null = null;
  for (const p of m.content) {
    if (p.type === "tool_result") {
      content = null;
      const custom = ctx.customCalls.has(p.callId);
      out.push({
        type: custom ? "custom_tool_call_output" : "function_call_output",
        call_id: sanitizeCallId(p.callId),
        output: custom ? toolResultOutputText(p) : toolResultOutput(p, ctx.w),
      });
      continue;
    }
    if (p.type === "thinking" || p.type === "redacted_thinking" || p.type === "tool_call") continue;
    const c = partToInputContent(p, ctx.w);
    if (!c) continue;
    if (!content) {
      content = [];
      out.push({ type: "message", role: m.role, content });
    }
    content.push(c);
  }
}

function toolResultOutputText(r: ToolResultPart): string {
  return r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/**
 * Hub tools → Responses tools: flat functions, namespaces re-nested (members after the namespace's
 * own non-function tools, in hub order), provider tools of this format; other formats' provider tools
 * dropped with a warning. `fields` restores per-tool fields kept by {@link parseRequest}.
 */
export function buildTools(
  tools: HubTool[],
  w?: Warnings,
  fields?: Record<string, Record<string, unknown>>,
): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const namespaces = new Map<string, Array<Record<string, unknown>>>();
  const nsShell = (name: string, description?: string, extraMembers: Array<Record<string, unknown>> = []) => {
    let members = namespaces.get(name);
    if (!members) {
      members = [...extraMembers];
      namespaces.set(name, members);
      out.push({ type: "namespace", name, description: description ?? name, tools: members });
    }
    return members;
  };
  for (const t of tools) {
    if (t.kind === "provider") {
      if (t.format !== FORMAT) {
        w?.add("dropped_tool", `Tool '${t.name ?? String(t.raw.type ?? "?")}' is specific to ${t.format} and was not sent.`);
        continue;
      }
      if (t.raw.type === "namespace" && typeof t.raw.name === "string") {
        const existing = namespaces.get(t.raw.name);
        const members = (Array.isArray(t.raw.tools) ? t.raw.tools : []) as Array<Record<string, unknown>>;
        if (existing) existing.push(...members);
        else {
          const { tools: _m, ...shell } = t.raw;
          const list = [...members];
          namespaces.set(t.raw.name, list);
          out.push({ ...shell, tools: list });
        }
        continue;
      }
      out.push(t.raw);
      continue;
    }
    const f: Record<string, unknown> = { type: "function", name: t.name };
    if (t.description !== undefined) f.description = t.description;
    f.strict = t.strict ?? false;
    f.parameters = t.parameters;
    if (t.deferLoading) f.defer_loading = true;
    const kept = fields?.[t.namespace ? `${t.namespace}/${t.name}` : t.name];
    if (kept) for (const k of Object.keys(kept)) if (!(k in f)) f[k] = kept[k];
    if (t.namespace) nsShell(t.namespace).push(f);
    else out.push(f);
  }
  return out;
}

function customToolNames(tools: HubTool[]): Set<string> {
  const names = new Set<string>();
  const fnNames = new Set<string>();
  for (const t of tools) {
    if (t.kind === "function") fnNames.add(t.name);
    else if (t.format === FORMAT) {
      if (t.raw.type === "custom" && typeof t.raw.name === "string") names.add(t.raw.name);
      if (t.raw.type === "namespace" && Array.isArray(t.raw.tools)) {
        for (const m of t.raw.tools as Array<Record<string, unknown>>) if (m.type === "custom" && typeof m.name === "string") names.add(m.name);
      }
    }
  }
  for (const n of fnNames) names.delete(n);
  return names;
}

function buildToolChoice(tc: ToolChoice, customTools: Set<string>): unknown {
  switch (tc.type) {
    case "auto":
    case "required":
    case "none":
      return tc.type;
    case "tool":
      return { type: customTools.has(tc.name) ? "custom" : "function", name: tc.name };
  }
}

/** Bucketing of an Anthropic/Gemini thinking budget into an OpenAI effort (REFERENCE §5.9 "Reverse"). */
function effortForBudget(budget: number): ReasoningEffort {
  if (budget < 2048) return "low";
  if (budget < 16384) return "medium";
  return "high";
}

function buildReasoning(req: HubRequest, w: Warnings): Record<string, unknown> | undefined {
  const r = req.reasoning;
  if (!r) return undefined;
  const out: Record<string, unknown> = {};
  let effort: ReasoningEffort | undefined = r.effort;
  if (!effort && r.budgetTokens !== undefined && r.enabled !== false) effort = effortForBudget(r.budgetTokens);
  if (!effort && r.enabled === false) return undefined;
  if (effort === "max") {
    effort = "xhigh";
    w.add("changed_field", "Reasoning effort 'max' is sent as 'xhigh' to the Responses upstream.");
  }
  if (effort) out.effort = effort;
  if (r.summary) out.summary = r.summary;
  else if (req.source.format !== FORMAT && (effort || r.enabled || r.adaptive || r.includeThoughts)) out.summary = "auto";
  return Object.keys(out).length > 0 ? out : undefined;
}

function buildTextFormat(rf: ResponseFormat): Record<string, unknown> {
  if (rf.type !== "json_schema") return { type: rf.type };
  const out: Record<string, unknown> = { type: "json_schema", name: rf.name ?? "response", schema: rf.schema };
  if (rf.strict !== undefined) out.strict = rf.strict;
  return out;
}

/** Minimum `max_output_tokens` OpenAI accepts on reasoning models (REFERENCE §3.1, §3.4). */
const MIN_OUTPUT_TOKENS = 16;

/**
 * {@link HubRequest} → Responses provider body (codec `buildRequest`; REFERENCE §3.1, §5, B31, B37,
 * B40). For every kind:
 * - `hub.system` → `instructions` (blocks joined by a blank line); system/developer turns stay in
 *   `input` at their position (B31, REFERENCE §5.4);
 * - tool history → `function_call` / `function_call_output` items, output a STRING when text-only
 *   (B31); call ids over 64 chars mapped deterministically (§5.3); `fc_`/`rs_` item ids kept, others
 *   dropped (OpenAI validates prefixes, §3.1);
 * - tools flat (`{type:"function", name, parameters, strict}`), Codex namespaces re-nested, provider
 *   tools of other formats dropped with a warning;
 * - token limit → `max_output_tokens` (B37; raised to 16 with a warning when lower); `stop` is never
 *   sent (no such field) — warned; `top_k`, `n`>1 warned and dropped;
 * - thinking: reasoning items only for parts whose signature family equals `target.family`
 *   (encrypted_content), or id-only items when store is not false (B40); foreign signatures and
 *   redacted thinking dropped with a warning (F-8);
 * - `source.extra` re-emitted when the client spoke Responses (client_metadata, metadata, text
 *   verbosity, …).
 * Kind `codex` forces `store:false` up front (so id-only reasoning is dropped) and ends with
 * {@link applyCodexFixes} (SPEC P-2; the Codex CLI's headers are the executor's). With `store:false`
 * from the client `reasoning.encrypted_content` is added to `include` too, so reasoning can round-trip.
 *
 * Never throws; what it drops is listed in `warnings`.
 */
export function buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const fromResponses = req.source.format === FORMAT;
  const store = target.kind === "codex" ? false : req.store;
  const customTools = customToolNames(req.tools);
  const ctx: BuildContext = { target, store, w, customTools, customCalls: new Set() };

  const body: Record<string, unknown> = { model: target.model };
  const instructions = req.system
    .map((s) => s.text)
    .filter((t) => t.length > 0)
    .join("\n\n");
  if (instructions.length > 0) body.instructions = instructions;

  const input: Array<Record<string, unknown>> = [];
  for (const m of req.messages) messageItems(m, ctx, input);
  body.input = input;

  const toolFields = fromResponses ? (req.source.extra[TOOL_FIELDS_KEY] as Record<string, Record<string, unknown>> | undefined) : undefined;
  const tools = buildTools(req.tools, w, toolFields);
  if (tools.length > 0) body.tools = tools;
  if (req.toolChoice) body.tool_choice = buildToolChoice(req.toolChoice, customTools);
  else if (fromResponses && req.source.extra.tool_choice !== undefined) body.tool_choice = req.source.extra.tool_choice;
  if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;

  if (req.maxOutputTokens !== undefined) {
    let max = Math.round(req.maxOutputTokens);
    if (max < MIN_OUTPUT_TOKENS) {
      w.add("changed_field", `max_output_tokens ${max} is below the Responses minimum; ${MIN_OUTPUT_TOKENS} was sent.`);
      max = MIN_OUTPUT_TOKENS;
    }
    body.max_output_tokens = max;
  }
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) w.add("dropped_field", "top_k is not supported by the Responses format and was not sent.");
  if (req.stopSequences && req.stopSequences.length > 0) {
    w.add("dropped_field", "Stop sequences are not supported by the Responses format (no stop field) and were not sent.");
  }
  if (req.n !== undefined && req.n > 1) w.add("dropped_field", "n > 1 is not supported by the Responses format; one reply is generated.");

  const reasoning = buildReasoning(req, w);
  const extraReasoning = fromResponses ? (req.source.extra.reasoning as Record<string, unknown> | undefined) : undefined;
  if (reasoning || extraReasoning) body.reasoning = { ...extraReasoning, ...reasoning };

  const extraText = fromResponses ? (req.source.extra.text as Record<string, unknown> | undefined) : undefined;
  if (req.responseFormat || extraText) {
    const text: Record<string, unknown> = { ...extraText };
    if (req.responseFormat) text.format = buildTextFormat(req.responseFormat);
    body.text = text;
  }

  if (store !== undefined) body.store = store;
  let include = req.include ? [...req.include] : undefined;
  if (store === false && !include?.includes("reasoning.encrypted_content")) {
    include = [...(include ?? []), "reasoning.encrypted_content"];
  }
  if (include) body.include = include;
  if (req.promptCacheKey !== undefined) body.prompt_cache_key = req.promptCacheKey;
  if (req.previousResponseId !== undefined) body.previous_response_id = req.previousResponseId;
  if (req.user !== undefined) {
    if (fromResponses || req.user.length <= 64) body.user = req.user;
    else w.add("dropped_field", "The end-user id is longer than the 64 characters OpenAI accepts and was not sent.");
  }

  if (fromResponses) {
    for (const [k, val] of Object.entries(req.source.extra)) {
      if (k === "tool_choice" || k === "reasoning" || k === "text" || k === TOOL_FIELDS_KEY) continue;
      if (!(k in body)) body[k] = val;
    }
  }
  body.stream = target.stream;
  if (target.kind === "codex") applyCodexFixes(body, target, w);
  return { body, warnings: w.list };
}

/**
 * Tidies a Responses body for a Responses provider WITHOUT a hub round trip (codec `tidyRequest`;
 * used for same-format third parties and for a native Responses → `codex` call, SPEC F-3, P-2, B40):
 * - `model` = `target.model`, `stream` = `target.stream`;
 * - kind `codex`: {@link applyCodexFixes} (which also forces `store: false`);
 * - with `store: false` (sent or forced): reasoning items without `encrypted_content` are dropped (an
 *   id-only item is a 404 "Items are not persisted when store is set to false", REFERENCE §3.1), and
 *   `reasoning.encrypted_content` is requested;
 * - item `id`s without one of the prefixes in `OPENAI_ITEM_ID_PREFIXES` (common.ts) are removed from
 *   their items (OpenAI validates the prefix: "Expected an ID that begins with 'msg'"); the ids the
 *   Codex CLI sends (`msg_`, `fc_`, and `fco_` for outputs) are kept;
 * - `call_id`s over 64 characters are mapped deterministically (call and output alike, §5.3).
 * Everything else is passed through as the client sent it. The input object is not mutated.
 */
export function tidyRequest(body: Record<string, unknown>, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const out: Record<string, unknown> = { ...body, model: target.model, stream: target.stream };
  if (target.kind === "codex") applyCodexFixes(out, target, w);
  const storeFalse = out.store === false;
  if (storeFalse) {
    const include = Array.isArray(out.include) ? (out.include as unknown[]) : [];
    if (!include.includes("reasoning.encrypted_content")) out.include = [...include, "reasoning.encrypted_content"];
  }
  if (Array.isArray(out.input)) {
    const items: unknown[] = [];
    for (const raw of out.input as unknown[]) {
      if (!raw || typeof raw !== "object") {
        items.push(raw);
        continue;
      }
      const item = raw as Record<string, unknown>;
      if (item.type === "reasoning" && storeFalse && !(typeof item.encrypted_content === "string" && item.encrypted_content)) {
        w.add("dropped_reasoning", "Reasoning items without encrypted_content cannot be replayed with store:false; they were dropped.");
        continue;
      }
      let next = item;
      if (typeof item.id === "string" && !isOpenAiItemId(item.id)) {
        const { id: _id, ...rest } = item;
        next = rest;
      }
      if (typeof next.call_id === "string" && next.call_id.length > 64) next = { ...next, call_id: sanitizeCallId(next.call_id) };
      items.push(next);
    }
    out.input = items;
  }
  return { body: out, warnings: w.list };
}

/**
 * Fields the Codex backend rejects with 400 "Unsupported parameter" (the Codex CLI never sends them;
 * as reported against chatgpt.com/backend-api/codex by other gateways: sub2api, CLIProxyAPI,
 * codex-proxy issues).
 */
export const CODEX_UNSUPPORTED_FIELDS = ["max_output_tokens", "max_completion_tokens", "temperature", "top_p", "service_tier", "user", "safety_identifier"];

/**
 * The Codex backend's body rules (SPEC P-2, F-9), applied by {@link buildRequest} and
 * {@link tidyRequest} for kind `codex` to a body object the caller owns (its top-level fields are
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
function applyCodexFixes(body: Record<string, unknown>, target: BuildTarget, w: Warnings): void {
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
