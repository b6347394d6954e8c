/**
 * Gemini client body → hub request (FormatCodec.parseRequest; REFERENCE §4.1, §5.3–§5.12; SPEC F-2,
 * F-7, F-8). The body is a `GenerateContentRequest` as Gemini CLI and `@google/genai` send it; the model
 * and whether to stream are in the URL, not the body, so the HTTP layer passes them in (a `model` field
 * in the body, which Google also accepts, is read when the caller passes none).
 *
 * What goes where:
 * - `systemInstruction` (a Content, or a plain string) → `hub.system`, one text block per text part.
 * - `contents[]`: role `user` (also the legacy `function` role, and a missing role) → `user`; `model` →
 *   `assistant`. Any other role is a 400. A content that yields no hub part (only empty texts, no
 *   parts) is no turn, counted in `droppedEmptyTurns` (the translate stage's `dropped_empty_message`);
 *   a part with no member the parser reads (`toolCall`, a kind newer than this code) is left out and
 *   named in `droppedItemTypes` (`dropped_input_item`).
 * - Parts: `text` → text (its `thoughtSignature` kept on the same part); `thought: true` text →
 *   thinking (consecutive thought parts are one thinking block; a signature on any of them is the
 *   block's); an empty non-thought text that carries only a signature → a signature-only thinking part
 *   (the shape Gemini itself sends, decoder.ts); `inlineData` / `fileData` → image, document (PDF,
 *   text/*), audio or video by MIME type; `functionCall` → tool call; `functionResponse` → tool result;
 *   `executableCode` / `codeExecutionResult` (Gemini's server-side code tool) → text, so other providers
 *   still see what ran.
 * - Signatures: a tagged `sy|<family>|…` value gets its family back, an untagged one is `gemini`, and
 *   Google's placeholder `skip_thought_signature_validator` (Gemini CLI adds it to calls it got without
 *   one) is no state at all (mapping.ts `readGeminiSignature`). A functionCall's `sy|thoughts|…`
 *   signature is the reasoning the gateway carried on the call for a client that drops thought parts
 *   (thought-carry.ts): its thinking parts go back before the call, the call gets no signature.
 * - Tool-call ids (REFERENCE §5.3): `functionCall.id` when the client kept it (Gemini CLI does, as
 *   `<name>__<id>`), else minted from the position (`call_<content>_<part>`: the same every turn, so
 *   prompt caches keep hitting). A `functionResponse` pairs with the earlier unanswered call of the same
 *   id, else the first unanswered call of the same name in the model turn before it, else in any turn
 *   (Gemini pairs by name and order; a call the user abandoned earlier is not taken instead).
 * - `functionResponse.response` → the result text: the one string member of `{output}`, `{result}` or
 *   `{content}`; `{error: "…"}` alone → an error result; anything else → its JSON. Media in
 *   `functionResponse.parts` (multimodal results) → image/document parts of the result.
 * - `tools[].functionDeclarations[]` → function tools; `parametersJsonSchema` is taken as is,
 *   `parameters` (Gemini's OpenAPI subset: upper-case types, `nullable`) is turned into JSON Schema;
 *   every other tool entry (`googleSearch`, `codeExecution`, `urlContext`, …) → a `gemini` provider
 *   tool, one per key.
 * - `toolConfig.functionCallingConfig.mode`: AUTO → auto, VALIDATED → auto (with
 *   `allowedFunctionNames`: an `allowed` choice of mode auto), ANY → required (a single
 *   `allowedFunctionNames` entry → that tool, several → an `allowed` choice of mode required), NONE → none.
 * - `generationConfig`: maxOutputTokens, temperature, topP, topK, stopSequences, candidateCount (→ n),
 *   responseLogprobs (→ logprobs), logprobs (→ topLogprobs),
 *   `responseMimeType: application/json` with `responseJsonSchema` / `responseSchema` → JSON output
 *   (with its schema); `text/x.enum` (enum mode: a bare value, which no other provider has) → no
 *   output format, its mime type and schema kept in `source.extra`, `thinkingConfig` (thinkingBudget 0 → reasoning off, −1 → on and dynamic, N →
 *   budget N; thinkingLevel → effort; includeThoughts kept). Other members are kept in `source.extra`
 *   as `generationConfig.<name>`, and `safetySettings`, `cachedContent`, `labels` as themselves: the
 *   Gemini builder sends them again, other builders report them dropped.
 *
 * Throws {@link FormatError} (400 `invalid_request`, naming the field) for a body that is not a
 * GenerateContentRequest: no `contents` array, an empty one, a content without `parts`, a role other
 * than user/model, a function declaration without a name.
 */
