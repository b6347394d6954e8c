#!/usr/bin/env bun
/**
 * The rung servers of scripts/bench-floor.ts: the raw pipe (scripts/bench-pipe.ts) with the work the
 * SPEC makes mandatory for a gateway in the byte path added one primitive per rung, each rung keeping
 * the ones below it. This is NOT switchyard's code: it is the least Bun code that does each piece, so
 * that its CPU per request is a floor for switchyard's. Rung 0 is scripts/bench-pipe.ts itself.
 *
 * | rung | adds | SPEC |
 * |---|---|---|
 * | 1 | the peer address checked (loopback passes without a key), the body read and `JSON.parse`d, `model` and `stream` read (400 on malformed JSON; on Gemini's `…/models/{model}:generateContent` and `:streamGenerateContent?alt=sse` both from the path), the client's bytes forwarded; a streaming Chat body gets `"stream_options":{"include_usage":true},` spliced in front | G-1, G-3, G-4, R-2, F-3, 2.1 |
 * | 2 | the upstream call as an executor makes it: a credential header, an `AbortController` per request wired to the client's `signal`, a header timer (`setTimeout`, cleared on the headers) | 6.4 (a client that leaves cancels the upstream call), 6.3 (timeout before headers), R-7 |
 * | 3 | the reply through JavaScript: the first chunk peeked before the status is sent; what already arrived after it taken without waiting (a stream whose end was already there is answered whole, as switchyard's commit point does), the rest through a pull `ReadableStream` (`highWaterMark: 0`); every chunk seen (native byte searches for usage (Gemini's `usageMetadata`) and errors, the usage event parsed), the idle timer re-armed per chunk, a broken stream ended with the format's in-band error; JSON replies read chunk by chunk under the same timer, parsed for usage, answered as bytes | R-8, R-9, 6.4, O-1 |
 * | 4 | per-request bookkeeping: a request id and a route id in the reply headers, a usage row and a route trace (JSON) buffered and written to bun:sqlite (WAL, `synchronous=NORMAL`) in one transaction every 100 ms (or at 256 rows) with the trace ring trimmed, a counter and a latency histogram updated, one JSON log line per request appended to a file with the flush | 2.4, O-1, O-2, O-3, O-4, D-1 |
 * | 5 | Elysia (the stack's HTTP framework) instead of bare `Bun.serve`, the same handler on its static routes and Gemini's `/v1beta/models/*` (`parse: "none"`) | the developers' guide |
 * | 6 | translation, the least of it (only on the translated lane): a Messages request rebuilt as a Chat body (`JSON.stringify`), each Chat SSE event of the reply `JSON.parse`d and re-encoded as Messages events (`JSON.stringify`), with the opening and closing events | F-2, R-5, R-9 |
 *
 * Usage: `UPSTREAM=http://127.0.0.1:PORT bun scripts/lib/floor-server.ts RUNG DIR` — listens on
 * 127.0.0.1:0 and prints `{"port":N}` on stdout; DIR holds rung 4's database and log file.
 */
import { join } from "node:path";
import { Database } from "bun:sqlite";
// the commit point's own "already there?" read (four microtask turns, never waits for I/O): a primitive, not per-request logic
import { readIfReady } from "../../pipeline/commit.ts";
import type { ReadResult } from "../../pipeline/re-translate.ts";

/** The highest rung (translation: used on translated lanes only). */
export const TOP_RUNG = 6;

const enc = new TextEncoder();
const JSON_H = { "content-type": "application/json" };
const SSE_H = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
const HEADER_TIMEOUT_MS = 60_000;
const IDLE_TIMEOUT_MS = 60_000;
/** `{"stream_options":{"include_usage":true},` : put in front of a streaming Chat body's own bytes (after its `{`). */
const INCLUDE_USAGE = enc.encode('{"stream_options":{"include_usage":true},');
const USAGE = Buffer.from('"usage"');
/** Gemini's usage key (SPEC 2.1: every streamed Gemini chunk may carry it). */
const GEMINI_USAGE = Buffer.from('"usageMetadata"');
const ERROR = Buffer.from('"error"');

