/**
 * {@link HubRequest} → the body for a Chat Completions provider (REFERENCE §2.1, §5.3–5.12): kind
 * `openai` (`max_completion_tokens`) or `openai-compatible` (`max_tokens`): {@link buildRequest}.
 */
import { pairToolHistory } from "../tool-pairs.ts";
import { flatNamespaces, portableTools, withoutDeferPlaceholder } from "../tool-kinds.ts";
import { withoutReasoningTail } from "../reasoning-tail.ts";
import { chatCustomToolNames, customCallJson, customChoiceRenamed, customToolRenamed } from "./custom-calls.ts";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import {
  invalidRequest as invalid,
  type HubMessage,
  type HubPart,
  type HubRequest,
  type ReasoningEffort,
  type ToolChoice,
  sendableStops,
  Warnings,
} from "../hub.ts";
import { ANTHROPIC_SERVICE_TIER, bucketThinkingBudget, dropRefusedFields, effortForDisabledReasoning, openAiTakesVerbosity, takesVerbosity, topEffortFor } from "../openai-common/models.ts";
import { isObj } from "../json.ts";
import { chatToolId } from "./mapping.ts";
import type { JsonObject as Json } from "../json.ts";
import { isGoogleOnlyUri } from "../media-types.ts";
import { openaiAudioFormat } from "../openai-common/audio.ts";
import { sendableResponseFormat } from "../openai-common/response-format.ts";
import { forcesTool, holdsCacheMarkers } from "../request-marks.ts";
import { withArticle } from "../article.ts";
import { OPENAI_TOOL_NAMES, registerToolNames, renamedToolWarnings, ToolNameMap } from "../tool-names.ts";
import { namedToolReferences } from "../tool-references.ts";
import { appendMovedDescriptions, fitDescription, type MovedDescription, movedDescriptionsRole } from "./long-descriptions.ts";

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

/** A Gemini client's `generationConfig` members Chat has under its own name (OpenAI Chat reference: `seed`, `presence_penalty`, `frequency_penalty`). */
const GEMINI_SAMPLING: Readonly<Record<string, string>> = {
  "generationConfig.seed": "seed",
  "generationConfig.presencePenalty": "presence_penalty",
  "generationConfig.frequencyPenalty": "frequency_penalty",
};

/**
 * Another client format's fields Chat has under its own name and meaning, put in `body`; returns the
 * `source.extra` keys used (the rest are named in the caller's `dropped_field` warning):
 * - a Gemini client's `generationConfig.seed` (an integer), `presencePenalty`, `frequencyPenalty` →
 *   `seed`, `presence_penalty`, `frequency_penalty` (both formats −2.0 to 2.0);
 * - for kind `openai` (a third-party server may not know them; named in a warning there): a Responses
 *   client's `service_tier`, `safety_identifier`, and `metadata` when the body is stored (OpenAI answers
 *   400 "The 'metadata' parameter is only allowed when 'store' is enabled."; no route brings a Responses
 *   client here for kind `openai`, which it reaches at `/v1/responses`: pipeline/translate.ts
 *   `upstreamFormatFor`); an Anthropic client's `service_tier` as {@link ANTHROPIC_SERVICE_TIER} maps it.
 */
