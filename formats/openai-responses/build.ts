/**
 * {@link HubRequest} → OpenAI Responses provider body (REFERENCE §3.1, §5): {@link buildRequest} for
 * kinds `openai-responses`, `openai` (Responses endpoint) and `codex` (the Codex backend's rules are
 * codex.ts), and {@link buildTools} (shared with response.ts).
 */
import {
  type HubMessage,
  type HubPart,
  type HubRequest,
  type HubTool,
  type ReasoningEffort,
  type ResponseFormat,
  type TextPart,
  type ThinkingPart,
  type ToolChoice,
  type ToolResultPart,
  Warnings,
} from "../hub.ts";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import { ANTHROPIC_SERVICE_TIER, bucketThinkingBudget, dropRefusedFields, effortForDisabledReasoning, isOpenAiApi, openAiTakesVerbosity, reasonsByDefault, reasonsNever, topEffortFor } from "../openai-common/models.ts";
import { isObj } from "../json.ts";
import { isGoogleOnlyUri } from "../media-types.ts";
import { openaiAudioFormat } from "../openai-common/audio.ts";
import { sendableResponseFormat } from "../openai-common/response-format.ts";
import { forcesTool, holdsCacheMarkers } from "../request-marks.ts";
import { applyCodexFixes } from "./codex.ts";
import { pairToolHistory } from "../tool-pairs.ts";
import { withoutDeferPlaceholder } from "../tool-kinds.ts";
import { withoutReasoningTail } from "../reasoning-tail.ts";
import { OPENAI_TOOL_NAMES, registerToolNames, renamedToolWarnings, ToolNameMap } from "../tool-names.ts";
import { namedToolReferences } from "../tool-references.ts";
import { LOGPROBS_INCLUDE, TOOL_FIELDS_KEY, hasItemPrefix, namespacesOnce, sanitizeCallId, sourceToUrl } from "./common.ts";

const FORMAT = "openai-responses" as const;


function partToInputContent(p: HubPart, w: Warnings): Record<string, unknown> | undefined {
  switch (p.type) {
    case "text":
      return { type: "input_text", text: p.text };
    case "image": {
      if (p.source.kind === "file_id") return { type: "input_image", file_id: p.source.fileId, detail: p.detail ?? "auto" };
      if (p.source.kind === "url" && isGoogleOnlyUri(p.source.url)) {
        w.add("dropped_media", "An image given by a Google-only file URI (gs:// or the Gemini Files API) cannot be read by a Responses upstream; it was dropped.");
        return undefined;
      }
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
      if (s.kind === "url" && isGoogleOnlyUri(s.url)) {
        w.add("dropped_media", "A document given by a Google-only file URI (gs:// or the Gemini Files API) cannot be read by a Responses upstream; it was dropped.");
        return undefined;
      }
      const out: Record<string, unknown> = { type: "input_file" };
      if (s.kind === "file_id") out.file_id = s.fileId;
      else if (s.kind === "url") out.file_url = s.url;
      else out.file_data = `data:${s.mediaType};base64,${s.data}`;
      const filename = p.filename ?? p.title;
      if (filename) out.filename = filename;
      else if (s.kind === "base64") out.filename = s.mediaType === "application/pdf" ? "document.pdf" : "document";
      return out;
    }
    case "audio": {
      const format = openaiAudioFormat(p.format);
      if (format === undefined) {
        w.add("dropped_media", `Audio in ${p.format} format was not sent: OpenAI takes input audio as wav or mp3 only.`);
        return undefined;
      }
      return { type: "input_audio", input_audio: { data: p.data, format } };
    }
    case "video":
      w.add("dropped_content", "Video input is not supported by the Responses format; it was dropped.");
      return undefined;
    default:
      return undefined;
  }
}

/** Tool-result content → `output`: a STRING when text-only (B31; some upstreams reject the list form). */
function toolResultOutput(r: ToolResultPart, w: Warnings): string | Array<Record<string, unknown>> {
  if (r.content.every((c) => c.type === "text")) return errorPrefixed(r, r.content.map((c) => (c as TextPart).text).join("\n"));
  const parts: Array<Record<string, unknown>> = [];
  if (r.isError) parts.push({ type: "input_text", text: "Error" });
  for (const c of r.content) {
    const x = partToInputContent(c, w);
    if (x) parts.push(x);
  }
  return parts;
}

