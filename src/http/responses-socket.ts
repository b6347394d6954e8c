/**
 * Codex's Responses WebSocket (SPEC 2.5): `GET /v1/responses` with `Upgrade: websocket`, on Bun's
 * native WebSocket server.
 *
 * The upgrade is guarded like HTTP: the browser rules (SPEC 2.6) already ran for it as for every
 * request, and the loopback rule or a client key in `Authorization` / `x-api-key` is checked before the
 * socket is accepted (a refused upgrade is the gateway's own 401/403 for POST /v1/responses, logged
 * and counted as that refusal is, never a socket: {@link refusedUpgrade}).
 *
 * Frames, one at a time per socket (a frame that arrives while one runs waits its turn):
 * - `{"type":"response.create", …}`: one Responses request whose other fields are the HTTP body's.
 *   It runs through the same gateway as `POST /v1/responses` (guard, routing, fallback before the first
 *   event, translation to any provider), always streamed. The frame is parsed once, here: the gateway
 *   gets the body as an object whose bytes are serialised only if read (pipeline/context.ts ReceivedBody) and the
 *   upgrade's headers as the request's head, not an HTTP `Request` to read and parse again. The gateway hands the socket the reply's
 *   events (pipeline/ports.ts ReplyEventSink), not SSE bytes: each event goes back as one JSON text
 *   frame, in order (the events of one upstream read are sent corked, in one write), ending with the
 *   terminal event (`response.completed` / `response.incomplete` / `response.failed`). A failure after the first event is the pipeline's own
 *   in-band `response.failed`, so the socket never goes silent on a broken reply.
 * - A request the gateway refuses before any event (a 4xx/5xx answer) becomes one error frame in the
 *   shape Codex reads as an HTTP error: `{"type":"error","status":N,"error":{…},"headers":{…}}` (the
 *   error object is the HTTP body's; `retry-after` and `x-should-retry` are carried in `headers`).
 * - `generate: false` (Codex's warm-up) is answered at once, with no upstream call: `response.created`
 *   then `response.completed` of an empty response (no output, zero usage). It is held to the body
 *   limit like any request (`server.max_body_bytes`, SPEC G-4): over it, the 413 error frame.
 * - `previous_response_id` refers to an earlier response of THIS socket: the socket keeps each
 *   response's full input and output items (one that ended `response.completed` or
 *   `response.incomplete`, as OpenAI's API chains both; a `response.failed` one cannot be named) and sends the whole history upstream (the id is removed:
 *   with `store: false` no provider could look it up, and only Responses providers know the field).
 *   It keeps the {@link RESPONSES_SOCKET_HISTORY} most recent responses, not every response of the
 *   socket's lifetime as SPEC 2.5 words it: Codex only ever chains to the response it just received,
 *   and a socket that serves thousands of unchained requests must not grow without bound. An id the
 *   socket never issued, or one that has aged out, is an error frame (400 `previous_response_not_found`).
 * - `response.processed` acknowledgements (newer Codex versions) need no answer; any other `type`
 *   (`response.steer` too: steering needs a reply that takes input while it runs), or a frame that is
 *   not a JSON object, is an error frame (400).
 * - Every refusal the socket decides itself goes through the gateway as the request's own
 *   (IncomingRequest `refusal`): one request log line, one count, one Calls row each, as over HTTP.
 * - `stream_id` (the openai SDK's WebSocket lanes, WebSocket-only) is not part of the body: every frame
 *   answering that `response.create` carries it. Lanes share the one-at-a-time order. A value that is
 *   no lane id ({@link LANE_ID}) is an error frame (400 naming `stream_id`), not echoed.
 * - A frame over the body limit (`server.max_body_bytes`; its UTF-8 bytes as received) is the guard's
 *   413 whatever else is wrong with it, as over HTTP, where the body's size is checked first ({@link refuse}).
 *
 * The socket closes after `idleMs` (config `server.websocket_idle_timeout_ms`, default 10 min) without frames in either direction, and when the
 * client closes; closing aborts the request in flight, which cancels the upstream call (SPEC 6.4).
 * When the gateway begins to stop (SPEC D-3 "stop accepting"; `stopping`), the socket takes no new
 * request: an idle socket closes at once and a busy one once its reply has ended, both with 1001
 * ("going away", RFC 6455 7.4.1), so the client reconnects (to the gateway's successor) rather than
 * keeping a stopping gateway busy until its grace period ends; frames sent meanwhile get no answer
 * (Codex sends a turn again on a new socket when its socket closes before the turn's reply).
 */
