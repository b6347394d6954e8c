/**
 * OpenAI Responses client body → {@link HubRequest} (REFERENCE §3.1, §5): {@link parseRequest}, and
 * the gateway's rule for `previous_response_id` ({@link assertNoPreviousResponse}).
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
 *   every format can carry it; `namespace` kept, the part marked `custom`, so a namespace's function
 *   and custom member of one name are told apart); rebuilt as `custom_tool_call` for Responses targets.
 * - `reasoning` → thinking part: summary texts (joined by a blank line) or raw `reasoning_text`,
 *   `itemId`, and `encrypted_content` as an `openai`-family signature (a tagged `sy|<family>|…` value,
 *   common.ts, gets its family back); a reasoning item with no text and a Gemini signature right before
 *   a `function_call` is that call's signature (formats/call-signatures.ts).
 * - tools: `function` → FunctionTool; `namespace` → one ProviderTool holding the namespace shell
 *   (name, description, non-function members) followed by its function members flattened with
 *   `namespace` set; any other type → ProviderTool (kept for Responses targets only).
 * - `tool_choice` `allowed_tools` naming function tools → hub `allowed`; `text.verbosity` → `verbosity`;
 *   `include` kept whole, its `message.output_text.logprobs` entry also → `logprobs: true`;
 *   `top_logprobs` → `topLogprobs`.
 * - fields without a hub slot (`client_metadata`, `metadata`, `truncation`, `service_tier`,
 *   unmappable `tool_choice`, …) → `source.extra`, re-emitted for Responses targets.
 *
 * - `local_shell_call` → a tool_call of the `local_shell` function (arguments from its `exec` action,
 *   formats/tool-kinds.ts); `local_shell_call_output` → tool_result.
 *
 * Item types the hub cannot hold (`web_search_call`, `item_reference`, …) are not carried (a hub
 * "provider item" part would be needed): their types are listed in `droppedItemTypes`, which the
 * pipeline names in a `dropped_input_item` warning (pipeline/translate.ts).
 */
