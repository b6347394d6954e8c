/**
 * Hub request → Gemini `generateContent` body (FormatCodec.buildRequest; REFERENCE §4.1, §5.4–§5.12,
 * SPEC F-2, F-7, F-8). The model is not in the body: it is part of the URL ({@link geminiPath}).
 *
 * What goes where:
 * - `hub.system` and every `system`/`developer` message (wherever it sits) → `systemInstruction.parts`,
 *   one text part per block, in order (REFERENCE §5.4: Gemini has no system role in `contents`).
 * - `user` → role `user`, `assistant` → role `model`; consecutive turns of one role are merged into one
 *   content (Gemini wants alternating roles).
 * - Images, documents, audio, video → `inlineData` (base64, or a `data:` URL decoded); `fileData` only
 *   for `gs://` and Gemini Files API URIs (and YouTube links for video). Any other remote URL cannot be
 *   sent inline without fetching, and formats do not fetch: it is dropped with a warning.
 * - Tool calls → `functionCall` parts (`args` object; `""` → `{}`). A Gemini thought signature (family
 *   = `target.family`) goes back exactly on the same part. For history without one (another family
 *   produced it), the first `functionCall` part of each model step of the current turn (everything after
 *   the last user message that is not a function response) gets Google's documented placeholder
 *   `skip_thought_signature_validator` (REFERENCE §4.3, §5.9).
 * - Tool results → `functionResponse` parts, all of one user content, first, in the order of their
 *   calls; `name` = the call's (Gemini) name found by call id; `response` = `{result: text}`, or the
 *   object itself when the text is a JSON object, or `{error: text}` when `isError` (REFERENCE §5.7).
 *   Images/PDFs inside results follow as `inlineData` parts in the same content (§5.5). Orphans are
 *   repaired first, as on the other lanes ({@link pairToolHistory}): a call left without a result gets
 *   a synthesized `{error: …}` response (Gemini requires one response per call); a result that answers
 *   no call of the model turn before it becomes a text part. Both with a warning.
 * - Ids are NOT sent (`functionCall.id` / `functionResponse.id`): Vertex rejects the field ("Unknown
 *   name id"); pairing is by name and order (REFERENCE §5.3).
 * - Function tools → ONE `{functionDeclarations: […]}` entry; names sanitised (names.ts), parameters
 *   cleaned to Gemini's schema subset (schema-clean.ts). Provider tools of other formats are dropped
 *   with a warning; `gemini` provider tools pass as their own `tools` entries.
 * - `toolChoice` → `toolConfig.functionCallingConfig` (AUTO / ANY / NONE, ANY + allowedFunctionNames
 *   for one tool or an `allowed` choice of mode required, VALIDATED + allowedFunctionNames for an
 *   `allowed` choice of mode auto; every function stays declared).
 * - A system/developer message after the conversation started is moved into `systemInstruction` with a
 *   `hoisted_system_message` warning (as the Anthropic builder does).
 * - An OpenAI client's `seed`, `presence_penalty`, `frequency_penalty` → `generationConfig.seed`,
 *   `presencePenalty`, `frequencyPenalty` (lost-fields.ts; penalties only to gemini-2.0 models, the
 *   others refuse them); tool `strict`, `additionalProperties`,
 *   message names and image `detail` are named in `dropped_field` warnings (lost-fields.ts `warnUnsent`).
 * - `generationConfig`: responseLogprobs / logprobs (the count only with responseLogprobs, as Gemini
 *   requires), maxOutputTokens, temperature (clamped to 0–2), topP, topK, stopSequences (at
 *   most 5: the first 5 are kept, with a warning; an empty one is not sent, hub.ts `sendableStops`), candidateCount (`n`), responseMimeType +
 *   responseJsonSchema (`responseFormat`), thinkingConfig (see {@link thinkingConfig}).
 * - Thinking parts: only those carrying a Gemini signature go back (`{text, thought: true,
 *   thoughtSignature}`, or `{text: "", thoughtSignature}` for a signature-only part, exactly as the
 *   decoder received it); unsigned or foreign reasoning text is dropped with a warning.
 */
