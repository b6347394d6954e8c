/**
 * A scriptable fake LLM provider on 127.0.0.1 (port 0), speaking Anthropic Messages, OpenAI Chat,
 * OpenAI Responses and Gemini. Test tooling only: it is never a provider users configure by accident
 * (it is not built into the gateway; `scripts/demo` starts it explicitly for a local try-out).
 *
 * Without a script it answers every request with a short text reply in the request's format, streamed
 * when the request asked for a stream. A script is a queue of {@link FakeReply}s (the shape of a
 * CASES.md `upstream.response`) or a function deciding per request. Every request received is recorded
 * (method, path, headers, parsed body) so tests can assert what the gateway sent.
 *
 * The hand-written streams here are independent of formats/ on purpose: the fake must not share code
 * with what it tests.
 * With {@link FakeUpstreamOptions.strict} it refuses a body the real API would not take (./strict-upstream.ts).
 */
import type { Server } from "bun";
import { badRequestReply, SCHEMA_OF, strictLines, type StrictOptions, type StrictViolation } from "./strict-upstream.ts";

/** The wire format a request to the fake was made in, decided by its path. */
export type FakeFormat = "anthropic-messages" | "openai-chat" | "openai-responses" | "gemini";

/** One scripted answer (CASES.md `upstream.response`, plus test-only knobs). */
export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Raw SSE bytes of a streamed answer. */
  sse?: string;
  /** A non-streamed JSON body. */
  json?: unknown;
  /** Raw body text (for malformed replies). */
  text?: string;
  /** Byte offsets (of the UTF-8 body) where the fake flushes separately. */
  split_at?: number[];
  /** Pause between flushed pieces, in ms. */
  delay_ms?: number;
  /**
   * The pieces after the first wait for this (test-only, in-process): the reply stays in flight until the
   * test has checked what it needed meanwhile, however slow the machine.
   */
  resume_after_first?: Promise<unknown>;
  /**
   * Drop the connection after this many body bytes, once the gateway has read every one of them
   * (reported by {@link FakeUpstream.fetch}, through which the gateway must fetch: startGateway passes
   * it), so that it acts on those bytes before it sees the reset, however loaded the machine.
   */
  reset_after_bytes?: number;
  /** With `reset_after_bytes`: the reset waits for this as well (test-only, in-process; e.g. the client has seen the commit). */
  reset_when?: Promise<unknown>;
  /** Never send headers (for header-timeout tests); the request hangs until the client gives up. */
  hang_before_headers?: boolean;
  /** Send headers and these bytes, then go silent without closing (idle-timeout tests). */
  stall_after_bytes?: number;
  /** Wait this long before sending headers, in ms. */
  headers_delay_ms?: number;
  /** Send the headers once this settles (test-only, in-process): the upstream takes as long as the test needs. */
  headers_after?: Promise<unknown>;
  /**
   * After the body (`sse`/`text`, pieces and delays as given), send this text again and again, as fast
   * as the client reads, until the client goes away (a base URL that serves an endless body).
   */
  endless?: string;
  /** Pause before each copy of `endless`, in ms (keep-alive events at a steady pace); default none. */
  endless_every_ms?: number;
}

/**
 * The response header by which the fake marks a reply it will reset (`reset_after_bytes`), for
 * {@link FakeUpstream.fetch} to report the gateway's reads of it; removed before the gateway sees it.
 */
const RESET_ID_HEADER = "x-fake-upstream-reset";

/** What the fake received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  format: FakeFormat | undefined;
  headers: Record<string, string>;
  body: any;
  /** The body exactly as received (byte-level comparisons: prefix caches key on bytes). */
  raw: string;
  /** Model, from the body or (Gemini) the path. */
  model: string | undefined;
  /** true when the request asked for a streamed reply. */
  stream: boolean;
}

export type { StrictViolation } from "./strict-upstream.ts";

export type FakeHandler = (req: ReceivedRequest) => FakeReply | undefined | Promise<FakeReply | undefined>;

export interface FakeUpstream {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Queues replies, used in order; when the queue is empty the handler or the default answers. */
  enqueue(...replies: FakeReply[]): void;
  /** Sets a per-request handler (returning undefined falls back to the default reply). */
  handle(fn: FakeHandler | undefined): void;
  /** Requests aborted by the client before the reply finished. */
  aborted: number;
  /** Model requests refused in strict mode (since the last reset); always empty when not strict. */
  violations: StrictViolation[];
  /**
   * fetch for the gateway under test (AppOptions.fetchImpl): the real fetch, except that the body of a
   * reply with `reset_after_bytes` is handed over through a reader that tells the fake when the
   * gateway has read every byte before the reset, which the reset then follows. A reset only after a
   * fixed pause (it was 100 ms) let a stalled process see the reset first: Bun's fetch drops bytes it
   * received but had not handed over when the connection breaks, so the gateway never saw them.
   */
  fetch: typeof fetch;
  reset(): void;
  stop(): Promise<void>;
}

