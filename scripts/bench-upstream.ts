#!/usr/bin/env bun
/**
 * A minimal, fast fake LLM upstream for scripts/bench (not for tests: test/support/fake-upstream.ts
 * records and scripts every request; this one precomputes every reply (a Responses one once per
 * distinct request, for its echo) and does as little as possible
 * per request so the upstream's own cost stays small and constant across the lanes measured).
 *
 * Usage: `bun scripts/bench-upstream.ts` — listens on 127.0.0.1:0 and prints `{"port":N}` on stdout.
 *
 * Paths (by suffix): `/chat/completions` (OpenAI Chat), `/v1/messages` (Anthropic Messages),
 * `/responses` (OpenAI Responses), `/models/{model}:generateContent` and
 * `/models/{model}:streamGenerateContent` (Gemini; always SSE, as if `?alt=sse` were given). The reply
 * is decided by cheap substring tests on the path and the request body:
 * - `"stream":true` (Gemini: the `:streamGenerateContent` method) → a streamed reply, else one JSON body;
 * - a model containing `bench-big` → a {@link BIG_EVENTS}-event stream (stream throughput);
 * - a model containing `bench-hold` → the events up to the first content delta at once, then the
 *   stream stays open until the client goes away (open idle streams);
 * - Chat: `"include_usage":true` → the usage-only chunk before `[DONE]` (as OpenAI does);
 * - Responses: the response object echoes the request (`instructions`, `max_output_tokens`, `tools`
 *   and the other settings) with the members of OpenAI's recorded replies, as the API does
 *   ({@link responsesEcho}); made once per distinct request text (every request of a lane is the same).
 *
 * {@link benchToolReply} answers with a JSON reply of a short text and one tool call instead (a coding
 * agent's usual turn); no lane of scripts/bench uses it (bench-alloc.ts `--tool` does).
 */

/** Events in the stream-throughput reply. */
export const BIG_EVENTS = 20_000;
/** Content deltas in an ordinary streamed reply (a short answer). */
export const SMALL_DELTAS = 20;

const enc = new TextEncoder();
const WORDS = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", "."];
const word = (i: number) => WORDS[i % WORDS.length];
const TEXT = Array.from({ length: SMALL_DELTAS }, (_, i) => word(i)).join("");

const USAGE_CHAT = { prompt_tokens: 42, completion_tokens: SMALL_DELTAS, total_tokens: 42 + SMALL_DELTAS };

/** The text before the tool call of the tool-call JSON reply ({@link benchToolReply}). */
export const TOOL_TEXT = "I'll read the file first.";
/** The arguments of the tool call of the tool-call JSON reply ({@link benchToolReply}) (a coding agent's file read). */
export const TOOL_ARGS = { file_path: "/work/project/src/server/routes.ts", offset: 120, limit: 80 };
const TOOL_USAGE_CHAT = { prompt_tokens: 1200, completion_tokens: 38, total_tokens: 1238, prompt_tokens_details: { cached_tokens: 1024 } };

// ---- Chat ---------------------------------------------------------------------------------------

function chatChunk(delta: unknown, finish: string | null = null): string {
  return (
    "data: " +
    JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: "gpt-bench", choices: [{ index: 0, delta, finish_reason: finish }] }) +
    "\n\n"
  );
}
function chatStream(deltas: number, usage: boolean): string {
  let s = chatChunk({ role: "assistant", content: "" });
  for (let i = 0; i < deltas; i++) s += chatChunk({ content: word(i) });
  s += chatChunk({}, "stop");
  if (usage) {
    s += "data: " + JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: "gpt-bench", choices: [], usage: { prompt_tokens: 42, completion_tokens: deltas, total_tokens: 42 + deltas } }) + "\n\n";
  }
  return s + "data: [DONE]\n\n";
}
const CHAT_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1700000000,
  model: "gpt-bench",
  choices: [{ index: 0, message: { role: "assistant", content: TEXT }, finish_reason: "stop" }],
  usage: USAGE_CHAT,
});

