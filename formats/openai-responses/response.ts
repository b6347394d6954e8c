/**
 * The Responses `Response` object (REFERENCE §3.2) both ways: a non-streamed provider body → hub reply
 * (`decodeResponse`), and a hub reply → non-streamed client body (`encodeResponse`). Also the pieces
 * the stream encoder shares: the request echo and the client-side tool lookup.
 */
import { isObj } from "../json.ts";
import { readOpenAILogprobs, responsesPartLogprobs } from "../openai-common/logprobs.ts";
import { LOCAL_SHELL_NAME, localShellAction, namespacedCustomKey, namespacedKey, namespacedToolNames, namespaceShell } from "../tool-kinds.ts";
import {
  FormatError,
  hubError,
  noteDropped,
  type HubPart,
  type HubRequest,
  type HubResponse,
  type ProviderFamily,
  type StopReason,
  type TextPart,
  type ThinkingPart,
  type ToolCallPart,
  type Usage,
} from "../hub.ts";
import { countsTokens, type DecoderOptions, type EncoderOptions, type PlainReplyFacts } from "../codec.ts";
import { fromResponsesUsage, hasItemPrefix, incompleteDetails, mintId, responsesUsageJson, stopForTerminal, terminalForStop, toResponsesUsage, TOOL_FIELDS_KEY, writeEncryptedContent, type TerminalStatus } from "./common.ts";
import { hubErrorFromOpenAi } from "./errors.ts";
import { buildTools } from "./build.ts";
import { echoMembers } from "./echo-memo.ts";
import { callSignaturesAsThinking } from "../call-signatures.ts";
import { clientToolName } from "../tool-names.ts";

type Json = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// client-side helpers shared with the stream encoder
// ---------------------------------------------------------------------------------------------

/**
 * What the client declared, for shaping calls the way it expects: the namespace of a flattened
 * function (Codex `namespace` tools: a namespaced call comes back as `function_call` with `name` =
 * the inner name and `namespace` = the namespace, per the OpenAI SDK's `ResponseFunctionToolCall`),
 * and which names are `custom` (freeform) tools, called with `custom_tool_call` + raw `input` (a
 * namespace's custom member with its `namespace` too, as Codex's own flat-tool routes restore it).
 */
export interface ClientTools {
  /**
   * Namespace to put on a call to `name`, or undefined. A call without `namespace` (from a provider
   * without namespaces) may name a member by its flat name (`ns__name`, formats/tool-kinds.ts
   * `namespacedToolNames`), looked up before bare member names; a call that came with its `namespace`
   * (a Responses provider) names the member itself and is not read as a flat name.
   */
  resolve(name: string, namespace?: string): { name: string; namespace?: string; custom: boolean; localShell?: boolean };
}

/** The {@link ClientTools} of a request without tools: every call is a plain function of its own name. */
const NO_TOOLS: ClientTools = { resolve: (name) => ({ name, custom: false }) };

/** Builds {@link ClientTools} from the parsed client request (none → every call is a plain function). */
export function clientTools(req: HubRequest | undefined): ClientTools {
  // Most replies are to requests without tools: one shared answer, no sets or maps made per reply.
  if (!req || req.tools.length === 0) return NO_TOOLS;
  const plain = new Set<string>();
  const namespaced = new Map<string, string>();
  /** Flat name (formats/tool-kinds.ts `namespacedToolNames`) → the member it stands for. */
  const flat = new Map<string, { name: string; namespace: string; custom: boolean }>();
  const custom = new Set<string>();
  let localShell = false;
  let flatNames: Map<string, string> | undefined; // made at the first namespace only
  const addFlat = (key: string, name: string, namespace: string, isCustom: boolean) => {
    flatNames ??= namespacedToolNames(req.tools);
    const f = flatNames.get(key)!;
    if (!flat.has(f)) flat.set(f, { name, namespace, custom: isCustom });
  };
  for (const t of req.tools) {
    if (t.kind === "function") {
      if (t.namespace) {
        namespaced.set(t.name, t.namespace);
        addFlat(namespacedKey(t.namespace, t.name), t.name, t.namespace, false);
      } else plain.add(t.name);
    } else if (t.raw.type === "custom" && typeof t.raw.name === "string") custom.add(t.raw.name);
    else if (t.raw.type === "local_shell") localShell = true;
    else {
      const shell = namespaceShell(t);
      if (shell) {
        for (const m of shell.customs) {
          custom.add(m.name as string);
          addFlat(namespacedCustomKey(shell.name, m.name as string), m.name as string, shell.name, true);
        }
      }
    }
  }
  return {
    resolve(name, namespace) {
      if (plain.has(name)) return { name, custom: false };
      const f = namespace ? undefined : flat.get(name);
      if (f) return { name: f.name, namespace: f.namespace, custom: f.custom };
      const ns = namespaced.get(name);
      if (ns) return { name, namespace: ns, custom: false };
      if (localShell && name === LOCAL_SHELL_NAME) return { name, custom: false, localShell: true };
      return { name, custom: custom.has(name) };
    },
  };
}