import { checkRequestBody, isLoopback, isRemote, MAX_JSON_DEPTH, nestsDeeperThan, vouchForOrigin, type Gateway, type ReceivedBody, type RequestHead } from "../../pipeline/index.ts";
import type { ReplyEvent, ReplyEventSink } from "../../pipeline/ports.ts";
import { isObj } from "../../formats/json.ts";
import { RequestText } from "../../formats/write-body-json.ts";
import { hubError, type HubError } from "../../formats/hub.ts";
import { previousResponseIdError } from "../../formats/openai-responses/parse.ts";
import { requestUrl } from "./browser-guard.ts";

/**
 * Whether the socket to a client at `peer` (its TCP address) takes the permessage-deflate extension its
 * client offers (the server accepts it: `websocket.perMessageDeflate` in src/app.ts): only when the
 * peer is not on this host. A client that negotiated it compresses every frame it sends (Codex's
 * `response.create` is ~40 KB a turn, more with a long history) and the gateway inflates each one before
 * the request can start: on a loopback socket, where no byte crosses a network, that is CPU on both
 * ends and on each response's critical path for nothing (~25 µs per round trip for a 1.7 KB frame, ~320
 * µs for Codex's 40 KB one, Bun's client and server; docs/performance.md item 135). The gateway never
 * compresses its own frames (Bun's `send` does not unless asked), so a remote client's deflate saves
 * only its upload.
 */
export const takesDeflateFrom = (peer: string | undefined): boolean => !isLoopback(peer);

/**
 * The answer to an upgrade the client-key rule refuses (SPEC G-1/G-2: no key from a remote caller, a
 * wrong, revoked or disabled key): the gateway's own refusal of the request, as for `POST
 * /v1/responses` (the guard's 401/403 in the Responses error shape, with `WWW-Authenticate`), so it
 * gets the request log line (`"transport":"websocket"`, outcome `rejected`), the
 * `switchyard_requests_total{outcome="rejected"}` count and the Calls row an HTTP request refused so
 * gets. The upgrade has no body: an empty one stands for it (the guard refuses before reading one).
 * A Host or Origin refusal (421/403, SPEC 2.6) never reaches here: the browser rules answer it for
 * every path, HTTP requests' included, with no log line.
 */
export function refusedUpgrade(gateway: Gateway, upgrade: Request, peer: string | undefined): Promise<Response> {
  const request: RequestHead = { url: upgrade.url, headers: upgrade.headers, signal: upgrade.signal };
  return gateway.handle({ request, body: new FrameBody({}, 2), endpoint: "responses", peer, transport: "websocket" });
}

/**
 * A `stream_id` (WebSocket lane) the socket takes: the openai SDK's own rule for a lane id
 * (`ResponsesWebSocketSession.lane`, openai 7.59: 1 to 256 ASCII letters, digits, `_`, `.`, `-`; it
 * throws "Invalid Responses WebSocket stream ID" for any other), the only client that sends one: Codex
 * sends none (codex-rs `ResponseCreateWsRequest` has no such field, nor the 0.171.0 binary; its
 * `x-codex-turn-state` is an upgrade header, not a frame field). Such an id is safe to echo on every
 * frame of the reply; any other value would be echoed as sent, up to the frame's size.
 */
export const LANE_ID = /^[A-Za-z0-9_.-]{1,256}$/;

/** The default idle time after which a socket is closed, ms (SPEC 2.5). */
export const RESPONSES_SOCKET_IDLE_MS = 10 * 60_000;

/**
 * How many of a socket's most recent responses `previous_response_id` can name (older ones are
 * forgotten, oldest first). Each entry holds references to the conversation's items, shared with the
 * later entries, so the cost is pointers, not copies of the text.
 */
export const RESPONSES_SOCKET_HISTORY = 64;

/** The part of Bun's ServerWebSocket a session uses. */
export interface SocketLike {
  send(data: string): unknown;
  close(code?: number, reason?: string): void;
  /**
   * Runs `callback` with the socket corked: the frames it sends are written together when it returns
   * (Bun's `ServerWebSocket.cork`), so the events of one upstream read leave in one write, not one
   * write per frame.
   */
  cork(callback: () => void): unknown;
  /** Bytes queued for the client and not yet written to the kernel (Bun's `ServerWebSocket.getBufferedAmount`). */
  getBufferedAmount(): number;
}

