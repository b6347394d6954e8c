/**
 * Non-streamed Chat Completions bodies, both ways (REFERENCE §2.2, §5.1, §5.10).
 *
 * - {@link decodeResponse}: a provider's `chat.completion` body → {@link HubResponse}.
 * - {@link encodeResponse}: a complete hub reply → the `chat.completion` body a Chat client gets.
 */
import { countsTokens, type DecoderOptions, type EncoderOptions, type PlainReplyFacts } from "../codec.ts";
import { FormatError, hubError, noteDropped, type HubPart, type HubResponse, type StopReason, type TokenLogprob } from "../hub.ts";
import { chatLogprobs, readOpenAILogprobs } from "../openai-common/logprobs.ts";
import { promoteStopReason } from "../normalize.ts";
import { defaultChatId, legacyLeftOut } from "./encoder.ts";
import { promptFiltered, shortHash, stopFromChat, stopToChat, usageFromChat, usageToChat, type ChatUsage } from "./mapping.ts";
import { argumentsText } from "../json-depth.ts";
import { isObj, jsonLength } from "../json.ts";
import { reasoningDetail } from "./reasoning-details.ts";
import { clientToolName } from "../tool-names.ts";
import { customCallArguments, customCallJson } from "./custom-calls.ts";
import { errorFromPayload } from "./errors.ts";

/** Text of a Chat `content` that is a string or an array of `{type:"text"|"output_text", text}` parts. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const p of content) if (isObj(p) && typeof p.text === "string") out += p.text;
  return out;
}

/**
 * Provider `chat.completion` body → hub reply. Reads `choices[0]` only (the hub carries one choice).
 *
 * `choices[0].logprobs.content` (asked for with `logprobs: true`) → the text part's `logprobs`.
 *
 * Content order: reasoning (`message.reasoning_content` or `message.reasoning`, vendor fields, REFERENCE
 * §2.3) → thinking part; `content` → text part; `refusal` → a text part marked `refusal` and stop
 * reason `refusal`;
 * `tool_calls` → tool-call parts (a missing id is synthesised as `call_` + a digest of the response id
 * and position; `arguments` sent as an object are serialised; a name the builder changed → the
 * client's, `opts.toolNames`). The legacy `function_call` is read as one tool call.
 *
 * Stop reason: {@link stopFromChat}; `tool_use` whenever tool calls are present (REFERENCE §5.1);
 * `stop_sequence` when vLLM `stop_reason` / SGLang `matched_stop` names the string; `null` when the
 * body has no `finish_reason` (nothing is invented, SPEC F-6).
 *
 * A body with `choices: []` is an empty reply ({@link noChoicesReply}).
 *
 * Throws {@link FormatError} (502, `api_error`) when the body has no `choices[0].message` object; a body
 * without `choices` that is an OpenAI error (`{"error":{…}}`, vLLM `{"object":"error",…}`: what some
 * OpenAI-compatible servers and proxies answer with HTTP 200) throws the error it carries
 * ({@link errorFromPayload}: its status from the payload's code or its kind, as Anthropic's in-body error is read).
 */