/** The raw `input` of a freeform call whose hub arguments are `{"input": "…"}` (else the arguments). */
export function customInputOf(args: string): string {
  try {
    const o = JSON.parse(args) as unknown;
    if (o && typeof o === "object" && typeof (o as Json).input === "string") return (o as Json).input as string;
  } catch {
    // raw text
  }
  return args;
}

/**
 * The request fields a Response object echoes (REFERENCE §3.2), computed once per reply from the
 * parsed client request: instructions, max_output_tokens, parallel_tool_calls, previous_response_id,
 * reasoning, store, temperature, text, tool_choice, tools, top_p, metadata. Missing → the API's
 * defaults / null.
 */
export function responseEcho(req: HubRequest | undefined): Json {
  const extra = req?.source.format === "openai-responses" ? req.source.extra : {};
  const instructions = req?.system.map((s) => s.text).join("\n\n");
  let toolChoice: unknown = "auto";
  const tc = req?.toolChoice;
  if (tc) {
    if (tc.type === "tool") toolChoice = { type: "function", name: tc.name };
    else if (tc.type === "allowed") toolChoice = { type: "allowed_tools", mode: tc.mode, tools: tc.names.map((name) => ({ type: "function", name })) };
    else toolChoice = tc.type;
  } else if (extra.tool_choice !== undefined) toolChoice = extra.tool_choice;
  const text: Json = { ...(extra.text as Json | undefined) };
  if (req?.verbosity) text.verbosity = req.verbosity;
  const rf = req?.responseFormat;
  text.format = rf ? (rf.type === "json_schema" ? { type: "json_schema", name: rf.name ?? "response", schema: rf.schema, strict: rf.strict ?? false } : { type: rf.type }) : { type: "text" };
  return {
    instructions: instructions ? instructions : null,
    max_output_tokens: req?.maxOutputTokens ?? null,
    parallel_tool_calls: req?.parallelToolCalls ?? true,
    previous_response_id: req?.previousResponseId ?? null,
    reasoning: { effort: req?.reasoning?.effort ?? null, summary: req?.reasoning?.summary ?? null },
    store: req?.store ?? true,
    temperature: req?.temperature ?? 1,
    text,
    tool_choice: toolChoice,
    tools: req ? buildTools(req.tools, undefined, extra[TOOL_FIELDS_KEY] as Record<string, Record<string, unknown>> | undefined) : [],
    top_p: req?.topP ?? 1,
    metadata: (extra.metadata as Json | undefined) ?? {},
  };
}

/** Output items of a finished reply, for the non-streaming body (ids minted as in the stream). */
function outputItems(content: HubPart[], opts: EncoderOptions, tools: ClientTools): Json[] {
  const out: Json[] = [];
  // A tool call's Gemini signature as a reasoning item of its own before it (formats/call-signatures.ts).
  for (const p of callSignaturesAsThinking(content)) {
    switch (p.type) {
      case "text": {
        if (p.text.length === 0) break;
        const item: Json = { type: "message", id: mintId("msg_", opts.newId), status: "completed", role: "assistant" };
        if (p.phase) item.phase = p.phase;
        item.content = [p.refusal ? { type: "refusal", refusal: p.text } : { type: "output_text", text: p.text, annotations: [], logprobs: p.logprobs ? responsesPartLogprobs(p.logprobs) : [] }];
        out.push(item);
        break;
      }
      case "thinking": {
        const item: Json = { type: "reasoning", id: hasItemPrefix(p.itemId, "rs_") ? p.itemId : mintId("rs_", opts.newId) };
        const summary = p.summary && p.summary.length > 0 ? p.summary : p.text.length > 0 ? [p.text] : [];
        item.summary = summary.filter((s) => s.length > 0).map((text) => ({ type: "summary_text", text }));
        if (p.signature) item.encrypted_content = writeEncryptedContent(p.signature);
        out.push(item);
        break;
      }
      case "tool_call": {
        const r = tools.resolve(p.name, p.namespace);
        if (r.custom) {
          const item: Json = { type: "custom_tool_call", id: hasItemPrefix(p.itemId, "ctc_") ? p.itemId : mintId("ctc_", opts.newId), status: "completed", call_id: p.id, name: r.name };
          const ns = p.namespace ?? r.namespace;
          if (ns) item.namespace = ns;
          item.input = customInputOf(p.arguments);
          out.push(item);
          break;
        }
        if (r.localShell) {
          out.push({ type: "local_shell_call", id: hasItemPrefix(p.itemId, "lsh_") ? p.itemId : mintId("lsh_", opts.newId), status: "completed", call_id: p.id, action: localShellAction(p.arguments) });
          break;
        }
        const item: Json = { type: "function_call", id: hasItemPrefix(p.itemId, "fc_") ? p.itemId : mintId("fc_", opts.newId), status: "completed", call_id: p.id, name: r.name };
        const ns = p.namespace ?? r.namespace;
        if (ns) item.namespace = ns;
        item.arguments = p.arguments.length > 0 ? p.arguments : "{}";
        out.push(item);
        break;
      }
      default:
        break; // redacted thinking (Anthropic-only opaque state) and inputs have no Responses output form
    }
  }
  return out;
}