type Format = "chat" | "messages" | "gemini";
/** What rung 3 saw of a reply: usage tokens, an error event, the time of the first byte. */
interface Seen {
  input: number;
  output: number;
  error: boolean;
  firstByteMs: number;
}

const fail = (status: number, message: string) => Response.json({ error: { type: "invalid_request_error", message } }, { status });

/** The in-band error a broken stream ends with (SPEC 6.4), in the client's format. */
const inBandError = (f: Format) =>
  enc.encode(
    f === "messages"
      ? 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"upstream stream broken"}}\n\n'
      : f === "gemini"
        ? 'data: {"error":{"code":502,"message":"upstream stream broken","status":"UNAVAILABLE"}}\n\n'
        : 'data: {"error":{"message":"upstream stream broken","type":"api_error"}}\n\ndata: [DONE]\n\n',
  );

/** Gemini's method path (SPEC 2.1): `…/models/{model}:generateContent` or `:streamGenerateContent`; undefined for another path. */
function geminiCall(path: string): { model: string; stream: boolean } | undefined {
  const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(path);
  return m ? { model: m[1]!, stream: m[2] === "streamGenerateContent" } : undefined;
}

/** Reads the usage of one SSE event containing `"usage"` at `at` (its `data:` line parsed). */
function usageAt(buf: Buffer, at: number, seen: Seen): void {
  const start = buf.lastIndexOf("data:", at);
  let end = buf.indexOf(10, at);
  if (end < 0) end = buf.length;
  if (start < 0) return;
  try {
    const ev = JSON.parse(buf.toString("utf8", start + 5, end));
    const u = ev.usage ?? ev.message?.usage ?? ev.usageMetadata;
    if (u) {
      seen.input = u.prompt_tokens ?? u.input_tokens ?? u.promptTokenCount ?? seen.input;
      seen.output = u.completion_tokens ?? u.output_tokens ?? u.candidatesTokenCount ?? seen.output;
    }
  } catch {
    // an event split across reads: the usage is read from the next event that carries it
  }
}

/** Rung 3's tap: native searches over a chunk for usage and errors; usage events parsed. */
function tap(chunk: Uint8Array, seen: Seen, format: Format): void {
  const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const key = format === "gemini" ? GEMINI_USAGE : USAGE;
  for (let at = buf.indexOf(key); at >= 0; at = buf.indexOf(key, at + 1)) usageAt(buf, at, seen);
  if (buf.indexOf(ERROR) >= 0) seen.error = true;
}

/** Bytes of a streamed reply taken while they are already there before the rest is streamed. */
const READY_LIMIT = 64 * 1024;

// ---- rung 6: the least translation (Messages client, Chat upstream) ---------------------------------

/** A Messages request as a Chat body (system, messages, max_tokens, stream; usage asked for on streams). */
function messagesToChat(b: Record<string, unknown>): string {
  const messages: unknown[] = [];
  if (typeof b.system === "string") messages.push({ role: "system", content: b.system });
  for (const m of (b.messages as unknown[]) ?? []) messages.push(m);
  return JSON.stringify({ model: b.model, messages, max_tokens: b.max_tokens, stream: b.stream === true, ...(b.stream === true ? { stream_options: { include_usage: true } } : {}) });
}

/** A Chat JSON reply as a Messages reply. */
function chatReplyToMessages(c: { id?: string; model?: string; choices?: { message?: { content?: string }; finish_reason?: string }[]; usage?: { prompt_tokens?: number; completion_tokens?: number } }): string {
  const ch = c.choices?.[0];
  return JSON.stringify({
    id: c.id,
    type: "message",
    role: "assistant",
    model: c.model,
    content: [{ type: "text", text: ch?.message?.content ?? "" }],
    stop_reason: ch?.finish_reason === "length" ? "max_tokens" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: c.usage?.prompt_tokens ?? 0, output_tokens: c.usage?.completion_tokens ?? 0 },
  });
}

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Chat SSE bytes → Messages SSE bytes, event by event (each `data:` JSON parsed and re-encoded). */
class ChatToMessages {
  private carry = "";
  private readonly dec = new TextDecoder();
  private started = false;
  private stop: string | null = null;
  constructor(
    private readonly model: string,
    private readonly seen: Seen,
  ) {}