const enc = new TextEncoder();

/** Decides the wire format of a request from its path. */
export function formatOfPath(path: string): FakeFormat | undefined {
  if (path.endsWith("/messages")) return "anthropic-messages";
  if (path.endsWith("/chat/completions")) return "openai-chat";
  if (path.endsWith("/responses")) return "openai-responses";
  if (path.includes(":generateContent") || path.includes(":streamGenerateContent")) return "gemini";
  return undefined;
}

/** Options of {@link startFakeUpstream}. */
export interface FakeUpstreamOptions {
  defaultText?: string;
  /**
   * Paths (with their query) the gateway's {@link FakeUpstream.fetch} has answered in this process, by
   * the same code as the server but without the socket: the request is recorded and the reply's
   * headers and pieces reach the gateway in microtasks, not on a later event-loop turn. For timer
   * scenarios (idle, header and first-content timeouts): timers fire in deadline order and microtasks
   * run between them, so a piece the fake sends before the gateway's timer is due is read before that
   * timer fires even when the test process was stalled meanwhile (over a socket the read would wait
   * for the next poll, after every due timer had fired).
   */
  inProcess?: (path: string) => boolean;
  /**
   * What `GET …/models` lists (OpenAI's `{object: "list", data: [{id}]}` shape, on any path ending in
   * `/models`); default `["fake-model"]`; `null` answers 404 there, as a server without a models endpoint.
   */
  models?: string[] | null;
  /**
   * Strict mode: a POST to a provider API path (Chat, Responses, Messages, (stream)generateContent) is
   * validated for its API and the model in its body or path; a body the API refuses gets that
   * provider's 400 (OpenAI/Anthropic `invalid_request_error`, Gemini `INVALID_ARGUMENT`) naming each
   * violation, before any queued reply or handler, and is recorded in {@link FakeUpstream.violations}.
   * `true`, or {@link StrictOptions} (requests left out, an openai-compatible server behind the Chat path).
   */
  strict?: boolean | StrictOptions;
}