/**
 * Hub reply → non-streamed Responses body (codec `encodeResponse`; REFERENCE §3.2): `resp_` id,
 * `status` `completed` or `incomplete` (+ `incomplete_details`) per {@link terminalForStop}, full
 * `output` (message / reasoning with `encrypted_content` when signed, another family's tagged /
 * function_call with `call_id` = hub tool-call id), and a usage object whose counters are all
 * integers. A reply without a stop reason (cut off) is reported `incomplete` (with
 * `incomplete_details: null`: none of the API's reasons says it) — never as completed.
 */
export function encodeResponse(resp: HubResponse, opts: EncoderOptions): Json {
  return { ...responseHead(resp, opts), ...responseEcho(opts.request), usage: toResponsesUsage(resp.usage) };
}

/**
 * {@link encodeResponse}'s body as JSON text (codec `encodeResponseText`): exactly the text
 * `JSON.stringify(encodeResponse(resp, opts))` writes, with the request echo's members written by
 * echo-memo.ts `echoMembers` (a large tool list's JSON remembered across requests, as the stream
 * encoder does; issue 17, docs/performance.md item 114).
 */
export function encodeResponseText(resp: HubResponse, opts: EncoderOptions): string {
  const head = JSON.stringify(responseHead(resp, opts));
  // `head` is an object with members (`id` first): its closing brace gives way to the echo and usage.
  return `${head.slice(0, -1)},${echoMembers(responseEcho(opts.request), opts.requestText)}"usage":${responsesUsageJson(resp.usage)}}`;
}

/**
 * The reply's parts, plus a refusal part with a refusal stop's explanation (Anthropic `stop_details`)
 * when the reply carried no refusal text; the status is still that of the reply as it came (`incomplete`
 * `content_filter`), as in the stream encoder.
 */
function explained(resp: HubResponse, refusalSent: boolean): HubPart[] {
  if (refusalSent || resp.stopReason !== "refusal" || resp.stopExplanation === undefined) return resp.content;
  return [...resp.content, { type: "text", text: resp.stopExplanation, refusal: true }];
}

/** The members of a non-streamed body before the request echo (`id` … `output`), ids minted in this order. */
function responseHead(resp: HubResponse, opts: EncoderOptions): Json {
  const now = opts.now ? opts.now() : Date.now();
  const refusalSent = resp.content.some((p) => p.type === "text" && p.refusal === true && p.text.length > 0);
  // No stop reason (cut off): `incomplete`, never completed; the API has no reason for it (`incomplete_details: null`).
  const term: TerminalStatus = resp.stopReason ? terminalForStop(resp.stopReason, refusalSent) : { status: "incomplete" };
  return {
    id: mintId("resp_", opts.newId),
    object: "response",
    created_at: Math.floor(now / 1000),
    status: term.status,
    error: null,
    incomplete_details: incompleteDetails(term),
    model: opts.model,
    output: outputItems(explained(resp, refusalSent), opts, clientTools(opts.request)),
  };
}