/**
 * Bytes a socket may hold queued for a slow client before the reply stops reading its upstream until
 * the socket drains (backpressure). Bun's own limit (`backpressureLimit`, 16 MiB) is far above it: past
 * that limit Bun drops frames, which must never happen to a reply.
 */
export const RESPONSES_SOCKET_HIGH_WATER_BYTES = 1 << 20;

/**
 * The largest client frame Bun takes on the socket (its `maxPayloadLength`), in bytes, for a gateway
 * started with the body limit `maxBodyBytes` (SPEC G-4): twice that, at least 64 MiB. Bun's default
 * (16 MiB) is below the default body limit (32 MiB), and a frame over it closes the socket (1009)
 * without a word in the client's format, so a `response.create` that HTTP would serve was refused
 * over the socket. With this backstop, a frame over the body limit reaches the guard and gets its 413
 * error frame; only a frame over the backstop (Bun holds a frame whole before handing it over) closes
 * the socket. Bun holds a frame whole (inflated) before handing it over, so the backstop is what one
 * frame may cost in memory per socket. It follows a reload that changes the body limit
 * (src/http/socket-frame-limit.ts).
 */
export function responsesSocketMaxFrameBytes(maxBodyBytes: number): number {
  return Math.max(2 * maxBodyBytes, 64 * 1024 * 1024);
}

const utf8 = new TextEncoder();

/** Headers of the upgrade request that do not belong on the per-frame requests. */
const HOP_HEADERS = ["upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol", "content-length", "transfer-encoding"];

/**
 * An upgrade's `OpenAI-Beta` value without the WebSocket transport's own flag (`responses_websockets=…`,
 * Codex's `responses_websockets=2026-02-06`): it names the socket between the client and the gateway,
 * not the gateway's HTTP call upstream, which takes the client's other flags (the Responses kinds forward
 * `openai-beta`, src/providers/index.ts). Without it a `codex` provider sends its HTTP default,
 * `responses=experimental` (src/providers/codex.ts `codexHeaders`), as for the same turn over HTTP.
 * The other comma-separated flags are kept in order; empty when none is left.
 */
export function withoutSocketBeta(value: string): string {
  return value
    .split(",")
    .map((flag) => flag.trim())
    .filter((flag) => flag !== "" && !/^responses_websockets(=|$)/i.test(flag))
    .join(", ");
}

type Obj = Record<string, unknown>;
/**
 * The Responses stream events a socket reads (the rest it only forwards): the lifecycle events, which
 * carry the `response` (its id, and `response.completed`), and finished output items (the history kept
 * for `previous_response_id`). Every other `response.*` event (text, reasoning and argument deltas,
 * content parts: nearly all of a stream) goes out as a frame without a JSON parse (~1 µs per event).
 * Of a stream with `event:` names, the lifecycle events are parsed only until one gave the response
 * id: each carries the whole response object with the request's echo (`instructions` and `tools`,
 * tens of KB for Codex), and `response.completed` is then known by its name.
 */
const READ_EVENTS = new Set(["response.created", "response.queued", "response.in_progress", "response.completed", "response.failed", "response.incomplete", "response.output_item.done"]);

/**
 * The terminal events after which a later `previous_response_id` may name the response: it ended with
 * output the conversation keeps (`response.failed` is not among them: as on OpenAI's API, a failed
 * response cannot be continued).
 */
const CHAINABLE_ENDS: ReadonlySet<string> = new Set(["response.completed", "response.incomplete"]);

/** Whether an event's data must be parsed: its `event:` name is one of {@link READ_EVENTS}, not a `response.*` name, or absent. */
const mustRead = (event: string | undefined): boolean => event === undefined || !event.startsWith("response.") || READ_EVENTS.has(event);

/**
 * How the gateway's Responses encoder (formats/openai-responses/encoder.ts) and OpenAI begin a lifecycle
 * event: its `type`, `sequence_number`, then the response object with its `id` first. The id (`resp_`
 * and hex or base62: no quote, no backslash) is read from there without a parse of the event, which
 * carries the whole response with the request's echo (~2 KB for the bench's request, ~18 KB for
 * Codex's); an event of any other shape is parsed.
 */
const LEADING_RESPONSE_ID = /^\{"type":"(response\.[a-z_]+)","sequence_number":\d+,"response":\{"id":"([^"\\]+)"/;