/** Starts a fake upstream. */
export async function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const queue: FakeReply[] = [];
  let handler: FakeHandler | undefined;
  const requests: ReceivedRequest[] = [];
  const violations: StrictViolation[] = [];
  const strict = opts.strict === undefined || opts.strict === false ? undefined : opts.strict === true ? {} : opts.strict;
  const state = { aborted: 0 };
  /** Reset replies not yet read up to their reset: id → what the gateway must read, and who waits for it. */
  const resets = new Map<string, { bytes: number; read: PromiseWithResolvers<void> }>();
  let resetIds = 0;
  const defaultText = opts.defaultText ?? "Hello from the fake upstream.";

  /** Answers one request (the server's handler; {@link FakeUpstreamOptions.inProcess} calls it directly). */
  const answer = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = url.pathname + url.search;
    const format = formatOfPath(url.pathname);
    const raw = request.method === "POST" ? await request.text() : "";
    let body: any = undefined;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => (headers[k] = v));
    let model: string | undefined = body && typeof body === "object" ? body.model : undefined;
    let stream = Boolean(body && typeof body === "object" && body.stream);
    if (format === "gemini") {
      const m = /\/models\/([^/:]+):(\w+)/.exec(url.pathname);
      model = m?.[1];
      stream = m?.[2] === "streamGenerateContent";
    }
    const rec: ReceivedRequest = { method: request.method, path, format, headers, body, raw, model, stream };
    requests.push(rec);

    if (request.method === "GET" && url.pathname.endsWith("/models")) {
      if (opts.models === null) return Response.json({ error: { message: "unknown path", type: "not_found" } }, { status: 404 });
      return Response.json({ object: "list", data: (opts.models ?? ["fake-model"]).map((id) => ({ id, object: "model" })) });
    }
    if (strict && format && !strict.exempt?.(rec)) {
      const lines = strictLines(rec, strict);
      if (lines.length) {
        violations.push({ path, format, model, schema: SCHEMA_OF[format], lines });
        return serveReply(badRequestReply(format, lines), request.signal, () => state.aborted++);
      }
    }
    let reply = queue.shift();
    if (!reply && handler) reply = await handler(rec);
    if (!reply) {
      if (!format) return Response.json({ error: { message: "unknown path", type: "not_found" } }, { status: 404 });
      reply = defaultReply(format, rec, defaultText);
    }
    let read: Promise<void> | undefined;
    if (reply.reset_after_bytes !== undefined) {
      const id = String(++resetIds);
      const entry = { bytes: reply.reset_after_bytes, read: Promise.withResolvers<void>() };
      resets.set(id, entry);
      reply = { ...reply, headers: { ...reply.headers, [RESET_ID_HEADER]: id } };
      read = entry.read.promise;
    }
    return serveReply(reply, request.signal, () => state.aborted++, read);
  };

  const server: Server<unknown> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    development: false,
    // A scripted reset errors the body stream on purpose: answer quietly instead of logging it.
    error: () => new Response(null, { status: 500 }),
    fetch: answer,
  });

  /**
   * Answers in this process what {@link FakeUpstreamOptions.inProcess} names, as fetch would: the
   * request's abort rejects the call before the headers and errors the body after them; a throw is
   * the server's quiet 500.
   */
  const inProcess = opts.inProcess;
  const answerHere = (request: Request): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const signal = request.signal;
      const aborted = () => signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
      if (signal.aborted) return reject(aborted());
      const onAbort = () => reject(aborted());
      signal.addEventListener("abort", onAbort, { once: true });
      answer(request)
        .catch(() => new Response(null, { status: 500 }))
        .then((res) => {
          signal.removeEventListener("abort", onAbort);
          if (signal.aborted) return reject(aborted());
          if (!res.body) return resolve(res);
          const reader = res.body.getReader();
          const body = new ReadableStream<Uint8Array>(
            {
              start(c) {
                signal.addEventListener("abort", () => {
                  c.error(aborted());
                  void reader.cancel(aborted()).catch(() => {});
                }, { once: true });
              },
              async pull(c) {
                const r = await reader.read().catch((e) => ({ error: e }) as const);
                if (signal.aborted) return;
                if ("error" in r) return c.error(r.error);
                if (r.done) return c.close();
                c.enqueue(r.value);
              },
              cancel: (reason) => reader.cancel(reason),
            },
            { highWaterMark: 0 },
          );
          resolve(new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers }));
        });
    });

  /** The gateway's fetch: a reset reply's body is read through {@link reportingBody}. */
  const gatewayFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let res: Response;
    const url = inProcess && new URL(input instanceof Request ? input.url : String(input));
    if (url && inProcess(url.pathname + url.search)) res = await answerHere((input instanceof Request ? new Request(input, init) : new Request(String(input), init)));
    else res = await fetch(input, init);
    const id = res.headers.get(RESET_ID_HEADER);
    const entry = id === null ? undefined : resets.get(id);
    if (!entry || !res.body) return res;
    resets.delete(id!);
    if (entry.bytes <= 0) entry.read.resolve();
    const headers = new Headers(res.headers);
    headers.delete(RESET_ID_HEADER);
    return new Response(reportingBody(res.body, entry.bytes, () => entry.read.resolve()), { status: res.status, statusText: res.statusText, headers });
  };

  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests,
    violations,
    enqueue: (...r) => queue.push(...r),
    handle: (fn) => (handler = fn),
    get aborted() {
      return state.aborted;
    },
    fetch: Object.assign(gatewayFetch, { preconnect: fetch.preconnect }) as typeof fetch,
    reset() {
      queue.length = 0;
      requests.length = 0;
      violations.length = 0;
      handler = undefined;
      state.aborted = 0;
    },
    stop: async () => {
      server.stop(true);
    },
  };
}

/**
 * `body` as its reader sees it, handed over one read at a time (nothing is read ahead of the
 * consumer); `onRead` runs once the consumer has been handed `bytes` bytes, after its read has them.
 * Cancelling it cancels `body`; an error of `body` reaches it after what came before.
 */