/** A reasoning output item → thinking part (summary or raw text, item id, encrypted state). */
function thinkingFrom(item: Json, family: ProviderFamily): ThinkingPart | undefined {
  // Entries that are not objects (null) carry no text: read as empty, never dereferenced.
  const summary = Array.isArray(item.summary) ? (item.summary as Json[]).map((s) => (typeof s?.text === "string" ? s.text : "")) : [];
  const raw = Array.isArray(item.content) ? (item.content as Json[]).map((c) => (typeof c?.text === "string" ? c.text : "")).filter((t) => t) : [];
  const enc = typeof item.encrypted_content === "string" && item.encrypted_content ? item.encrypted_content : undefined;
  if (summary.length === 0 && raw.length === 0 && !enc) return undefined;
  const part: ThinkingPart = { type: "thinking", text: summary.length > 0 ? summary.join("") : raw.join("") };
  if (summary.length > 0) part.summary = summary;
  else if (raw.length > 0) part.raw = true;
  if (typeof item.id === "string") part.itemId = item.id;
  if (enc) part.signature = { family, value: enc };
  return part;
}

/** OpenAI ends a refusal `completed`; by meaning it is a refusal (as the stream decoder reads it). */
function refusalStop(stop: StopReason, sawRefusal: boolean): StopReason {
  return stop === "end_turn" && sawRefusal ? "refusal" : stop;
}

/**
 * Non-streamed provider body → hub reply (codec `decodeResponse`; REFERENCE §3.2, §5.1, §5.10).
 * Output items become parts in order (message text with `phase`, a `refusal` part as text marked
 * `refusal` (a `completed` reply with one ends `refusal`), reasoning, function_call with
 * `call_id`/`id`/`namespace`, custom_tool_call as `{"input": …}` arguments; an `output_text` part's
 * `logprobs` stay on its text); `completed` →
 * `end_turn`/`tool_use`, `incomplete` → `max_tokens`/`refusal`/`other`; usage per §5.10. Thinking
 * text is the summary parts concatenated (as the stream accumulator builds it).
 *
 * @throws FormatError `api_error` (502) when the body is not a Response object; a `failed` response
 *   throws its own error mapped from `error.code` (REFERENCE §5.2), and so does a body that is an
 *   OpenAI error (`{"error":{…}}` without `output`, answered with HTTP 200 by some servers and proxies),
 *   its status the kind's.
 */
export function decodeResponse(body: unknown, opts: DecoderOptions): HubResponse {
  if (isObj(body) && body.output === undefined && isObj(body.error)) throw new FormatError(hubErrorFromOpenAi(body.error, 0));
  if (!body || typeof body !== "object" || !Array.isArray((body as Json).output)) {
    throw new FormatError(hubError("api_error", "The upstream reply is not an OpenAI Responses object.", { status: 502, code: "upstream_malformed" }));
  }
  const r = body as Json;
  if (r.status === "failed") throw new FormatError(hubErrorFromOpenAi(r.error ?? { code: "server_error" }, 0));
  const content: HubPart[] = [];
  let sawTool = false;
  let sawRefusal = false;
  let dropped: Set<string> | undefined;
  for (const item of r.output as Json[]) {
    if (!item || typeof item !== "object") continue;
    switch (item.type) {
      case "message": {
        const parts = Array.isArray(item.content) ? (item.content as Json[]) : [];
        for (const c of parts) {
          if (!c || typeof c !== "object") continue; // a part that is not an object (null) carries nothing
          const text = typeof c.text === "string" ? c.text : typeof c.refusal === "string" ? c.refusal : undefined;
          if (text === undefined || text.length === 0) continue;
          const t: TextPart = { type: "text", text };
          if (typeof item.phase === "string") t.phase = item.phase;
          if (c.type === "refusal") t.refusal = sawRefusal = true;
          else {
            const logprobs = readOpenAILogprobs(c.logprobs);
            if (logprobs) t.logprobs = logprobs;
          }
          content.push(t);
        }
        break;
      }
      case "reasoning": {
        const t = thinkingFrom(item, opts.family);
        if (t) content.push(t);
        break;
      }
      case "function_call":
      case "custom_tool_call": {
        const custom = item.type === "custom_tool_call";
        const call: ToolCallPart = {
          type: "tool_call",
          // An id that is neither a string nor a number (an object) is no id: String() of it may throw.
          id: typeof item.call_id === "string" ? item.call_id : typeof item.id === "string" || typeof item.id === "number" ? String(item.id) : "",
          name: typeof item.name === "string" ? clientToolName(opts.toolNames, item.name) : "", // a name the builder changed: the client's
          arguments: custom ? JSON.stringify({ input: typeof item.input === "string" ? item.input : "" }) : typeof item.arguments === "string" ? item.arguments : "",
        };
        if (typeof item.id === "string") call.itemId = item.id;
        if (typeof item.namespace === "string" && item.namespace) call.namespace = item.namespace;
        content.push(call);
        sawTool = true;
        break;
      }
      default:
        // Hosted tools' items (image generation, computer calls, web search, …): no hub slot.
        if (typeof item.type === "string") (dropped ??= new Set()).add(item.type);
        break;
    }
  }
  const status = typeof r.status === "string" ? r.status : "completed";
  const reason = typeof r.incomplete_details?.reason === "string" ? (r.incomplete_details.reason as string) : undefined;
  const finished = status === "completed" || status === "incomplete";
  const out: HubResponse = {
    content,
    stopReason: finished ? refusalStop(stopForTerminal(status, reason, sawTool), sawRefusal) : null,
    usage: fromResponsesUsage(r.usage, r.output) ?? ({} as Usage),
    rawStopReason: reason ? `${status}:${reason}` : status,
  };
  if (typeof r.id === "string") out.id = r.id;
  if (typeof r.model === "string") out.model = r.model;
  if (dropped) for (const t of dropped) noteDropped(out, `${t} item`);
  return out;
}