function carryForeignFields(req: HubRequest, body: Json, openai: boolean, w: Warnings): Set<string> {
  const used = new Set<string>();
  const extra = req.source.extra;
  if (req.source.format === "gemini") {
    for (const [key, field] of Object.entries(GEMINI_SAMPLING)) {
      const v = extra[key];
      if (typeof v !== "number" || !Number.isFinite(v) || (field === "seed" && !Number.isInteger(v))) continue;
      body[field] = v;
      used.add(key);
    }
  }
  const openAiOnly = (key: string, value: unknown): void => {
    used.add(key);
    if (openai) body[key] = value;
    else w.add("dropped_field", `${key} is only sent to OpenAI; it was dropped.`);
  };
  if (req.source.format === "openai-responses") {
    if (typeof extra.service_tier === "string") openAiOnly("service_tier", extra.service_tier);
    if (typeof extra.safety_identifier === "string") openAiOnly("safety_identifier", extra.safety_identifier);
    if (isObj(extra.metadata) && (body.store === true || !openai)) openAiOnly("metadata", extra.metadata);
    else if (isObj(extra.metadata)) {
      used.add("metadata");
      w.add("dropped_field", "metadata was not sent: Chat Completions takes it only with store: true.");
    }
  }
  if (req.source.format === "anthropic-messages" && typeof extra.service_tier === "string" && ANTHROPIC_SERVICE_TIER[extra.service_tier]) {
    openAiOnly("service_tier", ANTHROPIC_SERVICE_TIER[extra.service_tier]);
  }
  return used;
}

/**
 * Hub tool choice → Chat `tool_choice`. `allowed` → `{type: "allowed_tools", allowed_tools: {mode,
 * tools: [{type: "function", function: {name}}]}}` (OpenAI Chat Completions reference, `tool_choice`);
 * the caller decides where it can go ({@link buildRequest}). Names as the request's map sends them.
 */
function chatToolChoice(tc: ToolChoice, names: ToolNameMap): unknown {
  switch (tc.type) {
    case "tool":
      return { type: "function", function: { name: names.map(tc.name) } };
    case "allowed":
      return { type: "allowed_tools", allowed_tools: { mode: tc.mode, tools: tc.names.map((name) => ({ type: "function", function: { name: names.map(name) } })) } };
    default:
      return tc.type;
  }
}

/**
 * Puts the tool messages answering an assistant message's `tool_calls` right after it, as Chat requires
 * (OpenAI answers 400 "An assistant message with 'tool_calls' must be followed by tool messages
 * responding to each 'tool_call_id'"). The hub's turns (formats/tool-pairs.ts) let a system or developer
 * message, or a further assistant message (an Anthropic client's consecutive assistant messages), stand
 * between a call and the user turn that answers it; the builder writes each hub message in place, so the
 * tool messages came after those, and after the user message of a user turn whose text came before its
 * results (a Chat client's user message before its tool messages). Within each stretch of messages from
 * an assistant message with `tool_calls` up to the next assistant message after a user message, each
 * tool message goes right after the assistant message that made its call (as the other lanes put a
 * turn's results first), the other messages keep their order; a stretch already in that order is left
 * as it is. Mutates `messages`.
 */
function resultsAfterCalls(messages: Json[]): void {
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role !== "assistant" || !Array.isArray(messages[i].tool_calls)) continue;
    // the stretch: up to the first assistant message after a user message (the user turn answering the
    // calls may be several messages: a user message before tool ones, a system message among them)
    let end = i + 1;
    for (let user = false; end < messages.length && !(user && messages[end].role === "assistant"); end++) user ||= messages[end].role === "user";
    const stretch = messages.slice(i, end);
    const tools = stretch.filter((m) => m.role === "tool");
    const out: Json[] = [];
    for (const m of stretch) {
      if (m.role === "tool") continue;
      out.push(m);
      if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) continue;
      // one tool message per call, the first left of its id: an id a client reuses across turns (call_0) is answered in order
      const owed = new Map<unknown, number>();
      for (const c of m.tool_calls as Json[]) owed.set(c.id, (owed.get(c.id) ?? 0) + 1);
      for (let t = 0; t < tools.length; t++) {
        const n = owed.get(tools[t].tool_call_id);
        if (n) {
          owed.set(tools[t].tool_call_id, n - 1);
          out.push(...tools.splice(t--, 1));
        }
      }
    }
    out.push(...tools); // answering no call of the stretch (none once the history is paired): where they were, at its end
    if (out.some((m, k) => m !== stretch[k])) messages.splice(i, stretch.length, ...out);
    i = end - 1;
  }
}

class Builder {
  readonly w = new Warnings();

