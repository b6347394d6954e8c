/**
 * Hub → Anthropic Messages provider body (REFERENCE §1.1, §5.4–§5.12): {@link buildRequest} for kinds
 * `anthropic`, `claude-code` and `anthropic-compatible`, with a {@link Warning} for everything dropped
 * or changed. The turn shaping ({@link mergeTurns}) is shared with tidy.ts.
 */
import { flatNamespaces, portableTools } from "../tool-kinds.ts";
import { withoutReasoningTail } from "../reasoning-tail.ts";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import {
  type CacheControl,
  type DocumentPart,
  type FunctionTool,
  type HubMessage,
  type HubRequest,
  type HubTool,
  type ImagePart,
  invalidRequest as invalid,
  type ProviderFamily,
  type ReasoningConfig,
  type ReasoningEffort,
  type TextPart,
  type ToolChoice,
  type ToolResultPart,
  sendableStops,
  Warnings,
} from "../hub.ts";
import { isObj, type JsonObject as Json } from "../json.ts";
import { withClaudeCodeIdentity } from "./claude-code.ts";
import {
  DEFAULT_MAX_TOKENS,
  EFFORT_BUDGET,
  ITEM_FIELDS_KEY,
  MIN_THINKING_BUDGET,
  refusesSampling,
  refusesTemperatureWithTopP,
  thinksAdaptiveOnly,
  sanitizeToolId,
  writeCacheControl,
  type ItemFields,
} from "./mapping.ts";
import { pairToolHistory } from "../tool-pairs.ts";
import { mediaSource } from "./media.ts";
import { ANTHROPIC_TOOL_NAMES, registerToolNames, ToolNameMap } from "../tool-names.ts";
import { namedToolReferences } from "../tool-references.ts";