function reportingBody(body: ReadableStream<Uint8Array>, bytes: number, onRead: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let handed = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (e) {
          c.error(e);
          return;
        }
        if (r.done) return c.close();
        c.enqueue(r.value);
        handed += r.value.byteLength;
        if (handed >= bytes) onRead();
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** `read`: for a reply with `reset_after_bytes`, settles once the gateway has read the bytes before the reset. */
async function serveReply(reply: FakeReply, signal: AbortSignal, onAbort: () => void, read?: Promise<void>): Promise<Response> {
  if (reply.hang_before_headers) {
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    onAbort();
    return new Response(null, { status: 499 });
  }
  if (reply.headers_delay_ms) await Bun.sleep(reply.headers_delay_ms);
  if (reply.headers_after) await reply.headers_after;
  const status = reply.status ?? 200;
  const isSse = reply.sse !== undefined;
  const headers = new Headers(reply.headers ?? {});
  if (!headers.has("content-type")) headers.set("content-type", isSse ? "text/event-stream" : "application/json");
  const text = reply.sse ?? reply.text ?? (reply.json !== undefined ? JSON.stringify(reply.json) : "");
  const bytes = enc.encode(text);
  const endless = reply.endless === undefined ? undefined : enc.encode(reply.endless);
  const simple =
    !reply.split_at && !reply.delay_ms && !reply.resume_after_first && reply.reset_after_bytes === undefined && reply.stall_after_bytes === undefined && reply.endless === undefined;
  if (simple) return new Response(bytes, { status, headers });

  let limit = bytes.length;
  if (reply.reset_after_bytes !== undefined) limit = Math.min(limit, reply.reset_after_bytes);
  if (reply.stall_after_bytes !== undefined) limit = Math.min(limit, reply.stall_after_bytes);
  const cuts = [...(reply.split_at ?? [])].filter((o) => o > 0 && o < limit).sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let last = 0;
  for (const c of cuts) {
    pieces.push(bytes.subarray(last, c));
    last = c;
  }
  pieces.push(bytes.subarray(last, limit));

  let aborted = false;
  signal.addEventListener("abort", () => {
    aborted = true;
    onAbort();
  });
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let i = 0; i < pieces.length; i++) {
        if (aborted) return;
        if (pieces[i].length > 0) controller.enqueue(pieces[i]);
        if (i === 0 && reply.resume_after_first) await reply.resume_after_first;
        if (reply.delay_ms && i < pieces.length - 1) await Bun.sleep(reply.delay_ms);
      }
      if (reply.reset_after_bytes !== undefined && reply.reset_after_bytes < bytes.length) {
        // Or the gateway gave up on the reply first (it will never read the rest).
        await Promise.race([Promise.all([read, reply.reset_when]), new Promise<void>((resolve) => (aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })))]);
        controller.error(new Error("fake upstream: connection reset"));
        return;
      }
      if (reply.stall_after_bytes !== undefined && reply.stall_after_bytes < bytes.length) {
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        return;
      }
      if (reply.endless === undefined) controller.close();
    },
    // Only for an endless reply: one more copy per read the client asks for.
    async pull(controller) {
      if (endless === undefined || aborted) return;
      if (reply.endless_every_ms) await Bun.sleep(reply.endless_every_ms);
      if (!aborted) controller.enqueue(endless);
    },
  });
  return new Response(body, { status, headers });
}

// ---------------------------------------------------------------------------------------------
// Default replies, hand-written per format
// ---------------------------------------------------------------------------------------------

/** A text (and optionally tool-call) reply in the given format, streamed or not. */
export interface SimpleReply {
  text?: string;
  /** The text deltas of a streamed reply, exactly (they join to `text`); default: split after each space. */
  textPieces?: string[];
  /** `argumentPieces`: the streamed argument deltas, exactly (they join to the arguments' JSON); default: two halves. */
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown>; argumentPieces?: string[] }>;
  model?: string;
  usage?: { input: number; output: number; cacheRead?: number };
}

function defaultReply(format: FakeFormat, req: ReceivedRequest, text: string): FakeReply {
  return simpleReply(format, { text, model: req.model }, req.stream);
}

/** Builds a valid reply of `format` saying `r` (hand-written grammar per REFERENCE §1–4). */
export function simpleReply(format: FakeFormat, r: SimpleReply, stream: boolean): FakeReply {
  const model = r.model ?? "fake-model";
  const usage = r.usage ?? { input: 11, output: 7 };
  const calls = r.toolCalls ?? [];
  const text = r.text ?? r.textPieces?.join("") ?? "";
  if (r.textPieces && r.textPieces.join("") !== text) throw new Error("textPieces must join to text");
  piecesOverride = r.textPieces;
  try {
    return replyOf(format, model, text, calls, usage, stream);
  } finally {
    piecesOverride = undefined;
  }
}