  constructor(
    private readonly target: BuildTarget,
    /** The request's tool names as OpenAI takes them (formats/tool-names.ts). */
    readonly names: ToolNameMap,
    /** Names of the Chat client's own `custom` tools: calls of them go back as custom calls (custom-calls.ts). */
    private readonly customTools: ReadonlySet<string> = new Set(),
  ) {}

  /** A user-side media/text part → Chat content part, or undefined (dropped with a warning). */
  part(p: HubPart): Json | undefined {
    switch (p.type) {
      case "text":
        return p.text.length > 0 ? { type: "text", text: p.text } : undefined;
      case "image": {
        const s = p.source;
        let url: string;
        if (s.kind === "base64") url = dataUrl(s.mediaType, s.data);
        else if (s.kind === "url" && isGoogleOnlyUri(s.url) && this.target.kind === "openai") {
          // OpenAI cannot fetch it; a third-party server may (Vertex AI's OpenAI-compatible endpoint reads
          // gs:// images), so it gets the URI as it came, as it gets an audio format OpenAI refuses.
          this.w.add("dropped_media", "An image given by a Google-only file URI (gs:// or the Gemini Files API) cannot be read by OpenAI; it was dropped.");
          return undefined;
        } else if (s.kind === "url") url = s.url;
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
        if (isGoogleOnlyUri(s.url)) this.w.add("dropped_media", "A document given by a Google-only file URI (gs:// or the Gemini Files API) cannot be read by a Chat Completions upstream; it was dropped.");
        else this.w.add("dropped_content", "A document given by URL cannot be sent to a Chat Completions upstream; it was dropped.");
        return undefined;
      }
      case "audio": {
        // OpenAI takes wav and mp3 only; an OpenAI-compatible server may take more, so it gets the format as it came.
        const format = openaiAudioFormat(p.format) ?? (this.target.kind === "openai-compatible" ? p.format : undefined);
        if (format === undefined) {
          this.w.add("dropped_media", `Audio in ${p.format} format was not sent: OpenAI takes input audio as wav or mp3 only.`);
          return undefined;
        }
        return { type: "input_audio", input_audio: { data: p.data, format } };
      }
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
        this.w.add("dropped_content", `${withArticle(p.type)} part in a user turn cannot be sent to a Chat Completions upstream; it was dropped.`);
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

  /**
   * An assistant turn. `replayReasoning`: the turn belongs to the current tool-call loop of an
   * OpenAI-compatible thinking model, which expects its reasoning back (see {@link buildRequest}).
   */
  assistant(m: HubMessage, out: Json[], replayReasoning = false): void {
    let text = "";
    let reasoning = "";
    const calls: Json[] = [];
    for (const p of m.content) {
      switch (p.type) {
        case "text":
          text += p.text;
          break;
        case "tool_call":
          if (this.customTools.has(p.name)) calls.push(customCallJson(chatToolId(p.id), this.names.map(p.name), p.arguments));
          else calls.push({ id: chatToolId(p.id), type: "function", function: { name: this.names.map(p.name), arguments: p.arguments.length > 0 ? p.arguments : "{}" } });
          break;
        case "thinking":
          // Reasoning text goes back as `reasoning_content` where a compatible thinking model expects
          // it; opaque state never does (F-8).
          if (replayReasoning && p.text.length > 0) reasoning += reasoning.length > 0 ? "\n\n" + p.text : p.text;
          if (p.signature) {
            this.w.add(
              "stripped_signature",
              replayReasoning
                ? "The signature of thinking in the conversation history cannot be sent to a Chat Completions upstream; the reasoning text was sent as reasoning_content without it."
                : "Signed thinking in the conversation history cannot be sent to a Chat Completions upstream; it was removed.",
            );
          }
          break;
        case "redacted_thinking":
          this.w.add("stripped_signature", "Redacted thinking in the conversation history cannot be sent to a Chat Completions upstream; it was removed.");
          break;
        default:
          this.w.add("dropped_content", `${withArticle(p.type)} part in an assistant turn cannot be sent to a Chat Completions upstream; it was dropped.`);
      }
    }
    if (text.length === 0 && calls.length === 0) return;
    const msg: Json = { role: "assistant" };
    if (reasoning.length > 0) msg.reasoning_content = reasoning;
    if (text.length > 0) msg.content = text;
    if (calls.length > 0) msg.tool_calls = calls;
    if (m.name) msg.name = m.name;
    out.push(msg);
  }

  system(m: HubMessage, out: Json[]): void {
    for (const p of m.content) {
      if (p.type !== "text") this.w.add("dropped_content", `${withArticle(p.type)} part in a ${m.role} message cannot be sent to a Chat Completions upstream; it was dropped.`);
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
 *   not sent: plain Chat upstreams reject them, B33). System/developer turns stay in position (but for
 *   one between a tool call and its tool message: after it, below).
 * - user turns: tool results first as `tool` messages (text joined; `isError` → "Error: " prefix), then
 *   one user message: media returned by tools (Chat tool messages carry text only, REFERENCE §5.5),
 *   then the turn's own parts. Empty messages are not sent.
 * - assistant turns: text → `content` (omitted when empty), tool calls → `tool_calls` (`arguments`
 *   `"{}"` when empty). Thinking: for `openai-compatible` targets, the reasoning text of the assistant
 *   turns of the current tool-call loop (those after the last user turn that is more than tool
 *   results) goes back as `reasoning_content`, the vendor field DeepSeek, Kimi, GLM and Qwen thinking
 *   models return and expect back on tool-call turns (DeepSeek rejects a thinking tool loop without
 *   it); earlier turns' reasoning is not sent (those servers ignore it; it would only cost tokens).
 *   Never as `content`, never with a signature; kind `openai` gets no reasoning (no such input field).
 *   Signed or redacted thinking is reported as `stripped_signature`.
 * - tool ids longer than 64 characters or with characters outside `[A-Za-z0-9_-]` are mapped
 *   deterministically ({@link chatToolId}) in calls and results alike.
 * - tool names OpenAI refuses (`^[a-zA-Z0-9_-]{1,64}$`: an MCP client's `docker.io:list_images`, a
 *   name over 64 characters) mapped the same way in tools, history and `tool_choice`
 *   (formats/tool-names.ts `OPENAI_TOOL_NAMES`), each with a `renamed_tool` warning;
 *   `decoderHints.toolNames` gives the decoders the way back to the client's. Names that fit are sent
 *   as they are (the prompt cache sees the same tools).
 * - tools: `{type:"function",function:{name,description?,parameters,strict?}}`; no description → the
 *   key is omitted, never null (B35). For `openai`, a description over 1024 characters
 *   (long-descriptions.ts `OPENAI_DESCRIPTION_MAX`; OpenAI answers 400 `string_above_max_length` to a
 *   longer one: Claude Code's and Gemini CLI's tools have descriptions of 1100–3500 characters) keeps
 *   its first part in the tool, cut at a paragraph, line, sentence or word end and ending in a
 *   pointer, and its rest goes after the leading system/developer message's text, one section per
 *   such tool in tool order (a `system` message first when there is none): long-descriptions.ts
 *   `fitDescription`, with a `changed_field` warning naming the tool. Provider tools of another format
 *   are dropped with a warning.
 *   `tool_choice` / `parallel_tool_calls` only when tools are sent (OpenAI rejects them otherwise). An
 *   `allowed` choice → `allowed_tools` for `openai` and a Chat client's own; for another client's
 *   request to a third-party server → only the allowed tools declared, with its mode as `tool_choice`
 *   (`changed_field` warning; the model can call the same tools, the prompt cache sees a shorter list).
 * - `verbosity` (the Responses `text.verbosity`): a Chat client's own as it came; else for `openai` a
 *   gpt-5 model's, or `medium` to any model (openai-common/models.ts `openAiTakesVerbosity`), and for a
 *   third-party server a gpt-5 model's (`takesVerbosity`); otherwise dropped with a warning.
 * - `stop` (at most 4 for `openai`, the rest dropped with a warning; an empty one is not sent, hub.ts
 *   `sendableStops`; none to an OpenAI reasoning model, which refuses it: `stopsEmulated`, the gateway
 *   cuts the reply at all of them, so neither the trim nor its warning),
 *   `temperature`, `top_p`, `n`,
 *   `reasoning_effort` (from the effort, or bucketed from a budget; `max` → `xhigh`, or `high` with a
 *   `changed_field` warning for an OpenAI model that refuses `xhigh`: openai-common/models.ts
 *   `topEffortFor`; reasoning switched
 *   off → the model's least effort, `none` from gpt-5.1 on, `minimal` for gpt-5, …:
 *   openai-common/models.ts, with a `changed_field` warning when it is not off),
 *   `response_format`, `user` (only when ≤ 64 characters), `prompt_cache_key` (`openai` only), `store`
 *   (`openai` and a Chat client's own; another client's store:true elsewhere dropped with a warning).
 *   `top_k` has no Chat field and is dropped with a warning. `logprobs` as asked; `top_logprobs` with
 *   it (Chat refuses the count without `logprobs: true`; a Chat client's own pair is sent as it came).
 * - streaming builds always ask `stream_options: {include_usage: true}` (REFERENCE §5.10).
 * - `source.extra` is re-emitted when the client spoke Chat; otherwise its keys are reported dropped.
 * - orphan tool results and unanswered calls repaired first, as on the other lanes ({@link pairToolHistory});
 *   a system/developer or further assistant message between a call and its tool message goes after the
 *   tool messages ({@link resultsAfterCalls}).
 * - Never writes a null or undefined value.
 *
 * Throws {@link FormatError} (400) when `previousResponseId` is set: a Chat upstream cannot resume a
 * stored Responses conversation, and answering without the context would be wrong (B41).
 */
export function buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest {
  if (req.previousResponseId) {
    throw invalid("previous_response_id cannot be used with this model: its provider does not store conversations.", "previous_response_id");
  }
  const early = new Warnings();
  req = flatNamespaces(req, early); // Codex namespace members under flat names (tool-kinds.ts)
  const b = new Builder(target, registerToolNames(req, new ToolNameMap(OPENAI_TOOL_NAMES), true), chatCustomToolNames(req.tools));
  b.w.addAll(early.list);
  req = namedToolReferences(req, (n) => b.names.map(n), b.w); // ToolSearch results name the tools as sent
  // A re-sent reasoning tail (a cut reply's, Codex): repeats go once, the tail is not sent (reasoning-tail.ts).
  if (req.source.format !== "openai-chat") req = { ...req, messages: withoutReasoningTail(req.messages, b.w, "openai-chat") };
  const openai = target.kind === "openai";
  const messages: Json[] = [];
  const sys = joinText(req.system, "\n\n");
  if (sys.length > 0) messages.push({ role: "system", content: sys });
  // The current tool-call loop starts after the last user turn that carries more than tool results.
  let loopStart = 0;
  if (target.kind === "openai-compatible") {
    for (let i = req.messages.length - 1; i >= 0; i--) {
      const m = req.messages[i]!;
      if (m.role === "user" && m.content.some((p) => p.type !== "tool_result")) {
        loopStart = i + 1;
        break;
      }
    }
  }
  // Orphans repaired (REFERENCE §5.7; OpenAI answers 400 to a tool message after no tool_calls and to
  // tool_calls without their tool messages): message count and order unchanged, so `i` still counts.
  const history = pairToolHistory(req.messages, b.w, "the Chat upstream");
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role === "user") b.user(m, messages);
    else if (m.role === "assistant") b.assistant(m, messages, target.kind === "openai-compatible" && i >= loopStart);
    else b.system(m, messages);
  }
  resultsAfterCalls(messages);

  const body: Json = { model: target.model, messages };

  const tools: Json[] = [];
  const moved: MovedDescription[] = []; // descriptions' rests over OpenAI's limit, for the system message
  const movedRole = movedDescriptionsRole(messages);
  // Responses `custom` (freeform) tools become one-string-argument function tools (formats/tool-kinds.ts).
  for (const t of portableTools(withoutDeferPlaceholder(req.tools))) {
    if (t.kind === "function") {
      const fn: Json = { name: b.names.map(t.name) };
      if (t.description !== undefined && t.description !== null) fn.description = openai ? fitDescription(t.name, fn.name as string, t.description, movedRole, moved, b.w) : t.description;
      fn.parameters = t.parameters ?? { type: "object", properties: {} };
      if (typeof t.strict === "boolean") fn.strict = t.strict;
      tools.push({ type: "function", function: fn });
    } else if (t.format === "openai-chat") {
      tools.push(customToolRenamed(t.raw, b.names)); // a `custom` tool under the name OpenAI's rule takes

    } else {
      const which = t.name ?? (typeof t.raw.type === "string" ? t.raw.type : undefined);
      b.w.add("dropped_tool", `The ${t.format} tool ${which ? `"${which}" ` : ""}cannot be sent to a Chat Completions upstream; it was dropped.`);
    }
  }
  appendMovedDescriptions(messages, moved);
  let tc = req.toolChoice;
  if (tc?.type === "allowed" && !openai && req.source.format !== "openai-chat") {
    // Third-party servers may not know allowed_tools (vLLM's and OpenRouter's tool_choice take the
    // strings and a named function only): the same restriction as a shorter tool list and the mode.
    const allowed = new Set(tc.names.map((n) => b.names.map(n)));
    const kept = tools.filter((t) => t.type === "function" && allowed.has((t.function as Json).name as string));
    b.w.add("changed_field", `tool_choice allowed_tools is not sent to a third-party Chat server: only the ${kept.length} allowed tool(s) were declared, with tool_choice "${tc.mode}".`);
    tools.length = 0;
    tools.push(...kept);
    tc = { type: tc.mode };
  }
  if (tools.length === 0 && forcesTool(tc)) b.w.add("dropped_field", "tool_choice was dropped because the request has no tools");
  if (tools.length > 0) {
    body.tools = tools;
    if (tc) body.tool_choice = chatToolChoice(tc, b.names);
    if (typeof req.parallelToolCalls === "boolean") body.parallel_tool_calls = req.parallelToolCalls;
  }

  if (req.maxOutputTokens !== undefined) body[openai ? "max_completion_tokens" : "max_tokens"] = req.maxOutputTokens;
  if (req.temperature !== undefined) body.temperature = Math.min(2, Math.max(0, req.temperature));
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) b.w.add("dropped_field", "top_k has no Chat Completions equivalent; it was dropped.");
  if (req.n !== undefined && req.n !== 1) body.n = req.n;
  if (req.logprobs !== undefined) body.logprobs = req.logprobs;
  // Chat takes top_logprobs only with logprobs: true; another format's count without its logprobs switch is not sent.
  if (req.topLogprobs !== undefined && (req.logprobs === true || req.source.format === "openai-chat")) body.top_logprobs = req.topLogprobs;
  const stop = sendableStops(req.stopSequences, b.w);
  if (stop) body.stop = stop; // at most 4 for OpenAI: trimmed below, once it is known they are sent
  const r = req.reasoning;
  if (r) {
    let effort: ReasoningEffort | undefined = r.effort;
    if (!effort && r.enabled !== false && r.budgetTokens !== undefined) effort = bucketThinkingBudget(r.budgetTokens);
    if (!effort && r.enabled === false) {
      const off = effortForDisabledReasoning(target.model);
      effort = off.effort;
      if (off.note) b.w.add("changed_field", off.note);
    }
    if (effort) {
      // max (Anthropic) → xhigh, or high for an OpenAI model that refuses xhigh (openai-common/models.ts)
      const top = topEffortFor(effort, target.kind, target.model);
      if (top.note) b.w.add("changed_field", top.note);
      body.reasoning_effort = top.effort;
    }
  }
  if (req.verbosity) {
    // a Chat client's own goes as it wrote it (as on the native lane); OpenAI's models but the gpt-5
    // family take verbosity medium only (openai-common/models.ts openAiTakesVerbosity)
    if (req.source.format === "openai-chat" || (openai ? openAiTakesVerbosity(req.verbosity, target.model) : takesVerbosity(target.model))) body.verbosity = req.verbosity;
    else if (openai) b.w.add("dropped_field", `${target.model} takes verbosity medium only (the gpt-5 models take low and high); verbosity ${req.verbosity} was not sent.`);
    else b.w.add("dropped_field", `verbosity is sent to OpenAI's gpt-5 models only; ${target.model} did not get it.`);
  }
  // OpenAI refuses a non-object schema root; a Chat client's own goes as it wrote it, and another
  // server behind openai-compatible may take one.
  const rf = req.responseFormat && openai && req.source.format !== "openai-chat" ? sendableResponseFormat(req.responseFormat, b.w, "response_format") : req.responseFormat;
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
  if (req.store !== undefined) {
    // Chat's own `store` (OpenAI keeps the completion for evals and distillation): a Chat client's as it
    // wrote it, another client's to OpenAI; store:false elsewhere loses nothing (nothing is stored).
    if (openai || req.source.format === "openai-chat") body.store = req.store;
    else if (req.store) b.w.add("dropped_field", "store is only sent to OpenAI; it was dropped.");
  }
  const carried = carryForeignFields(req, body, openai, b.w);
  body.stream = target.stream;
  if (target.stream) body.stream_options = { include_usage: true };

  const extraKeys = Object.keys(req.source.extra).filter((k) => !carried.has(k));
  if (req.source.format === "openai-chat") {
    for (const k of extraKeys) {
      const val = req.source.extra[k];
      if (val !== null && val !== undefined && !(k in body)) body[k] = k === "tool_choice" ? customChoiceRenamed(val, b.names) : val;
    }
  } else if (extraKeys.length > 0) {
    const dropped = extraKeys.filter((k) => !k.startsWith("$")); // `$…`: per-item fields a format keeps for itself
    if (dropped.length > 0) b.w.add("dropped_field", `Fields with no Chat Completions equivalent were dropped: ${dropped.join(", ")}.`);
  }
  if (holdsCacheMarkers(req)) {
    b.w.add(
      "dropped_cache_control",
      openai
        ? "Chat Completions has no per-block prompt-cache markers (OpenAI caches prompt prefixes by itself); cache_control was not sent."
        : "Chat Completions has no standard per-block prompt-cache markers; cache_control was not sent, so a server that caches only at marked points (OpenRouter for Anthropic models) does not cache this prompt.",
    );
  }
  // What OpenAI's own API refuses for this model (a reasoning model's sampling, a plain model's reasoning).
  const refused = dropRefusedFields(body, target.kind, target.model, b.w);
  // OpenAI takes at most 4 stop sequences; none went to a reasoning model (emulated, all of them: refused)
  if (openai && Array.isArray(body.stop) && body.stop.length > 4) {
    b.w.add("dropped_field", `OpenAI accepts at most 4 stop sequences; ${body.stop.length - 4} were dropped.`);
    body.stop = body.stop.slice(0, 4);
  }
  const hints = renamedToolWarnings(b.names, "OpenAI", b.w);
  const built: BuiltRequest = hints ? { body, warnings: b.w.list, decoderHints: hints } : { body, warnings: b.w.list };
  if (refused.includes("stop")) built.stopsEmulated = true; // the gateway cuts the reply at them (pipeline/commit.ts)
  return built;
}