import { flatNamespaces, portableTools, withoutDeferPlaceholder } from "../tool-kinds.ts";
import { withoutReasoningTail } from "../reasoning-tail.ts";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import type {
  DocumentPart,
  HubMessage,
  HubPart,
  HubRequest,
  ImagePart,
  MediaSource,
  ReasoningConfig,
  ReasoningEffort,
} from "../hub.ts";
import { sendableStops, Warnings } from "../hub.ts";
import { GeminiNameMap } from "./names.ts";
import { pairToolHistory } from "../tool-pairs.ts";
import { registerToolNames } from "../tool-names.ts";
import { namedToolReferences } from "../tool-references.ts";
import { dataUrlBase64, GEMINI_FILES_API } from "../media-types.ts";
import { forcesTool } from "../request-marks.ts";
import { cleanParameters, cleanResponseJsonSchema } from "./schema-clean.ts";
import type { GeminiContent, GeminiFunctionDeclaration, GeminiPart } from "./schema.ts";
import { isObj } from "../json.ts";
import { withArticle } from "../article.ts";
import { carryOpenAiSampling, warnUnsent } from "./lost-fields.ts";

/** Google's documented placeholder for a function call whose signature is not available (REFERENCE §4.3). */
export const DUMMY_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** Gemini accepts at most this many stop sequences (REFERENCE §5.11). */
export const MAX_STOP_SEQUENCES = 5;

/**
 * The URL path for a model (REFERENCE §4): `/v1beta/models/{model}:generateContent`, or
 * `/v1beta/models/{model}:streamGenerateContent?alt=sse` when streaming (always SSE: without `alt=sse`
 * the stream is a JSON array). A leading `models/` is accepted; `tunedModels/x` keeps its own
 * collection. Path segments are URI-encoded.
 */
export function geminiPath(model: string, stream: boolean): string {
  let m = model.startsWith("models/") ? model.slice(7) : model;
  let collection = "models";
  const slash = m.indexOf("/");
  if (slash > 0 && m.startsWith("tunedModels/")) {
    collection = "tunedModels";
    m = m.slice(slash + 1);
  }
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return `/v1beta/${collection}/${encodeURIComponent(m)}:${method}`;
}

/** Every function name of the request in a Gemini name map, in the shared fixed order (formats/tool-names.ts). */
function registerNames(req: HubRequest): GeminiNameMap {
  return registerToolNames(flatNamespaces(req), new GeminiNameMap()) as GeminiNameMap;
}

/**
 * Gemini function name → client name, for the names {@link buildRequest} had to change for this
 * request (empty when none). Pass it to the decoder as `toolNames` so the client sees its own names.
 */
export function geminiToolNames(req: HubRequest): Record<string, string> {
  return registerNames(req).renamed();
}

// ---------------------------------------------------------------------------------------------
// Media
// ---------------------------------------------------------------------------------------------

const EXT_MIME: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  pdf: "application/pdf",
  txt: "text/plain",
  mp3: "audio/mp3",
  wav: "audio/wav",
  flac: "audio/flac",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  mov: "video/mov",
  webm: "video/webm",
};