export function decodeResponse(body: unknown, opts: DecoderOptions): HubResponse {
  if (isObj(body) && Array.isArray(body.choices) && body.choices.length === 0) return noChoicesReply(body);
  if (isObj(body) && body.choices === undefined) {
    const carried = errorFromPayload(body);
    if (carried) throw new FormatError(carried);
  }
  const choice = isObj(body) && Array.isArray(body.choices) ? body.choices.find((c: unknown) => isObj(c) && (c.index === 0 || c.index === undefined)) ?? body.choices[0] : undefined;
  if (!isObj(body) || !isObj(choice) || !isObj(choice.message)) {
    throw new FormatError(hubError("api_error", "The upstream reply is not a Chat Completions body (no choices[0].message).", { status: 502, code: "upstream_invalid_body" }));
  }
  const msg = choice.message;
  const content: HubPart[] = [];
  const reasoning = typeof msg.reasoning_content === "string" ? msg.reasoning_content : typeof msg.reasoning === "string" ? msg.reasoning : "";
  if (reasoning.length > 0) content.push({ type: "thinking", text: reasoning });
  if (Array.isArray(msg.reasoning_details)) {
    for (const d of msg.reasoning_details) {
      if (isObj(d) && d.type === "reasoning.encrypted" && typeof d.data === "string" && d.data) {
        content.push({ type: "redacted_thinking", data: { family: opts.family, value: d.data } });
      } else if (isObj(d) && d.type === "reasoning.text" && typeof d.signature === "string" && d.signature) {
        const t = content.find((p) => p.type === "thinking");
        if (t && t.type === "thinking") t.signature = { family: opts.family, value: d.signature };
        else content.push({ type: "thinking", text: typeof d.text === "string" ? d.text : "", signature: { family: opts.family, value: d.signature } });
      }
    }
  }
  const text = contentText(msg.content);
  if (text.length > 0) {
    const logprobs = isObj(choice.logprobs) ? readOpenAILogprobs(choice.logprobs.content) : undefined;
    content.push(logprobs ? { type: "text", text, logprobs } : { type: "text", text });
  }
  const refusal = typeof msg.refusal === "string" && msg.refusal.length > 0 ? msg.refusal : undefined;
  if (refusal) content.push({ type: "text", text: refusal, refusal: true });

  const calls: unknown[] = Array.isArray(msg.tool_calls) ? msg.tool_calls : isObj(msg.function_call) ? [{ function: msg.function_call }] : [];
  const rid = typeof body.id === "string" ? body.id : "";
  calls.forEach((c, i) => {
    if (!isObj(c)) return;
    // A custom tool's call (`custom: {name, input}`) is held with `{"input": …}` arguments (custom-calls.ts).
    const fn = isObj(c.function) ? c.function : isObj(c.custom) ? { name: c.custom.name, arguments: customCallArguments(c.custom.input) } : {};
    const args = typeof fn.arguments === "string" ? fn.arguments : fn.arguments !== undefined && fn.arguments !== null ? argumentsText(fn.arguments) : "";
    const id = typeof c.id === "string" && c.id ? c.id : `call_${shortHash(`${rid}:${i}`)}`;
    content.push({ type: "tool_call", id, name: typeof fn.name === "string" ? clientToolName(opts.toolNames, fn.name) : "", arguments: args });
  });

  const raw = typeof choice.finish_reason === "string" && choice.finish_reason ? choice.finish_reason : undefined;
  let stopReason: StopReason | null = raw !== undefined ? stopFromChat(raw) : null;
  let stopSequence: string | undefined;
  if (raw === "stop") {
    const matched = typeof choice.stop_reason === "string" ? choice.stop_reason : typeof choice.matched_stop === "string" ? choice.matched_stop : undefined;
    if (matched !== undefined) {
      stopReason = "stop_sequence";
      stopSequence = matched;
    } else if (refusal) stopReason = "refusal";
  }
  if (stopReason) stopReason = promoteStopReason(stopReason, calls.length > 0);

  const resp: HubResponse = { content, stopReason, usage: usageFromChat(body.usage) ?? {} };
  if (rid) resp.id = rid;
  if (typeof body.model === "string" && body.model) resp.model = body.model;
  if (raw !== undefined) resp.rawStopReason = raw;
  if (stopSequence !== undefined) resp.stopSequence = stopSequence;
  // Audio output and URL citations have no hub slot.
  if (isObj(msg.audio)) noteDropped(resp, "audio");
  if (Array.isArray(msg.annotations) && msg.annotations.length > 0) noteDropped(resp, "annotations");
  return resp;
}

/**
 * A `chat.completion` body with `choices: []`: Azure OpenAI's reply whose prompt its content filter
 * held (`prompt_filter_results[].content_filter_results.<category>.filtered: true`), or the degenerate
 * 200 of a compatible server. An empty reply (no content; usage, id and model as given) whose stop
 * reason is `refusal` (raw `content_filter`, REFERENCE §5.1's safety row) when a prompt filter result
 * says `filtered: true`, else none: nothing is invented (SPEC F-6). A native client gets the body as it
 * came; on a translated lane a non-streaming client gets the empty reply in its format (as a Gemini
 * reply without candidates), a streaming one the in-band error of a reply without a finish; a
 * non-final combo target with nothing usable moves on (SPEC 6.3).
 */
function noChoicesReply(body: Record<string, unknown>): HubResponse {
  const filtered = promptFiltered(body.prompt_filter_results);
  const resp: HubResponse = { content: [], stopReason: filtered ? "refusal" : null, usage: usageFromChat(body.usage) ?? {} };
  if (typeof body.id === "string" && body.id) resp.id = body.id;
  if (typeof body.model === "string" && body.model) resp.model = body.model;
  if (filtered) resp.rawStopReason = "content_filter";
  return resp;
}

