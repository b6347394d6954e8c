#!/usr/bin/env bun
/**
 * A minimal, fast fake LLM upstream for scripts/bench (not for tests: test/support/fake-upstream.ts
 * records and scripts every request; this one precomputes every reply and does as little as possible
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
 * - Chat: `"include_usage":true` → the usage-only chunk before `[DONE]` (as OpenAI does).
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

function responsesStream(deltas: number): string {
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => named(type, { type, sequence_number: seq++, ...data });
  const base = { id: "resp_bench", object: "response", created_at: 1700000000, model: "gpt-bench", output: [] as unknown[] };
  let s = ev("response.created", { response: { ...base, status: "in_progress" } });
  s += ev("response.in_progress", { response: { ...base, status: "in_progress" } });
  const item = { id: "msg_bench", type: "message", status: "in_progress", role: "assistant", content: [] as unknown[] };
  s += ev("response.output_item.added", { output_index: 0, item });
  s += ev("response.content_part.added", { item_id: "msg_bench", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  let text = "";
  for (let i = 0; i < deltas; i++) {
    text += word(i);
    s += ev("response.output_text.delta", { item_id: "msg_bench", output_index: 0, content_index: 0, delta: word(i) });
  }
  s += ev("response.output_text.done", { item_id: "msg_bench", output_index: 0, content_index: 0, text });
  const part = { type: "output_text", text, annotations: [] };
  s += ev("response.content_part.done", { item_id: "msg_bench", output_index: 0, content_index: 0, part });
  const done = { ...item, status: "completed", content: [part] };
  s += ev("response.output_item.done", { output_index: 0, item: done });
  s += ev("response.completed", {
    response: { ...base, status: "completed", output: [done], usage: { input_tokens: 42, output_tokens: deltas, total_tokens: 42 + deltas } },
  });
  return s;
}
const RESPONSES_JSON = JSON.stringify({
  id: "resp_bench",
  object: "response",
  created_at: 1700000000,
  status: "completed",
  model: "gpt-bench",
  output: [{ id: "msg_bench", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: TEXT, annotations: [] }] }],
  usage: { input_tokens: 42, output_tokens: SMALL_DELTAS, total_tokens: 42 + SMALL_DELTAS },
});

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
function bodies(fmt: Fmt): Bodies {
  const stream = (n: number, usage: boolean) => (fmt === "chat" ? chatStream(n, usage) : fmt === "messages" ? messagesStream(n) : fmt === "responses" ? responsesStream(n) : geminiStream(n));
  // BIG_EVENTS events in all: the framing events of each format plus content deltas.
  const framing = { chat: 2, messages: 5, responses: 8, gemini: 1 }[fmt];
  const small = stream(SMALL_DELTAS, false);
  // A held stream sends everything up to and including the first content delta: a gateway commits
  // (writes to its client) only once content arrived (SPEC R-8).
  const firstDelta = small.indexOf({ chat: '"content":"The"', messages: '"text_delta"', responses: '"response.output_text.delta"', gemini: '"text":"The"' }[fmt]);
  const sep = fmt === "gemini" ? "\r\n\r\n" : "\n\n";
  const firstEnd = small.indexOf(sep, firstDelta) + sep.length;
  return {
    json: enc.encode({ chat: CHAT_JSON, messages: MESSAGES_JSON, responses: RESPONSES_JSON, gemini: GEMINI_JSON }[fmt]),
    toolJson: enc.encode({ chat: CHAT_TOOL_JSON, messages: MESSAGES_TOOL_JSON, responses: RESPONSES_TOOL_JSON, gemini: GEMINI_TOOL_JSON }[fmt]),
    small: enc.encode(small),
    smallUsage: enc.encode(stream(SMALL_DELTAS, true)),
    big: enc.encode(stream(BIG_EVENTS - framing, false)),
    bigUsage: enc.encode(stream(BIG_EVENTS - framing, true)),
    first: enc.encode(small.slice(0, firstEnd)),
  };
}
const BODIES: Record<Fmt, Bodies> = { chat: bodies("chat"), messages: bodies("messages"), responses: bodies("responses"), gemini: bodies("gemini") };

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
  const b = BODIES[fmt];
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