const CHAT_TOOL_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1700000000,
  model: "gpt-bench",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: TOOL_TEXT, tool_calls: [{ id: "call_bench", type: "function", function: { name: "Read", arguments: JSON.stringify(TOOL_ARGS) } }] },
      finish_reason: "tool_calls",
    },
  ],
  usage: TOOL_USAGE_CHAT,
});

// ---- Anthropic Messages -------------------------------------------------------------------------

const named = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
function messagesStream(deltas: number): string {
  let s = named("message_start", {
    type: "message_start",
    message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-bench", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 42, output_tokens: 1 } },
  });
  s += named("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  for (let i = 0; i < deltas; i++) s += named("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: word(i) } });
  s += named("content_block_stop", { type: "content_block_stop", index: 0 });
  s += named("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: deltas } });
  return s + named("message_stop", { type: "message_stop" });
}
const MESSAGES_JSON = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "claude-bench",
  content: [{ type: "text", text: TEXT }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 42, output_tokens: SMALL_DELTAS },
});

const MESSAGES_TOOL_JSON = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "claude-bench",
  content: [
    { type: "text", text: TOOL_TEXT },
    { type: "tool_use", id: "toolu_bench", name: "Read", input: TOOL_ARGS },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 38 },
});

// ---- OpenAI Responses ---------------------------------------------------------------------------

/**
 * The response object's members that OpenAI's Responses API sends besides id, status, output and usage,
 * in its order, taken from the request (`echo`) or at the API's defaults: the recorded streams and
 * bodies of the shared fixtures (`openai-responses/text.sse`, `text.json`) carry every one of them in
 * `response.created`, `response.in_progress` and `response.completed`, and the API reference's
 * response object echoes the request's `instructions`, `max_output_tokens`, `tools`, `temperature` and
 * the other settings (a request without `instructions` reads `"instructions":null`). Before
 * docs/performance.md item 211 the bench's replies echoed nothing (5,702 bytes against switchyard's
 * 12,813 on the responses→chat stream): Responses lanes are not comparable across that change.
 */
function responsesEcho(req: Record<string, unknown>, status: string) {
  const at = <T>(key: string, dflt: T) => (req[key] === undefined ? dflt : req[key]);
  return {
    background: at("background", false),
    error: null,
    frequency_penalty: 0,
    incomplete_details: null,
    instructions: at("instructions", null),
    max_output_tokens: at("max_output_tokens", null),
    max_tool_calls: at("max_tool_calls", null),
    model: "gpt-bench",
    parallel_tool_calls: at("parallel_tool_calls", true),
    presence_penalty: 0,
    previous_response_id: at("previous_response_id", null),
    prompt_cache_key: at("prompt_cache_key", null),
    prompt_cache_retention: null,
    reasoning: at("reasoning", { effort: null, summary: null }),
    safety_identifier: at("safety_identifier", null),
    // "auto" until the reply is complete, then the tier that served it (as recorded).
    service_tier: at("service_tier", status === "completed" ? "default" : "auto"),
    store: at("store", true),
    temperature: at("temperature", 1),
    text: at("text", { format: { type: "text" }, verbosity: "medium" }),
    tool_choice: at("tool_choice", "auto"),
    tools: at("tools", []),
    top_logprobs: at("top_logprobs", 0),
    top_p: at("top_p", 1),
    truncation: at("truncation", "disabled"),
    user: at("user", null),
    metadata: at("metadata", {}),
  };
}
/** The whole response object in the API's member order, `output` and `usage` in place. */
function responseObject(req: Record<string, unknown>, status: string, output: unknown[], usage: unknown) {
  const { background, error, frequency_penalty, incomplete_details, instructions, max_output_tokens, max_tool_calls, model, ...rest } = responsesEcho(req, status);
  const { user, metadata, ...settings } = rest;
  return {
    id: "resp_bench",
    object: "response",
    created_at: 1700000000,
    status,
    background,
    completed_at: status === "completed" ? 1700000001 : null,
    error,
    frequency_penalty,
    incomplete_details,
    instructions,
    max_output_tokens,
    max_tool_calls,
    model,
    output,
    ...settings,
    usage,
    user,
    metadata,
  };
}
const responsesUsage = (deltas: number) => ({ input_tokens: 42, input_tokens_details: { cached_tokens: 0 }, output_tokens: deltas, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 42 + deltas });
/** An `output_text` part as the API sends it (`logprobs` always, empty unless asked for). */
const textPart = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });

/**
 * A streamed Responses reply to request `req` (parsed JSON) with `deltas` text deltas, shaped as the
 * recorded `openai-responses/text.sse`: the response object with the request's echo in its three
 * response events, `logprobs` on parts and deltas. Not the recording's `obfuscation` padding on each
 * delta nor its 50-hex ids (the bench's Chat and Messages streams have neither their providers'
 * padding nor their id lengths): what the comparison needs is the protocol's echo, which a gateway
 * translating into Responses must send too.
 */
function responsesStream(req: Record<string, unknown>, deltas: number): string {
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => named(type, { type, ...data, sequence_number: seq++ });
  let s = ev("response.created", { response: responseObject(req, "in_progress", [], null) });
  s += ev("response.in_progress", { response: responseObject(req, "in_progress", [], null) });
  s += ev("response.output_item.added", { item: { id: "msg_bench", type: "message", status: "in_progress", content: [], role: "assistant" }, output_index: 0 });
  s += ev("response.content_part.added", { content_index: 0, item_id: "msg_bench", output_index: 0, part: textPart("") });
  let text = "";
  for (let i = 0; i < deltas; i++) {
    text += word(i);
    s += ev("response.output_text.delta", { content_index: 0, delta: word(i), item_id: "msg_bench", logprobs: [], output_index: 0 });
  }
  s += ev("response.output_text.done", { content_index: 0, item_id: "msg_bench", logprobs: [], output_index: 0, text });
  s += ev("response.content_part.done", { content_index: 0, item_id: "msg_bench", output_index: 0, part: textPart(text) });
  const done = { id: "msg_bench", type: "message", status: "completed", content: [textPart(text)], role: "assistant" };
  s += ev("response.output_item.done", { item: done, output_index: 0 });
  s += ev("response.completed", { response: responseObject(req, "completed", [done], responsesUsage(deltas)) });
  return s;
}
/** A non-streamed Responses reply to `req`, shaped as the recorded `openai-responses/text.json`. */
function responsesJson(req: Record<string, unknown>): string {
  const { id, object, created_at, status, background, ...rest } = responseObject(req, "completed", [{ id: "msg_bench", type: "message", status: "completed", content: [textPart(TEXT)], role: "assistant" }], responsesUsage(SMALL_DELTAS));
  return JSON.stringify({ id, object, created_at, status, background, billing: { payer: "developer" }, ...rest });
}

const RESPONSES_TOOL_JSON = JSON.stringify({
  id: "resp_bench",
  object: "response",
  created_at: 1700000000,
  status: "completed",
  model: "gpt-bench",
  output: [
    { id: "msg_bench", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: TOOL_TEXT, annotations: [] }] },
    { id: "fc_bench", type: "function_call", status: "completed", call_id: "call_bench", name: "Read", arguments: JSON.stringify(TOOL_ARGS) },
  ],
  usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 38, total_tokens: 1238 },
});

// ---- Gemini generateContent / streamGenerateContent ------------------------------------------------

const GEMINI_USAGE = (deltas: number) => ({ promptTokenCount: 42, candidatesTokenCount: deltas, totalTokenCount: 42 + deltas });
/**
 * One `streamGenerateContent?alt=sse` chunk: new parts only; `finishReason` on the last; usage on every
 * chunk, the count so far (as Google's streams do: every recording in the shared fixtures repeats
 * `usageMetadata`, with `promptTokensDetails`, on every chunk; REFERENCE §4.3 "may be on every chunk").
 * Before docs/performance.md item 72 usage was on the last chunk only: gemini stream lanes are not
 * comparable across that change.
 */