/**
 * {@link FormatCodec.plainReplyFacts} for Chat: one choice (index 0) whose message has `content` a
 * string, null or absent, reasoning as a string `reasoning_content` or `reasoning` (or neither), and
 * `tool_calls` absent, null or an array of calls that are objects with a `function` object (the
 * function's `arguments` a string, or any other JSON value, which {@link decodeResponse} serialises),
 * and nothing else decodeResponse reads (no `reasoning_details`, refusal, legacy `function_call`, log
 * probabilities), with a `finish_reason` that is not a failure (a `stop` that names a matched stop
 * string is not plain). decodeResponse makes a thinking part of the reasoning, a text part of the
 * content and one tool-call part per call, `stopFromChat(finish_reason)` promoted to `tool_use` when
 * there is a call ({@link promoteStopReason}), and `usageFromChat(usage)`: the same facts without
 * building the hub reply (docs/performance.md items 92 and 101). A call's arguments that are not a
 * string are serialised only when the usage has no token counts ({@link PlainReplyFacts.outputChars}).
 * Undefined otherwise.
 */
export function plainReplyFacts(body: unknown): PlainReplyFacts | undefined {
  if (!isObj(body) || !Array.isArray(body.choices) || body.choices.length !== 1) return undefined;
  const choice = body.choices[0];
  if (!isObj(choice) || (choice.index !== 0 && choice.index !== undefined) || !isObj(choice.message)) return undefined;
  const msg = choice.message;
  const content = msg.content;
  if (content !== undefined && content !== null && typeof content !== "string") return undefined;
  if (msg.reasoning_details != null || msg.function_call != null || msg.refusal != null || choice.logprobs != null) return undefined;
  // decodeResponse takes `reasoning_content` when it is a string, else `reasoning` when that is.
  const rc = msg.reasoning_content;
  const rr = msg.reasoning;
  if ((rc != null && typeof rc !== "string") || (rr != null && typeof rr !== "string")) return undefined;
  const raw = choice.finish_reason;
  if (typeof raw !== "string" || raw === "") return undefined;
  if (raw === "stop" && (typeof choice.stop_reason === "string" || typeof choice.matched_stop === "string")) return undefined;
  let stopReason = stopFromChat(raw);
  if (stopReason === null) return undefined;
  const usage = usageFromChat(body.usage);
  let chars = (typeof content === "string" ? content.length : 0) + (typeof rc === "string" ? rc.length : typeof rr === "string" ? rr.length : 0);
  const calls = msg.tool_calls;
  if (calls != null) {
    if (!Array.isArray(calls)) return undefined;
    const measure = !countsTokens(usage);
    for (const c of calls) {
      if (!isObj(c) || !isObj(c.function)) return undefined;
      const args = c.function.arguments;
      if (typeof args === "string") chars += args.length;
      else if (measure && args !== undefined && args !== null) {
        // Too deep to serialise: decodeResponse throws on it (a 502), so leave it to the decode.
        const n = jsonLength(args);
        if (n < 0) return undefined;
        chars += n;
      }
    }
    stopReason = promoteStopReason(stopReason, calls.length > 0);
  }
  return { usage, stopReason, outputChars: chars };
}

/** The `chat.completion` body {@link encodeResponse} returns. */
export interface ChatCompletionBody {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: {
      role: "assistant";
      content: string | null;
      refusal: string | null;
      reasoning_content?: string;
      /** Signed and redacted thinking and tool calls' signatures, tagged (reasoning-details.ts). */
      reasoning_details?: Array<Record<string, unknown>>;
      /** Function calls; a call of the client's own `custom` tool as `{id, type:"custom", custom:{name, input}}`. */
      tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } } | Record<string, unknown>>;
      /** The legacy form, for a request that sent `functions` (EncoderOptions.legacyFunctions): the first call. */
      function_call?: { name: string; arguments: string };
    };
    finish_reason: "stop" | "length" | "tool_calls" | "function_call" | "content_filter" | null;
    /** `null` unless the reply carries token log probabilities: then `{content: [...], refusal: null}`. */
    logprobs: null | { content: unknown[]; refusal: null };
  }>;
  usage: ChatUsage;
}