import { isObj } from "../json.ts";
import { camelCaseRequest } from "./field-names.ts";
import {
  FormatError,
  hubError,
  type DocumentPart,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ImagePart,
  type MediaSource,
  type ReasoningConfig,
  type ReasoningEffort,
  type ResponseFormat,
  type TextPart,
  type ThinkingPart,
  type ToolChoice,
} from "../hub.ts";
import { readGeminiSignature } from "./mapping.ts";
import { insertCarried, readCarriedThoughts, THOUGHTS_FAMILY } from "./thought-carry.ts";

type Obj = Record<string, unknown>;

function bad(message: string, param?: string): FormatError {
  return new FormatError(hubError("invalid_request", message, param ? { param } : {}));
}

/** Options of {@link parseRequest} beyond the body. */
export interface GeminiParseOptions {
  /** The model named in the URL (`/v1beta/models/{model}:…`). */
  model?: string;
  /** Whether the URL asked for a stream (`:streamGenerateContent`). */
  stream?: boolean;
}

/** Members of `generationConfig` the hub has a slot for (everything else is kept as extra). */
const MAPPED_GENERATION = new Set([
  "maxOutputTokens",
  "responseLogprobs",
  "logprobs",
  "temperature",
  "topP",
  "topK",
  "stopSequences",
  "candidateCount",
  "responseMimeType",
  "responseJsonSchema",
  "responseSchema",
  "_responseJsonSchema",
  "thinkingConfig",
]);

/** Top-level request members with a hub slot, or none worth keeping (`model` lives in the URL). */
const MAPPED_TOP = new Set(["contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model"]);

/**
 * Parses a Gemini `GenerateContentRequest` into the hub (see the module comment). Pure; throws
 * {@link FormatError} on a body that is not one.
 */