/**
 * The characters of a reasoning item's thinking part as {@link thinkingFrom} makes it (its summary
 * texts joined, else its raw content texts), or -1 when a summary or content entry is not an object
 * with a string `text` (or either list is neither absent, null nor an array): not plain.
 */
function reasoningChars(item: Json): number {
  const summary = item.summary;
  const raw = item.content;
  if ((summary != null && !Array.isArray(summary)) || (raw != null && !Array.isArray(raw))) return -1;
  let s = 0;
  let r = 0;
  if (summary) for (const x of summary) {
    if (!isObj(x) || typeof x.text !== "string") return -1;
    s += x.text.length;
  }
  if (raw) for (const x of raw) {
    if (!isObj(x) || typeof x.text !== "string") return -1;
    r += x.text.length;
  }
  return summary && summary.length > 0 ? s : r;
}

/**
 * {@link FormatCodec.plainReplyFacts} for Responses: a Response object with `status` `completed` or
 * `incomplete` whose `output` holds only items that are objects of these types: `message` (its
 * `content` an array of `output_text` parts with string `text`; log probabilities and `phase` ride in
 * the bytes only), `reasoning` (summary and content entries objects with string `text`; encrypted
 * content adds no characters), `function_call` (string `call_id` and `arguments`) and
 * `custom_tool_call` (string `call_id` and `input`). For it {@link decodeResponse} makes a text part per
 * non-empty text, a thinking part per reasoning item (the summary texts joined, else the raw texts), a
 * tool call per call (a custom call's arguments `{"input": …}` serialised), the stop reason
 * `stopForTerminal(status, incomplete_details.reason, a call was made)` (no refusal part to turn it
 * into `refusal`) and `fromResponsesUsage(usage)`: the same facts are read here without building the
 * hub reply (issue 17, docs/performance.md item 102). A custom call's input is serialised for its
 * length only when the usage has no token counts ({@link PlainReplyFacts.outputChars}). Undefined for
 * every other shape (a refusal, a failed or unfinished response, a hosted tool's item, an item without
 * a `call_id`, …), which the caller decodes.
 */
export function plainReplyFacts(body: unknown): PlainReplyFacts | undefined {
  if (!isObj(body) || !Array.isArray(body.output)) return undefined;
  const status = body.status;
  if (status !== "completed" && status !== "incomplete") return undefined;
  const details = body.incomplete_details;
  const reason = isObj(details) && typeof details.reason === "string" ? details.reason : undefined;
  const usage = fromResponsesUsage(body.usage);
  const measure = !countsTokens(usage);
  let chars = 0;
  let sawTool = false;
  for (const item of body.output as unknown[]) {
    if (!isObj(item)) return undefined;
    switch (item.type) {
      case "message": {
        if (!Array.isArray(item.content)) return undefined;
        for (const c of item.content) {
          if (!isObj(c) || c.type !== "output_text" || typeof c.text !== "string") return undefined;
          chars += c.text.length;
        }
        break;
      }
      case "reasoning": {
        const n = reasoningChars(item);
        if (n < 0) return undefined;
        chars += n;
        break;
      }
      case "function_call":
        if (typeof item.call_id !== "string" || typeof item.arguments !== "string") return undefined;
        chars += item.arguments.length;
        sawTool = true;
        break;
      case "custom_tool_call":
        if (typeof item.call_id !== "string" || typeof item.input !== "string") return undefined;
        if (measure) chars += JSON.stringify({ input: item.input }).length;
        sawTool = true;
        break;
      default:
        return undefined;
    }
  }
  return { usage, stopReason: stopForTerminal(status, reason, sawTool), outputChars: chars };
}