/** An event's `type` and response id read from its first characters ({@link LEADING_RESPONSE_ID}), or undefined. */
function leadingResponseId(data: string): { type: string; id: string } | undefined {
  const m = LEADING_RESPONSE_ID.exec(data);
  return m ? { type: m[1]!, id: m[2]! } : undefined;
}

/** The `item` of a `response.output_item.done` event's JSON data, or undefined when it has none. */
function finishedItem(data: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  return isObj(parsed) && parsed.type === "response.output_item.done" && isObj(parsed.item) ? parsed.item : undefined;
}

/**
 * An event's JSON data with the lane's `"stream_id"` added as its first member (openai SDK 7.59
 * `ResponsesServerEvent`: "events for the response echo the same `stream_id`"), without parsing the
 * event: the gateway's events and OpenAI's are JSON objects with members. Any other data is parsed
 * and written again; data that is not a JSON object goes out as it is.
 */
function withLane(data: string, lane: string): string {
  if (data.charCodeAt(0) === 123 /* { */ && data.charCodeAt(1) === 34 /* " */) return `{"stream_id":${JSON.stringify(lane)},${data.slice(1)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return data;
  }
  return isObj(parsed) ? JSON.stringify({ stream_id: lane, ...parsed }) : data;
}

/**
 * UTF-8 bytes of `JSON.stringify(JSON.parse(text))` per character of `text`, at most: a string
 * character is at most 3 bytes (a character escaped in `text` is as long or longer there), and a number
 * grows at most from `1e20` (4 characters) to `100000000000000000000` (21).
 */
const SERIALISED_PER_SOURCE_CHAR = 6;

/**
 * A `response.create` frame's body for the gateway (pipeline/context.ts ReceivedBody): the object, and
 * its bytes made only when read (a native passthrough, a key with limits, the flight recorder, a body
 * over `maxBytes`): a translated request never reads them, and serialising a Codex request (~40 KB,
 * more with the history of `previous_response_id`) per frame was the socket's largest per-frame cost.
 */
class FrameBody implements ReceivedBody {
  private made: Uint8Array | undefined;

  /**
   * `sourceChars`: characters of the JSON texts the body's members were parsed from (the frame, the
   * history's events). `requestText`: the frame's text beside the frame `JSON.parse` made of it, whose
   * `tools` the body shares (the tools memo finds them by that text: docs/performance.md item 167).
   */
  constructor(
    readonly value: Record<string, unknown>,
    sourceChars: number,
    readonly requestText?: RequestText,
    /** The frame's text as received: its UTF-8 bytes are the body's size (SPEC G-4; pipeline/context.ts ReceivedBody). */
    readonly sent?: string,
    /** A frame that is not a JSON object: its text (`sent`) stands for the body's bytes too. */
    private readonly unparsed = false,
  ) {
    // The members the socket adds: `"stream":true`, and a string `input` made one message item (~80).
    this.maxBytes = SERIALISED_PER_SOURCE_CHAR * sourceChars + 256;
  }

  readonly maxBytes: number;

  get bytes(): Uint8Array {
    return (this.made ??= utf8.encode(this.unparsed && this.sent !== undefined ? this.sent : JSON.stringify(this.value)));
  }
}

/**
 * A response the socket issued, for `previous_response_id`: the conversation's items before it, and its
 * finished output items, kept as their events' JSON and parsed when a later request names the response
 * (most responses are never named: each parse saved is ~1 µs per item, more for long answers).
 */
class IssuedResponse {
  private items: unknown[] | undefined;

  /** `inputChars`: characters of the JSON texts the input items were parsed from (for {@link FrameBody.maxBytes}). */
  constructor(
    private readonly input: unknown[],
    private readonly outputEvents: string[],
    inputChars: number,
  ) {
    let chars = inputChars;
    for (const data of outputEvents) chars += data.length;
    this.chars = chars;
  }

  /** Characters of the JSON texts the conversation's items were parsed from (an item's JSON is no longer than its text). */
  readonly chars: number;

  /** The full conversation as of this response: input items, then its output items. */
  conversation(): unknown[] {
    if (this.items) return this.items;
    const items = [...this.input];
    for (const data of this.outputEvents) {
      const item = finishedItem(data);
      if (item !== undefined) items.push(item);
    }
    return (this.items = items);
  }
}

/** What a session needs: the gateway, the upgrade request, the socket's peer address. */
export interface ResponsesSocketOptions {
  gateway: Gateway;
  /** The upgrade request (its headers carry the client key and Codex's session headers). */
  upgrade: Request;
  /** The TCP peer of the socket (SPEC G-3). */
  peer: string | undefined;
  idleMs?: number;
  /** How many recent responses a socket remembers for `previous_response_id` (default {@link RESPONSES_SOCKET_HISTORY}). */
  historyLimit?: number;
  /** Wall clock in ms, for the warm-up response's `created_at`. */
  now?: () => number;
  /** Called each time a reply starts waiting for the socket to drain ({@link ResponsesSocketSession.ready}); for tests. */
  onHeldBack?: () => void;
  /** Aborted when the gateway begins to stop (SPEC D-3): the socket then takes no new request and closes with 1001. */
  stopping?: AbortSignal;
}

/** The close code of a socket the stopping gateway ends (RFC 6455 7.4.1: "going away"). */
export const GOING_AWAY = 1001;

/** One socket's state: its queue of frames, the responses it issued, the request in flight. */
export class ResponsesSocketSession {
  private readonly queue: string[] = [];
  private busy = false;
  private closed = false;
  private inFlight: AbortController | undefined;
  /**
   * Frames held back, in order, while the socket's send buffer is over the high-water mark (one batch
   * can be larger than Bun's limit: a reply's closing events each repeat its whole text); `unsentAt`
   * is the next one to send. Sent from {@link drain}.
   */
  private unsent: string[] = [];
  private unsentAt = 0;
  /** Settles the wait of a reply held back by a full send buffer (the socket drained or closed). */
  private wake: (() => void) | undefined;
  private drainedOnce: Promise<void> | undefined;
  private idle: ReturnType<typeof setTimeout> | undefined;
  /**
   * The `stream_id` (openai SDK: the WebSocket lane) of the frame being handled, echoed on every frame
   * answering it; undefined when it named none. Frames are handled one at a time, so one field serves.
   */
  private lane: string | undefined;
  /** Response id → the conversation as of that response (input then output items). */
  private readonly history = new Map<string, IssuedResponse>();
  /**
   * The headers of every frame's request: the upgrade's, without its hop headers, one object for the
   * socket's lifetime (the pipeline only reads them), carrying the upgrade's Origin verdict.
   */
  private readonly headers: Headers;
  private readonly url: string;
  private readonly idleMs: number;

  constructor(
    private readonly ws: SocketLike,
    private readonly opts: ResponsesSocketOptions,
  ) {
    this.headers = new Headers(opts.upgrade.headers);
    for (const h of HOP_HEADERS) this.headers.delete(h);
    const beta = this.headers.get("openai-beta");
    if (beta !== null) {
      const kept = withoutSocketBeta(beta);
      if (kept) this.headers.set("openai-beta", kept);
      else this.headers.delete("openai-beta");
    }
    this.headers.set("content-type", "application/json");
    const u = requestUrl(opts.upgrade.url); // a bare request target too (no Host: src/http/browser-guard.ts pathOf)
    this.url = `${u.protocol}//${u.host}/v1/responses`;
    // The browser rules vouched for the upgrade's Origin (or not): the frames inherit that verdict.
    if (opts.upgrade.headers.has("origin") && !isRemote("127.0.0.1", opts.upgrade.headers)) vouchForOrigin(this.headers);
    this.idleMs = opts.idleMs ?? RESPONSES_SOCKET_IDLE_MS;
    this.touch();
    if (opts.stopping?.aborted) this.goAway();
    else opts.stopping?.addEventListener("abort", this.goAway);
  }

  /** The gateway is stopping: close now when idle, else once the reply in flight has ended ({@link runQueue}). */
  private readonly goAway = (): void => {
    if (this.closed || this.busy) return;
    this.ws.close(GOING_AWAY, "the gateway is shutting down");
    this.closed_();
  };

  /** Restarts the idle timer (a frame went in or out): one timer per socket, re-armed with `refresh()` rather than replaced per frame. */
  private touch(): void {
    if (this.closed) return;
    if (this.idle) {
      this.idle.refresh();
      return;
    }
    this.idle = setTimeout(() => {
      if (this.busy) return this.touch();
      this.ws.close(1000, "idle");
      this.closed_();
    }, this.idleMs);
  }

  /** Sends a frame the socket made itself (an object: the lane's `stream_id` is added) or a text as is. */
  private send(frame: Obj | string): void {
    if (this.closed) return;
    this.put(typeof frame === "string" ? frame : JSON.stringify(this.lane === undefined ? frame : { ...frame, stream_id: this.lane }));
    this.touch();
  }

  /**
   * Sends a frame now, or holds it back behind the frames already held while the send buffer is over
   * {@link RESPONSES_SOCKET_HIGH_WATER_BYTES}: Bun drops a frame (`send` returns 0) once more than its
   * own limit (16 MiB) waits, and a frame sent under the mark always fits.
   */
  private put(text: string): void {
    if (this.unsentAt < this.unsent.length || this.ws.getBufferedAmount() > RESPONSES_SOCKET_HIGH_WATER_BYTES) this.unsent.push(text);
    else this.ws.send(text);
  }

  private errorFrame(status: number, type: string, code: string | null, message: string): void {
    this.send({ type: "error", status, error: { type, code, message, param: null } });
  }

  /** A text frame from the client. */
  message(text: string): void {
    if (this.closed) return;
    if (this.opts.stopping?.aborted) return this.goAway();
    this.touch();
    this.queue.push(text);
    if (!this.busy) void this.runQueue();
  }

  /** The socket closed (either side): abort what runs, drop what waits. */
  close(): void {
    this.closed_();
  }

  /** Bun's `drain`: part of the send buffer was written out; held-back frames go out, and once none is left a reply held back by it reads on. */
  drain(): void {
    if (!this.closed) {
      while (this.unsentAt < this.unsent.length) {
        if (this.ws.getBufferedAmount() > RESPONSES_SOCKET_HIGH_WATER_BYTES) return;
        this.ws.send(this.unsent[this.unsentAt++]!);
      }
    }
    this.unsent = [];
    this.unsentAt = 0;
    const wake = this.wake;
    this.wake = undefined;
    this.drainedOnce = undefined;
    wake?.();
  }

  /** The reply's backpressure (pipeline/ports.ts ReplyEventSink.ready): a wait while frames are held back or the send buffer is over the high-water mark. */
  private ready(): Promise<void> | undefined {
    if (this.closed || (this.unsentAt === this.unsent.length && this.ws.getBufferedAmount() <= RESPONSES_SOCKET_HIGH_WATER_BYTES)) return undefined;
    if (!this.drainedOnce) {
      this.drainedOnce = new Promise<void>((resolve) => (this.wake = resolve));
      this.opts.onHeldBack?.();
    }
    return this.drainedOnce;
  }

  private closed_(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.idle) clearTimeout(this.idle);
    this.opts.stopping?.removeEventListener("abort", this.goAway);
    this.queue.length = 0;
    this.inFlight?.abort(new Error("the WebSocket closed"));
    this.drain();
  }

  private async runQueue(): Promise<void> {
    this.busy = true;
    try {
      while (!this.closed && this.queue.length > 0 && !this.opts.stopping?.aborted) {
        try {
          await this.handle(this.queue.shift()!);
        } catch {
          // A bug must not end the socket silently or reject unhandled: the frame gets an error frame.
          this.errorFrame(500, "server_error", null, "The gateway failed to handle this frame.");
        }
      }
    } finally {
      this.busy = false;
    }
    if (this.opts.stopping?.aborted) this.goAway();
  }

  private async handle(text: string): Promise<void> {
    this.lane = undefined;
    let frame: unknown;
    if (nestsDeeperThan(text)) {
      return this.refuse(hubError("invalid_request", `The frame nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, { code: "invalid_json" }), {}, text, true);
    }
    try {
      frame = JSON.parse(text);
    } catch {
      return this.refuse(hubError("invalid_request", "The frame is not valid JSON.", { code: "invalid_json" }), {}, text, true);
    }
    if (!isObj(frame)) return this.refuse(hubError("invalid_request", "A frame must be a JSON object with a `type`.", { code: "invalid_frame" }), {}, text, true);
    if (frame.type === "response.processed") return;
    // The envelope's own fields (openai SDK ResponsesClientEvent.ResponseCreate: `type`, `generate` and
    // the WebSocket lane `stream_id` are WebSocket-only, "not part of POST /v1/responses"), and
    // `previous_response_id`, which the socket resolves itself: the rest is the HTTP body.
    const { type, generate, previous_response_id, stream_id, ...body } = frame;
    // Every event of the reply, and its error frame, echo the lane (the SDK routes events by it).
    if (typeof stream_id === "string" && LANE_ID.test(stream_id)) this.lane = stream_id;
    if (type !== "response.create") {
      return this.refuse(hubError("invalid_request", `Unknown frame type ${JSON.stringify(type)}; this socket takes response.create.`, { code: "unknown_frame_type" }), body, text);
    }
    if (stream_id !== undefined && stream_id !== null && this.lane === undefined) {
      const got = JSON.stringify(stream_id) ?? String(stream_id);
      const message = `Invalid 'stream_id': ${got.length > 80 ? `${got.slice(0, 80)}…` : got}. Expected a WebSocket lane id: a string of 1 to 256 letters, digits, '_', '.' or '-' (or no stream_id, for the default lane).`;
      return this.refuse(hubError("invalid_request", message, { param: "stream_id" }), body, text);
    }
    // The guard's checks of the HTTP body (pipeline/guard.ts: `model`, then the field types; any other
    // `input` would be sent upstream as an empty conversation), here because `input` is joined to the
    // history below, answered as over HTTP.
    const checked = checkRequestBody("openai-responses", body, body.model);
    if (typeof checked !== "string") return this.refuse(checked, body, text);
    const badPrevious = previousResponseIdError(previous_response_id);
    if (badPrevious) return this.refuse(badPrevious, body, text);
    let input: unknown[] = typeof body.input === "string" ? [{ type: "message", role: "user", content: [{ type: "input_text", text: body.input }] }] : Array.isArray(body.input) ? body.input : [];
    // Characters of the JSON the input items come from: this frame's, and the history's.
    let chars = text.length;
    if (typeof previous_response_id === "string" && previous_response_id.length > 0) {
      const earlier = this.history.get(previous_response_id);
      if (!earlier) {
        const notFound = hubError("invalid_request", `Previous response with id '${previous_response_id}' not found on this socket.`, { code: "previous_response_not_found", param: "previous_response_id" });
        return this.refuse(notFound, body, text);
      }
      input = [...earlier.conversation(), ...input];
      chars += earlier.chars;
    }
    if (generate === false) {
      // Held to the body limit as a generating request is (the guard's 413), though it goes nowhere upstream.
      const received = new FrameBody({ ...body, input, stream: true }, chars, undefined, text);
      const over = this.opts.gateway.overBodyLimit?.(received);
      if (over) return this.refuse(over, received);
      return this.warmUp(body, input, chars);
    }
    // The frame's text and the frame: `tools`, shared with the body, found in the tools memo by that
    // text (the envelope is no obstacle: RequestText reads the frame's own top level).
    await this.run({ ...body, input, stream: true }, input, chars, new RequestText(frame, text));
  }

  /**
   * A frame the socket refuses itself, before any event: through the gateway with the refusal as the
   * request's own (IncomingRequest `refusal`), so that it is answered, logged (one request line,
   * `"transport":"websocket"`, outcome `rejected`), counted (`switchyard_requests_total`) and recorded
   * (a Calls row, its route trace) as the same refusal over HTTP is; the answer becomes the error frame.
   * `body`: the frame's body as far as it was read (its `model` names the refused request), or the
   * {@link FrameBody} already made of it (its 413); `text`: the frame's text as received, whose UTF-8
   * bytes are the body's size, and which stands for the body when `unparsed` (no JSON object). A frame
   * over the limit in force gets the guard's 413 instead of `err`, as the same bytes over HTTP do (the
   * guard measures a body as sent before it reads a field, SPEC G-4; until 2026-12-07 the body
   * re-serialised without the envelope and whitespace was measured: a 400 here where HTTP said 413).
   */
  private async refuse(err: HubError, body: Obj | FrameBody, text = "", unparsed = false): Promise<void> {
    const received = body instanceof FrameBody ? body : new FrameBody(body, text.length, undefined, text, unparsed);
    if (!(body instanceof FrameBody)) err = this.opts.gateway.overBodyLimit?.(received) ?? err;
    const request: RequestHead = { url: this.url, headers: this.headers, signal: new AbortController().signal };
    const res = await this.opts.gateway.handle({ request, body: received, endpoint: "responses", peer: this.opts.peer, transport: "websocket", refusal: err });
    await this.refused(res);
  }

  /** `generate: false`: an empty completed response, no upstream call (SPEC 2.5). */
  private warmUp(body: Obj, input: unknown[], inputChars: number): void {
    const id = "resp_" + crypto.randomUUID().replace(/-/g, "");
    const response = {
      id,
      object: "response",
      created_at: Math.floor((this.opts.now?.() ?? Date.now()) / 1000),
      status: "in_progress",
      model: typeof body.model === "string" ? body.model : "",
      output: [] as unknown[],
      usage: null as unknown,
    };
    this.remember(id, new IssuedResponse(input, [], inputChars));
    this.send({ type: "response.created", sequence_number: 0, response });
    this.send({
      type: "response.completed",
      sequence_number: 1,
      response: {
        ...response,
        status: "completed",
        usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
      },
    });
  }

  /**
   * One generating request through the gateway, which hands the reply's events to this socket's sink
   * (pipeline/ports.ts ReplyEventSink) instead of writing them as SSE: each batch (one upstream read)
   * goes out as frames in one corked write; the finished output items and the response id are read on
   * the way for `previous_response_id`.
   */
  private async run(body: Obj, input: unknown[], inputChars: number, text: RequestText): Promise<void> {
    const controller = new AbortController();
    this.inFlight = controller;
    const request: RequestHead = { url: this.url, headers: this.headers, signal: controller.signal };
    const output: string[] = [];
    let responseId: string | undefined;
    // Whether the reply ended so that a later turn may chain to it: `response.completed`, or
    // `response.incomplete` (an output limit: OpenAI's API takes such a response as
    // previous_response_id, the usual way to ask the model to go on). A failed one is not chainable.
    let chainable = false;
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const read = (ev: ReplyEvent) => {
      const name = ev.event;
      if (name === "response.output_item.done") {
        // Parsed only if a later request names this response (IssuedResponse).
        output.push(ev.data);
        return;
      }
      if (name !== undefined && responseId !== undefined) {
        // The id is known: a named lifecycle event adds nothing the socket keeps but its name.
        if (CHAINABLE_ENDS.has(name)) chainable = true;
        return;
      }
      if (!mustRead(name)) return;
      const lead = name !== undefined ? leadingResponseId(ev.data) : undefined;
      if (lead && lead.type === name) {
        responseId = lead.id;
        if (CHAINABLE_ENDS.has(name)) chainable = true;
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (!isObj(parsed)) return;
      if (parsed.type === "response.output_item.done" && isObj(parsed.item)) output.push(ev.data);
      if (isObj(parsed.response) && typeof parsed.response.id === "string") responseId = parsed.response.id;
      if (typeof parsed.type === "string" && CHAINABLE_ENDS.has(parsed.type)) chainable = true;
    };
    const lane = this.lane;
    const sink: ReplyEventSink = {
      events: (batch) => {
        if (this.closed) return;
        this.ws.cork(() => {
          for (const ev of batch) {
            if (ev.data.length === 0 || ev.data === "[DONE]") continue;
            this.put(lane === undefined ? ev.data : withLane(ev.data, lane));
            read(ev);
          }
        });
        this.touch();
      },
      end: () => ended(),
      ready: () => this.ready(),
    };
    try {
      const res = await this.opts.gateway.handle({ request, body: new FrameBody(body, inputChars, text, typeof text.source === "string" ? text.source : undefined), endpoint: "responses", peer: this.opts.peer, transport: "websocket", events: sink });
      // A committed reply has no body: its events came or come to the sink, which is then ended.
      if (res.status !== 200 || res.body) return await this.refused(res);
      await done;
      if (chainable && responseId) this.remember(responseId, new IssuedResponse(input, output, inputChars));
    } finally {
      if (this.inFlight === controller) this.inFlight = undefined;
    }
  }

  /** Keeps a response's conversation for `previous_response_id`, forgetting the oldest beyond the limit. */
  private remember(id: string, issued: IssuedResponse): void {
    this.history.delete(id);
    this.history.set(id, issued);
    const limit = this.opts.historyLimit ?? RESPONSES_SOCKET_HISTORY;
    for (const oldest of this.history.keys()) {
      if (this.history.size <= limit) break;
      this.history.delete(oldest);
    }
  }

  /** A request refused before any event: one error frame carrying the HTTP status and error body. */
  private async refused(res: Response): Promise<void> {
    let error: Obj = { type: "api_error", code: null, message: `The gateway answered ${res.status}.`, param: null };
    try {
      const body = (await res.json()) as unknown;
      if (isObj(body) && isObj(body.error)) error = body.error;
    } catch {
      // keep the generic error
    }
    const frame: Obj = { type: "error", status: res.status, error };
    const headers: Obj = {};
    for (const name of ["retry-after", "x-should-retry"]) {
      const value = res.headers.get(name);
      if (value) headers[name] = value;
    }
    if (Object.keys(headers).length > 0) frame.headers = headers;
    this.send(frame);
  }
}