function replyOf(format: FakeFormat, model: string, text: string, calls: Calls, usage: U, stream: boolean): FakeReply {
  switch (format) {
    case "anthropic-messages":
      return stream ? { sse: anthropicSse(model, text, calls, usage) } : { json: anthropicJson(model, text, calls, usage) };
    case "openai-chat":
      return stream ? { sse: chatSse(model, text, calls, usage) } : { json: chatJson(model, text, calls, usage) };
    case "openai-responses":
      return stream ? { sse: responsesSse(model, text, calls, usage) } : { json: responsesObject(model, text, calls, usage, "completed") };
    case "gemini":
      return stream ? { sse: geminiSse(model, text, calls, usage) } : { json: geminiJson(model, text, calls, usage, true) };
  }
}

type Calls = NonNullable<SimpleReply["toolCalls"]>;
type U = NonNullable<SimpleReply["usage"]>;

/** A call's streamed argument deltas: its `argumentPieces`, else the JSON in two halves. */
function argPieces(c: Calls[number]): string[] {
  const json = JSON.stringify(c.arguments);
  if (c.argumentPieces) {
    if (c.argumentPieces.join("") !== json) throw new Error("argumentPieces must join to the arguments' JSON");
    return c.argumentPieces;
  }
  const mid = Math.floor(json.length / 2);
  return [json.slice(0, mid), json.slice(mid)];
}

/** The text deltas of a streamed reply: `r.textPieces`, else split after each space. */
let piecesOverride: string[] | undefined;

function chunksOf(text: string): string[] {
  if (piecesOverride) return piecesOverride;
  const words = text.split(/(?<= )/);
  return words.length > 0 ? words : [text];
}

function anthropicJson(model: string, text: string, calls: Calls, u: U) {
  const content: any[] = [];
  if (text) content.push({ type: "text", text });
  for (const c of calls) content.push({ type: "tool_use", id: c.id, name: c.name, input: c.arguments });
  return {
    id: "msg_fake01",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: calls.length ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cacheRead ?? 0, cache_creation_input_tokens: 0 },
  };
}