  push(chunk: Uint8Array): Uint8Array {
    const text = this.carry + this.dec.decode(chunk, { stream: true });
    let out = "";
    let from = 0;
    for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n", from)) {
      out += this.event(text.slice(from, end));
      from = end + 2;
    }
    this.carry = text.slice(from);
    return enc.encode(out);
  }

  private event(raw: string): string {
    if (!raw.startsWith("data: ")) return "";
    const data = raw.slice(6);
    if (data === "[DONE]") return this.end();
    const c = JSON.parse(data) as { id?: string; error?: unknown; choices?: { delta?: { content?: string }; finish_reason?: string | null }[]; usage?: { prompt_tokens: number; completion_tokens: number } };
    let out = "";
    if (c.error) {
      this.seen.error = true;
      return event("error", { type: "error", error: { type: "api_error", message: "upstream error" } });
    }
    if (!this.started) {
      this.started = true;
      out += event("message_start", { type: "message_start", message: { id: c.id, type: "message", role: "assistant", model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } });
      out += event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    }
    const ch = c.choices?.[0];
    if (ch?.delta?.content) out += event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: ch.delta.content } });
    if (ch?.finish_reason) this.stop = ch.finish_reason === "length" ? "max_tokens" : "end_turn";
    if (c.usage) {
      this.seen.input = c.usage.prompt_tokens;
      this.seen.output = c.usage.completion_tokens;
    }
    return out;
  }

  private end(): string {
    return (
      event("content_block_stop", { type: "content_block_stop", index: 0 }) +
      event("message_delta", { type: "message_delta", delta: { stop_reason: this.stop, stop_sequence: null }, usage: { input_tokens: this.seen.input, output_tokens: this.seen.output } }) +
      event("message_stop", { type: "message_stop" })
    );
  }
}

// ---- rung 4: bookkeeping ------------------------------------------------------------------------------

/** Usage rows, route traces, metrics and log lines of the requests served (SPEC O-1…O-4, D-1). */
class Bookkeeping {
  private readonly db: Database;
  private readonly insertUsage;
  private readonly insertTrace;
  private readonly trimTraces;
  private readonly writeBatch;
  private usage: unknown[][] = [];
  private traces: unknown[][] = [];
  private lines: string[] = [];
  private readonly log;
  /** Requests by provider, model and outcome, and a latency histogram (ms bucket bounds). */
  private readonly counts = new Map<string, number>();
  private readonly bounds = [1, 5, 10, 50, 100, 500, 1000, 5000, 10000, Infinity];
  private readonly buckets = new Map<string, number[]>();