/**
 * Complete hub reply → `chat.completion` body for a Chat client (REFERENCE §2.2). Text parts are joined
 * into `message.content` (`null` when there is none), refusal parts into `message.refusal` (else a
 * refusal stop's explanation, `finish_reason` then `content_filter`); thinking → `message.reasoning_content` (same
 * vendor field as the stream encoder); tool calls → `message.tool_calls` with `arguments` `"{}"` when the
 * call had none (a call of the client's own `custom` tool, `opts.customTools`, as
 * `{type:"custom", custom:{name, input}}`); signed and redacted thinking, and each signed tool call's signature (Gemini, with the
 * call's `id`), also in `message.reasoning_details`, signatures tagged
 * (reasoning-details.ts: Chat has no slot of its own; the client sends them back). `finish_reason` from
 * {@link stopToChat}, `null` only for a reply that never said why it stopped (the pipeline answers such
 * a reply with an error instead). `usage` always has every counter ({@link usageToChat}). `logprobs`:
 * the text parts' token log probabilities as `{content, refusal: null}`, `null` when they carry none.
 * For a request that declared its functions with the legacy `functions` (`opts.legacyFunctions`): the
 * first call as `message.function_call` `{name, arguments}` instead of `tool_calls`, `finish_reason`
 * `function_call` for `tool_calls`, as the Chat API answers it; later calls are left out, said through
 * `opts.warn` (`dropped_tool_call`).
 */
export function encodeResponse(resp: HubResponse, opts: EncoderOptions): ChatCompletionBody {
  let text = "";
  let hasText = false;
  let refusal: string | null = null;
  let reasoning = "";
  const toolCalls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> = [];
  /** Every call in order, a call of a `custom` tool as one (EncoderOptions.customTools). */
  const calls: Array<Record<string, unknown>> = [];
  let customTools: ReadonlySet<string> | undefined | null = null; // read at the first call
  let logprobs: TokenLogprob[] | undefined;
  const details: Array<Record<string, unknown>> = [];
  for (const p of resp.content) {
    if (p.type === "text" && p.refusal) {
      refusal = (refusal ?? "") + p.text;
    } else if (p.type === "text") {
      text += p.text;
      hasText = true;
      if (p.logprobs) logprobs = logprobs ? logprobs.concat(p.logprobs) : p.logprobs;
    } else if (p.type === "thinking" || p.type === "redacted_thinking") {
      if (p.type === "thinking") reasoning += reasoning.length > 0 && p.text.length > 0 ? "\n\n" + p.text : p.text;
      const detail = reasoningDetail(p, details.length);
      if (detail) details.push(detail);
    } else if (p.type === "tool_call") {
      const call = { id: p.id, type: "function" as const, function: { name: p.name, arguments: p.arguments.length > 0 ? p.arguments : "{}" } };
      toolCalls.push(call);
      if (customTools === null) customTools = opts.customTools;
      calls.push(customTools?.has(p.name) ? customCallJson(p.id, p.name, p.arguments) : call);
      const detail = reasoningDetail(p, details.length);
      if (detail) details.push(detail);
    }
  }
  const message: ChatCompletionBody["choices"][0]["message"] = {
    role: "assistant",
    content: hasText && (text.length > 0 || toolCalls.length === 0) ? text : null,
    refusal,
  };
  if (reasoning.length > 0) message.reasoning_content = reasoning;
  if (details.length > 0) message.reasoning_details = details;
  const legacy = opts.legacyFunctions === true && toolCalls.length > 0;
  if (legacy) {
    message.function_call = toolCalls[0]!.function;
    if (toolCalls.length > 1) opts.warn?.("dropped_tool_call", legacyLeftOut(toolCalls.length));
  } else if (toolCalls.length > 0) message.tool_calls = calls;
  let finish: ChatCompletionBody["choices"][0]["finish_reason"] = resp.stopReason ? stopToChat(resp.stopReason, refusal !== null) : null;
  if (toolCalls.length > 0 && finish === "stop") finish = "tool_calls";
  if (legacy && finish === "tool_calls") finish = "function_call";
  // A provider's refusal with its explanation and no refusal text (Anthropic `stop_details`): the
  // explanation is the refusal the client reads; the finish stays `content_filter` (the provider's policy stopped it).
  if (refusal === null && resp.stopReason === "refusal" && resp.stopExplanation !== undefined) message.refusal = resp.stopExplanation;
  return {
    id: opts.newId ? opts.newId("chatcmpl-") : defaultChatId(),
    object: "chat.completion",
    created: Math.floor((opts.now ? opts.now() : Date.now()) / 1000),
    model: opts.model,
    choices: [{ index: 0, message, finish_reason: finish, logprobs: logprobs ? { content: chatLogprobs(logprobs), refusal: null } : null }],
    usage: usageToChat(resp.usage),
  };
}