function geminiChunk(text: string, sent: number, last = false): string {
  const candidate: Record<string, unknown> = { content: { role: "model", parts: [{ text }] }, index: 0 };
  if (last) candidate.finishReason = "STOP";
  const usageMetadata = { ...GEMINI_USAGE(sent), promptTokensDetails: [{ modality: "TEXT", tokenCount: 42 }] };
  const chunk = { candidates: [candidate], usageMetadata, modelVersion: "gemini-bench", responseId: "bench" };
  // Google separates SSE events with CRLF pairs (REFERENCE §4.3).
  return "data: " + JSON.stringify(chunk) + "\r\n\r\n";
}
function geminiStream(deltas: number): string {
  let s = "";
  for (let i = 0; i < deltas; i++) s += geminiChunk(word(i), i + 1);
  return s + geminiChunk("", deltas, true);
}
const GEMINI_JSON = JSON.stringify({
  candidates: [{ content: { role: "model", parts: [{ text: TEXT }] }, finishReason: "STOP", index: 0 }],
  usageMetadata: GEMINI_USAGE(SMALL_DELTAS),
  modelVersion: "gemini-bench",
  responseId: "bench",
});

const GEMINI_TOOL_JSON = JSON.stringify({
  candidates: [{ content: { role: "model", parts: [{ text: TOOL_TEXT }, { functionCall: { name: "Read", args: TOOL_ARGS } }] }, finishReason: "STOP", index: 0 }],
  usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 38, totalTokenCount: 1238, cachedContentTokenCount: 1024 },
  modelVersion: "gemini-bench",
  responseId: "bench",
});

// ---- precomputed bodies -------------------------------------------------------------------------

type Fmt = "chat" | "messages" | "responses" | "gemini";
interface Bodies {
  json: Uint8Array;
  /** The tool-call JSON reply ({@link benchToolReply}): a text and a tool call. */
  toolJson: Uint8Array;
  small: Uint8Array;
  smallUsage: Uint8Array;
  big: Uint8Array;
  bigUsage: Uint8Array;
  /** The first event of a held stream. */
  first: Uint8Array;
}
/** `make`'s members as getters, each made on its first read and kept (a Responses body's 20,000-event stream is made only if asked for). */
function lazily<T extends object>(make: { [K in keyof T]: () => T[K] }): T {
  const out = {} as T;
  for (const key of Object.keys(make) as (keyof T)[]) {
    Object.defineProperty(out, key, {
      get() {
        const value = make[key]();
        Object.defineProperty(out, key, { value });
        return value;
      },
      configurable: true,
    });
  }
  return out;
}

/** The replies of format `fmt`; a Responses reply echoes `req`, the request (parsed JSON), as OpenAI's does. */
function bodies(fmt: Fmt, req: Record<string, unknown> = {}): Bodies {
  const stream = (n: number, usage: boolean) => (fmt === "chat" ? chatStream(n, usage) : fmt === "messages" ? messagesStream(n) : fmt === "responses" ? responsesStream(req, n) : geminiStream(n));
  // BIG_EVENTS events in all: the framing events of each format plus content deltas.
  const framing = { chat: 2, messages: 5, responses: 8, gemini: 1 }[fmt];
  // A held stream sends everything up to and including the first content delta: a gateway commits
  // (writes to its client) only once content arrived (SPEC R-8).
  const first = () => {
    const small = stream(SMALL_DELTAS, false);
    const firstDelta = small.indexOf({ chat: '"content":"The"', messages: '"text_delta"', responses: '"response.output_text.delta"', gemini: '"text":"The"' }[fmt]);
    const sep = fmt === "gemini" ? "\r\n\r\n" : "\n\n";
    return enc.encode(small.slice(0, small.indexOf(sep, firstDelta) + sep.length));
  };
  return lazily<Bodies>({
    json: () => enc.encode(fmt === "responses" ? responsesJson(req) : { chat: CHAT_JSON, messages: MESSAGES_JSON, gemini: GEMINI_JSON }[fmt]),
    toolJson: () => enc.encode({ chat: CHAT_TOOL_JSON, messages: MESSAGES_TOOL_JSON, responses: RESPONSES_TOOL_JSON, gemini: GEMINI_TOOL_JSON }[fmt]),
    small: () => enc.encode(stream(SMALL_DELTAS, false)),
    smallUsage: () => enc.encode(stream(SMALL_DELTAS, true)),
    big: () => enc.encode(stream(BIG_EVENTS - framing, false)),
    bigUsage: () => enc.encode(stream(BIG_EVENTS - framing, true)),
    first,
  });
}
const BODIES: Record<Fmt, Bodies> = { chat: bodies("chat"), messages: bodies("messages"), responses: bodies("responses"), gemini: bodies("gemini") };