/** Whether an object has no own enumerable keys (without allocating the key list). */
function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * A failed tool's output text: Responses has no error flag on `function_call_output`, so an error
 * result (Anthropic `is_error`, Gemini `response.error`) says so in its text, as Chat tool messages do
 * (REFERENCE §5.7): `Error: <text>`, or `Error` alone when the result is empty.
 */
function errorPrefixed(r: ToolResultPart, text: string): string {
  if (!r.isError) return text;
  return text.length > 0 ? `Error: ${text}` : "Error";
}

interface BuildContext {
  target: BuildTarget;
  store: boolean | undefined;
  w: Warnings;
  /** Names of `custom` (freeform) tools: calls to them are rebuilt as `custom_tool_call`. */
  customTools: Set<string>;
  /** call ids of custom tool calls seen in the history (their outputs are `custom_tool_call_output`). */
  customCalls: Set<string>;
  /** The request's tool names as OpenAI takes them (formats/tool-names.ts). */
  names: ToolNameMap;
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
  // Responses input messages have no `name` (who said it): said, as the Anthropic and Gemini lanes do (SPEC F-2)
  if (m.name) ctx.w.add("dropped_field", "A message name (Chat `name`) has no Responses equivalent and was dropped.");
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
        // a custom_tool_call item's call stays one (a namespace's function and custom member may share its name)
        if (p.custom || ctx.customTools.has(p.name)) {
          ctx.customCalls.add(p.id);
          const item: Record<string, unknown> = { type: "custom_tool_call" };
          if (hasItemPrefix(p.itemId, "ctc_")) item.id = p.itemId;
          item.call_id = callId;
          item.name = ctx.names.map(p.name);
          if (p.namespace) item.namespace = p.namespace;
          item.input = customInput(p.arguments);
          out.push(item);
          continue;
        }
        const item: Record<string, unknown> = { type: "function_call" };
        if (hasItemPrefix(p.itemId, "fc_")) item.id = p.itemId;
        item.call_id = callId;
        item.name = ctx.names.map(p.name);
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
  return errorPrefixed(r, r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n"));
}

/** A `custom` tool (or a namespace's custom member) with the name `names` sends; the same object when that is its own. */
function customNamed(raw: Record<string, unknown>, names: ToolNameMap | undefined): Record<string, unknown> {
  if (!names || raw.type !== "custom" || typeof raw.name !== "string") return raw;
  const name = names.map(raw.name);
  return name === raw.name ? raw : { ...raw, name };
}

/**
 * Hub tools → Responses tools: flat functions, namespaces re-nested (members after the namespace's
 * own non-function tools, in hub order), provider tools of this format; other formats' provider tools
 * dropped with a warning. `fields` restores per-tool fields kept by {@link parseRequest}. `names`: the
 * request's name map (formats/tool-names.ts) for a provider body, whose function and `custom` tools go
 * by the names it gives; without it (a reply's echo of the client's tools) names stay as they are.
 * A provider body leaves out Claude Code's `DeferredToolPlaceholder` and sends `defer_loading` only
 * when the request declares a `tool_search` tool.
 */
export function buildTools(
  tools: HubTool[],
  w?: Warnings,
  fields?: Record<string, Record<string, unknown>>,
  names?: ToolNameMap,
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
  // A provider body (names given): no Claude Code placeholder, and `defer_loading` only where a
  // `tool_search` tool can load the deferred functions (OpenAI's tool search docs); Claude Code's
  // ToolSearch is a client function, so its deferred tools are declared as usual (tool-kinds.ts).
  const searchable = !names || tools.some((t) => t.kind === "provider" && t.format === FORMAT && t.raw.type === "tool_search");
  for (const t of names ? withoutDeferPlaceholder(tools) : tools) {
    if (t.kind === "provider") {
      if (t.format !== FORMAT) {
        w?.add("dropped_tool", `Tool '${t.name ?? String(t.raw.type ?? "?")}' is specific to ${t.format} and was not sent.`);
        continue;
      }
      if (t.raw.type === "namespace" && typeof t.raw.name === "string") {
        const existing = namespaces.get(t.raw.name);
        const given = (Array.isArray(t.raw.tools) ? t.raw.tools : []) as Array<Record<string, unknown>>;
        const members = names ? given.map((m) => customNamed(m, names)) : given;
        if (existing) existing.push(...members);
        else {
          const { tools: _m, ...shell } = t.raw;
          const list = [...members];
          namespaces.set(t.raw.name, list);
          out.push({ ...shell, tools: list });
        }
        continue;
      }
      out.push(customNamed(t.raw, names));
      continue;
    }
    const f: Record<string, unknown> = { type: "function", name: names ? names.map(t.name) : t.name };
    if (t.description !== undefined) f.description = t.description;
    f.strict = t.strict ?? false;
    f.parameters = t.parameters;
    if (t.deferLoading && searchable) f.defer_loading = true;
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

function buildToolChoice(tc: ToolChoice, customTools: Set<string>, names: ToolNameMap): unknown {
  switch (tc.type) {
    case "auto":
    case "required":
    case "none":
      return tc.type;
    case "tool":
      return { type: customTools.has(tc.name) ? "custom" : "function", name: names.map(tc.name) };
    case "allowed":
      return { type: "allowed_tools", mode: tc.mode, tools: tc.names.map((name) => ({ type: customTools.has(name) ? "custom" : "function", name: names.map(name) })) };
  }
}

function buildReasoning(req: HubRequest, target: BuildTarget, w: Warnings): Record<string, unknown> | undefined {
  const model = target.model;
  const r = req.reasoning;
  if (!r) return undefined;
  const out: Record<string, unknown> = {};
  let effort: ReasoningEffort | undefined = r.effort;
  if (!effort && r.budgetTokens !== undefined && r.enabled !== false) effort = bucketThinkingBudget(r.budgetTokens);
  if (!effort && r.enabled === false) {
    // Reasoning switched off (Anthropic thinking disabled, Gemini budget 0): the model's least effort.
    const off = effortForDisabledReasoning(model);
    if (off.note) w.add("changed_field", off.note);
    return off.effort ? { effort: off.effort } : undefined;
  }
  if (effort) {
    // max (Anthropic) → xhigh, or high for an OpenAI model that refuses xhigh (openai-common/models.ts)
    const top = topEffortFor(effort, target.kind, model);
    if (top.note) w.add("changed_field", top.note);
    else if (effort === "max") w.add("changed_field", "Reasoning effort 'max' is sent as 'xhigh' to the Responses upstream.");
    effort = top.effort;
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

/** The `include` entry that makes OpenAI return a reasoning item's `encrypted_content` (Responses create, `include`). */
const ENCRYPTED_INCLUDE = "reasoning.encrypted_content";

/**
 * Whether a translated request (another client format) turns reasoning on: then the upstream is asked
 * for `reasoning.encrypted_content` (REFERENCE §3: reasoning goes back with it), since OpenAI sends it
 * only when asked, whatever `store` is, and the client's thinking would otherwise come back unsigned and
 * be dropped on the next turn of a tool loop. Reasoning switched off (`enabled: false`, effort `none`)
 * asks for nothing: a model that does not reason may refuse the include. A Responses client's own
 * request is sent as it wrote it.
 */
function asksForReasoning(req: HubRequest, sent: unknown): boolean {
  if (req.source.format === FORMAT || !req.reasoning || req.reasoning.enabled === false) return false;
  const effort = (sent as { effort?: unknown } | undefined)?.effort;
  return sent !== undefined && effort !== "none";
}

/** The `reasoning.effort` values the Responses API takes (API reference, `reasoning.effort`). */
const RESPONSES_EFFORTS = new Set(["none", "minimal", "low", "medium", "high", "xhigh"]);

/**
 * A Chat client's fields Responses has under the same name and meaning (OpenAI API reference of both
 * endpoints), put in `body`: `service_tier` (auto/default/flex/priority: billing and latency, so "flex"
 * must not silently become the standard rate), `metadata` (string pairs), `safety_identifier` (sent
 * with `user`), and the `reasoning` object
 * some Chat clients send (OpenRouter's shape): its `effort` and `summary` where the request's own
 * reasoning set none (an effort Responses does not take, and its other members, such as
 * `max_tokens`, `exclude`, are named in a `dropped_field` warning; an effort the model refuses goes as
 * openai-common/models.ts `topEffortFor` says, with a `changed_field` warning). An Anthropic client's `service_tier`
 * as openai-common/models.ts `ANTHROPIC_SERVICE_TIER` maps it. Returns the keys it used.
 */
function carryChatFields(req: HubRequest, body: Record<string, unknown>, target: BuildTarget, w: Warnings): Set<string> {
  const used = new Set<string>();
  if (req.source.format === "anthropic-messages" && typeof req.source.extra.service_tier === "string") {
    // Anthropic "auto" / "standard_only" → OpenAI "auto" / "default" (the same mapping as the Chat builder's)
    const tier = ANTHROPIC_SERVICE_TIER[req.source.extra.service_tier];
    if (tier) {
      body.service_tier = tier;
      used.add("service_tier");
    }
  }
  if (req.source.format !== "openai-chat") return used;
  const extra = req.source.extra;
  if (typeof extra.service_tier === "string") {
    body.service_tier = extra.service_tier;
    used.add("service_tier");
  }
  if (isObj(extra.metadata)) {
    body.metadata = extra.metadata;
    used.add("metadata");
  }
  // sent beside `user` (when alone it is the request's user: parse.ts); Responses takes both
  if (typeof extra.safety_identifier === "string") {
    body.safety_identifier = extra.safety_identifier;
    used.add("safety_identifier");
  }
  if (isObj(extra.reasoning)) {
    used.add("reasoning");
    const { effort, summary, ...rest } = extra.reasoning;
    const out: Record<string, unknown> = { ...(body.reasoning as Record<string, unknown> | undefined) };
    const dropped = Object.keys(rest).map((k) => `reasoning.${k}`);
    if (out.effort === undefined && typeof effort === "string" && RESPONSES_EFFORTS.has(effort)) {
      // the same model rules as the request's own effort (openai-common/models.ts topEffortFor): xhigh
      // → high for a model that refuses it, medium for the later chat models, high for gpt-5-pro
      const top = topEffortFor(effort as ReasoningEffort, target.kind, target.model);
      if (top.note) w.add("changed_field", top.note);
      out.effort = top.effort;
    } else if (out.effort === undefined && effort !== undefined && effort !== null) dropped.unshift(`reasoning.effort ${JSON.stringify(effort)}`);
    if (out.summary === undefined && typeof summary === "string") out.summary = summary;
    if (Object.keys(out).length > 0) body.reasoning = out;
    if (dropped.length > 0) w.add("dropped_field", `Fields with no Responses equivalent were dropped: ${dropped.join(", ")}.`);
  }
  return used;
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
 *   dropped (OpenAI validates prefixes, §3.1); orphans repaired with a warning ({@link pairToolHistory}:
 *   a result without its call → text, a call without its result → an error output), except with
 *   `previous_response_id` or a Responses client's `conversation`, where a result may answer a call
 *   of the stored response or conversation;
 * - tool names OpenAI refuses (`^[a-zA-Z0-9_-]{1,64}$`: `docker.io:list_images`, a name over 64
 *   characters) mapped the same way in tools, history and `tool_choice` (formats/tool-names.ts
 *   `OPENAI_TOOL_NAMES`), each with a `renamed_tool` warning; `decoderHints.toolNames` maps the reply's
 *   calls back to the client's names; names that fit are sent as they are;
 * - tools flat (`{type:"function", name, parameters, strict}`), Codex namespaces re-nested, provider
 *   tools of other formats dropped with a warning; an `allowed` tool choice → `allowed_tools`;
 *   `verbosity` → `text.verbosity`;
 * - token limit → `max_output_tokens` (B37; raised to 16 with a warning when lower); `stop` is never
 *   sent (no such field) — warned; `top_k`, `n`>1 warned and dropped;
 * - thinking: reasoning items only for parts whose signature family equals `target.family`
 *   (encrypted_content), or id-only items when store is not false (B40); foreign signatures and
 *   redacted thinking dropped with a warning (F-8); reasoning switched off (Anthropic thinking
 *   disabled, Gemini budget 0) → the model's least `reasoning.effort` (`none` from gpt-5.1 on,
 *   `minimal` for gpt-5, …: openai-common/models.ts), with a `changed_field` warning when it is not off;
 *   from a client of another format, identical reasoning in a row goes once and a last assistant turn
 *   of reasoning only is not sent (`dropped_thinking`; reasoning-tail.ts);
 * - `source.extra` re-emitted when the client spoke Responses (client_metadata, metadata, text
 *   verbosity, …); another format's extra fields are named in one `dropped_field` warning;
 * - an error tool result (`isError`) says `Error: …` in its output text (no flag in Responses).
 * - `store`: a Responses client's as it wrote it; any other client's request goes with `store:false`
 *   unless it said `store:true` (a Chat client's `store`), since OpenAI stores Responses by default and
 *   the other formats' APIs do not; then `reasoning.encrypted_content` is asked for when the client
 *   asks for reasoning, or says nothing of it to a model that reasons anyway (o-series, gpt-5 but its
 *   chat models: `reasonsByDefault`), so reasoning round-trips without stored items (REFERENCE §3.1);
 * - a Chat client's `service_tier`, `metadata` and OpenRouter-style `reasoning` object are carried
 *   ({@link carryChatFields}).
 * Kind `codex` forces `store:false` up front (so id-only reasoning is dropped) and ends with
 * {@link applyCodexFixes} (SPEC P-2; the Codex CLI's headers are the executor's). With `store:false`
 * from a Responses client (or kind `codex`) `reasoning.encrypted_content` is added to `include` too, so reasoning can round-trip;
 * so is it when a client of another format turns reasoning on (an Anthropic thinking budget, a Chat
 * `reasoning_effort`, a Gemini `thinkingConfig`), keeping the include it gave; never for one of OpenAI's
 * models that do not reason (openai-common/models.ts `reasonsNever`: gpt-4.1, …), which refuse it. A
 * client's effort `max` is sent as `xhigh`, or as `high` to an OpenAI model that refuses `xhigh`
 * (openai-common/models.ts `topEffortFor`), with a `changed_field` warning.
 * Asked-for logprobs (`logprobs: true`) add `message.output_text.logprobs` to `include`; `topLogprobs`
 * → `top_logprobs`.
 *
 * Never throws; what it drops is listed in `warnings`.
 */
export function buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const fromResponses = req.source.format === FORMAT;
  // A translated request is not stored unless its client asked (a Chat client's store:true): OpenAI
  // stores Responses by default, the other formats' APIs (Chat included) do not (REFERENCE §3.1).
  const store = target.kind === "codex" ? false : fromResponses ? req.store : req.store === true;
  const customTools = customToolNames(req.tools);
  const names = registerToolNames(req, new ToolNameMap(OPENAI_TOOL_NAMES));
  req = namedToolReferences(req, (n) => names.map(n), w); // ToolSearch results name the tools as sent
  const ctx: BuildContext = { target, store, w, customTools, customCalls: new Set(), names };

  const body: Record<string, unknown> = { model: target.model };
  const instructions = req.system
    .map((s) => s.text)
    .filter((t) => t.length > 0)
    .join("\n\n");
  if (instructions.length > 0) body.instructions = instructions;

  const input: Array<Record<string, unknown>> = [];
  // Orphans repaired (REFERENCE §5.7), but not with previous_response_id or a Responses client's
  // `conversation`: a result there may answer a call of the stored response or conversation.
  const stored = req.previousResponseId !== undefined || (req.source.format === "openai-responses" && req.source.extra.conversation !== undefined);
  // A translated conversation's re-sent reasoning tail (a cut reply's) would be a reasoning item with
  // nothing after it, which OpenAI refuses; repeats go once (reasoning-tail.ts). A Responses client's own
  // items are sent as it sent them.
  const messages = fromResponses ? req.messages : withoutReasoningTail(req.messages, w, "openai-responses");
  const history = stored ? messages : pairToolHistory(messages, w, "the Responses upstream");
  for (const m of history) messageItems(m, ctx, input);
  body.input = input;

  const toolFields = fromResponses ? (req.source.extra[TOOL_FIELDS_KEY] as Record<string, Record<string, unknown>> | undefined) : undefined;
  const built = buildTools(req.tools, w, toolFields, names);
  // a namespace declared twice (merged by buildTools): each member once
  const tools = (namespacesOnce(built, (m) => w.add("dropped_tool", m)) ?? built) as Array<Record<string, unknown>>;
  if (tools.length > 0) body.tools = tools;
  if (tools.length === 0 && forcesTool(req.toolChoice)) w.add("dropped_field", "tool_choice was dropped because the request has no tools");
  else if (req.toolChoice) body.tool_choice = buildToolChoice(req.toolChoice, customTools, names);
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
  if (req.topLogprobs !== undefined) body.top_logprobs = req.topLogprobs;
  if (req.topK !== undefined) w.add("dropped_field", "top_k is not supported by the Responses format and was not sent.");
  // Stop sequences: the format has no stop field, so none is sent; the gateway emulates them on the
  // reply (pipeline/cut-at-stop-sequence.ts, REFERENCE §5.11: scan the text and cut), no warning.
  if (req.n !== undefined && req.n > 1) w.add("dropped_field", "n > 1 is not supported by the Responses format; one reply is generated.");

  const reasoning = buildReasoning(req, target, w);
  const extraReasoning = fromResponses ? (req.source.extra.reasoning as Record<string, unknown> | undefined) : undefined;
  if (reasoning || extraReasoning) body.reasoning = { ...extraReasoning, ...reasoning };
  const carried = carryChatFields(req, body, target, w);

  const extraText = fromResponses ? (req.source.extra.text as Record<string, unknown> | undefined) : undefined;
  // Responses upstreams are OpenAI's (openai-responses, codex): a translated non-object schema root is
  // refused there, so it is dropped with a warning; a Responses client's own goes as it wrote it.
  const format = req.responseFormat && !fromResponses ? sendableResponseFormat(req.responseFormat, w, "text.format") : req.responseFormat;
  // OpenAI's models but the gpt-5 family take verbosity medium only (openai-common/models.ts
  // openAiTakesVerbosity); a Responses client's own goes as it wrote it.
  let verbosity = req.verbosity;
  if (verbosity && !fromResponses && isOpenAiApi(target.kind) && !openAiTakesVerbosity(verbosity, target.model)) {
    w.add("dropped_field", `${target.model} takes verbosity medium only (the gpt-5 models take low and high); verbosity ${verbosity} was not sent.`);
    verbosity = undefined;
  }
  if (format || extraText || verbosity) {
    const text: Record<string, unknown> = { ...extraText };
    if (verbosity) text.verbosity = verbosity;
    if (format) text.format = buildTextFormat(format);
    body.text = text;
  }

  if (store !== undefined) body.store = store;
  let include = req.include ? [...req.include] : undefined;
  if (req.logprobs === true && !include?.includes(LOGPROBS_INCLUDE)) include = [...(include ?? []), LOGPROBS_INCLUDE];
  // Translated with the default store:false, a reasoning model's reasoning comes back only with its
  // encrypted state; OpenAI's other models refuse the include (openai-common/models.ts reasonsByDefault),
  // so the gateway adds it for none of OpenAI's models that do not reason (reasonsNever; an include the
  // client gave is its own, taken out and named by dropRefusedFields).
  const encrypted =
    !(isOpenAiApi(target.kind) && reasonsNever(target.model)) &&
    (fromResponses || target.kind === "codex"
      ? store === false || asksForReasoning(req, body.reasoning)
      : asksForReasoning(req, body.reasoning) || (!req.reasoning && store === false && reasonsByDefault(target.model)));
  if (encrypted && !include?.includes(ENCRYPTED_INCLUDE)) {
    include = [...(include ?? []), ENCRYPTED_INCLUDE];
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
  } else if (!isEmpty(req.source.extra)) {
    // Another format's fields with no hub slot (Chat `seed`, `logprobs`, `frequency_penalty`; Gemini
    // `safetySettings`; Anthropic `service_tier` …): not sent, and said so (SPEC F-2), never silently.
    const dropped = Object.keys(req.source.extra).filter((k) => !k.startsWith("$") && !carried.has(k)); // `$…`: per-item fields a format keeps for itself
    if (dropped.length > 0) w.add("dropped_field", `Fields with no Responses equivalent were dropped: ${dropped.join(", ")}.`);
  }
  body.stream = target.stream;
  // What OpenAI refuses for this model (a reasoning model's sampling, a plain model's reasoning).
  dropRefusedFields(body, target.kind, target.model, w);
  if (target.kind === "codex") applyCodexFixes(body, target, w);
  if (holdsCacheMarkers(req)) w.add("dropped_cache_control", "Responses has no per-block prompt-cache markers (OpenAI caches prompt prefixes by itself); cache_control was not sent.");
  const hints = renamedToolWarnings(names, "OpenAI", w);
  return hints ? { body, warnings: w.list, decoderHints: hints } : { body, warnings: w.list };
}