function guessMime(uri: string): string | undefined {
  const m = /\.([a-zA-Z0-9]+)(?:[?#].*)?$/.exec(uri);
  return m ? EXT_MIME[m[1]!.toLowerCase()] : undefined;
}

const FILES_API = GEMINI_FILES_API;
const YOUTUBE = /^https:\/\/(www\.|m\.)?(youtube\.com\/(watch|shorts|live)|youtu\.be\/)/;

/** A media source → one Gemini part, or undefined (with a warning) when it cannot be sent. */
function mediaPart(source: MediaSource, what: string, w: Warnings, allowYoutube = false): GeminiPart | undefined {
  switch (source.kind) {
    case "base64":
      return { inlineData: { mimeType: source.mediaType, data: source.data } };
    case "text":
      return { text: source.data };
    case "url": {
      const url = source.url;
      if (url.startsWith("data:")) {
        const d = dataUrlBase64(url);
        if (d) return { inlineData: { mimeType: source.mediaType ?? d.mimeType, data: d.data } };
        w.add("dropped_media", `${withArticle(what)} with an unreadable data: URL was not sent to Gemini.`);
        return undefined;
      }
      if (url.startsWith("gs://") || FILES_API.test(url) || (allowYoutube && YOUTUBE.test(url))) {
        const fileData: { mimeType?: string; fileUri: string } = { fileUri: url };
        const mime = source.mediaType ?? guessMime(url);
        if (mime) fileData.mimeType = mime;
        return { fileData };
      }
      w.add(
        "dropped_media",
        `${withArticle(what)} given by remote URL was not sent: Gemini takes only inline data, gs:// or Files API URIs, and the gateway does not fetch.`,
      );
      return undefined;
    }
    case "file_id": {
      const id = source.fileId;
      const uri = FILES_API.test(id)
        ? id
        : /^files\/[^/]+$/.test(id)
          ? `https://generativelanguage.googleapis.com/v1beta/${id}`
          : undefined;
      if (uri) {
        const fileData: { mimeType?: string; fileUri: string } = { fileUri: uri };
        if (source.mediaType) fileData.mimeType = source.mediaType;
        return { fileData };
      }
      w.add("dropped_media", `${withArticle(what)} given by another provider's file id was not sent to Gemini.`);
      return undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tool results
// ---------------------------------------------------------------------------------------------

/** `functionResponse.response` (REFERENCE §5.7): an object, always. */
function responseObject(text: string, isError: boolean | undefined): Record<string, unknown> {
  if (isError) return { error: text };
  const t = text.trimStart();
  if (t.startsWith("{")) {
    try {
      const parsed = JSON.parse(text);
      if (isObj(parsed)) return parsed;
    } catch {
      // not JSON: wrap it
    }
  }
  return { result: text };
}

interface PendingResponse {
  /** Sort key: where the call sits in history. */
  run: number;
  order: number;
  seq: number;
  callId: string;
  part: GeminiPart;
  media: GeminiPart[];
}

interface Run {
  role: "user" | "model";
  parts: GeminiPart[];
  responses: PendingResponse[];
  /** Calls made in this (model) run, in order. */
  calls: { id: string; name: string }[];
  /** The functionCall parts of this run, parallel to `calls` (for placeholder signatures). */
  callParts: GeminiPart[];
}

// ---------------------------------------------------------------------------------------------
// Reasoning (REFERENCE §4.1, §5.9)
// ---------------------------------------------------------------------------------------------

/** Gemini major.minor version from a model id (`gemini-2.5-flash` → 2.5), or undefined. */
function geminiVersion(model: string): number | undefined {
  const m = /gemini-(\d+(?:\.\d+)?)/i.exec(model);
  return m ? Number(m[1]) : undefined;
}

const EFFORT_BUDGET: Record<Exclude<ReasoningEffort, "none">, number> = {
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
  max: 32768,
};

const EFFORT_LEVEL: Record<Exclude<ReasoningEffort, "none">, string> = {
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

function budgetLevel(budget: number): string {
  if (budget < 0) return "high";
  if (budget <= 512) return "minimal";
  if (budget <= 2048) return "low";
  if (budget <= 12288) return "medium";
  return "high";
}

/**
 * Reasoning controls → `generationConfig.thinkingConfig` (REFERENCE §4.1, §5.9 table; never both
 * `thinkingBudget` and `thinkingLevel`):
 * - Gemini 3+ (`gemini-3…` in the model id) takes `thinkingLevel`: effort minimal/low/medium/high
 *   (xhigh, max → high); a budget is bucketed (≤512 minimal, ≤2048 low, ≤12288 medium, else high).
 *   Pro models take only low/high before 3.1 and never minimal: minimal → low, medium → high there.
 *   Reasoning off → the lowest level (thinking cannot be switched off on Gemini 3).
 * - Otherwise `thinkingBudget` in tokens: the budget as given, else effort minimal 512, low 1024,
 *   medium 8192, high 24576, xhigh/max 32768, else -1 (dynamic); clamped to 0–24576 (Flash) or
 *   128–32768 (Pro). Reasoning off → 0 (Pro cannot turn it off: 128, with a warning).
 * - `includeThoughts` is true whenever reasoning is on; the client's explicit value wins, and an
 *   Anthropic `thinking.display: "omitted"` (the client asked for no thinking text) makes it false.
 * Returns undefined when the request says nothing about reasoning.
 */
export function thinkingConfig(r: ReasoningConfig | undefined, model: string, w?: { add(code: string, message: string): void }): Record<string, unknown> | undefined {
  if (!r) return undefined;
  const version = geminiVersion(model);
  const isPro = /pro/i.test(model) && !/flash/i.test(model);
  const off = r.enabled === false || r.effort === "none";
  const include = r.includeThoughts ?? r.display !== "omitted";
  if (version !== undefined && version >= 3) {
    const allowMinimal = !isPro;
    const allowMedium = !isPro || version >= 3.1;
    let level: string | undefined;
    if (off) level = "minimal";
    else if (r.effort) level = EFFORT_LEVEL[r.effort as Exclude<ReasoningEffort, "none">];
    else if (r.budgetTokens !== undefined) level = budgetLevel(r.budgetTokens);
    if (level === "minimal" && !allowMinimal) level = "low";
    if (level === "medium" && !allowMedium) level = "high";
    const out: Record<string, unknown> = {};
    if (!off) out.includeThoughts = include;
    else if (r.includeThoughts !== undefined) out.includeThoughts = r.includeThoughts;
    if (level) out.thinkingLevel = level;
    return out;
  }
  const max = isPro ? 32768 : 24576;
  const min = isPro ? 128 : 0;
  if (off) {
    if (isPro) w?.add("reasoning_not_disabled", `${model} cannot turn thinking off; the smallest budget (128 tokens) is used.`);
    return { thinkingBudget: min };
  }
  let budget = r.budgetTokens ?? (r.effort ? EFFORT_BUDGET[r.effort as Exclude<ReasoningEffort, "none">] : -1);
  if (budget !== -1) budget = Math.min(max, Math.max(min, Math.round(budget)));
  return { includeThoughts: include, thinkingBudget: budget };
}

// ---------------------------------------------------------------------------------------------
// Build
// ---------------------------------------------------------------------------------------------

/** Hub fields with no Gemini equivalent: dropped with a warning when set (SPEC F-2). */
const NO_SLOT: Array<[keyof HubRequest, string]> = [
  ["user", "user"],
  ["promptCacheKey", "prompt_cache_key"],
  ["store", "store"],
  ["previousResponseId", "previous_response_id"],
  ["verbosity", "verbosity"],
];

/**
 * Responses `include` entries a Gemini upstream still answers: the output's log probabilities
 * (`responseLogprobs`, from `req.logprobs`) and the reasoning state (Gemini's thought signatures reach
 * a Responses client as `encrypted_content` whenever they come). Any other entry is named dropped.
 */
const CARRIED_INCLUDES: ReadonlySet<string> = new Set(["message.output_text.logprobs", "reasoning.encrypted_content"]);

/**
 * Builds the body. Never puts `model` or `stream` in it (both are in the URL). Warnings list every
 * value dropped or changed (codes: `dropped_field`, `dropped_tool`, `dropped_media`, `dropped_thinking`,
 * `dropped_cache_control`, `truncated_stop_sequences`, `clamped_temperature`, `renamed_tool`,
 * `invalid_tool_arguments`, `orphan_tool_result`, `missing_tool_result`, `dropped_system_content`,
 * `parallel_tool_calls`, `reasoning_not_disabled`, `extra_candidates`, `hoisted_system_message`). Does not throw.
 */
export function buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  req = flatNamespaces(req, w); // Codex namespace members under flat names (tool-kinds.ts)
  // A re-sent reasoning tail (a cut reply's, Codex) is not a model turn to continue (reasoning-tail.ts).
  if (req.source.format !== "gemini") req = { ...req, messages: withoutReasoningTail(req.messages, w, "gemini") };
  const family = target.family;
  const names = registerNames(req);
  req = namedToolReferences(req, (n) => names.toGemini(n), w); // ToolSearch results name the tools as sent
  let sawCache = false;

  // ---- system ---------------------------------------------------------------------------
  const systemParts: GeminiPart[] = [];
  const pushSystem = (p: HubPart) => {
    if (p.type === "text") {
      if (p.cacheControl) sawCache = true;
      if (p.text.length > 0) systemParts.push({ text: p.text });
    } else {
      w.add("dropped_system_content", `${withArticle(p.type)} part in a system message was not sent: Gemini system instructions are text only.`);
    }
  };
  for (const p of req.system) pushSystem(p);

  // ---- contents ---------------------------------------------------------------------------
  const runs: Run[] = [];
  const calls = new Map<string, { name: string; run: number; order: number }>();
  let seq = 0;

  const convertMessage = (m: HubMessage, run: Run, runIndex: number) => {
    const model = run.role === "model";
    for (const p of m.content) {
      if ("cacheControl" in p && p.cacheControl) sawCache = true;
      switch (p.type) {
        case "text": {
          const signed = model && p.signature && p.signature.family === family;
          if (p.text.length === 0 && !signed) break;
          const part: GeminiPart = { text: p.text };
          if (signed) part.thoughtSignature = p.signature!.value;
          run.parts.push(part);
          break;
        }
        case "image": {
          const part = mediaPart(p.source, "image", w);
          if (part) run.parts.push(part);
          break;
        }
        case "document": {
          const part = mediaPart(p.source, "document", w);
          if (part) run.parts.push(part);
          break;
        }
        case "video": {
          const part = mediaPart(p.source, "video", w, true);
          if (part) run.parts.push(part);
          break;
        }
        case "audio":
          run.parts.push({ inlineData: { mimeType: `audio/${p.format}`, data: p.data } });
          break;
        case "thinking": {
          if (model && p.signature && p.signature.family === family) {
            const part: GeminiPart = p.text.length > 0 ? { text: p.text, thought: true } : { text: "" };
            part.thoughtSignature = p.signature.value;
            run.parts.push(part);
          } else if (p.text.length > 0 || p.signature) {
            w.add("dropped_thinking", "Reasoning without a Gemini thought signature was not sent to Gemini.");
          }
          break;
        }
        case "redacted_thinking":
          w.add("dropped_thinking", "Redacted reasoning from another provider was not sent to Gemini.");
          break;
        case "tool_call": {
          const name = names.toGemini(p.name);
          let args: Record<string, unknown> = {};
          if (p.arguments.trim().length > 0) {
            let parsed: unknown;
            try {
              parsed = JSON.parse(p.arguments);
            } catch {
              parsed = undefined;
            }
            if (isObj(parsed)) args = parsed;
            else w.add("invalid_tool_arguments", `The arguments of a ${name} call in history are not a JSON object; sent as {}.`);
          }
          const part: GeminiPart = { functionCall: { name, args } };
          if (p.signature && p.signature.family === family) part.thoughtSignature = p.signature.value;
          run.parts.push(part);
          calls.set(p.id, { name, run: runIndex, order: run.calls.length });
          run.calls.push({ id: p.id, name });
          run.callParts.push(part);
          break;
        }
        case "tool_result": {
          // pairToolHistory (formats/tool-pairs.ts) left only results of a call of the run before.
          const call = calls.get(p.callId);
          const name = call?.name ?? names.toGemini(p.name ?? "");
          const texts: string[] = [];
          const media: GeminiPart[] = [];
          for (const c of p.content) {
            if ("cacheControl" in c && c.cacheControl) sawCache = true;
            if (c.type === "text") texts.push(c.text);
            else if (c.type === "document" && c.source.kind === "text") texts.push(c.source.data);
            else {
              const part = mediaPart((c as ImagePart | DocumentPart).source, `${c.type} in a tool result`, w);
              if (part) media.push(part);
            }
          }
          const text = texts.join("\n");
          run.responses.push({
            run: call ? call.run : Number.MAX_SAFE_INTEGER,
            order: call ? call.order : 0,
            seq: seq++,
            callId: p.callId,
            part: { functionResponse: { name, response: responseObject(text, p.isError) } },
            media,
          });
          break;
        }
      }
    }
  };

  let started = false; // a user or model turn seen: a system message after it is moved (hoisted)
  // Orphan results and unanswered calls repaired first (Gemini requires one response per call).
  for (const m of pairToolHistory(req.messages, w, "Gemini")) {
    if (m.role === "system" || m.role === "developer") {
      const before = systemParts.length;
      for (const p of m.content) pushSystem(p);
      if (started && systemParts.length > before) {
        w.add("hoisted_system_message", "A mid-conversation system message was moved into the top-level system prompt");
      }
      continue;
    }
    started = true;
    const role = m.role === "assistant" ? "model" : "user";
    let run = runs.at(-1);
    let fresh = false;
    if (!run || run.role !== role) {
      run = { role, parts: [], responses: [], calls: [], callParts: [] };
      runs.push(run);
      fresh = true;
    }
    convertMessage(m, run, runs.length - 1);
    if (fresh && run.parts.length === 0 && run.responses.length === 0) runs.pop();
  }

  // ---- assemble ---------------------------------------------------------------------------
  const contents: GeminiContent[] = [];
  for (const run of runs) {
    if (run.responses.length === 0) {
      contents.push({ role: run.role, parts: run.parts });
      continue;
    }
    const rs = run.responses.sort((a, b) => a.run - b.run || a.order - b.order || a.seq - b.seq);
    const parts: GeminiPart[] = [];
    for (const r of rs) parts.push(r.part);
    for (const r of rs) for (const m of r.media) parts.push(m);
    for (const p of run.parts) parts.push(p);
    contents.push({ role: run.role, parts });
  }

  // ---- placeholder signatures for the current turn (REFERENCE §4.3) ------------------------------
  let turnStart = 0;
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i]!;
    if (r.role === "user" && r.responses.length === 0) {
      turnStart = i + 1;
      break;
    }
  }
  for (let i = turnStart; i < runs.length; i++) {
    const r = runs[i]!;
    const first = r.callParts[0];
    if (r.role === "model" && first && first.thoughtSignature === undefined) first.thoughtSignature = DUMMY_THOUGHT_SIGNATURE;
  }

  // ---- body ---------------------------------------------------------------------------------
  const body: Record<string, unknown> = { contents };
  if (systemParts.length > 0) body.systemInstruction = { parts: systemParts };

  const decls: GeminiFunctionDeclaration[] = [];
  const tools: Record<string, unknown>[] = [];
  // Responses `custom` (freeform) tools become one-string-argument function tools (formats/tool-kinds.ts).
  for (const t of portableTools(withoutDeferPlaceholder(req.tools))) {
    if (t.kind === "function") {
      if (t.cacheControl) sawCache = true;
      const name = names.toGemini(t.name);
      const decl: GeminiFunctionDeclaration = { name };
      if (t.description) decl.description = t.description;
      const params = cleanParameters(t.parameters);
      if (params) decl.parameters = params;
      decls.push(decl);
    } else if (t.format === "gemini") {
      tools.push(t.raw);
    } else {
      const label = t.name ?? (typeof t.raw.type === "string" ? t.raw.type : "provider tool");
      w.add("dropped_tool", `The ${t.format} tool ${label} has no Gemini equivalent and was not sent.`);
    }
  }
  if (decls.length > 0) tools.unshift({ functionDeclarations: decls });
  if (tools.length > 0) body.tools = tools;
  for (const [gem, orig] of Object.entries(names.renamed())) {
    w.add("renamed_tool", `The tool name ${JSON.stringify(orig)} is not a valid Gemini function name; sent as ${JSON.stringify(gem)}.`);
  }

  if (forcesTool(req.toolChoice) && decls.length === 0) w.add("dropped_field", "tool_choice was dropped because the request has no function tools");
  if (req.toolChoice && decls.length > 0) {
    const tc = req.toolChoice;
    let fcc: Record<string, unknown>;
    switch (tc.type) {
      case "auto":
        fcc = { mode: "AUTO" };
        break;
      case "required":
        fcc = { mode: "ANY" };
        break;
      case "none":
        fcc = { mode: "NONE" };
        break;
      case "tool":
        fcc = { mode: "ANY", allowedFunctionNames: [names.toGemini(tc.name)] };
        break;
      case "allowed":
        // Gemini's FunctionCallingConfig: `allowedFunctionNames` "should only be set when the Mode is
        // ANY or VALIDATED" (generativelanguage v1beta); ANY: a call of one of them; VALIDATED (Google's
        // proto: "either function calls or natural language response … limited to any one of
        // allowed_function_names"): OpenAI's mode auto. AUTO takes no list. Every declaration stays.
        fcc = { mode: tc.mode === "required" ? "ANY" : "VALIDATED", allowedFunctionNames: tc.names.map((n) => names.toGemini(n)) };
        break;
    }
    body.toolConfig = { functionCallingConfig: fcc };
  }
  if (req.parallelToolCalls === false && decls.length > 0) {
    w.add("parallel_tool_calls", "Gemini has no control over parallel function calls; parallel_tool_calls=false was not sent.");
  }

  // ---- generationConfig ---------------------------------------------------------------------
  const gc: Record<string, unknown> = {};
  if (req.maxOutputTokens !== undefined) gc.maxOutputTokens = req.maxOutputTokens;
  if (req.temperature !== undefined) {
    const t = Math.min(2, Math.max(0, req.temperature));
    if (t !== req.temperature) w.add("clamped_temperature", `temperature ${req.temperature} is outside Gemini's 0–2 range; sent as ${t}.`);
    gc.temperature = t;
  }
  if (req.topP !== undefined) gc.topP = req.topP;
  if (req.topK !== undefined) gc.topK = req.topK;
  if (req.logprobs !== undefined) gc.responseLogprobs = req.logprobs;
  // `logprobs` is "only valid if responseLogprobs=True" (GenerationConfig): another format's count alone is not sent.
  if (req.topLogprobs !== undefined && (req.logprobs === true || req.source.format === "gemini")) gc.logprobs = req.topLogprobs;
  const stops = sendableStops(req.stopSequences, w);
  if (stops) {
    if (stops.length > MAX_STOP_SEQUENCES) {
      w.add(
        "truncated_stop_sequences",
        `Gemini accepts at most ${MAX_STOP_SEQUENCES} stop sequences; ${stops.length - MAX_STOP_SEQUENCES} were not sent.`,
      );
    }
    gc.stopSequences = stops.slice(0, MAX_STOP_SEQUENCES);
  }
  if (req.n !== undefined) {
    gc.candidateCount = req.n;
    if (req.n > 1) w.add("extra_candidates", `candidateCount ${req.n} was sent, but only the first candidate is returned (the hub carries one choice).`);
  }
  const rf = req.responseFormat;
  if (rf && rf.type !== "text") {
    gc.responseMimeType = "application/json";
    if (rf.type === "json_schema") gc.responseJsonSchema = cleanResponseJsonSchema(rf.schema);
  }
  const thinking = thinkingConfig(req.reasoning, target.model, w);
  if (thinking) gc.thinkingConfig = thinking;
  const carried = carryOpenAiSampling(req, gc, target.model, w);
  if (Object.keys(gc).length > 0) body.generationConfig = gc;
  warnUnsent(req, w);

  // ---- fields without a slot ----------------------------------------------------------------
  for (const [key, label] of NO_SLOT) {
    if (req[key] !== undefined) w.add("dropped_field", `${label} has no Gemini equivalent and was not sent.`);
  }
  const unsentInclude = (req.include ?? []).filter((x) => !CARRIED_INCLUDES.has(x));
  if (unsentInclude.length > 0) w.add("dropped_field", `include ${unsentInclude.join(", ")} has no Gemini equivalent and was not sent.`);
  if (req.source.format === "gemini") {
    // A Gemini client's members without a hub slot go back where they were: `generationConfig.seed`
    // into generationConfig, `toolConfig.retrievalConfig` into toolConfig (parse.ts).
    for (const [k, val] of Object.entries(req.source.extra)) {
      const dot = k.indexOf(".");
      if (dot > 0) {
        const outer = k.slice(0, dot);
        const inner = k.slice(dot + 1);
        const holder = (body[outer] ??= {}) as Record<string, unknown>;
        if (!(inner in holder)) holder[inner] = val;
      } else if (!(k in body) && k !== "model" && k !== "stream") body[k] = val;
    }
  } else {
    for (const k of Object.keys(req.source.extra)) {
      if (!k.startsWith("$") && !carried.has(k)) w.add("dropped_field", `${k} has no Gemini equivalent and was not sent.`); // `$…`: another format's own per-item fields
    }
  }
  if (sawCache) w.add("dropped_cache_control", "Gemini has no per-block prompt-cache markers; cache_control was not sent.");

  const renamed = names.renamed();
  return Object.keys(renamed).length > 0
    ? { body, warnings: w.list, decoderHints: { toolNames: renamed } }
    : { body, warnings: w.list };
}