function anthropicSse(model: string, text: string, calls: Calls, u: U): string {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  let out = ev("message_start", {
    type: "message_start",
    message: {
      id: "msg_fake01",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: u.input, output_tokens: 1, cache_read_input_tokens: u.cacheRead ?? 0, cache_creation_input_tokens: 0 },
    },
  });
  let index = 0;
  if (text) {
    out += ev("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    out += ev("ping", { type: "ping" });
    for (const piece of chunksOf(text)) {
      out += ev("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    }
    out += ev("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  for (const c of calls) {
    out += ev("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: c.id, name: c.name, input: {} },
    });
    out += ev("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } });
    for (const piece of argPieces(c)) out += ev("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
    out += ev("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  out += ev("message_delta", {
    type: "message_delta",
    delta: { stop_reason: calls.length ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: u.output },
  });
  out += ev("message_stop", { type: "message_stop" });
  return out;
}

function chatUsage(u: U) {
  return {
    prompt_tokens: u.input + (u.cacheRead ?? 0),
    completion_tokens: u.output,
    total_tokens: u.input + (u.cacheRead ?? 0) + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead ?? 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function chatJson(model: string, text: string, calls: Calls, u: U) {
  return {
    id: "chatcmpl-fake01",
    object: "chat.completion",
    created: 1750000000,
    model,
    choices: [
      {
        index: 0,
        finish_reason: calls.length ? "tool_calls" : "stop",
        logprobs: null,
        message: {
          role: "assistant",
          content: text || null,
          refusal: null,
          ...(calls.length
            ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }
            : {}),
        },
      },
    ],
    usage: chatUsage(u),
  };
}

function chatSse(model: string, text: string, calls: Calls, u: U): string {
  const base = { id: "chatcmpl-fake01", object: "chat.completion.chunk", created: 1750000000, model };
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`;
  let out = chunk({ role: "assistant", content: "" });
  if (text) for (const piece of chunksOf(text)) out += chunk({ content: piece });
  calls.forEach((c, i) => {
    out += chunk({ tool_calls: [{ index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] });
    for (const piece of argPieces(c)) out += chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] });
  });
  out += chunk({}, calls.length ? "tool_calls" : "stop");
  out += `data: ${JSON.stringify({ ...base, choices: [], usage: chatUsage(u) })}\n\n`;
  out += "data: [DONE]\n\n";
  return out;
}

function responsesOutput(text: string, calls: Calls) {
  const output: any[] = [];
  if (text) {
    output.push({
      type: "message",
      id: "msg_fake01",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    });
  }
  calls.forEach((c, i) =>
    output.push({
      type: "function_call",
      id: `fc_fake0${i + 1}`,
      call_id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.arguments),
      status: "completed",
    }),
  );
  return output;
}

function responsesObject(model: string, text: string, calls: Calls, u: U, status: string) {
  return {
    id: "resp_fake01",
    object: "response",
    created_at: 1750000000,
    status,
    model,
    error: null,
    incomplete_details: null,
    output: status === "completed" ? responsesOutput(text, calls) : [],
    usage:
      status === "completed"
        ? {
            input_tokens: u.input + (u.cacheRead ?? 0),
            input_tokens_details: { cached_tokens: u.cacheRead ?? 0 },
            output_tokens: u.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: u.input + (u.cacheRead ?? 0) + u.output,
          }
        : null,
  };
}

function responsesSse(model: string, text: string, calls: Calls, u: U): string {
  let seq = 0;
  const ev = (data: Record<string, unknown>) => {
    const full = { type: data.type, sequence_number: seq++, ...data };
    return `event: ${data.type}\ndata: ${JSON.stringify(full)}\n\n`;
  };
  let out = ev({ type: "response.created", response: responsesObject(model, text, calls, u, "in_progress") });
  out += ev({ type: "response.in_progress", response: responsesObject(model, text, calls, u, "in_progress") });
  let oi = 0;
  if (text) {
    out += ev({ type: "response.output_item.added", output_index: oi, item: { type: "message", id: "msg_fake01", role: "assistant", status: "in_progress", content: [] } });
    out += ev({ type: "response.content_part.added", item_id: "msg_fake01", output_index: oi, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    for (const piece of chunksOf(text)) {
      out += ev({ type: "response.output_text.delta", item_id: "msg_fake01", output_index: oi, content_index: 0, delta: piece, logprobs: [] });
    }
    out += ev({ type: "response.output_text.done", item_id: "msg_fake01", output_index: oi, content_index: 0, text, logprobs: [] });
    out += ev({ type: "response.content_part.done", item_id: "msg_fake01", output_index: oi, content_index: 0, part: { type: "output_text", text, annotations: [] } });
    out += ev({
      type: "response.output_item.done",
      output_index: oi,
      item: { type: "message", id: "msg_fake01", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] },
    });
    oi++;
  }
  calls.forEach((c, i) => {
    const id = `fc_fake0${i + 1}`;
    const json = JSON.stringify(c.arguments);
    out += ev({ type: "response.output_item.added", output_index: oi, item: { type: "function_call", id, call_id: c.id, name: c.name, arguments: "", status: "in_progress" } });
    for (const piece of argPieces(c)) out += ev({ type: "response.function_call_arguments.delta", item_id: id, output_index: oi, delta: piece });
    out += ev({ type: "response.function_call_arguments.done", item_id: id, output_index: oi, name: c.name, arguments: json });
    out += ev({ type: "response.output_item.done", output_index: oi, item: { type: "function_call", id, call_id: c.id, name: c.name, arguments: json, status: "completed" } });
    oi++;
  });
  out += ev({ type: "response.completed", response: responsesObject(model, text, calls, u, "completed") });
  return out;
}

function geminiJson(model: string, text: string, calls: Calls, u: U, final: boolean) {
  const parts: any[] = [];
  if (text) parts.push({ text });
  for (const c of calls) parts.push({ functionCall: { name: c.name, args: c.arguments } });
  return {
    candidates: [{ content: { role: "model", parts }, ...(final ? { finishReason: "STOP" } : {}), index: 0 }],
    usageMetadata: {
      promptTokenCount: u.input + (u.cacheRead ?? 0),
      candidatesTokenCount: u.output,
      totalTokenCount: u.input + (u.cacheRead ?? 0) + u.output,
      ...(u.cacheRead ? { cachedContentTokenCount: u.cacheRead } : {}),
    },
    modelVersion: model,
    responseId: "fakeresp01",
  };
}

function geminiSse(model: string, text: string, calls: Calls, u: U): string {
  let out = "";
  const pieces = text ? chunksOf(text) : [];
  for (const p of pieces) out += `data: ${JSON.stringify(geminiJson(model, p, [], u, false))}\r\n\r\n`;
  if (calls.length) out += `data: ${JSON.stringify(geminiJson(model, "", calls, u, false))}\r\n\r\n`;
  const last = geminiJson(model, "", [], u, true);
  last.candidates[0].content.parts = [{ text: "" }];
  out += `data: ${JSON.stringify(last)}\r\n\r\n`;
  return out;
}