export function parseRequest(body: unknown, opts: GeminiParseOptions = {}): HubRequest {
  if (!isObj(body)) throw bad("The request body must be a JSON object.");
  // The API's snake_case names (`system_instruction`, `inline_data`) read as the camelCase ones.
  body = camelCaseRequest(body);
  if (!isObj(body)) throw bad("The request body must be a JSON object.");
  // countTokens may wrap the whole request (`{generateContentRequest: {model, contents, …}}`).
  if (body.contents === undefined && isObj(body.generateContentRequest)) body = body.generateContentRequest;
  if (!isObj(body)) throw bad("The request body must be a JSON object.");
  const contents = body.contents;
  if (!Array.isArray(contents)) throw bad("`contents` must be an array of Content objects.", "contents");
  if (contents.length === 0) throw bad("`contents` must not be empty.", "contents");

  const bodyModel = typeof body.model === "string" ? body.model.replace(/^models\//, "") : "";
  const left: LeftOut = { emptyTurns: 0, parts: new Set() };
  const req: HubRequest = {
    model: opts.model ?? bodyModel,
    system: parseSystem(body.systemInstruction),
    messages: parseContents(contents, left),
    tools: parseTools(body.tools),
    stream: opts.stream === true,
    source: { format: "gemini", extra: {} },
  };
  if (left.emptyTurns > 0) req.droppedEmptyTurns = left.emptyTurns;
  if (left.parts.size > 0) req.droppedItemTypes = [...left.parts];

  const choice = parseToolConfig(body.toolConfig);
  if (choice) req.toolChoice = choice;

  const gc = body.generationConfig;
  if (gc !== undefined && gc !== null) {
    if (!isObj(gc)) throw bad("`generationConfig` must be an object.", "generationConfig");
    applyGenerationConfig(req, gc);
  }

  for (const [k, v] of Object.entries(body)) {
    if (!MAPPED_TOP.has(k) && v !== undefined && v !== null) req.source.extra[k] = v;
  }
  if (isObj(body.toolConfig)) {
    for (const [k, v] of Object.entries(body.toolConfig)) {
      if (k !== "functionCallingConfig" && v !== undefined && v !== null) req.source.extra[`toolConfig.${k}`] = v;
    }
  }
  return req;
}

// ---------------------------------------------------------------------------------------------
// System prompt
// ---------------------------------------------------------------------------------------------

function parseSystem(si: unknown): TextPart[] {
  if (si === undefined || si === null) return [];
  if (typeof si === "string") return si.length > 0 ? [{ type: "text", text: si }] : [];
  if (!isObj(si)) throw bad("`systemInstruction` must be a Content object.", "systemInstruction");
  const parts = si.parts;
  if (!Array.isArray(parts)) return [];
  const out: TextPart[] = [];
  for (const p of parts) {
    if (isObj(p) && typeof p.text === "string" && p.text.length > 0) out.push({ type: "text", text: p.text });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Contents
// ---------------------------------------------------------------------------------------------

/** A call waiting for its result, in history order. */
interface OpenCall {
  id: string;
  name: string;
  /** The hub assistant turn (index in the parsed messages) the call was made in. */
  turn: number;
}

/** What {@link parseContents} left out, for the request's `droppedEmptyTurns` and `droppedItemTypes` (SPEC F-2). */
interface LeftOut {
  /** Contents that yielded no hub part (only empty texts, no parts). */
  emptyTurns: number;
  /** Parts of a kind the hub has no slot for, named by their member (`videoMetadata part`). */
  parts: Set<string>;
}

/** The members of a Part this parser reads, or that only qualify another member of the part. */
const PART_MEMBERS = new Set(["text", "thought", "thoughtSignature", "thought_signature", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode", "codeExecutionResult", "videoMetadata", "mediaResolution", "partMetadata"]);

/**
 * `contents[]` → hub turns (module comment). A content that yields no hub part (only empty texts, no
 * parts) is no turn, counted in `left.emptyTurns`; a part with none of the members the parser reads is
 * left out and named in `left.parts`.
 */
function parseContents(contents: unknown[], left: LeftOut): HubMessage[] {
  const messages: HubMessage[] = [];
  const open: OpenCall[] = [];
  /** The hub turn of the last model content with a part: a response pairs by name with its calls first. */
  let modelTurn = -1;
  contents.forEach((c, ci) => {
    if (!isObj(c)) throw bad(`contents[${ci}] must be a Content object.`, `contents[${ci}]`);
    const role = c.role === undefined || c.role === null || c.role === "" ? "user" : c.role;
    if (role !== "user" && role !== "model" && role !== "function") {
      throw bad(`contents[${ci}].role must be "user" or "model".`, `contents[${ci}].role`);
    }
    const parts = c.parts;
    if (!Array.isArray(parts)) throw bad(`contents[${ci}].parts must be an array of parts.`, `contents[${ci}].parts`);
    const assistant = role === "model";
    // The hub turn this content's calls belong to: consecutive model contents are one turn (below).
    const turn = assistant ? (messages.at(-1)?.role === "assistant" ? messages.length - 1 : messages.length) : -1;
    const content: HubPart[] = [];
    let thinking: ThinkingPart | undefined;
    let unread = false;
    parts.forEach((p, pi) => {
      // A part that is no Part, or holds nothing, was skipped without a word: the turn could vanish
      // (a user's question with it). The API refuses both; so does this, naming the part.
      if (!isObj(p)) throw bad(`contents[${ci}].parts[${pi}] must be a Part object.`, `contents[${ci}].parts[${pi}]`);
      if (p.text !== undefined && p.text !== null && typeof p.text !== "string") throw bad(`contents[${ci}].parts[${pi}].text must be a string.`, `contents[${ci}].parts[${pi}].text`);
      if (Object.keys(p).length === 0) {
        throw bad(`contents[${ci}].parts[${pi}] is empty: a part holds text, inlineData, fileData, functionCall, functionResponse, executableCode or codeExecutionResult.`, `contents[${ci}].parts[${pi}]`);
      }
      const sigText = typeof p.thoughtSignature === "string" ? p.thoughtSignature : typeof p.thought_signature === "string" ? p.thought_signature : undefined;
      const sig = sigText !== undefined ? readGeminiSignature(sigText) : undefined;
      if (typeof p.text === "string" && p.thought === true) {
        if (!thinking) {
          thinking = { type: "thinking", text: "" };
          content.push(thinking);
        }
        thinking.text += p.text;
        if (sig) thinking.signature = sig;
        return;
      }
      thinking = undefined;
      if (typeof p.text === "string") {
        if (p.text.length > 0) {
          const t: TextPart = { type: "text", text: p.text };
          if (sig) t.signature = sig;
          content.push(t);
        } else if (sig && assistant) {
          content.push({ type: "thinking", text: "", signature: sig });
        }
        return;
      }
      if (isObj(p.functionCall)) {
        const fc = p.functionCall;
        const name = typeof fc.name === "string" ? fc.name : "";
        if (!name) throw bad(`contents[${ci}].parts[${pi}].functionCall.name is required.`, `contents[${ci}].parts[${pi}].functionCall.name`);
        const id = typeof fc.id === "string" && fc.id.length > 0 ? fc.id : `call_${ci}_${pi}`;
        const call: HubPart = { type: "tool_call", id, name, arguments: JSON.stringify(isObj(fc.args) ? fc.args : {}) };
        // Reasoning the gateway carried on the call (thought-carry.ts) goes back before it.
        const carried = sig && assistant ? readCarriedThoughts(sig) : undefined;
        if (carried) insertCarried(content, carried);
        else if (sig && sig.family !== THOUGHTS_FAMILY) call.signature = sig;
        content.push(call);
        open.push({ id, name, turn });
        return;
      }
      if (isObj(p.functionResponse)) {
        content.push(parseFunctionResponse(p.functionResponse, open, modelTurn, ci, pi));
        return;
      }
      const media = mediaOf(p);
      if (media) {
        content.push(media);
        return;
      }
      if (isObj(p.executableCode) && typeof p.executableCode.code === "string") {
        const lang = typeof p.executableCode.language === "string" ? p.executableCode.language.toLowerCase() : "";
        content.push({ type: "text", text: "```" + (lang === "language_unspecified" ? "" : lang) + "\n" + p.executableCode.code + "\n```" });
        return;
      }
      if (isObj(p.codeExecutionResult)) {
        const r = p.codeExecutionResult;
        const output = typeof r.output === "string" ? r.output : "";
        content.push({ type: "text", text: `Code execution result (${typeof r.outcome === "string" ? r.outcome : "OUTCOME_UNSPECIFIED"}):\n${output}` });
        return;
      }
      // A kind of part the hub has no slot for (a member this parser does not read): named, not silent (SPEC F-2).
      for (const k in p) if (!PART_MEMBERS.has(k)) return void ((unread = true), left.parts.add(`${k} part`));
    });
    if (content.length === 0) {
      // Said, not silent (SPEC F-2): the translate stage names it in a dropped_empty_message warning,
      // or, when the turn held only parts of a kind left out, in their dropped_input_item one.
      if (!unread) left.emptyTurns++;
      return;
    }
    const hubRole = assistant ? "assistant" : "user";
    if (assistant) modelTurn = turn;
    const last = messages.at(-1);
    // Gemini sends one content per turn; two in a row of one role are one hub turn.
    if (last && last.role === hubRole) last.content.push(...content);
    else messages.push({ role: hubRole, content });
  });
  return messages;
}

/**
 * A `functionResponse` → a tool result paired with an unanswered call in `open` (removed from it): the
 * call of its id, else the first of its name in the last model turn (`modelTurn`: Gemini pairs a turn's
 * responses with the calls of the model turn before it), else the first of its name in any turn. An
 * earlier call the user abandoned (a new question instead of its response) is not taken in place of the
 * last turn's call of the same name, which would leave that one unanswered and its response an orphan.
 */
function parseFunctionResponse(fr: Obj, open: OpenCall[], modelTurn: number, ci: number, pi: number): HubPart {
  const name = typeof fr.name === "string" ? fr.name : "";
  const given = typeof fr.id === "string" && fr.id.length > 0 ? fr.id : undefined;
  let idx = given !== undefined ? open.findIndex((c) => c.id === given) : -1;
  if (idx < 0) idx = open.findIndex((c) => c.name === name && c.turn === modelTurn);
  if (idx < 0) idx = open.findIndex((c) => c.name === name);
  let callId: string;
  if (idx >= 0) {
    callId = open[idx]!.id;
    open.splice(idx, 1);
  } else {
    callId = given ?? `call_${ci}_${pi}`;
  }
  const resp = fr.response;
  let text: string;
  let isError = false;
  if (isObj(resp)) {
    const keys = Object.keys(resp);
    const only = keys.length === 1 ? keys[0]! : undefined;
    if (only !== undefined && typeof resp[only] === "string" && (only === "output" || only === "result" || only === "content")) {
      text = resp[only] as string;
    } else if (only === "error" && typeof resp.error === "string") {
      text = resp.error;
      isError = true;
    } else {
      text = JSON.stringify(resp);
    }
  } else if (typeof resp === "string") {
    text = resp;
  } else {
    text = resp === undefined ? "" : JSON.stringify(resp);
  }
  const content: Array<TextPart | ImagePart | DocumentPart> = [];
  if (text.length > 0) content.push({ type: "text", text });
  if (Array.isArray(fr.parts)) {
    for (const p of fr.parts) {
      if (!isObj(p)) continue;
      const m = mediaOf(p);
      if (m && (m.type === "image" || m.type === "document")) content.push(m);
      else if (typeof p.text === "string" && p.text.length > 0) content.push({ type: "text", text: p.text });
    }
  }
  const part: HubPart = { type: "tool_result", callId, content };
  if (name) part.name = name;
  if (isError) part.isError = true;
  return part;
}

/** `inlineData` / `fileData` → the hub media part its MIME type says, or undefined. */
function mediaOf(p: Obj): ImagePart | DocumentPart | HubPart | undefined {
  let source: MediaSource | undefined;
  let mime = "";
  if (isObj(p.inlineData) && typeof p.inlineData.data === "string") {
    mime = typeof p.inlineData.mimeType === "string" ? p.inlineData.mimeType : "application/octet-stream";
    source = { kind: "base64", mediaType: mime, data: p.inlineData.data };
  } else if (isObj(p.fileData) && typeof p.fileData.fileUri === "string") {
    mime = typeof p.fileData.mimeType === "string" ? p.fileData.mimeType : "";
    source = mime ? { kind: "url", url: p.fileData.fileUri, mediaType: mime } : { kind: "url", url: p.fileData.fileUri };
  }
  if (!source) return undefined;
  if (mime.startsWith("image/")) return { type: "image", source };
  if (mime.startsWith("video/")) return { type: "video", source };
  if (mime.startsWith("audio/") && source.kind === "base64") return { type: "audio", data: source.data, format: mime.slice(6).replace(/^x-/, "") };
  return { type: "document", source };
}

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/** Gemini `Schema` keywords typed int64, so sent as decimal strings in proto3 JSON. */
const INT64_COUNTS: ReadonlySet<string> = new Set(["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"]);

/**
 * Gemini's OpenAPI-subset `Schema` → JSON Schema: upper-case `type` names lower-cased, `nullable: true`
 * → `type: [t, "null"]`, `propertyOrdering` dropped, nested `properties` / `items` / `anyOf` converted;
 * the int64 counts (`minItems`, `maxItems`, `minLength`, `maxLength`, `minProperties`,
 * `maxProperties`), which proto3 JSON and `@google/genai` write as strings (`"minItems": "1"`;
 * ai.google.dev/api/caching#Schema), → integers, as JSON Schema takes them only so; every other keyword
 * kept. Pure; the input is not mutated.
 */
export function geminiSchemaToJsonSchema(s: unknown): Record<string, unknown> {
  if (!isObj(s)) return {};
  const out: Obj = {};
  for (const [k, v] of Object.entries(s)) {
    switch (k) {
      case "type":
        if (typeof v === "string" && v !== "TYPE_UNSPECIFIED") out.type = v.toLowerCase();
        break;
      case "properties":
        if (isObj(v)) {
          const props: Obj = {};
          for (const [pk, pv] of Object.entries(v)) props[pk] = geminiSchemaToJsonSchema(pv);
          out.properties = props;
        }
        break;
      case "items":
        out.items = geminiSchemaToJsonSchema(v);
        break;
      case "anyOf":
        if (Array.isArray(v)) out.anyOf = v.map(geminiSchemaToJsonSchema);
        break;
      case "nullable":
      case "propertyOrdering":
        break;
      default:
        out[k] = INT64_COUNTS.has(k) && typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : v;
    }
  }
  if (s.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

function parseTools(tools: unknown): HubTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw bad("`tools` must be an array of Tool objects.", "tools");
  const out: HubTool[] = [];
  tools.forEach((t, ti) => {
    if (!isObj(t)) return;
    for (const [key, value] of Object.entries(t)) {
      if (key !== "functionDeclarations") {
        if (value !== undefined && value !== null) out.push({ kind: "provider", format: "gemini", raw: { [key]: value }, name: key });
        continue;
      }
      if (!Array.isArray(value)) throw bad(`tools[${ti}].functionDeclarations must be an array.`, `tools[${ti}].functionDeclarations`);
      value.forEach((d, di) => {
        if (!isObj(d) || typeof d.name !== "string" || d.name.length === 0) {
          throw bad(`tools[${ti}].functionDeclarations[${di}].name is required.`, `tools[${ti}].functionDeclarations[${di}].name`);
        }
        const parameters = isObj(d.parametersJsonSchema)
          ? d.parametersJsonSchema
          : isObj(d.parameters)
            ? geminiSchemaToJsonSchema(d.parameters)
            : { type: "object", properties: {} };
        const tool: HubTool = { kind: "function", name: d.name, parameters };
        if (typeof d.description === "string" && d.description.length > 0) tool.description = d.description;
        out.push(tool);
      });
    }
  });
  return out;
}

function parseToolConfig(tc: unknown): ToolChoice | undefined {
  if (!isObj(tc) || !isObj(tc.functionCallingConfig)) return undefined;
  const fcc = tc.functionCallingConfig;
  const names = fcc.allowedFunctionNames;
  if (names !== undefined && names !== null && (!Array.isArray(names) || names.some((n) => typeof n !== "string"))) {
    throw bad("`toolConfig.functionCallingConfig.allowedFunctionNames` must be an array of function names.", "toolConfig.functionCallingConfig.allowedFunctionNames");
  }
  const allowed = Array.isArray(names) ? (names as string[]) : [];
  // A mode the API does not have (a typo, a lowercase name) was read as no mode at all: the model was
  // left free to call any tool or none, whatever the client asked for.
  const mode = typeof fcc.mode === "string" ? fcc.mode.toUpperCase() : fcc.mode;
  if (mode !== undefined && mode !== null && mode !== "MODE_UNSPECIFIED" && !(typeof mode === "string" && ["AUTO", "VALIDATED", "ANY", "NONE"].includes(mode))) {
    throw bad("`toolConfig.functionCallingConfig.mode` must be one of AUTO, ANY, NONE or VALIDATED.", "toolConfig.functionCallingConfig.mode");
  }
  switch (mode) {
    case "AUTO":
      return { type: "auto" };
    case "VALIDATED":
      return allowed.length > 0 ? { type: "allowed", mode: "auto", names: allowed } : { type: "auto" };
    case "ANY":
      if (allowed.length > 1) return { type: "allowed", mode: "required", names: allowed };
      return allowed.length === 1 ? { type: "tool", name: allowed[0]! } : { type: "required" };
    case "NONE":
      return { type: "none" };
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// generationConfig
// ---------------------------------------------------------------------------------------------

const LEVELS: Record<string, ReasoningEffort> = { minimal: "minimal", low: "low", medium: "medium", high: "high" };

function num(x: unknown, field: string): number | undefined {
  if (x === undefined || x === null) return undefined;
  if (typeof x !== "number" || !Number.isFinite(x)) throw bad(`\`generationConfig.${field}\` must be a number.`, `generationConfig.${field}`);
  return x;
}

function applyGenerationConfig(req: HubRequest, gc: Obj): void {
  const max = num(gc.maxOutputTokens, "maxOutputTokens");
  if (max !== undefined) {
    if (!Number.isInteger(max) || max <= 0) throw bad("`generationConfig.maxOutputTokens` must be a positive integer.", "generationConfig.maxOutputTokens");
    req.maxOutputTokens = max;
  }
  const temperature = num(gc.temperature, "temperature");
  if (temperature !== undefined) req.temperature = temperature;
  const topP = num(gc.topP, "topP");
  if (topP !== undefined) req.topP = topP;
  const topK = num(gc.topK, "topK");
  if (topK !== undefined) req.topK = topK;
  const n = num(gc.candidateCount, "candidateCount");
  if (n !== undefined) req.n = n;
  if (gc.responseLogprobs !== undefined && gc.responseLogprobs !== null) {
    if (typeof gc.responseLogprobs !== "boolean") throw bad("`generationConfig.responseLogprobs` must be true or false.", "generationConfig.responseLogprobs");
    req.logprobs = gc.responseLogprobs;
  }
  const top = num(gc.logprobs, "logprobs");
  if (top !== undefined) req.topLogprobs = top;
  if (gc.stopSequences !== undefined && gc.stopSequences !== null) {
    // A string, or a list holding something else, is no `repeated string` (the API answers 400): it
    // was dropped without a word, and the reply ran past the stop the client asked for.
    if (!Array.isArray(gc.stopSequences) || gc.stopSequences.some((s) => typeof s !== "string")) {
      throw bad("`generationConfig.stopSequences` must be an array of strings.", "generationConfig.stopSequences");
    }
    const stops = (gc.stopSequences as string[]).filter((s) => s.length > 0);
    if (stops.length > 0) req.stopSequences = stops;
  }

  if (gc.responseMimeType !== undefined && gc.responseMimeType !== null && typeof gc.responseMimeType !== "string") {
    throw bad("`generationConfig.responseMimeType` must be a string (text/plain, application/json, …).", "generationConfig.responseMimeType");
  }
  if (gc.responseMimeType === "text/x.enum") {
    // Enum mode: the reply is one of the schema's values, bare (`red`, not `"red"`). No other provider
    // has it: OpenAI's and Anthropic's structured outputs take an object root only and answer in JSON.
    // So it is no JSON output: the Gemini builder sends it again as it came, others name it dropped.
    for (const k of ["responseMimeType", "responseSchema", "responseJsonSchema", "_responseJsonSchema"]) {
      if (gc[k] !== undefined && gc[k] !== null) req.source.extra[`generationConfig.${k}`] = gc[k];
    }
  } else {
    parseResponseFormat(gc, req);
  }

  const tc = gc.thinkingConfig;
  if (tc !== undefined && tc !== null && !isObj(tc)) throw bad("`generationConfig.thinkingConfig` must be an object.", "generationConfig.thinkingConfig");
  if (isObj(tc)) {
    // Values of the wrong type or level were ignored without a word, so the request ran with the
    // model's default thinking instead of what the client asked for: a 400 naming the field.
    const at = (field: string) => `generationConfig.thinkingConfig.${field}`;
    if (tc.includeThoughts !== undefined && tc.includeThoughts !== null && typeof tc.includeThoughts !== "boolean") throw bad(`\`${at("includeThoughts")}\` must be true or false.`, at("includeThoughts"));
    const budget = tc.thinkingBudget;
    if (budget !== undefined && budget !== null && (typeof budget !== "number" || !Number.isFinite(budget))) throw bad(`\`${at("thinkingBudget")}\` must be a number.`, at("thinkingBudget"));
    const level = tc.thinkingLevel;
    if (level !== undefined && level !== null && (typeof level !== "string" || !(Object.hasOwn(LEVELS, level.toLowerCase()) || level.toUpperCase() === "THINKING_LEVEL_UNSPECIFIED"))) {
      throw bad(`\`${at("thinkingLevel")}\` must be one of MINIMAL, LOW, MEDIUM or HIGH.`, at("thinkingLevel"));
    }
    const r: ReasoningConfig = {};
    if (typeof tc.includeThoughts === "boolean") r.includeThoughts = tc.includeThoughts;
    if (typeof budget === "number" && Number.isFinite(budget)) {
      if (budget === 0) r.enabled = false;
      else if (budget < 0) r.enabled = true;
      else {
        r.enabled = true;
        r.budgetTokens = Math.round(budget);
      }
    }
    if (typeof tc.thinkingLevel === "string") {
      const key = tc.thinkingLevel.toLowerCase();
      const level = Object.hasOwn(LEVELS, key) ? LEVELS[key] : undefined;
      if (level) {
        r.enabled = true;
        r.effort = level;
      }
    }
    if (Object.keys(r).length > 0) req.reasoning = r;
  }

  for (const [k, v] of Object.entries(gc)) {
    if (!MAPPED_GENERATION.has(k) && v !== undefined && v !== null) req.source.extra[`generationConfig.${k}`] = v;
  }
}

/** `responseMimeType` / `responseJsonSchema` / `responseSchema` (not enum mode) → `req.responseFormat`, or another type kept in `source.extra`. */
function parseResponseFormat(gc: Obj, req: HubRequest): void {
  const schema = isObj(gc.responseJsonSchema)
    ? gc.responseJsonSchema
    : isObj(gc._responseJsonSchema)
      ? gc._responseJsonSchema
      : isObj(gc.responseSchema)
        ? geminiSchemaToJsonSchema(gc.responseSchema)
        : undefined;
  if (gc.responseMimeType === "application/json" || schema) {
    const rf: ResponseFormat = schema ? { type: "json_schema", schema } : { type: "json_object" };
    req.responseFormat = rf;
  } else if (typeof gc.responseMimeType === "string" && gc.responseMimeType !== "text/plain") {
    req.source.extra["generationConfig.responseMimeType"] = gc.responseMimeType;
  }
}