/** One Anthropic message being assembled (build and tidy). */
export interface OutMessage {
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

function textBlock(p: TextPart): Json | null {
  if (p.text.length === 0) return null; // "text content blocks must be non-empty" (REFERENCE §1.1)
  return cacheField({ type: "text", text: p.text }, p.cacheControl);
}

function mediaBlock(p: ImagePart | DocumentPart, w: Warnings, thirdParty: boolean): Json | null {
  const isDoc = p.type === "document";
  const src = mediaSource(p, w, thirdParty);
  if (!src) return null;
  if (p.type === "image" && p.detail !== undefined && p.detail !== "auto") {
    w.add("dropped_field", `Image detail ${JSON.stringify(p.detail)} has no Anthropic equivalent and was dropped`);
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

function toolResultBlock(p: ToolResultPart, w: Warnings, thirdParty: boolean): Json {
  const block: Json = { type: "tool_result", tool_use_id: sanitizeToolId(p.callId) };
  const parts: Json[] = [];
  for (const c of p.content) {
    const b = c.type !== "text" ? mediaBlock(c, w, thirdParty) : c.toolReference !== undefined ? { type: "tool_reference", tool_name: c.toolReference } : textBlock(c);
    if (b) parts.push(b);
  }
  if (parts.length === 1 && parts[0].type === "text" && parts[0].cache_control === undefined) block.content = parts[0].text;
  else if (parts.length > 0) block.content = parts;
  if (p.isError !== undefined) block.is_error = p.isError;
  return cacheField(block, p.cacheControl);
}

/** Converts one hub turn's parts into Anthropic blocks for a user/assistant/system message. */
/** `thirdParty`: the target is an `anthropic-compatible` server (media.ts `mediaSource`). */
function convertParts(m: HubMessage, family: ProviderFamily, w: Warnings, out: OutMessage, names: ToolNameMap, thirdParty: boolean): void {
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
          b = mediaBlock(p, w, thirdParty);
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
        b = cacheField({ type: "tool_use", id: sanitizeToolId(p.id), name: names.map(p.name), input: toolInput(p.arguments, w) }, p.cacheControl);
        break;
      case "tool_result":
        if (assistant) {
          w.add("dropped_content", "A tool result inside an assistant turn was dropped");
          break;
        }
        b = toolResultBlock(p, w, thirdParty);
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
export function mergeTurns(list: OutMessage[]): OutMessage[] {
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
 * The effort a thinking budget stood for, for a model that takes an effort instead of a budget: the
 * highest level whose {@link EFFORT_BUDGET} the budget reaches (`low` at the least; Claude Code's 31,999
 * → `xhigh`, 32,768 and more → `max`).
 */
function effortForBudget(budget: number): ReasoningEffort {
  const levels = ["max", "xhigh", "high", "medium", "low"] as const;
  for (const level of levels) if (budget >= EFFORT_BUDGET[level]) return level;
  return "low";
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

/**
 * Declarations for the tools a history calls when the request declares none (a title or summary
 * request carrying a tool loop, as GUI apps send; OpenAI takes it, Anthropic answers 400 "Requests which
 * include `tool_use` or `tool_result` blocks must define tools"): each name the history's `tool_use`
 * blocks use, once, in order, with the empty schema `{type: "object", properties: {}}` (Anthropic does
 * not check history's inputs against it), and a `declared_history_tools` warning. The builder sends
 * them with `tool_choice: {type: "none"}`, so the model cannot call them. Undefined when the history
 * has no tool block.
 */
function historyToolDeclarations(messages: OutMessage[], w: Warnings): Json[] | undefined {
  const used: string[] = [];
  for (const m of messages) for (const b of m.content) if (b.type === "tool_use" && typeof b.name === "string" && !used.includes(b.name)) used.push(b.name);
  if (used.length === 0) return undefined;
  w.add(
    "declared_history_tools",
    `The history calls tools the request does not declare (${used.join(", ")}); Anthropic takes tool blocks only with tools, so they were declared with an empty schema and tool_choice none.`,
  );
  return used.map((name) => ({ name, input_schema: { type: "object", properties: {} } }));
}

/**
 * Whether a request's deferred tools (`defer_loading`) can go to Anthropic as deferred: an Anthropic
 * client's request (its own search tool, e.g. Claude Code's ToolSearch, finds them) or one declaring
 * Anthropic's server-side search tool (`tool_search_tool_regex_…`, `tool_search_tool_bm25_…`, Anthropic
 * tool search docs). A translated request's search tool (a Responses `tool_search`) is dropped here,
 * and deferred tools with no search tool to load them are not the request the client meant.
 */
function defersWithSearch(tools: HubTool[], same: boolean): boolean {
  return same || tools.some((t) => t.kind === "provider" && t.format === "anthropic-messages" && typeof t.raw.type === "string" && t.raw.type.startsWith("tool_search_tool"));
}

function toolJson(t: FunctionTool, same: boolean, fields: ItemFields | undefined, names: ToolNameMap, defer: boolean): Json {
  let schema = t.parameters;
  if (!isObj(schema) || Object.keys(schema).length === 0) schema = { type: "object", properties: {} };
  else if (schema.type === undefined) schema = { type: "object", ...schema };
  const out: Json = { name: names.map(t.name) };
  if (t.description !== undefined && t.description !== null) out.description = t.description;
  out.input_schema = schema;
  if (same && t.strict !== undefined) out.strict = t.strict;
  if (t.deferLoading !== undefined && defer) out.defer_loading = t.deferLoading;
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
 *   audio/video dropped; images and documents as media.ts `mediaSource` decides (an image's type from
 *   its bytes, SVG/HEIC and other types Anthropic refuses dropped, another provider's file id dropped).
 * - tool names Anthropic refuses (`^[a-zA-Z0-9_-]{1,128}$`: a dot, a colon, a space, another script)
 *   mapped the same way in tools, history and `tool_choice` (formats/tool-names.ts), each with a
 *   `renamed_tool` warning; `decoderHints.toolNames` gives the decoders the way back to the client's.
 * - orphan tool results and unanswered calls repaired first ({@link pairToolHistory}, REFERENCE §5.7).
 * - a history with tool blocks in a request that declares no tools: the tools it calls declared with
 *   an empty schema and `tool_choice: none`, warned ({@link historyToolDeclarations}).
 * - tools: missing description omitted (never null), empty schema → `{type: object, properties: {}}`;
 *   provider tools of another format dropped. `tool_choice` only with tools; `parallelToolCalls:
 *   false` → `disable_parallel_tool_use: true` (on `{type: auto}` when no choice was given).
 * - thinking: adaptive / budget / effort (table {@link EFFORT_BUDGET}) / disabled. Budget ≥ 1024; when
 *   the budget is not below `max_tokens`, `max_tokens` is raised by the budget (`raised_max_tokens`
 *   warning when the client set the limit; never the answer
 *   shrunk, §5.8), up to the model's `max_output_tokens` (`target.defaultMaxOutputTokens`, which
 *   Anthropic's 400 enforces): past it `max_tokens` is that limit and the budget what the answer leaves
 *   (at least 1024; `clamped_thinking_budget`), thinking left off when the limit holds no budget and answer. Budgeted thinking is not sent with a forced tool choice (the choice wins) nor when
 *   the last tool turn lacks its signed thinking (case B27, {@link lastToolTurnFit}). An Anthropic
 *   client's own explicit budget is not raised against (interleaved thinking allows budget ≥
 *   max_tokens). With thinking, `temperature` (other than the default 1) and `top_k` are dropped and
 *   `top_p` below 0.95 too (case B28). When both `temperature` and `top_p` remain and the model
 *   refuses the pair (Claude from Opus 4.1 / Sonnet 4.5 on, mapping.ts
 *   {@link refusesTemperatureWithTopP}), `top_p` is dropped with a warning and `temperature` kept.
 *   A model that refuses all three (Claude from Opus 4.7 on, {@link refusesSampling}) gets none of
 *   `temperature`, `top_p`, `top_k` (one warning naming those the client sent). Such a model also
 *   thinks adaptively only ({@link thinksAdaptiveOnly}): budgeted thinking is sent as
 *   `{type: "adaptive"}` with `output_config.effort` = the client's effort (`minimal` → `low`), else the
 *   level the budget reaches ({@link effortForBudget}); a client's explicit budget dropped so is warned.
 * - `logprobs` / `top_logprobs`: no Anthropic field, dropped with a warning.
 * - `temperature` clamped to [0, 1]; `stop_sequences` (empty or whitespace-only ones are not sent:
 *   the API refuses them, hub.ts `sendableStops`); `metadata.user_id` ← `hub.user`;
 *   `output_config.effort` only for an Anthropic source; `output_config.format` from a JSON-schema
 *   response format, whatever its root's type (Anthropic names no object-only root). Dropped with a warning (translated requests): the client's `metadata` (Anthropic's
 *   takes `user_id` only), `prompt_cache_key`, tool `strict`, a message's `name`, an image's `detail`.
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
  req = flatNamespaces(req, w); // Codex namespace members under flat names (tool-kinds.ts)
  const same = req.source.format === "anthropic-messages";
  const keepSystemTurns = same && target.kind !== "anthropic-compatible";
  const family = target.family;
  const extra = req.source.extra ?? {};
  const itemFields = same && isObj(extra[ITEM_FIELDS_KEY]) ? (extra[ITEM_FIELDS_KEY] as ItemFields) : undefined;
  // Names Anthropic refuses (a dot, a colon, a space, another script) mapped, and back in the reply.
  const names = registerToolNames(req, new ToolNameMap(ANTHROPIC_TOOL_NAMES));
  req = namedToolReferences(req, (n) => names.map(n), w); // ToolSearch results name the tools as declared

  // ---- system and messages
  const system: Json[] = [];
  for (const p of req.system) {
    const b = textBlock(p);
    if (b) system.push(b);
  }
  const turns: OutMessage[] = [];
  let conversationStarted = false;
  // Orphans repaired first (REFERENCE §5.7): message count and order unchanged, so `i` still indexes item fields.
  // A re-sent reasoning tail (a cut reply's, Codex) is no prefill; repeats go once (reasoning-tail.ts).
  const history = same ? req.messages : withoutReasoningTail(req.messages, w, "anthropic");
  pairToolHistory(history, w, "Anthropic").forEach((m, i) => {
    const fields = itemFields?.messages?.[String(i)];
    if (m.role === "system" || m.role === "developer") {
      if (keepSystemTurns && m.role === "system") {
        const out: OutMessage = { role: "system", content: [], fields };
        convertParts(m, family, w, out, names, target.kind === "anthropic-compatible");
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
    if (m.name !== undefined && !same) w.add("dropped_field", "A message name (Chat `name`) has no Anthropic equivalent and was dropped");
    const out: OutMessage = { role: m.role, content: [], fields };
    convertParts(m, family, w, out, names, target.kind === "anthropic-compatible");
    turns.push(out);
  });
  const messages = mergeTurns(turns);
  if (target.kind === "claude-code") withClaudeCodeIdentity(system);

  // ---- tools
  const tools: Json[] = [];
  // Responses `custom` (freeform) tools become one-string-argument function tools (formats/tool-kinds.ts).
  const defer = defersWithSearch(req.tools, same);
  if (!defer && req.tools.some((t) => t.kind === "function" && t.deferLoading === true)) {
    w.add("dropped_field", "defer_loading was not sent: no tool search tool goes to Anthropic to load deferred tools, so they were declared as any other");
  }
  for (const t of portableTools(req.tools)) {
    if (t.kind === "function") tools.push(toolJson(t, same, itemFields, names, defer));
    else if (t.format === "anthropic-messages") tools.push(t.raw);
    else w.add("dropped_tool", `Tool ${JSON.stringify(t.name ?? t.raw.type ?? "?")} is specific to ${t.format} and was dropped`);
  }
  if (!same && portableTools(req.tools).some((t) => t.kind === "function" && t.strict === true)) {
    w.add("dropped_field", "Tool strict has no Anthropic equivalent on translated requests and was dropped; the arguments are not checked against the schema");
  }
  const historyTools = tools.length === 0 ? historyToolDeclarations(messages, w) : undefined;
  if (historyTools) tools.push(...historyTools);

  // ---- limits and thinking
  let maxTokens = req.maxOutputTokens ?? target.defaultMaxOutputTokens ?? DEFAULT_MAX_TOKENS;
  const forced = req.toolChoice?.type === "required" || req.toolChoice?.type === "tool" || (req.toolChoice?.type === "allowed" && req.toolChoice.mode === "required");
  let plan = planThinking(req.reasoning, same);
  if ((plan.kind === "budget" || plan.kind === "adaptive") && forced && tools.length > 0 && !historyTools) {
    w.add("dropped_thinking_config", "Thinking is incompatible with a forced tool choice; thinking was not enabled");
    plan = { kind: "none" };
  }
  if (plan.kind === "budget" && !lastToolTurnFit(messages, same, family)) {
    w.add("dropped_thinking_config", "The last tool-use turn has no thinking signed by this provider; thinking was not enabled");
    plan = { kind: "none" };
  }
  // Claude from Opus 4.7 on thinks adaptively only (mapping.ts thinksAdaptiveOnly): a budget is a 400
  // there, so budgeted thinking goes as adaptive thinking with the effort the budget stood for.
  let adaptiveEffort: ReasoningEffort | undefined;
  if (plan.kind === "budget" && thinksAdaptiveOnly(target.model)) {
    const r = req.reasoning;
    adaptiveEffort = r?.effort && r.effort !== "none" ? (r.effort === "minimal" ? "low" : r.effort) : effortForBudget(plan.budget);
    if (r?.budgetTokens !== undefined) w.add("dropped_thinking_config", `${target.model} takes no thinking budget; adaptive thinking was sent with effort ${adaptiveEffort} for budget_tokens ${r.budgetTokens}`);
    plan = { kind: "adaptive" };
  }
  let thinking: Json | undefined;
  if (plan.kind === "budget") {
    // An Anthropic client's own budget is left as sent: with the interleaved-thinking beta (which
    // Claude Code sends) a budget may exceed max_tokens, and raising it could pass the model's limit.
    const clientsOwn = same && req.reasoning?.budgetTokens !== undefined;
    let budget = plan.budget;
    if (budget >= maxTokens && !clientsOwn) {
      // Raised by the budget, but never past what the model can write (`target.defaultMaxOutputTokens`,
      // its configured max_output_tokens): Anthropic refuses a max_tokens above it with a 400. Then the
      // budget takes what the answer leaves, at least Anthropic's minimum.
      const cap = target.defaultMaxOutputTokens;
      if (cap === undefined || maxTokens + budget <= cap) {
        // REFERENCE §5.8: raised by the budget rather than the answer shrunk; said, as the client's limit changed.
        if (req.maxOutputTokens !== undefined) w.add("raised_max_tokens", `max_tokens ${maxTokens} was raised to ${maxTokens + budget} to hold the thinking budget (${budget} tokens), which Anthropic counts in max_tokens`);
        maxTokens += budget;
      } else {
        const answer = Math.min(maxTokens, cap);
        maxTokens = cap;
        budget = Math.max(MIN_THINKING_BUDGET, cap - answer);
        if (budget < maxTokens) w.add("clamped_thinking_budget", `thinking budget ${plan.budget} lowered to ${budget}: ${target.model} writes at most ${cap} output tokens (its max_output_tokens), thinking included`);
      }
    }
    if (budget >= maxTokens && !clientsOwn) {
      w.add("dropped_thinking_config", `${target.model} writes at most ${maxTokens} output tokens (its max_output_tokens), too few for the least thinking budget (${MIN_THINKING_BUDGET}) and an answer; thinking was not enabled`);
      plan = { kind: "none" };
    } else thinking = { type: "enabled", budget_tokens: budget };
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
    const choice: ToolChoice | undefined = historyTools ? { type: "none" } : req.toolChoice;
    switch (choice?.type) {
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
        tc = { type: "tool", name: names.map(choice.name) };
        break;
      case "allowed":
        // No Anthropic equivalent of a subset: `tool_choice` is auto / any / tool (one name) / none
        // (platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use, "Forcing tool
        // use"), and leaving tools out of `tools` would break the prompt cache. Its mode is sent,
        // every tool staying callable.
        tc = { type: choice.mode === "required" ? "any" : "auto" };
        w.add("dropped_field", `tool_choice allowed_tools has no Anthropic equivalent; ${tc.type} was sent and every declared tool stays callable`);
        break;
    }
    if (req.parallelToolCalls === false && tc?.type !== "none") {
      tc ??= { type: "auto" };
      tc.disable_parallel_tool_use = true;
    } else if (req.parallelToolCalls === true && same && tc && tc.type !== "none") {
      tc.disable_parallel_tool_use = false;
    }
    if (tc) body.tool_choice = tc;
  }
  if ((tools.length === 0 || historyTools) && req.toolChoice && req.toolChoice.type !== "none" && req.toolChoice.type !== "auto") {
    w.add("dropped_field", "tool_choice was dropped because the request has no tools");
  }
  if (thinking) body.thinking = thinking;

  if (refusesSampling(target.model)) {
    // Claude from Opus 4.7 on refuses all three at any non-default value (mapping.ts refusesSampling).
    const sent = [req.temperature !== undefined && "temperature", req.topP !== undefined && "top_p", req.topK !== undefined && "top_k"].filter((f) => f !== false);
    if (sent.length > 0) w.add("dropped_field", `${target.model} refuses temperature, top_p and top_k; ${sent.join(", ")} dropped`);
  } else {
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
    if (body.temperature !== undefined && body.top_p !== undefined && refusesTemperatureWithTopP(target.model)) {
      // Temperature is kept: the field clients set most, and the one Anthropic's migration guide keeps.
      delete body.top_p;
      w.add("dropped_field", `${target.model} accepts temperature or top_p, not both; top_p was dropped and temperature kept`);
    }
    if (req.topK !== undefined) {
      if (thinkingOn) w.add("dropped_field", "top_k is not allowed with thinking and was dropped");
      else body.top_k = req.topK;
    }
  }
  if (req.logprobs === true || req.topLogprobs !== undefined) w.add("dropped_field", "logprobs has no Anthropic equivalent and was dropped");
  const stops = sendableStops(req.stopSequences, w, true);
  if (stops) body.stop_sequences = stops;

  const outputConfig: Json = {};
  if (same && req.reasoning?.effort) outputConfig.effort = req.reasoning.effort;
  else if (adaptiveEffort) outputConfig.effort = adaptiveEffort;
  if (req.responseFormat?.type === "json_schema") {
    // Any schema root goes, an array or a string one (a Gemini client's responseSchema {type: "ARRAY"})
    // included: unlike OpenAI's (openai-common/response-format.ts), Anthropic's structured outputs name
    // no object-only root; their "JSON Schema limitations" list all basic types (object, array, string,
    // integer, number, boolean, null) as supported and refuse only recursive schemas, numeric and string
    // constraints, external $ref and complex enums (Claude docs, "Structured outputs").
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

  if (!same && extra.metadata !== undefined) w.add("dropped_field", "metadata has no Anthropic equivalent (Anthropic's metadata takes user_id only) and was dropped");
  if (req.promptCacheKey !== undefined) w.add("dropped_field", "prompt_cache_key has no Anthropic equivalent (Anthropic caches at cache_control markers) and was dropped");
  if (req.n !== undefined && req.n > 1) w.add("dropped_field", "Anthropic returns one choice; n > 1 was dropped");
  if (req.verbosity) w.add("dropped_field", "verbosity has no Anthropic equivalent and was dropped");

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
    } else if (!k.startsWith("$")) {
      // (`$…`: per-item fields another format keeps for itself)
      w.add("dropped_field", `Field ${JSON.stringify(k)} has no Anthropic equivalent and was dropped`);
    }
  }
  // OpenAI's `store` (Chat, Responses): store:false asks for nothing Anthropic does; store:true is lost.
  if (req.store === true) w.add("dropped_field", 'Field "store" has no Anthropic equivalent and was dropped');
  body.stream = target.stream;
  const renamed = names.renamed();
  for (const [given, orig] of Object.entries(renamed)) {
    w.add("renamed_tool", `The tool name ${JSON.stringify(orig)} is not a valid Anthropic tool name; sent as ${JSON.stringify(given)}.`);
  }
  return Object.keys(renamed).length > 0 ? { body, warnings: w.list, decoderHints: { toolNames: renamed } } : { body, warnings: w.list };
}