  constructor(dir: string) {
    this.db = new Database(join(dir, "floor.sqlite"), { create: true });
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    this.db.exec(`CREATE TABLE IF NOT EXISTS usage (request_id TEXT PRIMARY KEY, ts INTEGER, client_format TEXT, model TEXT, provider_id TEXT, account_id TEXT,
      key_name TEXT, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, reasoning_tokens INTEGER,
      outcome TEXT, status INTEGER, ttfb_ms REAL, total_ms REAL)`);
    this.db.exec("CREATE TABLE IF NOT EXISTS route_traces (seq INTEGER PRIMARY KEY AUTOINCREMENT, route_id TEXT UNIQUE, request_id TEXT, ts INTEGER, body TEXT)");
    this.insertUsage = this.db.prepare("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    this.insertTrace = this.db.prepare("INSERT INTO route_traces (route_id, request_id, ts, body) VALUES (?, ?, ?, ?)");
    this.trimTraces = this.db.prepare("DELETE FROM route_traces WHERE seq <= (SELECT MAX(seq) FROM route_traces) - 10000");
    this.writeBatch = this.db.transaction((usage: unknown[][], traces: unknown[][]) => {
      for (const u of usage) this.insertUsage.run(...(u as never[]));
      for (const t of traces) this.insertTrace.run(...(t as never[]));
      this.trimTraces.run();
    });
    this.log = Bun.file(join(dir, "floor.log")).writer();
    // unref'd: a server's socket keeps its process alive; in process (scripts/lib/budget-measure.ts) the timer must not
    setInterval(() => this.flush(), 100).unref();
  }

  /** One finished request: its usage row, route trace, metrics and log line. */
  record(r: { requestId: string; routeId: string; format: Format; model: string; status: number; outcome: string; seen: Seen; startedAt: number }): void {
    const now = Date.now();
    const totalMs = performance.now() - r.startedAt;
    this.usage.push([r.requestId, now, r.format, r.model, "bench", "bench-account", null, r.seen.input, r.seen.output, 0, 0, 0, r.outcome, r.status, r.seen.firstByteMs, totalMs]);
    this.traces.push([r.routeId, r.requestId, now, JSON.stringify({ routeId: r.routeId, requestId: r.requestId, model: r.model, targets: [{ provider: "bench", model: r.model, attempts: [{ account: "bench-account", status: r.status, ms: r.seen.firstByteMs }] }], outcome: r.outcome })]);
    const key = `bench|${r.model}|${r.outcome}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = this.bounds.map(() => 0)));
    let i = 0;
    while (totalMs > this.bounds[i]) i++;
    b[i]++;
    this.lines.push(JSON.stringify({ level: "info", time: now, msg: "request", requestId: r.requestId, routeId: r.routeId, model: r.model, status: r.status, outcome: r.outcome, inputTokens: r.seen.input, outputTokens: r.seen.output, ttfbMs: r.seen.firstByteMs, totalMs }));
    if (this.usage.length >= 256) this.flush();
  }

  private flush(): void {
    if (this.usage.length > 0 || this.traces.length > 0) {
      const u = this.usage;
      const t = this.traces;
      this.usage = [];
      this.traces = [];
      this.writeBatch(u, t);
    }
    if (this.lines.length > 0) {
      this.log.write(this.lines.join("\n") + "\n");
      this.log.flush();
      this.lines = [];
    }
  }
}

/** A time-ordered request id (hex ms + random), like a gateway's. */
const newId = (prefix: string) => prefix + Date.now().toString(16) + crypto.randomUUID().slice(0, 13);

// ---- the handler ----------------------------------------------------------------------------------------

/** The rung's request handler (rungs 1–6; rung 0 is scripts/bench-pipe.ts). */
export function floorHandler(rung: number, upstream: string, dir: string): (req: Request, peer: string | undefined) => Promise<Response> {
  const base = upstream.replace(/\/+$/, "");
  const books = rung >= 4 ? new Bookkeeping(dir) : undefined;
  const dec = new TextDecoder("utf-8", { fatal: true });

  return async (req, peer) => {
    const startedAt = performance.now();
    const url = new URL(req.url);
    const path = url.pathname;
    const gemini = geminiCall(path);
    const format: Format = gemini ? "gemini" : path.endsWith("/messages") ? "messages" : "chat";
    // rung 1 — guard (G-1, G-3: the socket's peer; G-4: malformed JSON is a 400) and routing's inputs (R-2)
    if (peer !== "127.0.0.1" && peer !== "::1" && peer !== "::ffff:127.0.0.1" && !req.headers.get("authorization")) return fail(401, "a client key is required");
    const bytes = new Uint8Array(await req.arrayBuffer());
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(dec.decode(bytes));
    } catch {
      return fail(400, "the body is not JSON");
    }
    if (typeof body !== "object" || body === null || (!gemini && typeof body.model !== "string")) return fail(400, "model is required");
    const model = gemini ? gemini.model : (body.model as string);
    const stream = gemini ? gemini.stream : body.stream === true;
    const translate = rung >= 6 && format === "messages";
    // Gemini's query (`?alt=sse`) goes upstream with the path, as the raw pipe forwards it.
    let upstreamPath = gemini ? path + url.search : path;
    let out: Uint8Array | string = bytes;
    if (translate) {
      upstreamPath = "/v1/chat/completions";
      out = messagesToChat(body);
    } else if (format === "chat" && stream && body.stream_options === undefined) {
      // SPEC F-3: a streaming Chat request asks for usage (spliced in front of the client's own bytes)
      const spliced = new Uint8Array(INCLUDE_USAGE.length + bytes.length - 1);
      spliced.set(INCLUDE_USAGE);
      spliced.set(bytes.subarray(1), INCLUDE_USAGE.length);
      out = spliced;
    }
    if (rung < 2) {
      const res = await fetch(base + upstreamPath, { method: "POST", headers: JSON_H, body: out, signal: req.signal });
      return new Response(res.body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
    }

    // rung 2 — the executor's call: credentials, its own abort wired to the client's, a header timer
    const abort = new AbortController();
    const onClientGone = () => abort.abort();
    req.signal.addEventListener("abort", onClientGone);
    const timer = setTimeout(() => abort.abort(), HEADER_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      req.signal.removeEventListener("abort", onClientGone);
    };
    let res: Response;
    try {
      res = await fetch(base + upstreamPath, { method: "POST", headers: { ...JSON_H, authorization: "Bearer sk-floor-not-a-secret" }, body: out, signal: abort.signal });
    } catch {
      done();
      return fail(502, "upstream unreachable");
    }
    if (rung < 3) {
      clearTimeout(timer);
      return new Response(res.body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
    }

    // rung 3 — the reply through JS: peek (R-8), tap every chunk, idle timer per chunk, in-band errors
    const seen: Seen = { input: 0, output: 0, error: false, firstByteMs: NaN };
    const requestId = rung >= 4 ? newId("req_") : "";
    const routeId = rung >= 4 ? newId("sy_") : "";
    const finish = (outcome: string) => {
      done();
      books?.record({ requestId, routeId, format, model, status: res.status, outcome, seen, startedAt });
    };
    const headers: Record<string, string> = rung >= 4 ? { "x-request-id": requestId, "x-switchyard-route-id": routeId } : {};
    const reader = res.body!.getReader();
    timer.refresh();
    let first: Awaited<ReturnType<typeof reader.read>>;
    try {
      first = await reader.read();
    } catch {
      finish("upstream_error");
      return fail(502, "the upstream reply broke before its first byte");
    }
    seen.firstByteMs = performance.now() - startedAt;
    const sse = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
    if (!sse) {
      const parts: Uint8Array[] = [];
      let size = 0;
      for (let r = first; !r.done; r = await reader.read()) {
        timer.refresh();
        parts.push(r.value);
        size += r.value.byteLength;
      }
      const whole = parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
      let reply: { usage?: Record<string, number> } & Record<string, unknown> = {};
      try {
        reply = JSON.parse(dec.decode(whole));
      } catch {
        // an error page that is not JSON: no usage, passed on as it came
      }
      const u = reply.usage ?? (reply.usageMetadata as Record<string, number> | undefined);
      seen.input = u?.prompt_tokens ?? u?.input_tokens ?? u?.promptTokenCount ?? 0;
      seen.output = u?.completion_tokens ?? u?.output_tokens ?? u?.candidatesTokenCount ?? 0;
      finish(res.ok ? "ok" : "upstream_error");
      return new Response(translate && res.ok ? chatReplyToMessages(reply as never) : whole, { status: res.status, headers: { ...JSON_H, ...headers } });
    }
    const translator = translate ? new ChatToMessages(model, seen) : undefined;
    const pass = (chunk: Uint8Array) => {
      if (translator) return translator.push(chunk);
      tap(chunk, seen, format);
      return chunk;
    };
    // What the upstream already delivered after the first chunk is taken without waiting (a read that
    // settles within a few microtask turns); a reply whose end was already there goes out whole, as one
    // sized body, the rest through the JS stream (switchyard's commit point does the same, item 31).
    const taken: Uint8Array[] = [];
    let size = 0;
    let ended = first.done;
    let pendingRead: Promise<ReadResult> | undefined;
    if (!first.done) {
      taken.push(pass(first.value));
      size += first.value.byteLength;
    }
    while (!ended && size < READY_LIMIT) {
      const read = reader.read() as Promise<ReadResult>;
      const r = await readIfReady(read);
      if (r === undefined) {
        pendingRead = read;
        break;
      }
      if (r.done) ended = true;
      else {
        taken.push(pass(r.value));
        size += r.value.byteLength;
      }
    }
    if (ended) {
      finish(seen.error ? "upstream_error" : "ok");
      return new Response(taken.length === 1 ? taken[0] : Buffer.concat(taken), { status: res.status, headers: { ...SSE_H, ...headers } });
    }
    const replyBody = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          if (taken.length > 0) {
            c.enqueue(taken.length === 1 ? taken[0] : Buffer.concat(taken));
            taken.length = 0;
            return;
          }
          try {
            const r = await (pendingRead ?? reader.read());
            pendingRead = undefined;
            timer.refresh();
            if (r.done) {
              finish(seen.error ? "upstream_error" : "ok");
              c.close();
              return;
            }
            c.enqueue(pass(r.value));
          } catch {
            c.enqueue(inBandError(format));
            finish("upstream_broken");
            c.close();
          }
        },
        cancel() {
          abort.abort();
          finish("client_closed");
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(replyBody, { status: res.status, headers: { ...SSE_H, ...headers } });
  };
}

/** The part of a request's context the floor's Elysia routes read (Bun's server, or none when called in process). */
type RouteCtx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null };

/**
 * Rung 5's framework: `handle` on Elysia's static routes for /v1/chat/completions and /v1/messages and
 * on Gemini's `/v1beta/models/*` (`parse: "none"`), not listening. `peer` gives the client's address from the route's context: the
 * socket's over the wire (startFloorServer); scripts/lib/budget-measure.ts calls the app's `handle` in
 * process and gives loopback.
 */
export async function floorApp(handle: (req: Request, peer: string | undefined) => Promise<Response>, peer: (ctx: RouteCtx) => string | undefined) {
  const { Elysia } = await import("elysia");
  const route = (ctx: RouteCtx) => handle(ctx.request, peer(ctx));
  return new Elysia().post("/v1/chat/completions", route as never, { parse: "none" }).post("/v1/messages", route as never, { parse: "none" }).post("/v1beta/models/*", route as never, { parse: "none" });
}

/** Starts rung `rung` (1–6) in front of `upstream`; rung 5 and up on Elysia. Returns its port. */
export async function startFloorServer(rung: number, upstream: string, dir: string): Promise<number> {
  const handle = floorHandler(rung, upstream, dir);
  if (rung < 5) {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, development: false, fetch: (req, srv) => handle(req, srv.requestIP(req)?.address) });
    return server.port!;
  }
  const app = (await floorApp(handle, ({ request, server }) => server?.requestIP(request)?.address)).listen({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, development: false, reusePort: false });
  return app.server!.port!;
}

if (import.meta.main) {
  const [rung, dir] = [Number(process.argv[2]), process.argv[3]];
  const upstream = process.env.UPSTREAM;
  if (!upstream || !(rung >= 1 && rung <= TOP_RUNG) || !dir) {
    process.stderr.write("usage: UPSTREAM=http://127.0.0.1:PORT bun scripts/lib/floor-server.ts RUNG(1-6) DIR\n");
    process.exit(2);
  }
  process.stdout.write(JSON.stringify({ port: await startFloorServer(rung, upstream, dir) }) + "\n");
}