import { LOCAL_SHELL_NAME, localShellArguments } from "../tool-kinds.ts";
import * as v from "valibot";
import { openAiParam, specificIssue } from "../schema-issues.ts";
import {
  FormatError,
  hubError,
  invalidRequest as invalid,
  type AudioPart,
  type HubError,
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
} from "../hub.ts";
import {
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
import { LOGPROBS_INCLUDE, TOOL_FIELDS_KEY, mediaTypeForFilename, parseDataUrl, readEncryptedContent } from "./common.ts";
import { signaturesOntoCalls } from "../call-signatures.ts";
import {
  acceptedRequest,
  plainCustomToolCall,
  plainCustomToolCallOutput,
  plainFunctionCall,
  plainFunctionCallOutput,
  plainFunctionTool,
  plainMessageItem,
  plainReasoningItem,
} from "./request-shape.ts";

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
  "top_logprobs",
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
/** Function-tool fields the hub maps itself. */
const FUNCTION_TOOL_FIELDS = new Set(["type", "name", "description", "parameters", "strict", "defer_loading"]);

const EFFORTS: ReadonlySet<string> = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/** `value` (at `path`, `""` for the body) checked against `schema`; a 400 naming the field as OpenAI does (`input[3].content[0].type`). */
function check<T extends v.GenericSchema>(schema: T, value: unknown, path: string): v.InferOutput<T> {
  const r = v.safeParse(schema, value);
  if (r.success) return r.output;
  const issue = specificIssue(r.issues[0]);
  const param = openAiParam(issue, path);
  throw invalid(param ? `Invalid '${param}': ${issue.message}` : `Invalid request: ${issue.message}`, param);
}


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
      const t: TextPart = { type: "text", text: typeof p.refusal === "string" ? p.refusal : String(p.text ?? ""), refusal: true };
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

/**
 * Builds the hub messages from the `input` items (see the module doc for the grouping rules). The type
 * of each item the hub cannot hold is added to `dropped`.
 */
function parseInput(input: string | Array<Record<string, any>> | null | undefined, hand: boolean, dropped: Set<string>): HubMessage[] {
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
        // Each item checked by hand when request-shape.ts is sure of it, else by its schema (same 400).
        const m = hand && plainMessageItem(item) ? item : check(MessageItemSchema, item, path);
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
        const fc = hand && plainFunctionCall(item) ? item : check(FunctionCallItemSchema, item, path);
        const part: ToolCallPart = { type: "tool_call", id: fc.call_id, name: fc.name, arguments: fc.arguments };
        if (fc.id) part.itemId = fc.id;
        if (fc.namespace) part.namespace = fc.namespace;
        assistantTurn().content.push(part);
        break;
      }
      case "custom_tool_call": {
        const cc = hand && plainCustomToolCall(item) ? item : check(CustomToolCallItemSchema, item, path);
        const part: ToolCallPart = { type: "tool_call", id: cc.call_id, name: cc.name, arguments: JSON.stringify({ input: cc.input }) };
        if (cc.id) part.itemId = cc.id;
        if (cc.namespace) part.namespace = cc.namespace;
        part.custom = true;
        assistantTurn().content.push(part);
        break;
      }
      case "function_call_output": {
        const fo = hand && plainFunctionCallOutput(item) ? item : check(FunctionCallOutputItemSchema, item, path);
        resultTurn().content.push({ type: "tool_result", callId: fo.call_id, content: toolOutputContent(fo.output) });
        break;
      }
      case "local_shell_call": {
        // Codex's local shell: held as a call of the local_shell function (formats/tool-kinds.ts).
        const id = typeof item.call_id === "string" && item.call_id ? item.call_id : typeof item.id === "string" ? item.id : "";
        if (!id) throw invalid(`${path}.call_id: a local_shell_call needs a call_id.`, `${path}.call_id`);
        const part: ToolCallPart = { type: "tool_call", id, name: LOCAL_SHELL_NAME, arguments: localShellArguments(item.action) };
        if (typeof item.id === "string" && item.id) part.itemId = item.id;
        assistantTurn().content.push(part);
        break;
      }
      case "local_shell_call_output": {
        const callId = typeof item.call_id === "string" ? item.call_id : typeof item.id === "string" ? item.id : "";
        resultTurn().content.push({ type: "tool_result", callId, content: toolOutputContent(typeof item.output === "string" ? item.output : "") });
        break;
      }
      case "custom_tool_call_output": {
        const co = hand && plainCustomToolCallOutput(item) ? item : check(CustomToolCallOutputItemSchema, item, path);
        resultTurn().content.push({ type: "tool_result", callId: co.call_id, content: toolOutputContent(co.output) });
        break;
      }
      case "reasoning": {
        const r = hand && plainReasoningItem(item) ? (item as v.InferOutput<typeof ReasoningItemSchema>) : check(ReasoningItemSchema, item, path);
        const summary = (r.summary ?? []).map((s) => s.text);
        const rawTexts = (r.content ?? []).map((c) => c.text ?? "").filter((t) => t.length > 0);
        const part: ThinkingPart = { type: "thinking", text: summary.length > 0 ? summary.join("\n\n") : rawTexts.join("\n\n") };
        if (summary.length > 0) part.summary = summary;
        else if (rawTexts.length > 0) part.raw = true;
        if (r.id) part.itemId = r.id;
        if (r.encrypted_content) part.signature = readEncryptedContent(r.encrypted_content);
        assistantTurn().content.push(part);
        break;
      }
      default:
        // web_search_call, item_reference, … : no hub slot (see module doc); named in a warning.
        dropped.add(String(type));
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
function parseTools(tools: Array<Record<string, any>> | null | undefined, extra: Record<string, unknown>, hand: boolean): HubTool[] {
  if (!tools) return [];
  const out: HubTool[] = [];
  const fields: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]!;
    const path = `tools[${i}]`;
    if (t.type === "function") {
      out.push(parseFunctionTool(hand && plainFunctionTool(t) ? (t as FunctionToolBody) : check(FunctionToolSchema, t, path)));
      keepToolFields(t, t.name, fields);
    } else if (t.type === "namespace") {
      const ns = check(NamespaceToolSchema, t, path);
      const others = ns.tools.filter((m) => m.type !== "function");
      const { tools: _members, ...shell } = ns;
      out.push({ kind: "provider", format: FORMAT, raw: { ...shell, tools: others }, name: ns.name });
      for (let j = 0; j < ns.tools.length; j++) {
        const m = ns.tools[j]!;
        if (m.type !== "function") continue;
        const f = parseFunctionTool(hand && plainFunctionTool(m) ? (m as FunctionToolBody) : check(FunctionToolSchema, m, `${path}.tools[${j}]`));
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

type FunctionToolBody = v.InferOutput<typeof FunctionToolSchema>;

function parseFunctionTool(f: FunctionToolBody): FunctionTool {
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

/**
 * `{type: "allowed_tools", mode, tools: [{type: "function", name}, …]}` (OpenAI Responses reference,
 * `ToolChoiceAllowed`) naming function tools only → hub `allowed` choice; undefined otherwise (hosted
 * or custom tools stay in `source.extra`).
 */
function allowedFunctions(o: Record<string, any>): ToolChoice | undefined {
  if (o.type !== "allowed_tools" || (o.mode !== "auto" && o.mode !== "required") || !Array.isArray(o.tools) || o.tools.length === 0) return undefined;
  if (Object.keys(o).length !== 3) return undefined;
  const names: string[] = [];
  for (const t of o.tools) {
    if (!t || typeof t !== "object" || t.type !== "function" || typeof t.name !== "string" || Object.keys(t).length !== 2) return undefined;
    names.push(t.name);
  }
  return { type: "allowed", mode: o.mode, names };
}

function parseToolChoice(tc: unknown, extra: Record<string, unknown>): ToolChoice | undefined {
  if (tc == null) return undefined;
  if (tc === "auto" || tc === "required" || tc === "none") return { type: tc };
  if (typeof tc === "object") {
    const o = tc as Record<string, any>;
    if ((o.type === "function" || o.type === "custom") && typeof o.name === "string") return { type: "tool", name: o.name };
    const allowed = allowedFunctions(o);
    if (allowed) return allowed;
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
  return parseWith(body, true);
}

/**
 * {@link parseRequest} with every check made by valibot's schemas, none by request-shape.ts: what the
 * hand checks are compared with (test/formats/openai-responses/request-shape.test.ts).
 */
export function parseRequestBySchema(body: unknown): HubRequest {
  return parseWith(body, false);
}

/** {@link parseRequest}; `hand`: the hand checks of request-shape.ts first, the schemas where they are not sure. */
function parseWith(body: unknown, hand: boolean): HubRequest {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalid("The request body must be a JSON object.");
  // The envelope checked by hand (request-shape.ts, no copy of every item and tool); the schema when that is not sure.
  const b = ((hand ? acceptedRequest(body) : undefined) as v.InferOutput<typeof ResponsesRequestSchema> | undefined) ?? check(ResponsesRequestSchema, body, "");
  const raw = body as Record<string, unknown>;
  const extra: Record<string, unknown> = {};
  for (const k of Object.keys(raw)) if (!MAPPED_FIELDS.has(k)) extra[k] = raw[k];

  const system: TextPart[] = [];
  const dropped = new Set<string>();
  if (typeof b.instructions === "string") {
    if (b.instructions.length > 0) system.push({ type: "text", text: b.instructions });
  } else if (Array.isArray(b.instructions)) {
    for (const m of parseInput(b.instructions as Array<Record<string, any>>, hand, dropped)) {
      for (const p of m.content) if (p.type === "text" && p.text.length > 0) system.push({ type: "text", text: p.text });
    }
  }

  const req: HubRequest = {
    model: b.model,
    system,
    messages: signaturesOntoCalls(parseInput(b.input as string | Array<Record<string, any>> | null | undefined, hand, dropped)),
    tools: parseTools(b.tools as Array<Record<string, any>> | null | undefined, extra, hand),
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
    } else if (effort !== undefined && effort !== null) {
      // Not a level the hub carries: said where the request is built (HubRequest.droppedEffort).
      req.droppedEffort = { field: "reasoning.effort", value: effort };
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
    const verbosity = restText.verbosity;
    if (verbosity === "low" || verbosity === "medium" || verbosity === "high") {
      req.verbosity = verbosity;
      delete restText.verbosity;
    }
    if (Object.keys(restText).length > 0) extra.text = restText;
  }
  if (typeof b.store === "boolean") req.store = b.store;
  if (b.include) {
    req.include = [...b.include];
    if (b.include.includes(LOGPROBS_INCLUDE)) req.logprobs = true;
  }
  if (typeof raw.top_logprobs === "number") req.topLogprobs = raw.top_logprobs;
  else if (raw.top_logprobs !== undefined && raw.top_logprobs !== null) extra.top_logprobs = raw.top_logprobs;
  if (typeof b.prompt_cache_key === "string") req.promptCacheKey = b.prompt_cache_key;
  if (typeof b.previous_response_id === "string" && b.previous_response_id.length > 0) req.previousResponseId = b.previous_response_id;
  if (typeof b.user === "string") req.user = b.user;
  if (dropped.size > 0) req.droppedItemTypes = [...dropped];
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

/**
 * The 400 a `previous_response_id` that names no response gets (case B41's field, checked before any
 * routing, for every lane and both transports: `POST /v1/responses`' guard, pipeline/guard.ts
 * `checkFieldTypes`, and the Responses WebSocket, SPEC 2.5, which reads the field itself):
 * - neither a string nor null: the request schema's own answer (`Invalid 'previous_response_id':
 *   Invalid type: Expected string but received 42`, as OpenAI's API words it);
 * - `""`: a 400 in the words and code OpenAI's API uses for an empty string where one is required
 *   (`Invalid '…': empty string. Expected a string with minimum length 1, …`, code `empty_string`, as
 *   quoted from its 400 for an empty `input[82].name`; the live API's answer for this field was not
 *   tried). Until 2026-12-07 `""` counted as no previous response on both transports (a
 *   translated lane dropped it, a native one forwarded it), so a client whose chaining lost its id was
 *   answered out of context without a word; OpenAI documents no such meaning for it (its id is "the
 *   unique ID of the previous response", and it refuses ids that are not one).
 * All carry `param: "previous_response_id"`. Undefined for a non-empty string, null or an absent field.
 */
export function previousResponseIdError(value: unknown): HubError | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "") {
    return hubError("invalid_request", "Invalid 'previous_response_id': empty string. Expected a string with minimum length 1 (the id of an earlier response), but got an empty string instead; leave the field out to start a new conversation.", {
      param: "previous_response_id",
      code: "empty_string",
    });
  }
  if (typeof value === "string") return undefined;
  return schemaError(v.nullish(v.string()), value, "previous_response_id");
}

/**
 * The 400 a Responses request with `background` set gets (`POST /v1/responses` and the Responses
 * WebSocket alike, every lane): a background response is created now and fetched later
 * (`GET /v1/responses/{id}`, polled or streamed again, cancelled with `POST …/cancel`), and the gateway
 * keeps no responses and serves none of those routes, so the client could never read the result (a
 * translated lane answered it in the foreground as if the field were not there; a native one
 * forwarded it). OpenAI's WebSocket mode does not take it either ("`background` is not supported over
 * WebSocket": openai SDK 7.59 `ResponsesClientEvent.ResponseCreate`, the SDK's lanes delete it).
 * `background: false` or null is served; a value that is not a boolean is the schema's type error.
 */
export function backgroundError(value: unknown): HubError | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (value !== true) return schemaError(v.nullish(v.boolean()), value, "background");
  return hubError(
    "invalid_request",
    "Background responses are not supported: the gateway keeps no responses to fetch later (GET /v1/responses/{id}). Send the request without `background` (stream it to read the reply as it comes).",
    { param: "background", code: "unsupported_parameter" },
  );
}

/** The fields of a Responses body the gateway refuses before routing: {@link backgroundError}, then {@link previousResponseIdError}. */
export function responsesFieldError(body: Record<string, unknown>): HubError | undefined {
  return backgroundError(body.background) ?? previousResponseIdError(body.previous_response_id);
}

/** {@link check}'s 400 as a value: the HubError `value` at `path` gets against `schema`, or undefined. */
function schemaError(schema: v.GenericSchema, value: unknown, path: string): HubError | undefined {
  try {
    check(schema, value, path);
  } catch (e) {
    if (e instanceof FormatError) return e.error;
    throw e;
  }
  return undefined;
}