/** Responses replies by request text: every bench request of a lane is the same text, so its echo is made once. */
const RESPONSES_BY_BODY = new Map<string, Bodies>();
/** The most request texts {@link RESPONSES_BY_BODY} keeps (it is emptied when full). */
const RESPONSES_MEMO_MAX = 64;
/** The replies to Responses request `body` (JSON text; not JSON or not an object: echoed as an empty request). */
function responsesBodies(body: string): Bodies {
  let b = RESPONSES_BY_BODY.get(body);
  if (b) return b;
  let req: unknown;
  try {
    req = JSON.parse(body);
  } catch {
    req = {};
  }
  b = bodies("responses", req !== null && typeof req === "object" && !Array.isArray(req) ? (req as Record<string, unknown>) : {});
  if (RESPONSES_BY_BODY.size >= RESPONSES_MEMO_MAX) RESPONSES_BY_BODY.clear();
  RESPONSES_BY_BODY.set(body, b);
  return b;
}

const SSE = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
const JSON_H = { "content-type": "application/json" };

function formatOf(path: string): Fmt | undefined {
  if (path.endsWith("/chat/completions")) return "chat";
  if (path.endsWith("/messages")) return "messages";
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith(":generateContent") || path.endsWith(":streamGenerateContent")) return "gemini";
  return undefined;
}

/** Open held streams (for the idle-streams measurement). */
let held = 0;

/**
 * The bench upstream's reply to a POST of `body` (the request's JSON text) to `path` (the URL's
 * pathname, without the query: Gemini streams are SSE whether or not `?alt=sse` is given), or undefined for
 * a path it does not serve. `signal` ends a held stream (the client went away). Used by the server
 * below and, as a fetch without a network, by scripts/bench-pipeline.ts.
 */
export function benchReply(path: string, body: string, signal?: AbortSignal): Response | undefined {
  const fmt = formatOf(path);
  if (!fmt) return undefined;
  const b = fmt === "responses" ? responsesBodies(body) : BODIES[fmt];
  const streamed = fmt === "gemini" ? path.endsWith(":streamGenerateContent") : body.includes('"stream":true');
  if (!streamed) return new Response(b.json, { headers: JSON_H });
  const usage = fmt === "chat" && body.includes('"include_usage":true');
  // Gemini names the model in the path only.
  const model = fmt === "gemini" ? path : body;
  if (model.includes("bench-hold")) {
    held++;
    let closed = false;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(b.first);
      },
      cancel() {
        if (!closed) held--;
        closed = true;
      },
    });
    signal?.addEventListener("abort", () => {
      if (!closed) held--;
      closed = true;
    });
    return new Response(stream, { headers: SSE });
  }
  if (model.includes("bench-big")) return new Response(usage ? b.bigUsage : b.big, { headers: SSE });
  return new Response(usage ? b.smallUsage : b.small, { headers: SSE });
}

/**
 * The tool-call reply to a POST to `path` (as {@link benchReply}): one JSON body of a short text
 * ({@link TOOL_TEXT}) and one tool call ({@link TOOL_ARGS}) with its stop reason and usage (cache reads
 * included), whatever the request asks; undefined for a path it does not serve. For measuring a native
 * JSON reply with a tool call in process (scripts/bench-alloc.ts `--tool`).
 */
export function benchToolReply(path: string): Response | undefined {
  const fmt = formatOf(path);
  return fmt ? new Response(BODIES[fmt].toolJson, { headers: JSON_H }) : undefined;
}

/** Starts the bench upstream on 127.0.0.1:`port` (0 = any free port). */
export function startBenchUpstream(port = 0) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    development: false,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/held") return new Response(String(held));
      if (req.method !== "POST") return new Response("not found", { status: 404 });
      return benchReply(path, await req.text(), req.signal) ?? new Response("not found", { status: 404 });
    },
  });
}

if (import.meta.main) {
  const server = startBenchUpstream(Number(process.env.PORT ?? 0));
  process.stdout.write(JSON.stringify({ port: server.port }) + "\n");
}
